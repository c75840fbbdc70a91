//! A simulated attacker (`[[attacks]]`): spoofed segments handed to one end of a flow as if
//! they had just arrived from its peer, to show what RFC 5961 (`spacetp-proto`'s
//! `connection/validation.rs`) does end to end. The attacker sits on the victim's last
//! link: its segments reach the victim at the scheduled instants, with the peer's ports.
//!
//! Its sequence number is `blind` (uniform over 32 bits, from the attack's own random
//! stream), `in_window` (inside the victim's receive window, not at its next expected
//! number: what a blind attacker hopes for) or `exact` (the victim's next expected number:
//! an attacker on the path who reads it off the link, against whom no TCP defence helps).

use crate::rng::Rng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use spacetp_proto::units::Duration;
use spacetp_proto::FieldError;
use spacetp_proto::{Connection, Time};
use spacetp_wire::{flags, TcpHeader};

/// Which end of the flow receives the spoofed segments.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AttackTarget {
    /// The end that receives the flow's data.
    #[default]
    Receiver,
    /// The end that sends it.
    Sender,
}

/// What the spoofed segment is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AttackKind {
    /// A reset.
    Rst,
    /// A SYN on the running connection.
    Syn,
    /// 1000 bytes of data with a valid acknowledgment number.
    Data,
    /// 1000 bytes of data acknowledging 10 MB the victim never sent.
    Ack,
}

/// How the spoofed sequence number is chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SeqChoice {
    /// Uniform over the 32-bit sequence space.
    #[default]
    Blind,
    /// Inside the victim's receive window, past its next expected number.
    InWindow,
    /// Exactly the victim's next expected number (an attacker on the path).
    Exact,
}

/// One attack (`[[attacks]]`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AttackCfg {
    /// Index of the attacked flow in `[[flows]]`.
    pub flow: usize,
    /// Which end of it receives the spoofed segments.
    #[serde(default)]
    pub target: AttackTarget,
    /// What the segments are: rst, syn, data, ack.
    pub kind: AttackKind,
    /// How their sequence numbers are chosen: blind, in_window, exact.
    #[serde(default)]
    pub seq: SeqChoice,
    /// When the first one arrives.
    #[serde(default)]
    pub start: Duration,
    /// How many (at least 1).
    #[serde(default = "one")]
    pub count: u64,
    /// Between two.
    #[serde(default = "ten_ms")]
    pub interval: Duration,
}

fn one() -> u64 {
    1
}

fn ten_ms() -> Duration {
    Duration(10 * spacetp_proto::MS)
}

/// What an attack did (in the run's summary).
#[derive(Clone, Debug, Default, Serialize)]
pub struct AttackSummary {
    pub flow: usize,
    pub target: String,
    pub kind: String,
    pub seq: String,
    /// Segments handed to the victim (none before its connection exists or after it ended).
    pub injected: u64,
    /// Forged payload bytes the victim took in as data: in a real transfer (the gateway)
    /// these would be wrong bytes in the stream. RFC 5961 cannot stop data at the right
    /// sequence number with a valid acknowledgment.
    pub forged_bytes_accepted: u64,
}

/// An attack under way.
pub struct Attacker {
    pub cfg: AttackCfg,
    pub rng: Rng,
    pub sent: u64,
    pub injected: u64,
    pub forged_bytes_accepted: u64,
}

impl AttackCfg {
    /// Errors name the field, e.g. `attacks[0].flow: 3, but the scenario has 2 flows`.
    pub fn validate(&self, i: usize, flows: usize) -> Result<(), FieldError> {
        let p = format!("attacks[{i}]");
        if self.flow >= flows {
            return Err(FieldError::new(
                format!("{p}.flow"),
                format!(
                    "{}, but the scenario has {flows} flow(s) (indices from 0)",
                    self.flow
                ),
            ));
        }
        if self.count == 0 {
            return Err(FieldError::new(format!("{p}.count"), "must be at least 1"));
        }
        if self.count > 1 && self.interval.0 == 0 {
            return Err(FieldError::new(
                format!("{p}.interval"),
                "must be > 0 when count > 1",
            ));
        }
        Ok(())
    }
}

impl Attacker {
    /// The next spoofed segment for `victim` and its payload length.
    pub fn forge(&mut self, victim: &Connection) -> (TcpHeader, u32) {
        let next = victim.rcv_nxt_wire();
        let window = (victim.config().receive_buffer.0 / 2).max(2);
        let seq = match self.cfg.seq {
            SeqChoice::Blind => self.rng.next_u64() as u32,
            SeqChoice::InWindow => next.wrapping_add(1 + self.rng.below(window - 1) as u32),
            SeqChoice::Exact => next,
        };
        let valid_ack = victim.snd_wire(victim.snd_una());
        let (fl, ack, len) = match self.cfg.kind {
            AttackKind::Rst => (flags::RST, 0, 0),
            AttackKind::Syn => (flags::SYN, 0, 0),
            AttackKind::Data => (flags::ACK, valid_ack, 1000),
            AttackKind::Ack => (
                flags::ACK,
                victim.snd_wire(victim.snd_max() + 10_000_000),
                1000,
            ),
        };
        let hdr = TcpHeader {
            seq,
            ack,
            flags: fl,
            window: 65535,
            ..Default::default()
        };
        (hdr, len)
    }

    /// When the next one is due, if any.
    pub fn next_at(&self) -> Option<Time> {
        (self.sent < self.cfg.count).then(|| self.cfg.start.0 + self.sent * self.cfg.interval.0)
    }

    pub fn summary(&self) -> AttackSummary {
        AttackSummary {
            flow: self.cfg.flow,
            target: match self.cfg.target {
                AttackTarget::Receiver => "receiver",
                AttackTarget::Sender => "sender",
            }
            .into(),
            kind: match self.cfg.kind {
                AttackKind::Rst => "rst",
                AttackKind::Syn => "syn",
                AttackKind::Data => "data",
                AttackKind::Ack => "ack",
            }
            .into(),
            seq: match self.cfg.seq {
                SeqChoice::Blind => "blind",
                SeqChoice::InWindow => "in_window",
                SeqChoice::Exact => "exact",
            }
            .into(),
            injected: self.injected,
            forged_bytes_accepted: self.forged_bytes_accepted,
        }
    }
}
