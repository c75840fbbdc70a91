//! SACK-based loss recovery on the scoreboard (RFC 6675): enter on DupThresh duplicate ACKs
//! or when the first unacknowledged segment IsLost; set cwnd = ssthresh; retransmit the first
//! unacknowledged segment at once, whatever cwnd and pipe say (section 5, step 4.3); while
//! cwnd - pipe >= 1 SMSS send NextSeg (lost holes first, then new data, then, with nothing
//! new to send, the first unSACKed hole below the highest SACK); leave when the cumulative ACK
//! passes RecoveryPoint. What "lost" and "pipe" mean is the policy's: RFC 6675 here, FACK in
//! `fack.rs`.

use super::{Ctx, LossRecovery};
use crate::cc::AckEvent;
use std::marker::PhantomData;

/// The two rules in which SACK variants differ.
pub(crate) trait LossPolicy: Send {
    /// Unsacked positions below this are lost.
    fn lost_boundary(c: &Ctx) -> u64;
    /// Whether recovery starts on this duplicate ACK.
    fn should_enter(c: &Ctx, dupacks: u32) -> bool;
    /// Data in the network, given the highest position retransmitted in this recovery.
    fn pipe(c: &Ctx, high_rxt: u64) -> u64;

    /// The lost position to retransmit next, at or after `hole` (the first unSACKed
    /// position above the last retransmission).
    fn next_lost(c: &Ctx, hole: u64) -> Option<u64> {
        (hole < Self::lost_boundary(c)).then_some(hole)
    }

    /// What the fast retransmit on entering recovery resends.
    fn fast_retransmit(c: &Ctx) -> u64 {
        c.snd_una
    }

    /// RFC 6675 NextSeg rule 3: with nothing new to send, resend the first unSACKed hole
    /// below the highest SACK even if it is not deemed lost.
    const RESCUE: bool = true;
}

/// RFC 6675.
#[derive(Default)]
pub(crate) struct Rfc6675;

impl LossPolicy for Rfc6675 {
    fn lost_boundary(c: &Ctx) -> u64 {
        c.board.lost_boundary(c.dupthresh, c.win.mss).min(c.snd_max)
    }

    fn should_enter(c: &Ctx, dupacks: u32) -> bool {
        dupacks >= c.dupthresh || Self::lost_boundary(c) > c.snd_una
    }

    /// Section 4: each unSACKed byte counts once if not lost and once more if retransmitted.
    fn pipe(c: &Ctx, high_rxt: u64) -> u64 {
        let b = c.board;
        let lost_to = Self::lost_boundary(c).max(c.snd_una);
        b.unsacked_in(c.snd_una, c.snd_max) - b.unsacked_in(c.snd_una, lost_to)
            + b.unsacked_in(c.snd_una, high_rxt.min(c.snd_max))
    }
}

pub(crate) struct ScoreboardRecovery<P: LossPolicy> {
    in_recovery: bool,
    recovery_point: u64,
    /// End of the highest retransmission in this recovery (RFC 6675 HighRxt, exclusive).
    high_rxt: u64,
    /// The fast retransmit of the segment at snd_una is still to be sent (RFC 6675 step 4.3:
    /// it is not gated by cwnd - pipe, which a receiver-limited sender entering recovery
    /// with pipe near twice the new cwnd would otherwise wait half a window of ACKs for).
    fast_rxt: bool,
    /// Proportional rate reduction (RFC 6937) instead of cwnd = ssthresh at once.
    prr: Option<Prr>,
    policy: PhantomData<P>,
}

/// RFC 6937 state: data delivered and sent since recovery began, and the flight then.
#[derive(Default, Clone, Copy)]
struct Prr {
    delivered: u64,
    out: u64,
    recover_fs: u64,
}

impl<P: LossPolicy> ScoreboardRecovery<P> {
    pub fn new(prr: bool) -> Self {
        ScoreboardRecovery {
            in_recovery: false,
            recovery_point: 0,
            high_rxt: 0,
            fast_rxt: false,
            prr: prr.then(Prr::default),
            policy: PhantomData,
        }
    }

    /// RFC 6937 section 3: on each ACK in recovery, cwnd = pipe + sndcnt, sndcnt following
    /// ssthresh / RecoverFS of what was delivered while pipe > ssthresh, and slow start
    /// (bounded by what was delivered, PRR-SSRB) once pipe is below ssthresh.
    fn prr_update(&mut self, c: &mut Ctx) {
        let high_rxt = self.high_rxt;
        let Some(prr) = &mut self.prr else { return };
        prr.delivered += c.delivered;
        let pipe = P::pipe(c, high_rxt);
        let ssthresh = c.win.ssthresh;
        let (d, o, fs) = (prr.delivered, prr.out, prr.recover_fs);
        let sndcnt = super::prr_sndcnt(d, o, fs, pipe, ssthresh, c.delivered, c.win.mss);
        c.win.cwnd = pipe + sndcnt;
    }
}

impl<P: LossPolicy> LossRecovery for ScoreboardRecovery<P> {
    fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    fn on_dupack(&mut self, c: &mut Ctx, dupacks: u32, _new_sack: bool) -> bool {
        if self.in_recovery {
            self.prr_update(c);
            return false;
        }
        if c.snd_una < self.recovery_point || !P::should_enter(c, dupacks) {
            return false;
        }
        let ssthresh = c.reduce_ssthresh();
        c.win.cwnd = ssthresh;
        self.in_recovery = true;
        self.recovery_point = c.snd_max;
        self.high_rxt = c.snd_una;
        self.fast_rxt = true;
        if let Some(prr) = &mut self.prr {
            *prr = Prr {
                delivered: 0,
                out: 0,
                recover_fs: c.flight_size(),
            };
            self.prr_update(c);
        }
        true
    }

    fn on_new_ack(&mut self, c: &mut Ctx, ev: &AckEvent) -> bool {
        if !self.in_recovery {
            c.cc.on_ack(c.win, ev);
            return true;
        }
        if c.snd_una >= self.recovery_point {
            self.in_recovery = false;
            if self.prr.is_some() {
                c.win.cwnd = c.win.ssthresh; // RFC 6937: recovery ends at ssthresh
            }
            c.cc.on_recovery_exit(c.win, c.now);
        } else {
            self.high_rxt = self.high_rxt.max(c.snd_una);
            self.prr_update(c);
        }
        true
    }

    fn on_timeout(&mut self, snd_max: u64) {
        self.in_recovery = false;
        self.recovery_point = snd_max;
        self.high_rxt = 0;
        self.fast_rxt = false;
    }

    fn on_timeout_undone(&mut self) {
        self.recovery_point = 0;
    }

    fn next_retransmission(&mut self, c: &Ctx) -> Option<u64> {
        if self.in_recovery && std::mem::take(&mut self.fast_rxt) {
            return Some(P::fast_retransmit(c));
        }
        if !self.in_recovery || c.win.cwnd < self.flight(c) + c.win.mss {
            return None;
        }
        let from = self.high_rxt.max(c.snd_una);
        let hole = c.board.next_unsacked(from);
        // Rule 1: the first lost hole not yet retransmitted.
        if let Some(lost) = P::next_lost(c, hole) {
            return Some(lost);
        }
        // Rule 3: nothing new to send: retransmit the first unSACKed hole below the highest
        // SACK.
        if P::RESCUE && !c.new_data && hole < c.board.highest(c.snd_una) {
            return Some(hole);
        }
        None
    }

    /// Outside a recovery it retransmits nothing.
    fn may_retransmit(&self) -> bool {
        self.in_recovery
    }

    fn on_retransmit(&mut self, _pos: u64, end: u64) {
        self.high_rxt = self.high_rxt.max(end);
    }

    fn on_data_sent(&mut self, len: u64) {
        if let (true, Some(prr)) = (self.in_recovery, &mut self.prr) {
            prr.out += len;
        }
    }

    fn flight(&self, c: &Ctx) -> u64 {
        if self.in_recovery {
            P::pipe(c, self.high_rxt)
        } else {
            *c.snd_nxt - c.snd_una
        }
    }
}
