//! SACK-based loss recovery on the scoreboard (RFC 6675): enter on DupThresh duplicate ACKs
//! or when the first unacknowledged segment IsLost; set cwnd = ssthresh; while
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
    policy: PhantomData<P>,
}

impl<P: LossPolicy> Default for ScoreboardRecovery<P> {
    fn default() -> Self {
        ScoreboardRecovery {
            in_recovery: false,
            recovery_point: 0,
            high_rxt: 0,
            policy: PhantomData,
        }
    }
}

impl<P: LossPolicy> LossRecovery for ScoreboardRecovery<P> {
    fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    fn on_dupack(&mut self, c: &mut Ctx, dupacks: u32, _new_sack: bool) -> bool {
        if self.in_recovery || c.snd_una < self.recovery_point || !P::should_enter(c, dupacks) {
            return false;
        }
        let ssthresh = c.reduce_ssthresh();
        c.win.cwnd = ssthresh;
        self.in_recovery = true;
        self.recovery_point = c.snd_max;
        self.high_rxt = c.snd_una;
        true
    }

    fn on_new_ack(&mut self, c: &mut Ctx, ev: &AckEvent) -> bool {
        if !self.in_recovery {
            c.cc.on_ack(c.win, ev);
            return true;
        }
        if c.snd_una >= self.recovery_point {
            self.in_recovery = false;
            c.cc.on_recovery_exit(c.win, c.now);
        } else {
            self.high_rxt = self.high_rxt.max(c.snd_una);
        }
        true
    }

    fn on_timeout(&mut self, snd_max: u64) {
        self.in_recovery = false;
        self.recovery_point = snd_max;
        self.high_rxt = 0;
    }

    fn next_retransmission(&mut self, c: &Ctx) -> Option<u64> {
        if !self.in_recovery || c.win.cwnd < self.flight(c) + c.win.mss {
            return None;
        }
        let from = self.high_rxt.max(c.snd_una);
        let hole = c.board.next_unsacked(from);
        // Rule 1: the first lost hole not yet retransmitted.
        if hole < P::lost_boundary(c) {
            return Some(hole);
        }
        // Rule 3: nothing new to send: retransmit the first unSACKed hole below the highest
        // SACK.
        if !c.new_data && hole < c.board.highest(c.snd_una) {
            return Some(hole);
        }
        None
    }

    fn on_retransmit(&mut self, _pos: u64, end: u64) {
        self.high_rxt = self.high_rxt.max(end);
    }

    fn flight(&self, c: &Ctx) -> u64 {
        if self.in_recovery {
            P::pipe(c, self.high_rxt)
        } else {
            *c.snd_nxt - c.snd_una
        }
    }
}
