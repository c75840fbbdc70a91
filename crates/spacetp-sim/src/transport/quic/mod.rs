//! QUIC through the transport interface: `spacetp-quic`'s quinn-proto ends. Their packets
//! are real datagrams: the bytes travel in the packet's payload buffer, the links see their
//! true sizes (IPv4 and UDP headers added), and pcaps hold the real bytes, encrypted
//! (`quic.crypto = "real"`, whenever the run writes a pcap or a key log; otherwise
//! "sizes": the same sizes and times, nothing encrypted).

pub mod entry;
pub mod fit;

use super::capabilities::DatagramCounts;
use super::{node_addr, DataSent, Ends, Outgoing, SendLimit, SenderState, Transport, Wire};
use crate::limits::{text, Limit};
use crate::result::{FlowSummary, QuicSummary};
use spacetp_proto::time::secs;
use spacetp_proto::Time;
use spacetp_quic::{
    CryptoMode, EndConfig, EndOutputs, KeyLogFile, QuicEnd, QuicSettings, SimClock,
};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

/// IPv4 and UDP headers around a QUIC datagram (what the rate cap counts too).
const IP_UDP_HEADERS: u32 = spacetp_quic::rate_cap::IP_UDP_HEADERS as u32;
/// quinn-proto's words when a stream's receive buffer holds too many separate pieces, and
/// what they mean (a real quinn receiver fails the same way: this is its code).
const TOO_MANY_GAPS: &str = "too many gaps in stream buffer";
const QUINN_GAP_LIMIT: &str = "quinn-proto 0.11 refuses a stream whose receive buffer holds \
    more than 1 024 separate out-of-order pieces, MAX_CHUNKS in connection/assembler.rs: \
    losses left more holes than that in the flow-control window; a smaller \
    quic.stream_receive_window keeps fewer packets in flight";

/// A QUIC flow's settings: quinn's, the largest UDP payload the flow's MTU carries, the
/// run's TLS key log and the prefix of the flow's qlog files, if asked for.
#[derive(Clone, Debug)]
pub struct QuicSpec {
    pub settings: QuicSettings,
    pub max_payload: u16,
    pub key_log: Option<Arc<KeyLogFile>>,
    pub qlog_prefix: Option<std::path::PathBuf>,
    /// A traffic source: each write is one DATAGRAM frame of that many payload bytes, not
    /// stream data.
    pub datagrams: bool,
    /// TLS sessions the connections of this spec share (`quic.zero_rtt`): every connection
    /// of a workload or a flow is opened from one spec, so a later one resumes an earlier
    /// one's session.
    pub resumption: Option<spacetp_quic::tls::Resumption>,
    /// Real packet protection, or the real sizes with nothing encrypted (`quic.crypto`).
    pub crypto: CryptoMode,
}

impl QuicSpec {
    /// The client and server of a flow. `seed` seeds both endpoints' RNGs.
    pub(crate) fn open(&self, ends: Ends, seed: u64) -> (QuicTransport, QuicTransport) {
        let c = addr(ends.client_node, ends.client_port);
        let s = addr(ends.server_node, ends.server_port);
        let cfg = EndConfig {
            settings: self.settings.clone(),
            max_payload: self.max_payload,
            seed,
            clock: SimClock::new(),
            out: EndOutputs {
                key_log: self
                    .key_log
                    .clone()
                    .map(|k| k as Arc<dyn spacetp_quic::KeyLog>),
                qlog_prefix: self.qlog_prefix.clone(),
            },
            resumption: self.resumption.clone(),
            crypto: self.crypto,
        };
        let client = QuicEnd::client(&cfg, c, s);
        let server = QuicEnd::server(&cfg, s, c);
        (
            QuicTransport::new(client, ends.client_port, ends.server_port, self),
            QuicTransport::new(server, ends.server_port, ends.client_port, self),
        )
    }
}

fn addr(node: u16, port: u16) -> SocketAddr {
    SocketAddr::new(IpAddr::V4(Ipv4Addr::from(node_addr(node))), port)
}

pub struct QuicTransport {
    end: QuicEnd,
    /// The flow-control credit the receiver grants (stream windows over the streams,
    /// capped by the connection's), and the sender's send window: what the limit analysis
    /// compares the bytes in the pipe with.
    credit: u64,
    settings: QuicSettings,
    port: u16,
    peer_port: u16,
    /// The latest time the world told this end (the application's calls carry none).
    now: Time,
    /// Writes are datagrams (`QuicSpec::datagrams`).
    datagrams: bool,
}

impl QuicTransport {
    fn new(end: QuicEnd, port: u16, peer_port: u16, spec: &QuicSpec) -> Self {
        let q = &spec.settings;
        let streams = q.stream_receive_window.0.saturating_mul(q.streams as u64);
        QuicTransport {
            end,
            credit: q.receive_window.map_or(streams, |r| r.0.min(streams)),
            settings: q.clone(),
            port,
            peer_port,
            now: 0,
            datagrams: spec.datagrams,
        }
    }

    fn state_name(&self) -> String {
        match self.end.failure() {
            Some(why) => format!("failed: {why}"),
            None if self.end.is_closed() => "closed".into(),
            None => "open".into(),
        }
    }
}

impl Transport for QuicTransport {
    fn on_packet(&mut self, now: Time, wire: &Wire, payload: &[u8]) {
        self.now = now;
        if let Wire::Udp { len, .. } = wire {
            self.end.on_datagram(now, &payload[..*len as usize]);
        }
    }

    fn poll_transmit(
        &mut self,
        now: Time,
        wire: &mut Wire,
        payload: &mut Vec<u8>,
    ) -> Option<Outgoing> {
        self.now = now;
        if !self.end.poll_transmit(now, payload) {
            return None;
        }
        let len = payload.len() as u32;
        *wire = Wire::Udp {
            src_port: self.port,
            dst_port: self.peer_port,
            len,
        };
        Some(Outgoing {
            size: IP_UDP_HEADERS + len,
            low_priority: false,
            // Which stream bytes a packet carries is inside its encryption.
            data: None::<DataSent>,
        })
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.end.next_timeout()
    }

    fn on_timeout(&mut self, now: Time) {
        self.now = now;
        self.end.on_timeout(now);
    }

    fn write(&mut self, n: u64) -> u64 {
        if self.datagrams {
            self.end.send_datagram(n as usize);
            return n;
        }
        self.end.write(n)
    }

    fn close(&mut self) {
        self.end.close(self.now);
    }

    fn delivered(&self) -> u64 {
        self.end.delivered()
    }

    fn peer_closed(&self) -> bool {
        self.end.peer_finished() && !self.end.close_requested()
    }

    fn is_finished(&self) -> bool {
        self.end.is_closed() || self.end.stream_acked()
    }

    fn failure(&self) -> Option<String> {
        self.end
            .failure()
            .map(|why| match why.contains(TOO_MANY_GAPS) {
                true => format!("{why} ({QUINN_GAP_LIMIT})"),
                false => why,
            })
    }

    fn takes_signals(&self) -> bool {
        false
    }

    fn sender_state(&self) -> SenderState {
        let s = self.end.stats();
        SenderState {
            cwnd: s.cwnd,
            ssthresh: u64::MAX,
            srtt: s.rtt,
            in_flight: 0,
            sent: s.stream_bytes_written,
            acked: 0,
        }
    }

    /// QUIC's limit states. quinn keeps its bytes in flight to itself, so they are read
    /// from both ends. Data the streams refused (a backlog) means the receiver's
    /// flow-control credit or the sender's send window ran out, the smaller of the two; else
    /// the bytes in the pipe (written into the streams, not yet taken by the receiving
    /// application) as large as the congestion window means it is full. A datagram held
    /// back by `quic.max_pacing_rate` comes first: the cap, not the window, holds it.
    fn send_limit(&self, _now: Time, peer: &dyn Transport) -> SendLimit {
        if self.end.is_closed() {
            return SendLimit::Closed;
        }
        if !self.end.handshake_done() {
            return SendLimit::Handshake;
        }
        if self.end.rate_capped() {
            return SendLimit::Pacing;
        }
        let st = self.end.stats();
        let pipe = st.stream_bytes_written.saturating_sub(peer.delivered());
        let packet = st.mtu.max(1200) as u64;
        if self.end.backlog() > 0 {
            // The smaller of the two refuses: the receiver's credit (which reaches the
            // sender a round trip after the reads that open it) or the sender's own window.
            let send_window = self.settings.send_window.0;
            if self.credit <= send_window {
                return SendLimit::ReceiveWindow {
                    window: self.credit,
                };
            }
            return SendLimit::SendBuffer {
                buffer: send_window,
            };
        }
        if pipe + packet >= st.cwnd {
            return SendLimit::CongestionWindow { window: st.cwnd };
        }
        SendLimit::AllSent
    }

    fn limit_setting(&self, limit: Limit) -> Option<(String, String)> {
        let q = &self.settings;
        let (path, value) = match limit {
            Limit::ReceiveWindow => match q.receive_window {
                Some(r) if r.0 == self.credit => ("quic.receive_window", r.0),
                _ => ("quic.stream_receive_window", q.stream_receive_window.0),
            },
            Limit::SendBuffer => ("quic.send_window", q.send_window.0),
            Limit::Pacing => {
                let r = q.max_pacing_rate?;
                return Some(("quic.max_pacing_rate".into(), text::rate(r.0)));
            }
            Limit::CongestionWindow => {
                let c = format!("{:?}", q.congestion_control).to_lowercase();
                return Some(("quic.congestion_control".into(), c));
            }
            _ => return None,
        };
        Some((path.into(), text::bytes(value as f64)))
    }

    fn report_sender(&self, s: &mut FlowSummary) {
        let st = self.end.stats();
        s.segments_sent = st.datagrams_sent;
        s.data_segments_sent = st.datagrams_sent;
        s.retransmitted_segments = st.packets_lost;
        s.retransmitted_bytes = st.bytes_lost;
        s.min_rtt_s = st.min_rtt.map(secs);
        s.mean_rtt_s = st.rtt.map(secs);
        s.final_cwnd_bytes = st.cwnd;
        s.state = self.state_name();
        s.quic = Some(QuicSummary {
            packets_lost: st.packets_lost,
            bytes_lost: st.bytes_lost,
            congestion_events: st.congestion_events,
            handshake_s: st.handshake.map(secs),
            srtt_s: st.rtt.map(secs),
            mtu: st.mtu,
            udp_bytes_sent: st.udp_bytes_sent,
            streams_completed: st.streams_completed,
            failure: self.end.failure(),
            zero_rtt_accepted: st.zero_rtt_accepted,
        });
    }

    fn report_receiver(&self, s: &mut FlowSummary) {
        s.acks_sent = self.end.stats().datagrams_sent;
        s.receiver_state = self.state_name();
    }

    fn datagram_counts(&self) -> Option<DatagramCounts> {
        let d = self.end.datagram_stats();
        Some(DatagramCounts {
            received: d.received,
            bytes_received: d.bytes_received,
            frames: Some((d.sent, d.too_large)),
        })
    }
}
