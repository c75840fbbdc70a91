//! What a run returns: per-flow summaries, per-link counters, and optional time series.

use serde::Serialize;

#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowSummary {
    pub name: String,
    pub protocol: String,
    pub from: String,
    pub to: String,
    /// Bytes the application asked to send (None: unlimited).
    pub bytes_requested: Option<u64>,
    pub bytes_delivered: u64,
    /// Requested bytes not delivered in order by the end of the run.
    pub bytes_undelivered: Option<u64>,
    pub complete: bool,
    pub start_s: f64,
    /// When the last byte reached the receiving application.
    pub last_byte_s: Option<f64>,
    /// Completion time of a finite flow: last byte minus start.
    pub completion_s: Option<f64>,
    /// Goodput to the last byte: delivered bits / (last byte - start).
    pub goodput_bps: f64,
    /// Goodput over the flow's `goodput_window` [from, to]: bits delivered in it / (to -
    /// from), whenever the run ended.
    pub goodput_window_bps: Option<f64>,
    pub segments_sent: u64,
    pub data_segments_sent: u64,
    pub retransmitted_segments: u64,
    pub retransmitted_bytes: u64,
    pub timeouts: u64,
    pub acks_sent: u64,
    pub mean_rtt_s: Option<f64>,
    pub min_rtt_s: Option<f64>,
    pub final_cwnd_bytes: u64,
    /// The sending end's state (or why it closed), and the receiving end's.
    pub state: String,
    pub receiver_state: String,
    /// Why the flow failed, if it did: the sending end's reason, else the receiving end's
    /// ("aborted: data timed out (max_retries)", quinn's "too many gaps in stream buffer").
    /// A failed flow is not a slow one: it never completes.
    pub failure: Option<String>,
    pub workload: Option<String>,
    /// TCP's and SCPS-TP's own counters (TCP flows only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpSummary>,
    /// QUIC's own counters (QUIC flows only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quic: Option<QuicSummary>,
    /// LTP's own counters (LTP flows only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ltp: Option<LtpSummary>,
    /// CFDP's own counters (CFDP flows only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cfdp: Option<CfdpSummary>,
    /// The Bundle Protocol's (bp flows only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bp: Option<BpSummary>,
    /// Where the flow's time went, state by state, the largest share first (`limits`).
    pub limits: Vec<crate::limits::LimitShare>,
    /// The settings fitted to its path (`fit = true`): which, to what, from what, by which
    /// rule. Absent when none was.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fitted: Vec<crate::fit::Fitted>,
}

/// What only TCP and SCPS-TP count (the common summary has what every transport has).
#[derive(Clone, Debug, Default, Serialize)]
pub struct TcpSummary {
    /// Timeouts found spurious by the timestamp echo and undone (`tcp.rto_undo`).
    pub spurious_timeouts: u64,
    pub fast_retransmits: u64,
    /// RFC 8985 tail loss probes sent (`recovery = "rack"`), and those that repaired a loss.
    pub loss_probes: u64,
    pub loss_probe_recoveries: u64,
    /// TCP-Peach+ low-priority NIL segments sent.
    pub nil_segments_sent: u64,
    /// SCPS-TP: ACKs with SNACK options received, and segments resent because of them.
    pub snacks_received: u64,
    pub snack_retransmits: u64,
    /// Records the receiver got whole (SCPS-TP record boundaries; flows with `record_size`).
    pub records_delivered: u64,
    /// Bytes the receiver gave up under SCPS-TP BETS (never delivered).
    pub bets_bytes_lost: u64,
    /// RFC 5961 at both ends of the flow: RSTs not at the exact next sequence number, SYNs
    /// on the running connection, segments acknowledging data never sent, data beyond the
    /// window; the challenge ACKs sent for them.
    pub rst_rejected: u64,
    pub syn_rejected: u64,
    pub ack_rejected: u64,
    pub out_of_window_segments: u64,
    pub challenge_acks: u64,
}

/// What became of a bp flow's bundles.
#[derive(Clone, Debug, Default, Serialize)]
pub struct BpSummary {
    /// Bundles the source's agent made of the file, those delivered whole (fragments
    /// joined), those deleted because they expired on the way, and those no route could
    /// deliver before they would expire (reported, never waited on).
    pub bundles: u64,
    pub bundles_delivered: u64,
    pub bundles_expired: u64,
    pub bundles_no_route: u64,
    pub bytes_dropped: u64,
    /// Bundle age on delivery (RFC 9171 4.4.2: time since creation, stored at nodes and
    /// on links), mean and most.
    pub delivery_age_mean_s: Option<f64>,
    pub delivery_age_max_s: f64,
}

/// The delay-tolerant network of a run's bp flows.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DtnSummary {
    pub contacts: u64,
    pub nodes: Vec<DtnNodeSummary>,
    pub hops: Vec<DtnHopSummary>,
}

/// One node's bundle agent.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DtnNodeSummary {
    pub node: String,
    pub ipn: u64,
    pub bundles_created: u64,
    pub bundles_received: u64,
    pub bundles_forwarded: u64,
    pub bundles_delivered: u64,
    pub bundles_expired: u64,
    pub bundles_no_route: u64,
    pub fragmentations: u64,
    pub reroutes: u64,
    pub duplicates: u64,
    /// Custody: how long bundles were stored here before leaving (mean, most), and the
    /// most bytes stored at once.
    pub storage_time_mean_s: Option<f64>,
    pub storage_time_max_s: f64,
    pub stored_bytes_max: u64,
}

/// One LTP hop (both directions).
#[derive(Clone, Debug, Default, Serialize)]
pub struct DtnHopSummary {
    pub between: [String; 2],
    pub sessions: u64,
    pub sessions_canceled: u64,
    pub segments_sent: u64,
    pub data_segments_retransmitted: u64,
    pub report_segments: u64,
    pub blocks_delivered: u64,
}

/// What a CFDP flow's two entities report beside the common fields.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CfdpSummary {
    /// 1 (unacknowledged) or 2 (acknowledged).
    pub class: u8,
    /// PDUs each entity sent, by kind (metadata, file data, EOF, Finished, ACK, NAK).
    pub sender_pdus: spacetp_cfdp::outbox::PduCounts,
    pub receiver_pdus: spacetp_cfdp::outbox::PduCounts,
    /// NAK PDUs the receiver sent (asking for missing file data or metadata).
    pub naks_sent: u64,
    /// Timer expiries of each entity: check limit, NAK, positive ACK and inactivity.
    pub sender_timer_expiries: [u64; 4],
    pub receiver_timer_expiries: [u64; 4],
    /// PDUs an entity could not take (out of place for its transaction's step).
    pub sender_pdus_refused: u64,
    pub receiver_pdus_refused: u64,
    /// Times each entity suspended its transaction (a link outage: PDUs and timers held).
    pub sender_suspensions: u64,
    pub receiver_suspensions: u64,
    /// Prompts the sender sent (`cfdp.keep_alive_interval`), Keep Alives the receiver
    /// answered with, and the last progress one reported.
    pub prompts_sent: u64,
    pub keep_alives_sent: u64,
    pub reported_progress: Option<u64>,
    /// Faults declared (727.0-B-5 condition codes), and how each transaction ended.
    pub sender_faults: std::collections::BTreeMap<String, u64>,
    pub receiver_faults: std::collections::BTreeMap<String, u64>,
    pub sender_condition: Option<String>,
    pub receiver_condition: Option<String>,
    pub file_status: Option<String>,
    /// File bytes the receiver holds, and whether every one matched what was sent.
    pub file_bytes_received: u64,
    pub file_intact: bool,
}

/// What an LTP flow's two engines report beside the common fields.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LtpSummary {
    /// Export sessions the sender opened, those that completed (red part acknowledged),
    /// and those canceled (their data went again in new sessions).
    pub sessions: u64,
    pub sessions_completed: u64,
    pub sessions_canceled: u64,
    /// The span's limit on export sessions open at once.
    pub max_export_sessions: u32,
    pub checkpoints_sent: u64,
    /// Checkpoints sent again because their timer ran out (a lost checkpoint or report).
    pub checkpoints_retransmitted: u64,
    /// Report segments the receiver sent (and resent on their timer), and the sender got.
    pub report_segments_sent: u64,
    pub reports_retransmitted: u64,
    pub report_segments_received: u64,
    pub report_acks_sent: u64,
    pub cancel_segments_sent: u64,
    pub blocks_delivered: u64,
    /// Red segments that brought nothing new (duplicates, late ones).
    pub redundant_segments_received: u64,
    /// Blocks that found every export session busy and waited for one, and how long.
    pub blocks_waited_for_session: u64,
    pub session_wait_mean_s: Option<f64>,
    pub session_wait_max_s: f64,
    /// Time the link sat idle while blocks waited for a session (every session awaiting
    /// its report), and whether that was over 5% of the transfer: too few export sessions
    /// for the bandwidth-delay product (`ltp.max_export_sessions`).
    pub session_limited_s: f64,
    pub session_limited: bool,
    /// Segments that did not decode (never expected on a simulated link).
    pub segments_undecodable: u64,
}

/// What a QUIC flow's sender reports beside the common fields (quinn's counters).
#[derive(Clone, Debug, Default, Serialize)]
pub struct QuicSummary {
    /// Packets RFC 9002 loss detection declared lost, and their bytes.
    pub packets_lost: u64,
    pub bytes_lost: u64,
    pub congestion_events: u64,
    /// From the client's first packet to the handshake's completion at the client.
    pub handshake_s: Option<f64>,
    pub srtt_s: Option<f64>,
    /// The largest UDP payload the path carried after MTU discovery.
    pub mtu: u16,
    /// UDP payload bytes sent (what the links carried, less IPv4 and UDP headers).
    pub udp_bytes_sent: u64,
    /// Streams the receiver has acknowledged to their end (`quic.streams` when complete).
    pub streams_completed: u64,
    /// Why the connection failed (quinn's reason: idle timeout, handshake failure...).
    pub failure: Option<String>,
    /// The connection resumed a session and sent 0-RTT data (`quic.zero_rtt`): whether the
    /// server accepted it. Absent when no 0-RTT was sent (the first connection).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zero_rtt_accepted: Option<bool>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct DatagramSummary {
    pub from: String,
    pub to: String,
    pub packets_sent: u64,
    pub packets_received: u64,
    pub bytes_received: u64,
    /// Over QUIC: datagrams quinn took, and those it refused as larger than the path then
    /// allowed (before MTU discovery raised it, say); absent for UDP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quic: Option<QuicDatagramSummary>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct QuicDatagramSummary {
    pub sent_in_frames: u64,
    pub too_large: u64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct RunSummary {
    pub name: String,
    pub seed: u64,
    pub end_s: f64,
    pub events: u64,
    /// Most packets alive at once.
    pub peak_packets: u64,
    /// ICMP-like corruption notices routers sent (links with `corrupted = "deliver"`).
    pub corruption_notices: u64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Summary {
    pub run: RunSummary,
    pub flows: Vec<FlowSummary>,
    pub links: Vec<crate::link::LinkStats>,
    pub datagrams: Vec<DatagramSummary>,
    /// What each `[[attacks]]` entry did (absent without attacks).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attacks: Vec<crate::attack::AttackSummary>,
    /// The delay-tolerant network (absent without bp flows or `[dtn]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dtn: Option<DtnSummary>,
}

/// A column-oriented table of f64 values.
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub columns: Vec<(&'static str, Vec<f64>)>,
}

impl Table {
    pub fn new(names: &[&'static str]) -> Self {
        Table {
            columns: names.iter().map(|n| (*n, Vec::new())).collect(),
        }
    }
    pub fn push(&mut self, row: &[f64]) {
        for (c, v) in self.columns.iter_mut().zip(row) {
            c.1.push(*v);
        }
    }
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |c| c.1.len())
    }
}

/// Everything a run produces.
pub struct RunOutput {
    pub summary: Summary,
    /// Sampled sender state: time_s, flow, cwnd, ssthresh, srtt_s, flight, snd_max, snd_una,
    /// delivered (bytes).
    pub samples: Option<Table>,
    /// Every transmitted data segment: time_s, flow, offset (first byte), len, retransmission.
    pub segments: Option<Table>,
    /// Each flow's limit state at every change (with the traces): time_s, flow, state (its
    /// index in `limits::ALL`).
    pub limits: Option<Table>,
}
