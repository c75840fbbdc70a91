//! The connection's recovery algorithm, one of a closed set: an enum rather than a trait
//! object, so that each call is a branch on the variant (the same one from the handshake
//! on, so always predicted) the compiler can inline, not an indirect call. The output path
//! asks the policy on every poll and an ACK several times; through a vtable those calls cost
//! a paced BBR sender 2.6% of its wall (D, 100 s: 0.353 -> 0.344 s).

use super::{fack, newreno, peach, rack, reno, sack, tahoe, Ctx, LossRecovery};
use crate::cc::AckEvent;
use crate::config::RecoveryKind;

/// One recovery algorithm (see the module list in `recovery/mod.rs`).
pub(crate) enum Policy {
    Tahoe(tahoe::Tahoe),
    Reno(reno::Reno),
    NewReno(newreno::NewReno),
    Peach(peach::PeachRecovery),
    Sack(sack::ScoreboardRecovery<sack::Rfc6675>),
    Fack(sack::ScoreboardRecovery<fack::Fack>),
    Rack(sack::ScoreboardRecovery<rack::Rack>),
}

impl Policy {
    /// The algorithm `kind` names; a SACK-based one without SACK negotiated falls back to
    /// NewReno.
    pub fn new(kind: RecoveryKind, sack_ok: bool, prr: bool) -> Self {
        match (kind, sack_ok) {
            (RecoveryKind::Tahoe, _) => Policy::Tahoe(Default::default()),
            (RecoveryKind::Reno, _) => Policy::Reno(Default::default()),
            (RecoveryKind::Peach, _) => Policy::Peach(Default::default()),
            (RecoveryKind::Sack, true) => Policy::Sack(sack::ScoreboardRecovery::new(prr)),
            (RecoveryKind::Fack, true) => Policy::Fack(sack::ScoreboardRecovery::new(prr)),
            (RecoveryKind::Rack, true) => Policy::Rack(sack::ScoreboardRecovery::new(prr)),
            (
                RecoveryKind::Newreno
                | RecoveryKind::Sack
                | RecoveryKind::Fack
                | RecoveryKind::Rack,
                _,
            ) => Policy::NewReno(newreno::NewReno::new(prr)),
        }
    }
}

/// `$body` with `$r` bound to the variant's algorithm.
macro_rules! each {
    ($self:expr, $r:ident => $body:expr) => {
        match $self {
            Policy::Tahoe($r) => $body,
            Policy::Reno($r) => $body,
            Policy::NewReno($r) => $body,
            Policy::Peach($r) => $body,
            Policy::Sack($r) => $body,
            Policy::Fack($r) => $body,
            Policy::Rack($r) => $body,
        }
    };
}

impl LossRecovery for Policy {
    #[inline]
    fn in_recovery(&self) -> bool {
        each!(self, r => r.in_recovery())
    }

    fn on_dupack(&mut self, c: &mut Ctx, dupacks: u32, new_sack: bool) -> bool {
        each!(self, r => r.on_dupack(c, dupacks, new_sack))
    }

    fn on_new_ack(&mut self, c: &mut Ctx, ev: &AckEvent) -> bool {
        each!(self, r => r.on_new_ack(c, ev))
    }

    fn on_timeout(&mut self, snd_max: u64) {
        each!(self, r => r.on_timeout(snd_max))
    }

    fn on_timeout_undone(&mut self) {
        each!(self, r => r.on_timeout_undone())
    }

    fn next_retransmission(&mut self, c: &Ctx) -> Option<u64> {
        each!(self, r => r.next_retransmission(c))
    }

    #[inline]
    fn may_retransmit(&self) -> bool {
        each!(self, r => r.may_retransmit())
    }

    fn on_retransmit(&mut self, pos: u64, end: u64) {
        each!(self, r => r.on_retransmit(pos, end))
    }

    #[inline]
    fn on_data_sent(&mut self, len: u64) {
        each!(self, r => r.on_data_sent(len))
    }

    #[inline]
    fn flight(&self, c: &Ctx) -> u64 {
        each!(self, r => r.flight(c))
    }
}
