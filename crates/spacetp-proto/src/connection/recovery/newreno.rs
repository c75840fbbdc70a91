//! NewReno fast recovery (RFC 6582 section 3.2): stay in recovery until the ACK covers
//! `recover` (the highest position sent when it began), retransmitting the next hole on each
//! partial ACK; one window reduction per window of losses.

use super::{Ctx, LossRecovery};
use crate::cc::AckEvent;

#[derive(Default)]
pub(crate) struct NewReno {
    in_recovery: bool,
    /// RFC 6582 `recover`, stored exclusive (the highest position sent, plus one).
    recover: u64,
    partial_acked: bool,
    rtx: Option<u64>,
}

impl LossRecovery for NewReno {
    fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    fn on_dupack(&mut self, c: &mut Ctx, dupacks: u32, _new_sack: bool) -> bool {
        if self.in_recovery {
            c.win.cwnd += c.win.mss; // step 4: inflate per further duplicate
            return false;
        }
        // Step 2: enter only if the ACK covers more than `recover`.
        if dupacks != c.dupthresh || c.snd_una < self.recover {
            return false;
        }
        let ssthresh = c.reduce_ssthresh();
        c.win.cwnd = ssthresh + 3 * c.win.mss;
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
        let mss = c.win.mss;
        if c.snd_una >= self.recover {
            // Step 3, full ACK, option 1.
            c.win.cwnd = c.win.ssthresh.min(c.flight_size().max(mss) + mss);
            self.in_recovery = false;
            c.cc.on_recovery_exit(c.win, c.now);
            return true;
        }
        // Step 5, partial ACK: retransmit the next hole, deflate by what was acked, add back
        // one SMSS if at least one SMSS was acked.
        self.rtx = Some(c.snd_una);
        c.win.cwnd = c.win.cwnd.saturating_sub(ev.acked);
        if ev.acked >= mss {
            c.win.cwnd += mss;
        }
        c.win.cwnd = c.win.cwnd.max(mss);
        // Reset the timer only on the first partial ACK ("impatient" variant).
        let first = !self.partial_acked;
        self.partial_acked = true;
        first
    }

    fn on_timeout(&mut self, snd_max: u64) {
        // Section 4: after a timeout, duplicates of data sent before it start no recovery.
        self.recover = snd_max;
        self.in_recovery = false;
        self.rtx = None;
    }

    fn next_retransmission(&mut self, _c: &Ctx) -> Option<u64> {
        self.rtx.take()
    }
}
