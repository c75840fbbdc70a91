//! The counters a gateway reports.

use super::*;

/// Counters of a run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct GatewayReport {
    pub elapsed_s: f64,
    pub stopped: String,
    /// The addresses the listeners are bound to (a rule's port 0 resolved by the kernel).
    pub listening: Vec<String>,
    /// Relayed connections open now, and whether the link is up (no `link down` notice
    /// in force).
    pub open_connections: u64,
    pub link_up: bool,
    /// The smoothed RTT of each open connection that has one, in buckets (Prometheus
    /// histogram: upper bounds in seconds, cumulative counts), with their sum and count.
    pub rtt_buckets: Vec<(f64, u64)>,
    pub rtt_sum_s: f64,
    pub rtt_count: u64,
    /// SNACKs received and the segments they resent; retransmission timeouts.
    pub snacks_received: u64,
    pub snack_retransmits: u64,
    pub timeouts: u64,
    /// The process's file-descriptor limit (raised to the hard limit at start), and how
    /// often accepting paused because it was reached.
    pub fd_limit: u64,
    pub accept_fd_limit: u64,
    /// Configurations taken while running (SIGHUP), and what the last one did.
    pub reloads: u64,
    pub last_reload: String,
    /// Connections accepted from local applications (of which `intercepted`: handed to a
    /// transparent socket by nftables `tproxy`, IPv4 or IPv6), and SCPS-TP connections
    /// admitted.
    pub accepted: u64,
    pub intercepted: u64,
    pub admitted: u64,
    /// SCPS-TP SYNs for ports without a forwarding rule (answered with RST).
    pub refused: u64,
    /// Segments that are neither for a flow nor a SYN this gateway admits (not answered).
    pub foreign: u64,
    /// Flows ended by a FIN exchange, and by a reset or an abort on either side.
    pub closed: u64,
    pub reset: u64,
    /// Payload bytes from local applications onto the link, and from the link to them.
    pub bytes_up: u64,
    pub bytes_down: u64,
    pub packets_in: u64,
    pub packets_out: u64,
    pub bad_checksum: u64,
    pub undecodable: u64,
    pub link_write_errors: u64,
    /// ICMP errors a UDP link reported (the peer gateway down or unreachable).
    pub link_unreachable: u64,
    pub segments_sent: u64,
    pub retransmitted_segments: u64,
    pub max_flows: u64,
    /// Packets with compressed SCPS-TP headers (IP protocol 105) sent and received, and
    /// received ones that could not be decoded (no context, bad checksum).
    pub compressed_out: u64,
    pub compressed_in: u64,
    pub compressed_bad: u64,
    /// Link-state notices received (`link down`, `link up`), each passed to every flow.
    pub link_down_notices: u64,
    pub link_up_notices: u64,
    /// Resets sent in answer to segments for no flow (RFC 9293), and those held back by the
    /// rate limit.
    pub rst_replies: u64,
    pub rst_replies_suppressed: u64,
    /// RFC 5961 in the connections: RSTs not at the exact next sequence number, SYNs on a
    /// synchronized connection, unacceptable ACK values, data beyond the window; the
    /// challenge ACKs sent for them.
    pub rst_rejected: u64,
    pub syn_rejected: u64,
    pub ack_rejected: u64,
    pub out_of_window: u64,
    pub challenge_acks: u64,
    /// RFC 9293: FINs on a sequence number the stream had passed, dropped and acknowledged.
    pub fin_rejected: u64,
    /// Flows reset because the gateway stopped; keepalive probes sent; flows reset after
    /// unanswered probes (the peer vanished).
    pub reset_on_stop: u64,
    /// What each flow reset on stop was waiting for (its state and relay flags), so an
    /// operator can tell a slow peer from a stuck flow.
    pub open_at_stop: Vec<String>,
    pub keepalive_probes: u64,
    pub reaped: u64,
    /// SYNs dropped because `max_half_open` flows were waiting for their handshake.
    pub half_open_dropped: u64,
    /// Flows reset after moving no payload for the idle timeout.
    pub idle_reaped: u64,
    /// Per peer (the far end's address on the link: the peer gateway, or with transparent
    /// relaying the far host), finished and open connections together.
    pub peers: Vec<PeerStats>,
    /// Flows reset because relaying would have broken exactness (must stay 0: a bug).
    pub integrity_resets: u64,
    /// What each of those flows looked like (for the bug report).
    pub integrity_detail: Vec<String>,
    /// Times the event loop waited and woke (a packet, a socket, a timer, or its 50 ms tick):
    /// about 20 a second at rest; far more with little traffic is a loop that spins.
    pub wakeups: u64,
}

/// One peer's share of the counters.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct PeerStats {
    pub peer: String,
    pub open_connections: u64,
    pub connections: u64,
    pub bytes_up: u64,
    pub bytes_down: u64,
    pub retransmitted_segments: u64,
}

/// Peers counted one by one; the rest are summed as "other" (a flood of forged addresses
/// must not grow the report without bound).
pub const MAX_PEERS: usize = 256;

/// The running per-peer totals of finished connections.
#[derive(Default)]
pub(super) struct PeerTotals(HashMap<std::net::IpAddr, PeerStats>);

impl PeerTotals {
    fn entry(&mut self, ip: std::net::IpAddr) -> &mut PeerStats {
        let other = std::net::IpAddr::from([0, 0, 0, 0]);
        let ip = if self.0.len() >= MAX_PEERS && !self.0.contains_key(&ip) {
            other
        } else {
            ip
        };
        self.0.entry(ip).or_insert_with(|| PeerStats {
            peer: if ip == other {
                "other".into()
            } else {
                ip.to_string()
            },
            ..Default::default()
        })
    }

    /// A connection to `ip` that moved these bytes; `open` if it still is.
    pub(super) fn add(&mut self, ip: std::net::IpAddr, up: u64, down: u64, rtx: u64, open: bool) {
        let p = self.entry(ip);
        p.connections += 1;
        p.open_connections += open as u64;
        p.bytes_up += up;
        p.bytes_down += down;
        p.retransmitted_segments += rtx;
    }

    /// A copy to add the open connections to.
    pub(super) fn snapshot(&self) -> PeerTotals {
        PeerTotals(self.0.clone())
    }

    /// Sorted by address, for the report.
    pub(super) fn into_sorted(self) -> Vec<PeerStats> {
        let mut v: Vec<_> = self.0.into_values().collect();
        v.sort_by(|a, b| a.peer.cmp(&b.peer));
        v
    }
}

/// Upper bounds (s) of the RTT histogram's buckets: LEO to deep GEO and beyond.
pub const RTT_BUCKETS: [f64; 10] = [0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 1.0, 2.0, 5.0, 10.0];

impl GatewayReport {
    /// One open connection's smoothed RTT into the histogram.
    pub(super) fn observe_rtt(&mut self, srtt_s: f64) {
        if self.rtt_buckets.is_empty() {
            self.rtt_buckets = RTT_BUCKETS.iter().map(|&b| (b, 0)).collect();
        }
        for (le, n) in self.rtt_buckets.iter_mut() {
            if srtt_s <= *le {
                *n += 1;
            }
        }
        self.rtt_sum_s += srtt_s;
        self.rtt_count += 1;
    }

    pub(super) fn add_connection_stats(&mut self, st: &ConnStats) {
        self.snacks_received += st.snacks_received;
        self.snack_retransmits += st.snack_retransmits;
        self.timeouts += st.timeouts;
        self.segments_sent += st.segments_sent;
        self.retransmitted_segments += st.retransmitted_segments;
        self.rst_rejected += st.rst_rejected;
        self.syn_rejected += st.syn_rejected;
        self.ack_rejected += st.ack_rejected;
        self.out_of_window += st.out_of_window_segments;
        self.challenge_acks += st.challenge_acks;
        self.fin_rejected += st.old_fins;
    }
}
