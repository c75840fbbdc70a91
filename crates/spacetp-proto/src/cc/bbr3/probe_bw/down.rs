//! ProbeBW_DOWN (5.3.3.1): pace at 0.90 x bw to drain the queue the probe made; on to CRUISE
//! once what is in flight is at most both the headroom target ((1 - BBR.Headroom) x
//! inflight_longterm, when that is set) and the BDP; or to REFILL if it is time to probe.

use super::AckPhase;
use crate::cc::bbr3::{Bbr3, Bbr3State, INF};
use crate::cc::ControlInput;

impl Bbr3 {
    /// 5.3.3.9 StartProbeBW_DOWN.
    pub(in crate::cc::bbr3) fn start_probe_bw_down(&mut self) {
        self.reset_congestion_signals();
        self.probe.probe_up_acked_per_inc = INF;
        self.pick_probe_wait();
        self.probe.cycle_stamp = self.now;
        self.probe.ack_phase = AckPhase::ProbeStopping;
        self.start_round();
        self.state = Bbr3State::ProbeBwDown;
    }

    /// 5.3.3.9 IsTimeToCruise.
    pub(super) fn is_time_to_cruise(&self, c: &ControlInput) -> bool {
        c.in_flight <= self.inflight_with_headroom()
            && c.in_flight <= self.inflight(self.max_bw, 1.0)
    }
}
