//! Drain: once Startup filled the pipe, pace at the inverse of its gain until what is in
//! flight is no more than one BDP (plus the quantization budget), then ProbeBW
//! (`bbr_check_drain`). ssthresh is set to that BDP, as Linux does, for reports only.

use super::{Bbr, BbrMode};
use crate::cc::{ControlInput, Window};

impl Bbr {
    pub(super) fn check_drain(&mut self, w: &mut Window, c: &ControlInput) {
        if self.mode == BbrMode::Startup && self.startup.reached() {
            self.mode = BbrMode::Drain;
            w.ssthresh = self.inflight(self.max_bw(), 1.0);
        }
        if self.mode == BbrMode::Drain && c.in_flight <= self.inflight(self.max_bw(), 1.0) {
            self.enter_probe_bw();
        }
    }
}
