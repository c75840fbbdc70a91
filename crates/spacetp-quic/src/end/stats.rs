//! What an end reports: quinn's counters and the application's.

use super::QuicEnd;
use spacetp_proto::Time;

/// What an end reports (quinn's own counters, and the application's).
#[derive(Clone, Debug, Default)]
pub struct QuicStats {
    /// UDP datagrams and their payload bytes sent.
    pub datagrams_sent: u64,
    pub udp_bytes_sent: u64,
    /// Packets quinn declared lost, and their bytes (RFC 9002 loss detection).
    pub packets_lost: u64,
    pub bytes_lost: u64,
    pub congestion_events: u64,
    /// When the handshake completed on this end, from the connection's start.
    pub handshake: Option<Time>,
    pub rtt: Option<Time>,
    pub min_rtt: Option<Time>,
    pub cwnd: u64,
    /// The path MTU (largest UDP payload) quinn settled on.
    pub mtu: u16,
    /// Application bytes written into the streams and read from them.
    pub stream_bytes_written: u64,
    pub stream_bytes_read: u64,
    /// Streams whose every byte the peer has (acknowledged, for the client; read to their
    /// end, for the server).
    pub streams_completed: u64,
    /// The client resumed a session and sent 0-RTT data: whether the server accepted it
    /// (None: no 0-RTT attempted).
    pub zero_rtt_accepted: Option<bool>,
}

impl QuicEnd {
    pub fn stats(&self) -> QuicStats {
        let mut s = QuicStats {
            handshake: self.handshake_done,
            stream_bytes_written: self.written,
            stream_bytes_read: self.received,
            streams_completed: self.streams_done as u64,
            zero_rtt_accepted: self.zero_rtt.filter(|_| self.handshake_done.is_some()),
            ..Default::default()
        };
        if let Some((_, c)) = &self.conn {
            let st = c.stats();
            s.datagrams_sent = st.udp_tx.datagrams;
            s.udp_bytes_sent = st.udp_tx.bytes;
            s.packets_lost = st.path.lost_packets;
            s.bytes_lost = st.path.lost_bytes;
            s.congestion_events = st.path.congestion_events;
            s.cwnd = st.path.cwnd;
            s.mtu = st.path.current_mtu;
            if self.handshake_done.is_some() {
                s.rtt = Some(st.path.rtt.as_nanos() as Time);
                s.min_rtt = Some(st.path.min_rtt.as_nanos() as Time);
            }
        }
        s
    }
}
