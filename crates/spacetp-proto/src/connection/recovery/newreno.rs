//! NewReno fast recovery (RFC 6582 section 3.2): stay in recovery until the ACK covers
//! `recover` (the highest position sent when it began), retransmitting the next hole on each
//! partial ACK; one window reduction per window of losses.
//!
//! With `prr`, cwnd during recovery follows RFC 6937 instead of inflation and deflation;
//! without SACK, each duplicate ACK counts as one segment delivered and pipe is estimated as
//! FlightSize less one segment per duplicate ACK (RFC 6937 section 3).

use super::{Ctx, LossRecovery};
use crate::cc::AckEvent;

#[derive(Default)]
pub(crate) struct NewReno {
    prr: Option<Prr>,
    in_recovery: bool,
    /// RFC 6582 `recover`, stored exclusive (the highest position sent, plus one).
    recover: u64,
    partial_acked: bool,
    rtx: Option<u64>,
}

/// RFC 6937 state: data delivered and sent since recovery began, the flight then, and the
/// duplicate ACKs seen since the last cumulative ACK (the pipe estimate without SACK).
#[derive(Default, Clone, Copy)]
struct Prr {
    delivered: u64,
    out: u64,
    recover_fs: u64,
    dupacks: u64,
}

impl NewReno {
    pub fn new(prr: bool) -> Self {
        NewReno {
            prr: prr.then(Prr::default),
            ..Default::default()
        }
    }

    fn prr_update(&mut self, c: &mut Ctx, delivered: u64) {
        let Some(p) = &mut self.prr else { return };
        let mss = c.win.mss;
        p.delivered += delivered;
        let pipe = c.flight_size().saturating_sub(p.dupacks * mss);
        let ssthresh = c.win.ssthresh;
        let sndcnt = super::prr_sndcnt(
            p.delivered,
            p.out,
            p.recover_fs,
            pipe,
            ssthresh,
            delivered,
            mss,
        );
        c.win.cwnd = pipe + sndcnt;
    }
}

impl LossRecovery for NewReno {
    fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    fn on_dupack(&mut self, c: &mut Ctx, dupacks: u32, _new_sack: bool) -> bool {
        if self.in_recovery {
            if let Some(p) = &mut self.prr {
                p.dupacks += 1;
                let mss = c.win.mss;
                self.prr_update(c, mss);
            } else {
                c.win.cwnd += c.win.mss; // step 4: inflate per further duplicate
            }
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
        if let Some(p) = &mut self.prr {
            *p = Prr {
                delivered: 0,
                out: 0,
                recover_fs: c.flight_size(),
                dupacks: dupacks as u64,
            };
            let mss = c.win.mss;
            self.prr_update(c, mss);
        }
        true
    }

    fn on_new_ack(&mut self, c: &mut Ctx, ev: &AckEvent) -> bool {
        if !self.in_recovery {
            c.cc.on_ack(c.win, ev);
            return true;
        }
        let mss = c.win.mss;
        if c.snd_una >= self.recover {
            // Step 3, full ACK, option 1 (RFC 6937: ssthresh).
            c.win.cwnd = if self.prr.is_some() {
                c.win.ssthresh
            } else {
                c.win.ssthresh.min(c.flight_size().max(mss) + mss)
            };
            self.in_recovery = false;
            // A retransmission not yet sent is acknowledged now.
            self.rtx = None;
            c.cc.on_recovery_exit(c.win, c.now);
            return true;
        }
        // Step 5, partial ACK: retransmit the next hole, deflate by what was acked, add back
        // one SMSS if at least one SMSS was acked.
        self.rtx = Some(c.snd_una);
        if let Some(p) = &mut self.prr {
            p.dupacks = 0;
            self.prr_update(c, ev.acked);
        } else {
            c.win.cwnd = c.win.cwnd.saturating_sub(ev.acked);
            if ev.acked >= mss {
                c.win.cwnd += mss;
            }
            c.win.cwnd = c.win.cwnd.max(mss);
        }
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

    fn on_timeout_undone(&mut self) {
        self.recover = 0;
    }

    fn next_retransmission(&mut self, _c: &Ctx) -> Option<u64> {
        self.rtx.take()
    }

    fn may_retransmit(&self) -> bool {
        self.rtx.is_some()
    }

    fn on_data_sent(&mut self, len: u64) {
        if let (true, Some(p)) = (self.in_recovery, &mut self.prr) {
            p.out += len;
        }
    }

    fn flight(&self, c: &Ctx) -> u64 {
        match (&self.prr, self.in_recovery) {
            // PRR's cwnd is pipe + sndcnt: compare against the same pipe estimate.
            (Some(p), true) => (*c.snd_nxt - c.snd_una).saturating_sub(p.dupacks * c.win.mss),
            _ => *c.snd_nxt - c.snd_una,
        }
    }
}
