//! Startup (5.3.1): pacing gain 2.77 and cwnd gain 2 double the sending rate each round
//! until either estimator says the pipe is full:
//! - a plateau (5.3.1.2): three non-application-limited rounds in which the delivery rate
//!   grew by less than 25% (`full_bw_now`, also used by ProbeBW_UP; `full_bw_reached`
//!   once ever);
//! - loss (5.3.1.3): in a round trip spent in fast recovery, the loss rate exceeded
//!   BBR.LossThresh (2%) with at least BBRStartupFullLossCnt (6) loss events; without SACK,
//!   any loss in recovery. inflight_longterm is then max(BBR.bdp, BBR.inflight_latest).
//!   A loss event is an ACK on which losses were marked (Linux's `loss_events_in_round`).
//!
//! Also (Linux, `bbr_check_ecn_too_high_in_startup`): two rounds in a row with a CE ratio
//! at or above ecn_thresh (`ecn.rs`).

use super::{Bbr3, Bbr3State, RateSample};
use crate::cc::{ControlInput, LossState};

/// 5.3.1.2: growth that counts as "still growing", and rounds without it.
const FULL_BW_GROWTH: f64 = 1.25;
const FULL_BW_COUNT: u32 = 3;

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct FullPipe {
    pub full_bw: f64,
    pub full_bw_count: u32,
    pub full_bw_now: bool,
}

impl Bbr3 {
    /// 5.3.1.1 EnterStartup (the gains follow the state).
    pub(super) fn enter_startup(&mut self) {
        self.state = Bbr3State::Startup;
    }

    /// 5.3.1.2 ResetFullBW.
    pub(super) fn reset_full_bw(&mut self) {
        self.full = FullPipe::default();
    }

    /// 5.3.1.2 CheckFullBWReached.
    pub(super) fn check_full_bw_reached(&mut self, rs: Option<&RateSample>) {
        let Some(rs) = rs else { return };
        if self.full.full_bw_now || !self.round_start || rs.is_app_limited {
            return;
        }
        if rs.rate() >= self.full.full_bw * FULL_BW_GROWTH {
            self.reset_full_bw();
            self.full.full_bw = rs.rate();
            return;
        }
        self.full.full_bw_count += 1;
        self.full.full_bw_now = self.full.full_bw_count >= FULL_BW_COUNT;
        if self.full.full_bw_now {
            self.full_bw_reached = true;
        }
    }

    /// 5.3.1.1 CheckStartupDone.
    pub(super) fn check_startup_done(&mut self, rs: Option<&RateSample>, c: &ControlInput) {
        self.check_startup_high_loss(rs, c);
        if self.state == Bbr3State::Startup && self.full_bw_reached {
            self.enter_drain();
        }
    }

    /// 5.3.1.3 CheckStartupHighLoss, checked at the end of each loss round as Linux's
    /// `bbr_check_loss_too_high_in_startup` does.
    fn check_startup_high_loss(&mut self, rs: Option<&RateSample>, c: &ControlInput) {
        if self.full_bw_reached {
            return;
        }
        let in_recovery = c.state == LossState::Recovery;
        if !c.has_selective_acks {
            if in_recovery && c.losses > 0 {
                self.handle_queue_too_high_in_startup();
            }
            return;
        }
        if !self.b.loss_round_start {
            return;
        }
        let too_high = rs.is_some_and(|rs| self.is_inflight_too_high(rs, c));
        if in_recovery && self.loss_events_in_round >= self.p.startup_full_loss_count && too_high {
            self.handle_queue_too_high_in_startup();
            return;
        }
        self.loss_events_in_round = 0;
    }

    /// 5.3.1.3: the pipe is full; inflight_longterm = max(BBR.bdp, BBR.inflight_latest).
    pub(super) fn handle_queue_too_high_in_startup(&mut self) {
        self.full_bw_reached = true;
        self.b.inflight_longterm = self.bdp().max(self.b.inflight_latest);
    }
}
