//! ProbeBW_REFILL (5.3.3.3): forget the short-term model (bw_shortterm, inflight_shortterm
//! to infinity) and pace at bw (gain 1) for one packet-timed round, so the pipe is full
//! before UP starts to queue; then UP (`mod.rs`).

use super::AckPhase;
use crate::cc::bbr3::{Bbr3, Bbr3State};

impl Bbr3 {
    /// 5.3.3.9 StartProbeBW_REFILL.
    pub(in crate::cc::bbr3) fn start_probe_bw_refill(&mut self) {
        self.reset_short_term_model();
        self.probe.bw_probe_up_rounds = 0;
        self.probe.bw_probe_up_acked = 0;
        self.probe.prev_probe_precautionary = false;
        self.probe.ack_phase = AckPhase::Refilling;
        self.start_round();
        self.state = Bbr3State::ProbeBwRefill;
    }
}
