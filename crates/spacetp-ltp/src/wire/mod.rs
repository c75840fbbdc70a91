//! LTP segments as bytes (RFC 5326 section 3), with no dependency beyond std.
//!
//! [`decode`] reads a segment without copying: data, claims and extensions borrow the input.
//! It never panics; every problem is a [`DecodeError`] naming the field. [`encode`] writes
//! any segment [`decode`] can read, extensions included, so a segment round-trips byte for
//! byte (when its SDNVs were minimal). The engine writes its own segments with the
//! lower-level `write_*` functions, which take block data in pieces.
//!
//! Reception-claim offsets are relative to the report's lower bound on the wire (RFC 5326
//! section 3.2.2, "Offset"; ION's `serializeReportSegment` and `loadClaimsArray` agree). Here
//! they are absolute in [`Claim`], converted at the boundary.

mod decode;
mod encode;
pub mod error;
pub mod sdnv;
#[cfg(test)]
mod tests;

pub use decode::decode;
pub use encode::{
    data_overhead, encode, write_cancel, write_cancel_ack, write_data_fields, write_extensions,
    write_header, write_report, write_report_ack,
};
pub use error::{DecodeError, EncodeError, ExtPart, Field, Problem};

/// The only LTP version (RFC 5326 section 3.1.1).
pub const VERSION: u8 = 0;

/// Segment type codes (RFC 5326 section 3.1.3). Codes 5, 6, 10 and 11 are undefined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SegmentType {
    /// 0: red data, not checkpoint, EORP or EOB.
    RedData,
    /// 1: red data, checkpoint, not EORP or EOB.
    RedCheckpoint,
    /// 2: red data, checkpoint, EORP, not EOB.
    RedCheckpointEorp,
    /// 3: red data, checkpoint, EORP, EOB.
    RedCheckpointEorpEob,
    /// 4: green data, not EOB.
    GreenData,
    /// 7: green data, EOB.
    GreenEob,
    /// 8: report segment (RS).
    Report,
    /// 9: report-acknowledgment segment (RA).
    ReportAck,
    /// 12: cancel segment from the block sender (CS).
    CancelFromSender,
    /// 13: cancel-acknowledgment segment to the block sender (CAS).
    CancelAckToSender,
    /// 14: cancel segment from the block receiver (CR).
    CancelFromReceiver,
    /// 15: cancel-acknowledgment segment to the block receiver (CAR).
    CancelAckToReceiver,
}

impl SegmentType {
    pub fn code(self) -> u8 {
        use SegmentType::*;
        match self {
            RedData => 0,
            RedCheckpoint => 1,
            RedCheckpointEorp => 2,
            RedCheckpointEorpEob => 3,
            GreenData => 4,
            GreenEob => 7,
            Report => 8,
            ReportAck => 9,
            CancelFromSender => 12,
            CancelAckToSender => 13,
            CancelFromReceiver => 14,
            CancelAckToReceiver => 15,
        }
    }

    /// The type of a code, or `None` for 5, 6, 10, 11 (undefined) and anything above 15.
    pub fn from_code(code: u8) -> Option<Self> {
        use SegmentType::*;
        Some(match code {
            0 => RedData,
            1 => RedCheckpoint,
            2 => RedCheckpointEorp,
            3 => RedCheckpointEorpEob,
            4 => GreenData,
            7 => GreenEob,
            8 => Report,
            9 => ReportAck,
            12 => CancelFromSender,
            13 => CancelAckToSender,
            14 => CancelFromReceiver,
            15 => CancelAckToReceiver,
            _ => return None,
        })
    }

    /// The red data type with these flags; a checkpoint is implied by EORP.
    pub fn red(checkpoint: bool, eorp: bool, eob: bool) -> Self {
        match (checkpoint || eorp, eorp, eob) {
            (false, _, _) => SegmentType::RedData,
            (true, false, _) => SegmentType::RedCheckpoint,
            (true, true, false) => SegmentType::RedCheckpointEorp,
            (true, true, true) => SegmentType::RedCheckpointEorpEob,
        }
    }

    pub fn is_data(self) -> bool {
        self.code() < 8
    }
    pub fn is_red(self) -> bool {
        self.code() < 4
    }
    pub fn is_green(self) -> bool {
        matches!(self, SegmentType::GreenData | SegmentType::GreenEob)
    }
    pub fn is_checkpoint(self) -> bool {
        matches!(self.code(), 1..=3)
    }
    pub fn is_eorp(self) -> bool {
        matches!(self.code(), 2 | 3)
    }
    pub fn is_eob(self) -> bool {
        matches!(self.code(), 3 | 7)
    }
    /// The abbreviation RFC 5326 uses.
    pub fn name(self) -> &'static str {
        use SegmentType::*;
        match self {
            RedData => "red data",
            RedCheckpoint => "red data CP",
            RedCheckpointEorp => "red data CP EORP",
            RedCheckpointEorpEob => "red data CP EORP EOB",
            GreenData => "green data",
            GreenEob => "green data EOB",
            Report => "RS",
            ReportAck => "RA",
            CancelFromSender => "CS",
            CancelAckToSender => "CAS",
            CancelFromReceiver => "CR",
            CancelAckToReceiver => "CAR",
        }
    }
}

/// Reason codes of cancel segments (RFC 5326 section 3.2.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CancelReason {
    /// 0 USR_CNCLD: the client service canceled the session.
    UserCanceled,
    /// 1 UNREACH: the client service is unreachable.
    Unreachable,
    /// 2 RLEXC: the retransmission limit was exceeded.
    RetransmissionLimit,
    /// 3 MISCOLORED: red data after green, or green before red.
    Miscolored,
    /// 4 SYS_CNCLD: a system error condition ended the session.
    SystemCanceled,
    /// 5 RXMTCYCEXC: the retransmission-cycles limit was exceeded.
    RetransmissionCycles,
    /// 6 to 255: reserved; kept as received.
    Reserved(u8),
}

impl CancelReason {
    pub fn code(self) -> u8 {
        match self {
            CancelReason::UserCanceled => 0,
            CancelReason::Unreachable => 1,
            CancelReason::RetransmissionLimit => 2,
            CancelReason::Miscolored => 3,
            CancelReason::SystemCanceled => 4,
            CancelReason::RetransmissionCycles => 5,
            CancelReason::Reserved(c) => c,
        }
    }
    pub fn from_code(code: u8) -> Self {
        match code {
            0 => CancelReason::UserCanceled,
            1 => CancelReason::Unreachable,
            2 => CancelReason::RetransmissionLimit,
            3 => CancelReason::Miscolored,
            4 => CancelReason::SystemCanceled,
            5 => CancelReason::RetransmissionCycles,
            c => CancelReason::Reserved(c),
        }
    }
    /// RFC 5326's mnemonic.
    pub fn mnemonic(self) -> &'static str {
        match self {
            CancelReason::UserCanceled => "USR_CNCLD",
            CancelReason::Unreachable => "UNREACH",
            CancelReason::RetransmissionLimit => "RLEXC",
            CancelReason::Miscolored => "MISCOLORED",
            CancelReason::SystemCanceled => "SYS_CNCLD",
            CancelReason::RetransmissionCycles => "RXMTCYCEXC",
            CancelReason::Reserved(_) => "reserved",
        }
    }
}

/// A session: the engine that originated it (the block sender) and its number there
/// (RFC 5326 section 3.1.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId {
    pub originator: u64,
    pub number: u64,
}

/// One extension (RFC 5326 section 3.1.5): a tag byte and its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extension<'a> {
    pub tag: u8,
    pub value: &'a [u8],
}

/// The header or trailer extensions of a segment: as read from the wire (already checked),
/// or a list to write. At most 15 (the count is a nibble).
#[derive(Clone, Copy, Debug)]
pub enum Extensions<'a> {
    Wire { count: u8, raw: &'a [u8] },
    List(&'a [Extension<'a>]),
}

impl Default for Extensions<'_> {
    fn default() -> Self {
        Extensions::List(&[])
    }
}

impl<'a> Extensions<'a> {
    pub fn count(&self) -> usize {
        match self {
            Extensions::Wire { count, .. } => *count as usize,
            Extensions::List(l) => l.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.count() == 0
    }
    pub fn iter(&self) -> impl Iterator<Item = Extension<'a>> + '_ {
        let (wire, list) = match *self {
            Extensions::Wire { count, raw } => (Some((count, raw)), &[][..]),
            Extensions::List(l) => (None, l),
        };
        let mut rest = wire.map_or(&[][..], |w| w.1);
        let n = wire.map_or(0, |w| w.0 as usize);
        (0..n)
            .map_while(move |_| {
                // Checked at decode time, so these cannot fail; map_while ends the list
                // rather than panicking if they ever did.
                let (&tag, after) = rest.split_first()?;
                let (len, used) = sdnv::decode(after).ok()?;
                let len = usize::try_from(len).ok()?;
                let value = after.get(used..used.checked_add(len)?)?;
                rest = &after[used + len..];
                Some(Extension { tag, value })
            })
            .chain(list.iter().copied())
    }
}

impl PartialEq for Extensions<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.count() == other.count() && self.iter().eq(other.iter())
    }
}
impl Eq for Extensions<'_> {}

/// A reception claim with its offset from the start of the block (not from the report's
/// lower bound, as on the wire).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Claim {
    pub offset: u64,
    pub length: u64,
}

impl Claim {
    pub fn end(&self) -> u64 {
        self.offset + self.length
    }
}

/// The reception claims of a report: as read (checked at decode time), or a list to write.
#[derive(Clone, Copy, Debug)]
pub enum Claims<'a> {
    Wire {
        count: u64,
        raw: &'a [u8],
        lower: u64,
    },
    List(&'a [Claim]),
}

impl<'a> Claims<'a> {
    pub fn len(&self) -> u64 {
        match self {
            Claims::Wire { count, .. } => *count,
            Claims::List(l) => l.len() as u64,
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The claims with absolute offsets, in wire order.
    pub fn iter(&self) -> impl Iterator<Item = Claim> + 'a {
        let (wire, list) = match *self {
            Claims::Wire { count, raw, lower } => (Some((count, raw, lower)), &[][..]),
            Claims::List(l) => (None, l),
        };
        let mut rest = wire.map_or(&[][..], |w| w.1);
        let lower = wire.map_or(0, |w| w.2);
        let n = wire.map_or(0, |w| w.0);
        (0..n)
            .map_while(move |_| {
                let (off, a) = sdnv::decode(rest).ok()?;
                let (length, b) = sdnv::decode(rest.get(a..)?).ok()?;
                rest = &rest[a + b..];
                Some(Claim {
                    offset: lower.checked_add(off)?,
                    length,
                })
            })
            .chain(list.iter().copied())
    }
}

impl PartialEq for Claims<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}
impl Eq for Claims<'_> {}

/// The serial numbers a checkpoint carries (RFC 5326 section 3.2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Serials {
    pub checkpoint: u64,
    /// The report this checkpoint answers, 0 when it answers none.
    pub report: u64,
}

/// A data segment's fields (RFC 5326 section 3.2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataSegment<'a> {
    pub client_service_id: u64,
    pub offset: u64,
    pub data: &'a [u8],
    /// Present exactly on checkpoints (types 1 to 3).
    pub serials: Option<Serials>,
}

impl DataSegment<'_> {
    pub fn end(&self) -> u64 {
        self.offset + self.data.len() as u64
    }
}

/// A report segment's fields (RFC 5326 section 3.2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReportSegment<'a> {
    pub report_serial: u64,
    /// The checkpoint this report answers, 0 for an asynchronous report.
    pub checkpoint_serial: u64,
    pub upper_bound: u64,
    pub lower_bound: u64,
    pub claims: Claims<'a>,
}

/// What follows the header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Content<'a> {
    Data(DataSegment<'a>),
    Report(ReportSegment<'a>),
    ReportAck { report_serial: u64 },
    Cancel { reason: CancelReason },
    CancelAck,
}

/// One LTP segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment<'a> {
    pub kind: SegmentType,
    pub session: SessionId,
    pub header_extensions: Extensions<'a>,
    pub content: Content<'a>,
    pub trailer_extensions: Extensions<'a>,
}
