//! TCP Tahoe (Jacobson 1988, 4.3BSD-Tahoe): on the third duplicate ACK retransmit, halve
//! ssthresh, and slow start again from one segment, going back to the first unacknowledged
//! byte. No fast recovery.

use super::{Ctx, LossRecovery};
use crate::cc::AckEvent;

#[derive(Default)]
pub(crate) struct Tahoe {
    /// Highest position sent when the last loss was handled: duplicates of older data must not
    /// trigger again (as NewReno's `recover`).
    recover: u64,
}

impl LossRecovery for Tahoe {
    fn in_recovery(&self) -> bool {
        false
    }

    fn on_dupack(&mut self, c: &mut Ctx, dupacks: u32, _new_sack: bool) -> bool {
        if dupacks != c.dupthresh || c.snd_una < self.recover {
            return false;
        }
        c.reduce_ssthresh();
        c.win.cwnd = c.win.mss;
        self.recover = c.snd_max;
        *c.snd_nxt = c.snd_una; // go back N: the lost segment first, then everything after
        true
    }

    fn on_new_ack(&mut self, c: &mut Ctx, ev: &AckEvent) -> bool {
        c.cc.on_ack(c.win, ev);
        true
    }

    fn on_timeout(&mut self, snd_max: u64) {
        self.recover = snd_max;
    }

    fn next_retransmission(&mut self, _c: &Ctx) -> Option<u64> {
        None // retransmissions are the go-back-N resends of ordinary sending
    }

    fn may_retransmit(&self) -> bool {
        false
    }
}
