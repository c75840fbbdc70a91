//! ProbeBW_UP (5.3.3.4-5.3.3.7): pace at 1.25 x bw with cwnd gain 2.25. While cwnd-limited
//! at inflight_longterm, raise it by 1, 2, 4, ... segments per round, spread over the round
//! (one segment per `probe_up_acked_per_inc` bytes ACKed). Down again when the rate
//! plateaus (full_bw_now), when a loss rate above 2% cuts inflight_longterm (`bounds.rs`),
//! or, after a probe that went too high, as soon as inflight reaches inflight_longterm
//! (precautionary probing, 5.3.3.6).

use super::AckPhase;
use crate::cc::bbr3::{Bbr3, Bbr3State, RateSample};
use crate::cc::ControlInput;

/// 5.3.3.9: the slope doubles each round up to 2^30.
const MAX_PROBE_UP_ROUNDS: u32 = 30;

impl Bbr3 {
    /// 5.3.3.9 StartProbeBW_UP.
    pub(super) fn start_probe_bw_up(&mut self, rs: Option<&RateSample>) {
        self.probe.ack_phase = AckPhase::ProbeStarting;
        self.start_round();
        self.reset_full_bw();
        self.full.full_bw = rs.map_or(0.0, |r| r.rate());
        self.state = Bbr3State::ProbeBwUp;
        self.raise_inflight_longterm_slope();
    }

    /// 5.3.3.9 IsTimeToGoDown.
    pub(super) fn is_time_to_go_down(&mut self, rs: Option<&RateSample>, c: &ControlInput) -> bool {
        if self.probe.prev_probe_too_high && c.in_flight >= self.b.inflight_longterm {
            self.probe.prev_probe_precautionary = true;
            return true;
        }
        if self.is_cwnd_limited() && self.cwnd >= self.b.inflight_longterm {
            self.reset_full_bw();
            self.full.full_bw = rs.map_or(0.0, |r| r.rate());
        } else if self.full.full_bw_now {
            return true;
        }
        false
    }

    /// 5.3.3.9 RaiseInflightLongtermSlope.
    pub(super) fn raise_inflight_longterm_slope(&mut self) {
        let growth_this_round = 1u64 << self.probe.bw_probe_up_rounds;
        self.probe.bw_probe_up_rounds =
            (self.probe.bw_probe_up_rounds + 1).min(MAX_PROBE_UP_ROUNDS);
        self.probe.probe_up_acked_per_inc = (self.cwnd / growth_this_round).max(self.mss);
    }

    /// 5.3.3.9 ProbeInflightLongtermUpward.
    pub(super) fn probe_inflight_longterm_upward(&mut self, c: &ControlInput) {
        if !self.is_cwnd_limited() || self.cwnd < self.b.inflight_longterm {
            return;
        }
        let per_inc = self.probe.probe_up_acked_per_inc;
        self.probe.bw_probe_up_acked += c.acked_sacked;
        if self.probe.bw_probe_up_acked >= per_inc {
            let delta = self.probe.bw_probe_up_acked / per_inc;
            self.probe.bw_probe_up_acked -= delta * per_inc;
            self.b.inflight_longterm += delta * self.mss;
        }
        if self.round_start {
            self.raise_inflight_longterm_slope();
        }
    }
}
