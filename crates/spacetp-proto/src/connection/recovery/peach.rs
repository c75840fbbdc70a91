//! TCP-Peach+ loss recovery: NewReno's fast retransmit and partial-ACK repair, but cwnd is
//! simply halved (no inflation or deflation) because Quick Recovery's NIL segments, not
//! duplicate ACKs, rebuild the window (`connection/peach.rs`). Leaving recovery keeps the
//! window the NIL ACKs have rebuilt.

use super::{Ctx, LossRecovery};
use crate::cc::AckEvent;

#[derive(Default)]
pub(crate) struct PeachRecovery {
    in_recovery: bool,
    recover: u64,
    partial_acked: bool,
    rtx: Option<u64>,
}

impl LossRecovery for PeachRecovery {
    fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    fn on_dupack(&mut self, c: &mut Ctx, dupacks: u32, _new_sack: bool) -> bool {
        if self.in_recovery || dupacks != c.dupthresh || c.snd_una < self.recover {
            return false;
        }
        c.win.cwnd = c.reduce_ssthresh();
        self.in_recovery = true;
        self.recover = c.snd_max;
        self.partial_acked = false;
        self.rtx = Some(c.snd_una);
        true
    }

    fn on_new_ack(&mut self, c: &mut Ctx, ev: &AckEvent) -> bool {
        if !self.in_recovery {
            c.cc.on_ack(c.win, ev);
            return true;
        }
        if c.snd_una >= self.recover {
            self.in_recovery = false;
            c.cc.on_recovery_exit(c.win, c.now);
            return true;
        }
        self.rtx = Some(c.snd_una);
        let first = !self.partial_acked;
        self.partial_acked = true;
        first
    }

    fn on_timeout(&mut self, snd_max: u64) {
        self.recover = snd_max;
        self.in_recovery = false;
        self.rtx = None;
    }

    fn next_retransmission(&mut self, _c: &Ctx) -> Option<u64> {
        self.rtx.take()
    }

    fn may_retransmit(&self) -> bool {
        self.rtx.is_some()
    }
}
