//! Loss recovery driven by duplicate ACKs: fast retransmit and NewReno fast recovery
//! (RFC 5681 section 3.2, RFC 6582 section 3.2), with limited transmit (RFC 3042).
//! Kept apart from congestion control (as ns-3 splits TcpRecoveryOps from
//! TcpCongestionOps): the controller chooses ssthresh, this code drives cwnd during recovery.

use super::Connection;
use crate::cc::AckEvent;
use crate::time::Time;

#[derive(Default, Debug)]
pub(crate) struct Recovery {
    pub dupacks: u32,
    pub in_recovery: bool,
    /// RFC 6582 `recover`, stored exclusive: the highest position sent when recovery began.
    pub recover: u64,
    partial_acked: bool,
    /// A retransmission requested by recovery, sent on the next poll.
    pub rtx_pending: Option<u64>,
    limited_transmit: bool,
    dupack_threshold: u32,
}

impl Recovery {
    /// Extra window RFC 3042 grants for the first two duplicate ACKs.
    pub fn limited_transmit_allowance(&self, mss: u64) -> u64 {
        if self.limited_transmit && !self.in_recovery && self.dupacks < self.dupack_threshold {
            self.dupacks.min(2) as u64 * mss
        } else {
            0
        }
    }

    pub fn on_timeout(&mut self, snd_max: u64) {
        // RFC 6582 section 4: after a timeout, duplicate ACKs for data sent before it must not
        // start a new fast recovery.
        self.recover = snd_max;
        self.in_recovery = false;
        self.dupacks = 0;
        self.rtx_pending = None;
    }
}

impl Connection {
    pub(super) fn on_dupack(&mut self, _now: Time) {
        let r = &mut self.recovery;
        r.limited_transmit = self.cfg.limited_transmit;
        r.dupack_threshold = self.cfg.dupack_threshold;
        r.dupacks += 1;
        if r.in_recovery {
            self.win.cwnd += self.win.mss; // RFC 6582 step 4: inflate per further duplicate
            return;
        }
        // RFC 6582 step 2: enter only if the ACK covers more than `recover`.
        if r.dupacks == self.cfg.dupack_threshold && self.snd_una >= r.recover {
            let flight = self.snd_max - self.snd_una;
            self.win.ssthresh = self.cc.ssthresh_after_loss(&self.win, flight, _now);
            self.win.cwnd = self.win.ssthresh + 3 * self.win.mss;
            let r = &mut self.recovery;
            r.in_recovery = true;
            r.recover = self.snd_max;
            r.partial_acked = false;
            r.rtx_pending = Some(self.snd_una);
            self.stats.fast_retransmits += 1;
        }
    }

    /// A new cumulative ACK (snd_una already advanced). Returns whether to restart the RTO.
    pub(super) fn on_ack_recovery(&mut self, ev: &AckEvent) -> bool {
        let r = &mut self.recovery;
        if !r.in_recovery {
            r.dupacks = 0;
            self.cc.on_ack(&mut self.win, ev);
            return true;
        }
        if self.snd_una >= r.recover {
            // Full ACK (RFC 6582 step 3, option 1).
            let flight = self.snd_max - self.snd_una;
            self.win.cwnd = self
                .win
                .ssthresh
                .min(flight.max(self.win.mss) + self.win.mss);
            r.in_recovery = false;
            r.dupacks = 0;
            return true;
        }
        // Partial ACK: retransmit the next hole, deflate by what was acked, add back one MSS.
        r.rtx_pending = Some(self.snd_una);
        self.win.cwnd = self.win.cwnd.saturating_sub(ev.acked);
        if ev.acked >= self.win.mss {
            self.win.cwnd += self.win.mss;
        }
        self.win.cwnd = self.win.cwnd.max(self.win.mss);
        // Reset the timer only on the first partial ACK (RFC 6582 step 5, "impatient").
        let first = !r.partial_acked;
        r.partial_acked = true;
        first
    }
}
