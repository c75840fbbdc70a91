//! ProbeBW_CRUISE (5.3.3.2): pace at bw (gain 1), cwnd capped with headroom below
//! inflight_longterm; losses cut the short-term model (`bounds.rs`); until it is time to
//! probe again (`timing.rs`).

use crate::cc::bbr3::{Bbr3, Bbr3State};

impl Bbr3 {
    /// 5.3.3.9 StartProbeBW_CRUISE.
    pub(in crate::cc::bbr3) fn start_probe_bw_cruise(&mut self) {
        self.state = Bbr3State::ProbeBwCruise;
    }
}
