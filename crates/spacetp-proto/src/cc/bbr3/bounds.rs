//! The bounds loss puts on the model (5.5.10):
//! - the long-term inflight_longterm (Linux's inflight_hi): the inflight at which a
//!   bandwidth probe saw a loss rate above BBR.LossThresh (2%) per round trip
//!   (`IsInflightTooHigh`); then max(RS.tx_in_flight, BBR.Beta x TargetInflight()) with
//!   BBR.Beta 0.7 (`HandleInflightTooHigh`); raised again by probing (`probe_bw/up.rs`);
//! - the short-term bw_shortterm and inflight_shortterm (Linux's bw_lo, inflight_lo): once
//!   per round trip with loss, outside Startup, REFILL and UP, each is cut to
//!   max(latest, Beta x itself), the latest being the round's max delivery rate and volume
//!   (`AdaptLowerBoundsFromCongestion`); forgotten in REFILL and after ProbeRTT;
//! - the headroom BBR.Headroom (0.15) x inflight_longterm left free in CRUISE and ProbeRTT.

use super::{Bbr3, Bbr3State, RateSample, INF};
use crate::cc::ControlInput;

#[derive(Clone, Copy, Debug)]
pub(super) struct Bounds {
    pub inflight_longterm: u64,
    pub inflight_shortterm: u64,
    pub bw_shortterm: f64,
    /// 2.10: the max delivery rate and delivered volume of the last round trip.
    pub bw_latest: f64,
    pub inflight_latest: u64,
    /// 5.5.10.3: loss rounds, which restart at a round's first loss.
    pub loss_round_delivered: u64,
    pub loss_round_start: bool,
    pub is_loss_in_round: bool,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            inflight_longterm: INF,
            inflight_shortterm: INF,
            bw_shortterm: f64::INFINITY,
            bw_latest: 0.0,
            inflight_latest: 0,
            loss_round_delivered: 0,
            loss_round_start: false,
            is_loss_in_round: false,
        }
    }
}

/// `v x f` for a volume that may be infinite.
fn scaled(v: u64, f: f64) -> u64 {
    if v == INF {
        INF
    } else {
        (v as f64 * f) as u64
    }
}

impl Bbr3 {
    /// 5.5.10.2 NoteLoss: a loss this round (the loss round restarts at the first).
    pub(super) fn note_loss(&mut self) {
        if !self.b.is_loss_in_round {
            self.b.loss_round_delivered = self.delivered;
        }
        self.b.is_loss_in_round = true;
    }

    /// 5.5.10.2 IsInflightTooHigh: the data lost since the delivered segment left exceeds
    /// BBR.LossThresh of what was in flight then (any loss without SACK); or, from Linux,
    /// the last round's CE ratio exceeded ecn_thresh.
    pub(super) fn is_inflight_too_high(&self, rs: &RateSample, c: &ControlInput) -> bool {
        let lost = c.lost.saturating_sub(rs.prior_lost);
        lost as f64 > rs.tx_in_flight as f64 * self.p.loss_thresh
            || (lost > 0 && !c.has_selective_acks)
            || self.ecn.too_high()
    }

    /// 5.5.10.2 HandleInflightTooHigh.
    pub(super) fn handle_inflight_too_high(&mut self, rs: &RateSample) {
        self.probe.prev_probe_too_high = true;
        self.probe.is_bw_probe_sample = false;
        if !rs.is_app_limited {
            let floor = (self.target_inflight() as f64 * self.p.beta) as u64;
            self.b.inflight_longterm = rs.tx_in_flight.max(floor);
        }
        if self.state == Bbr3State::ProbeBwUp {
            self.start_probe_bw_down();
        }
    }

    /// 5.5.10.3 UpdateLatestDeliverySignals.
    pub(super) fn update_latest_delivery_signals(
        &mut self,
        rs: Option<&RateSample>,
        c: &ControlInput,
    ) {
        self.b.loss_round_start = false;
        let Some(rs) = rs else { return };
        self.b.bw_latest = self.b.bw_latest.max(rs.rate());
        self.b.inflight_latest = self.b.inflight_latest.max(rs.delivered);
        if rs.prior_delivered >= self.b.loss_round_delivered {
            self.b.loss_round_delivered = c.delivered;
            self.b.loss_round_start = true;
        }
    }

    /// 5.5.10.3 AdvanceLatestDeliverySignals.
    pub(super) fn advance_latest_delivery_signals(&mut self, rs: Option<&RateSample>) {
        if let (true, Some(rs)) = (self.b.loss_round_start, rs) {
            self.b.bw_latest = rs.rate();
            self.b.inflight_latest = rs.delivered;
        }
    }

    /// 5.5.10.3 ResetCongestionSignals.
    pub(super) fn reset_congestion_signals(&mut self) {
        self.b.is_loss_in_round = false;
        self.b.bw_latest = 0.0;
        self.b.inflight_latest = 0;
        self.ecn.in_round = false;
    }

    /// 5.5.10.3 UpdateCongestionSignals; the ECN alpha once per round (Linux).
    pub(super) fn update_congestion_signals(&mut self, rs: Option<&RateSample>, c: &ControlInput) {
        self.update_max_bw(rs);
        if self.round_start {
            let ratio = self.ecn.on_round_start(c.delivered, c.ce_delivered);
            if let Some(r) = ratio {
                if self.ecn.startup_too_high(r) && !self.full_bw_reached {
                    self.handle_queue_too_high_in_startup();
                }
            }
        }
        if !self.b.loss_round_start {
            return;
        }
        self.adapt_lower_bounds_from_congestion();
        self.b.is_loss_in_round = false;
        self.ecn.in_round = false;
    }

    /// 5.5.10.3 AdaptLowerBoundsFromCongestion; the ECN cut from Linux's
    /// `bbr_adapt_lower_bounds`.
    fn adapt_lower_bounds_from_congestion(&mut self) {
        if self.is_probing_bw() {
            return;
        }
        let mut ecn_inflight = INF;
        if self.ecn.in_round {
            self.init_lower_bounds(false);
            ecn_inflight = scaled(self.b.inflight_shortterm, self.ecn.cut());
        }
        if self.b.is_loss_in_round {
            self.init_lower_bounds(true);
            self.loss_lower_bounds();
        }
        self.b.inflight_shortterm = self.b.inflight_shortterm.min(ecn_inflight);
    }

    /// 5.5.10.3 InitLowerBounds.
    fn init_lower_bounds(&mut self, init_bw: bool) {
        if init_bw && self.b.bw_shortterm == f64::INFINITY {
            self.b.bw_shortterm = self.max_bw;
        }
        if self.b.inflight_shortterm == INF {
            self.b.inflight_shortterm = self.cwnd;
        }
    }

    /// 5.5.10.3 LossLowerBounds.
    fn loss_lower_bounds(&mut self) {
        let beta = self.p.beta;
        self.b.bw_shortterm = self.b.bw_latest.max(beta * self.b.bw_shortterm);
        self.b.inflight_shortterm = self
            .b
            .inflight_latest
            .max(scaled(self.b.inflight_shortterm, beta));
    }

    /// 5.5.10.3 ResetShortTermModel.
    pub(super) fn reset_short_term_model(&mut self) {
        self.b.bw_shortterm = f64::INFINITY;
        self.b.inflight_shortterm = INF;
    }

    /// 5.5.10.3 BoundBWForModel.
    pub(super) fn bound_bw_for_model(&mut self) {
        self.bw = self.max_bw.min(self.b.bw_shortterm);
    }

    /// 5.3.3.9 InflightWithHeadroom.
    pub(super) fn inflight_with_headroom(&self) -> u64 {
        let hi = self.b.inflight_longterm;
        if hi == INF {
            return INF;
        }
        let headroom = self.mss.max((self.p.headroom * hi as f64) as u64);
        hi.saturating_sub(headroom).max(self.min_pipe_cwnd())
    }
}
