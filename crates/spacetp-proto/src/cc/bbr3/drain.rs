//! Drain (5.3.2): pacing gain 0.5 empties the queue Startup built, until what is in flight
//! is at most one BDP (Inflight(1.0)), or after three rounds at most (the bandwidth may have
//! been overestimated), then ProbeBW.

use super::{Bbr3, Bbr3State};
use crate::cc::ControlInput;

/// 5.3.2: rounds after which Drain ends whatever is in flight.
const DRAIN_MAX_ROUNDS: u64 = 3;

impl Bbr3 {
    /// 5.3.2 EnterDrain.
    pub(super) fn enter_drain(&mut self) {
        self.state = Bbr3State::Drain;
        self.drain_start_round = self.round_count;
    }

    /// 5.3.2 CheckDrainDone.
    pub(super) fn check_drain_done(&mut self, c: &ControlInput) {
        if self.state == Bbr3State::Drain
            && (c.in_flight <= self.inflight(self.bw, 1.0)
                || self.round_count > self.drain_start_round + DRAIN_MAX_ROUNDS)
        {
            self.enter_probe_bw();
        }
    }
}
