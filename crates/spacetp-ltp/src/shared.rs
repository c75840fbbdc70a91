//! What every span of an engine shares: the engine's ID and settings, its seeded numbers,
//! its timers and notices, and its export sessions' numbers (open, and recently closed).

use std::collections::{BTreeMap, VecDeque};

use spacetp_proto::Time;

use crate::config::EngineConfig;
use crate::event::Event;
use crate::stats::EngineStats;
use crate::timer::Timers;

/// SplitMix64: the engine's only source of numbers that look random, from the seed.
#[derive(Clone, Debug)]
pub(crate) struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// A first serial number: from 1 to 16383, as ION keeps them to two SDNV bytes
    /// (LTP_SERIAL_NBR_LIMIT).
    pub fn serial(&mut self) -> u64 {
        1 + self.next() % 16383
    }
}

/// A closed export session whose late reports are still acknowledged.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ClosedExport {
    pub peer: u64,
    pub until: Time,
    pub answers_left: u32,
}

/// What every span of the engine shares.
pub(crate) struct Shared {
    pub local: u64,
    pub cfg: EngineConfig,
    pub rng: Rng,
    pub timers: Timers,
    pub events: VecDeque<Event>,
    /// Export sessions (open or canceling) and the peer each goes to.
    pub export_index: BTreeMap<u64, u64>,
    pub closed_exports: BTreeMap<u64, ClosedExport>,
    /// Closed export sessions in the order they expire.
    pub closed_export_order: VecDeque<(u64, Time)>,
    pub next_session: u64,
    pub stats: EngineStats,
}

impl Shared {
    pub fn note_closed_export(&mut self, session: u64, c: ClosedExport) {
        self.closed_export_order.push_back((session, c.until));
        self.closed_exports.insert(session, c);
    }

    /// The next session number: numbers run from a seeded start through 2^32 - 1 (the
    /// CCSDS profile's 32 bits, ION's unsigned int) and wrap to 1, skipping numbers in use.
    pub fn new_session_number(&mut self) -> u64 {
        loop {
            let n = self.next_session;
            self.next_session = if n >= u32::MAX as u64 { 1 } else { n + 1 };
            if !self.export_index.contains_key(&n) && !self.closed_exports.contains_key(&n) {
                return n;
            }
        }
    }
}
