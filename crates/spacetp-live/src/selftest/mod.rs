//! The gateway's self-test: a gateway pair and the emulator in threads of this process,
//! joined by datagram socket pairs through a tap that sees every packet and can inject
//! forged ones, with kernel-TCP ends on loopback. Needs no root. The attack catalogue
//! ([`selftest`]) replays every class of injected packet a user has tried against a live
//! pair, during a real transfer, and reports what the gateways did and whether the
//! transfer was affected (`benches/gateway_attacks.py` prints it as a table). The gateway's
//! tests use the same harness.
//!
//! `tap.rs` sits on the link, `harness.rs` runs the pair and the kernel-TCP ends,
//! `attacks.rs` is the catalogue.

mod attacks;
mod harness;
mod tap;

pub use attacks::{selftest, AttackRow};
pub(crate) use harness::*;
pub(crate) use tap::{forged, Seen, Tap};

/// What a test makes a running gateway do.
pub(crate) const RUN: u8 = 0;
/// `begin_stop`, as a signal does.
pub(crate) const STOP: u8 = 1;
/// Vanish without a word (the gateway is dropped), as with SIGKILL.
pub(crate) const CRASH: u8 = 2;
