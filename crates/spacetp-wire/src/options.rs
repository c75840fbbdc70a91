//! TCP options as fields. Fixed-size (no heap) so a header is `Copy`.

/// At most this many SACK blocks fit in a header (RFC 2018: 4 without timestamps).
pub const MAX_SACK_BLOCKS: usize = 4;
/// At most this many SNACK options are carried in one header (6 x 6 bytes = 36 of 40).
pub const MAX_SNACKS: usize = 6;
/// At most this many bit-vector bytes are kept per SNACK (longer ones are truncated on decode).
pub const MAX_SNACK_BITVEC: usize = 8;
/// TCP options occupy at most 40 bytes (data offset 15 words minus the 20-byte header).
pub const MAX_OPTIONS_LEN: u32 = 40;

/// TCP option kinds (IANA registry; 20-23 are the SCPS-TP options of CCSDS 714.0-B-2).
pub mod kind {
    pub const EOL: u8 = 0;
    pub const NOP: u8 = 1;
    pub const MSS: u8 = 2;
    pub const WINDOW_SCALE: u8 = 3;
    pub const SACK_PERMITTED: u8 = 4;
    pub const SACK: u8 = 5;
    pub const TIMESTAMPS: u8 = 8;
    pub const SCPS_CAPABILITIES: u8 = 20;
    pub const SNACK: u8 = 21;
    pub const RECORD_BOUNDARY: u8 = 22;
    pub const CORRUPTION_EXPERIENCED: u8 = 23;
}

/// RFC 7323 timestamps option (kind 8, length 10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Timestamps {
    pub val: u32,
    pub ecr: u32,
}

/// SACK blocks (kind 5): `[left, right)` pairs of 32-bit sequence numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SackBlocks {
    pub blocks: [(u32, u32); MAX_SACK_BLOCKS],
    pub len: u8,
}

/// The first `len` of a fixed-capacity list's `items`. Clamped: `len` is public, and a bad
/// value must not panic (validate() reports it).
fn filled<T>(items: &[T], len: u8) -> &[T] {
    &items[..(len as usize).min(items.len())]
}

/// Appends `item` to a fixed-capacity list; false if it is full.
fn push_within<T>(items: &mut [T], len: &mut u8, item: T) -> bool {
    if (*len as usize) < items.len() {
        items[*len as usize] = item;
        *len += 1;
        true
    } else {
        false
    }
}

impl SackBlocks {
    pub fn as_slice(&self) -> &[(u32, u32)] {
        filled(&self.blocks, self.len)
    }
    pub fn push(&mut self, left: u32, right: u32) -> bool {
        push_within(&mut self.blocks, &mut self.len, (left, right))
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// SCPS capabilities option (kind 20, length 4), CCSDS 714.0-B-2 section 3.2.3.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ScpsCapabilities {
    /// Capability bit vector: 0x80 BETS, 0x40 SNACK1, 0x20 SNACK2, 0x10 COMP, 0x08 NLTS.
    pub vector: u8,
    /// Connection identifier used by header compression.
    pub connection_id: u8,
}

impl ScpsCapabilities {
    pub const BETS: u8 = 0x80;
    pub const SNACK1: u8 = 0x40;
    pub const SNACK2: u8 = 0x20;
    pub const COMP: u8 = 0x10;
    pub const NLTS: u8 = 0x08;
}

/// One SNACK option (kind 21): a hole `offset` MSS units after the ACK, `size` MSS units long,
/// optionally followed by a bit vector (length 6 + `bitvec_len` bytes) whose bit i (MSB first)
/// set means "segment i after the first hole's end is missing as well".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Snack {
    pub offset: u16,
    pub size: u16,
    /// Bit vector bytes, MSB of byte 0 first; only the first `bitvec_len` bytes are sent.
    pub bitvec: [u8; 8],
    pub bitvec_len: u8,
}

/// The SNACK options of one header, in the order they are sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SnackList {
    pub items: [Snack; MAX_SNACKS],
    pub len: u8,
}

impl SnackList {
    pub fn as_slice(&self) -> &[Snack] {
        filled(&self.items, self.len)
    }
    pub fn push(&mut self, s: Snack) -> bool {
        push_within(&mut self.items, &mut self.len, s)
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Every option spacetp sends or understands. Unknown options received are skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TcpOptions {
    /// Kind 2.
    pub mss: Option<u16>,
    /// Kind 3: the shift count.
    pub window_scale: Option<u8>,
    /// Kind 4.
    pub sack_permitted: bool,
    /// Kind 8.
    pub timestamps: Option<Timestamps>,
    /// Kind 5.
    pub sack: SackBlocks,
    /// Kind 20.
    pub scps_capabilities: Option<ScpsCapabilities>,
    /// Kind 22 (end of record).
    pub record_boundary: bool,
    /// Kind 23.
    pub corruption_experienced: bool,
    /// Kind 21, always written last (Wireshark stops decoding after a SNACK).
    pub snacks: SnackList,
}

impl TcpOptions {
    /// Length of the options as written, before padding.
    pub fn raw_len(&self) -> u32 {
        let mut n = 0u32;
        if self.mss.is_some() {
            n += 4;
        }
        if self.window_scale.is_some() {
            n += 3;
        }
        if self.sack_permitted {
            n += 2;
        }
        if self.timestamps.is_some() {
            n += 10;
        }
        if !self.sack.is_empty() {
            n += 2 + 8 * self.sack.len as u32;
        }
        if self.scps_capabilities.is_some() {
            n += 4;
        }
        if self.record_boundary {
            n += 2;
        }
        if self.corruption_experienced {
            n += 2;
        }
        for s in self.snacks.as_slice() {
            n += 6 + s.bitvec_len as u32;
        }
        n
    }

    /// Length of the options on the wire, padded to a multiple of 4 bytes.
    pub fn padded_len(&self) -> u32 {
        (self.raw_len() + 3) & !3
    }

    pub fn is_empty(&self) -> bool {
        self.raw_len() == 0
    }

    /// Whether these options can be encoded: counts within the arrays and at most 40 bytes
    /// once padded. The encoders call this and refuse (no silent truncation).
    pub fn validate(&self) -> Result<(), crate::WireError> {
        use crate::WireError::{InvalidOptions, OptionsTooLong};
        if self.sack.len as usize > MAX_SACK_BLOCKS {
            return Err(InvalidOptions {
                what: "sack.len > MAX_SACK_BLOCKS",
            });
        }
        if self.snacks.len as usize > MAX_SNACKS {
            return Err(InvalidOptions {
                what: "snacks.len > MAX_SNACKS",
            });
        }
        if self
            .snacks
            .as_slice()
            .iter()
            .any(|s| s.bitvec_len as usize > MAX_SNACK_BITVEC)
        {
            return Err(InvalidOptions {
                what: "snack bitvec_len > 8",
            });
        }
        if self.padded_len() > MAX_OPTIONS_LEN {
            return Err(OptionsTooLong {
                len: self.padded_len(),
            });
        }
        Ok(())
    }

    /// True when `validate()` succeeds.
    pub fn fits(&self) -> bool {
        self.validate().is_ok()
    }
}
