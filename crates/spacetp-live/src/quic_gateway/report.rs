//! The counters a QUIC gateway reports.

use serde::Serialize;

/// quinn's counters, summed over the tunnel's connections (ended ones included).
#[derive(Clone, Debug, Default, Serialize)]
pub struct TunnelStats {
    pub udp_datagrams_sent: u64,
    pub udp_bytes_sent: u64,
    pub udp_datagrams_received: u64,
    pub packets_lost: u64,
    pub bytes_lost: u64,
    pub congestion_events: u64,
    /// The newest connection's smoothed RTT and congestion window.
    pub rtt_ms: f64,
    pub cwnd: u64,
}

impl TunnelStats {
    pub fn add(&mut self, c: &quinn_proto::Connection) {
        let s = c.stats();
        self.udp_datagrams_sent += s.udp_tx.datagrams;
        self.udp_bytes_sent += s.udp_tx.bytes;
        self.udp_datagrams_received += s.udp_rx.datagrams;
        self.packets_lost += s.path.lost_packets;
        self.bytes_lost += s.path.lost_bytes;
        self.congestion_events += s.path.congestion_events;
        self.rtt_ms = s.path.rtt.as_secs_f64() * 1e3;
        self.cwnd = s.path.cwnd;
    }
}

/// Counters of a run. The names the SCPS-TP gateway's report shares mean the same.
#[derive(Clone, Debug, Default, Serialize)]
pub struct QuicGatewayReport {
    /// Always "quic": what carried the connections across the link.
    pub carrier: &'static str,
    pub elapsed_s: f64,
    pub stopped: String,
    /// The addresses the listeners are bound to (a rule's port 0 resolved by the kernel).
    pub listening: Vec<String>,
    /// Connections accepted from local applications, and streams the peer opened that this
    /// gateway relayed.
    pub accepted: u64,
    pub admitted: u64,
    /// Streams for no rule, with a bad preamble, or whose destination refused (reset).
    pub refused: u64,
    /// Relayed connections that ended by FINs both ways, and by a reset on either side.
    pub closed: u64,
    pub reset: u64,
    /// Payload bytes from local applications into the tunnel, and from it to them.
    pub bytes_up: u64,
    pub bytes_down: u64,
    /// Packets read from the link, and those not for the tunnel.
    pub packets_in: u64,
    pub packets_out: u64,
    pub foreign: u64,
    pub link_write_errors: u64,
    /// Tunnel connections whose handshake completed, connections dialed, and why
    /// connections ended or were refused (quinn's words; the first 20).
    pub handshakes: u64,
    pub dials: u64,
    pub tunnel_failures: Vec<String>,
    /// Relayed connections reset because their tunnel connection ended.
    pub reset_by_tunnel_loss: u64,
    pub max_relays: u64,
    pub reset_on_stop: u64,
    pub open_at_stop: Vec<String>,
    pub link_down_notices: u64,
    pub link_up_notices: u64,
    pub quic: TunnelStats,
}
