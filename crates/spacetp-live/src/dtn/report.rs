//! What a live DTN node reports at its stop (JSON): the files sent and delivered with their
//! SHA-256, the bundle agent's counters and each LTP span's, with ION's tally names where
//! ION has them.

use serde::Serialize;
use spacetp_dtn::agent::AgentStats;
use spacetp_ltp::SpanStats;
use spacetp_proto::time::secs;

/// A file sent from this node as one bundle.
#[derive(Clone, Debug, Serialize)]
pub struct SentFile {
    pub file: String,
    pub destination: String,
    pub bytes: u64,
    pub sha256: String,
    /// The bundle's creation time (DTN ms) and sequence number: its ID with the source.
    pub created_ms: u64,
    pub seq: u64,
}

/// An application data unit delivered here.
#[derive(Clone, Debug, Serialize)]
pub struct DeliveredFile {
    pub source: String,
    pub service: u64,
    pub bytes: u64,
    pub sha256: String,
    /// Where it was written (None without an output directory).
    pub file: Option<String>,
    /// Seconds since this node started, and the bundle's age on arrival (its age block:
    /// the time stored at each node and the light times, as RFC 9171 4.4.2 counts it).
    pub at_s: f64,
    pub age_s: f64,
    /// This node's clock less the bundle's creation time: the delivery time where the
    /// clocks agree (None for a source with no clock).
    pub since_creation_s: Option<f64>,
}

/// A bundle deleted here: expired, no route reaches its destination in its lifetime, or
/// given up after `max_session_cancels` canceled LTP sessions.
#[derive(Clone, Debug, Serialize)]
pub struct Dropped {
    pub destination: String,
    pub bytes: u64,
    pub why: String,
}

/// The bundle agent's counters.
#[derive(Clone, Debug, Default, Serialize)]
pub struct AgentCounts {
    pub bundles_created: u64,
    pub bundles_received: u64,
    pub bundles_forwarded: u64,
    pub bundles_delivered: u64,
    pub bundles_expired: u64,
    pub bundles_no_route: u64,
    pub fragmentations: u64,
    pub reroutes: u64,
    pub duplicates: u64,
    pub undecodable: u64,
    pub storage_time_max_s: f64,
    pub stored_bytes_max: u64,
}

impl From<&AgentStats> for AgentCounts {
    fn from(s: &AgentStats) -> Self {
        AgentCounts {
            bundles_created: s.bundles_created,
            bundles_received: s.bundles_received,
            bundles_forwarded: s.bundles_forwarded,
            bundles_delivered: s.bundles_delivered,
            bundles_expired: s.bundles_expired,
            bundles_no_route: s.bundles_no_route,
            fragmentations: s.fragmentations,
            reroutes: s.reroutes,
            duplicates: s.duplicates,
            undecodable: s.undecodable,
            storage_time_max_s: secs(s.storage_time_max),
            stored_bytes_max: s.stored_bytes_max,
        }
    }
}

/// One LTP span's counters (ION's `ltpSpanTally`: export and import sessions, segments,
/// reports).
#[derive(Clone, Debug, Default, Serialize)]
pub struct SpanCounts {
    pub peer: u64,
    pub export_sessions_started: u64,
    pub export_sessions_completed: u64,
    pub export_sessions_canceled: u64,
    pub data_segments_sent: u64,
    pub data_segments_retransmitted: u64,
    pub checkpoints_sent: u64,
    pub checkpoints_retransmitted: u64,
    pub reports_received: u64,
    pub report_acks_sent: u64,
    pub import_sessions_started: u64,
    pub import_sessions_completed: u64,
    pub import_sessions_canceled: u64,
    pub red_segments_received: u64,
    pub redundant_segments_received: u64,
    pub reports_sent: u64,
    pub reports_retransmitted: u64,
    pub report_acks_received: u64,
}

impl SpanCounts {
    pub fn new(peer: u64, s: &SpanStats) -> Self {
        SpanCounts {
            peer,
            export_sessions_started: s.export_sessions_started,
            export_sessions_completed: s.export_sessions_completed,
            export_sessions_canceled: s.export_canceled_locally.total()
                + s.export_canceled_by_peer.total(),
            data_segments_sent: s.data_segments_sent,
            data_segments_retransmitted: s.data_segments_retransmitted,
            checkpoints_sent: s.checkpoints_sent,
            checkpoints_retransmitted: s.checkpoints_retransmitted,
            reports_received: s.reports_received,
            report_acks_sent: s.report_acks_sent,
            import_sessions_started: s.import_sessions_started,
            import_sessions_completed: s.import_sessions_completed,
            import_sessions_canceled: s.import_canceled_locally.total()
                + s.import_canceled_by_peer.total(),
            red_segments_received: s.red_segments_received,
            redundant_segments_received: s.redundant_segments_received,
            reports_sent: s.reports_sent,
            reports_retransmitted: s.reports_retransmitted,
            report_acks_received: s.report_acks_received,
        }
    }
}

/// The whole report.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DtnReport {
    pub node: u64,
    pub elapsed_s: f64,
    /// Why the node stopped: "duration", "delivered", "sent", "delivered and sent",
    /// "answered" (an application on it was done: `stop_when_answered`) or "signal".
    pub stopped: String,
    pub sent: Vec<SentFile>,
    pub delivered: Vec<DeliveredFile>,
    pub dropped: Vec<Dropped>,
    /// Bundles given up after `max_session_cancels` canceled LTP sessions (also in
    /// `dropped`); the command exits with status 1 when there are any.
    pub given_up: u64,
    /// What the node said while it ran: canceled LTP sessions with their cause (rate
    /// limited), bundles given up; each line begins with the time since the start.
    pub notices: Vec<String>,
    /// Bundles taken back from the store directory at start, and left there at the stop.
    pub restored: u64,
    pub stored_at_stop: u64,
    /// Bundles found in the store directory that did not decode (renamed `*.bad`).
    pub restore_errors: Vec<String>,
    pub agent: AgentCounts,
    pub spans: Vec<SpanCounts>,
    /// UDP datagrams (LTP segments) in and out, their bytes, and those that did not decode
    /// or could not be sent.
    pub segments_in: u64,
    pub segments_out: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub segments_undecodable: u64,
    pub send_errors: u64,
    /// Red parts for an LTP client service other than the Bundle Protocol's (1).
    pub blocks_for_other_services: u64,
    /// The UDP convergence layer's counters, when the node has UDP peers.
    pub udp: Option<super::udp_cl::UdpClCounts>,
}
