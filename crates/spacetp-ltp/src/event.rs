//! What the engine tells its client services (RFC 5326 section 7, notices).

use bytes::Bytes;
use spacetp_proto::Time;

use crate::wire::CancelReason;

/// Which end canceled a session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CanceledBy {
    /// This engine (a timer ran out, a limit was reached, or the client asked).
    Local,
    /// The peer, by a cancel segment.
    Peer,
}

/// Which limit a session reached when this engine canceled it with RLEXC (RFC 5326
/// sections 6.7, 6.8 and 6.11; ION's maxTimeouts, maxCheckpoints and maxReports).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// A checkpoint (export session) or a report (import session) went unanswered through
    /// `max` timeouts: `max_retransmissions`, derived from `max_ber` and the segment size
    /// unless the span sets it.
    Timeouts { max: u32 },
    /// The session issued `max` checkpoints (export) or reports (import) and the block was
    /// still not whole: `max_retransmission_cycles`, derived from `max_ber`, the segment size
    /// and the red part's length unless the span sets it.
    Cycles { max: u32 },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A block was given an export session and its first segment queued (section 7.1).
    ExportStarted {
        peer: u64,
        session: u64,
        client_service_id: u64,
        length: u64,
        red_length: u64,
        /// How long the closed block waited for a free export session.
        waited: Time,
    },
    /// The whole red part was acknowledged and the green part sent (section 7.4).
    ExportCompleted {
        peer: u64,
        session: u64,
        client_service_id: u64,
    },
    /// An export session was canceled (section 7.5); its SDUs come back to the client.
    ExportCanceled {
        peer: u64,
        session: u64,
        client_service_id: u64,
        reason: CancelReason,
        by: CanceledBy,
        /// The limit reached, for a cancel of this engine's with RLEXC.
        limit: Option<Limit>,
        sdus: Vec<Bytes>,
    },
    /// The red part of a block arrived whole (section 7.3). Aggregated SDUs are the
    /// client's to split.
    RedPartReceived {
        peer: u64,
        session: u64,
        client_service_id: u64,
        data: Bytes,
        /// The block's EOB was among the red segments (no green part).
        end_of_block: bool,
    },
    /// A green segment arrived (section 7.2); green data is delivered as it comes.
    GreenSegment {
        peer: u64,
        session: u64,
        client_service_id: u64,
        offset: u64,
        data: Bytes,
        end_of_block: bool,
    },
    /// An import session was canceled (section 7.6).
    ImportCanceled {
        peer: u64,
        session: u64,
        client_service_id: u64,
        reason: CancelReason,
        by: CanceledBy,
        /// The limit reached, for a cancel of this engine's with RLEXC.
        limit: Option<Limit>,
    },
}
