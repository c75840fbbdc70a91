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
    },
}
