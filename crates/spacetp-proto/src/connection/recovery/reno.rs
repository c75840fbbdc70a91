//! TCP Reno fast retransmit and fast recovery (RFC 5681 section 3.2): on the third duplicate
//! ACK retransmit, set cwnd = ssthresh + 3 SMSS, inflate by one SMSS per further duplicate, and
//! deflate to ssthresh on the first ACK of new data, even a partial one (which is why several
//! losses in one window cost Reno several halvings or a timeout).

use super::{Ctx, LossRecovery};
use crate::cc::AckEvent;

#[derive(Default)]
pub(crate) struct Reno {
    in_recovery: bool,
    rtx: Option<u64>,
}

impl LossRecovery for Reno {
    fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    fn on_dupack(&mut self, c: &mut Ctx, dupacks: u32, _new_sack: bool) -> bool {
        if self.in_recovery {
            c.win.cwnd += c.win.mss;
            return false;
        }
        if dupacks != c.dupthresh {
            return false;
        }
        let ssthresh = c.reduce_ssthresh();
        c.win.cwnd = ssthresh + 3 * c.win.mss;
        self.in_recovery = true;
        self.rtx = Some(c.snd_una);
        true
    }

    fn on_new_ack(&mut self, c: &mut Ctx, ev: &AckEvent) -> bool {
        if self.in_recovery {
            c.win.cwnd = c.win.ssthresh;
            self.in_recovery = false;
            c.cc.on_recovery_exit(c.win, c.now);
        } else {
            c.cc.on_ack(c.win, ev);
        }
        true
    }

    fn on_timeout(&mut self, _snd_max: u64) {
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
