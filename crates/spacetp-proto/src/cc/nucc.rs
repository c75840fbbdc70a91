//! No congestion control (SCPS-TP "NUCC", Edwards et al. case 2B): the window never shrinks or
//! grows with ACKs; the sender is limited by the receiver's window and, in SCPS-TP, by its
//! token-bucket rate control. The connection opens the window to the receive window at start.

use super::{AckEvent, CongestionControl, ControllerFactory, Window};
use crate::time::Time;

#[derive(Default, Debug)]
pub struct Nucc;

/// It has no settings: the controller is its own factory.
impl ControllerFactory for Nucc {
    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(Nucc)
    }
}

/// A window no receiver advertises: the peer's window and the rate control decide.
pub const OPEN: u64 = 1 << 40;

impl CongestionControl for Nucc {
    fn name(&self) -> &'static str {
        "none"
    }

    fn on_ack(&mut self, w: &mut Window, _ev: &AckEvent) {
        w.cwnd = OPEN;
    }

    fn ssthresh_after_loss(&mut self, _w: &Window, _flight: u64, _now: Time) -> u64 {
        OPEN
    }

    fn on_timeout(&mut self, w: &mut Window, _flight: u64, _now: Time) {
        w.cwnd = OPEN;
        w.ssthresh = OPEN;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_util::window;

    #[test]
    fn losses_and_timeouts_leave_the_window_open() {
        let mut c = Nucc;
        let mut w = window(1000, u64::MAX, 1000);
        c.on_ack(&mut w, &AckEvent::default());
        assert_eq!(w.cwnd, OPEN);
        assert_eq!(c.ssthresh_after_loss(&w, 50_000, 0), OPEN);
        c.on_timeout(&mut w, 50_000, 0);
        assert_eq!((w.cwnd, w.ssthresh), (OPEN, OPEN));
    }
}
