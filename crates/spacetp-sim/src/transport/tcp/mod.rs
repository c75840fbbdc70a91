//! TCP and SCPS-TP through the transport interface: `spacetp-proto`'s `Connection`, plus the
//! SCPS header compression contexts of its two directions and the packet sizes on the wire.

pub mod entry;
pub mod fit;

use super::capabilities::ForgedSegments;
use super::{node_addr, DataSent, Ends, Outgoing, SendLimit, SenderState, Transport, Wire};
use crate::limits::{text, Limit};
use crate::result::{FlowSummary, TcpSummary};
use spacetp_proto::connection::CloseReason;
use spacetp_proto::{Connection, State, TcpConfig, Time};
use spacetp_wire::{
    compress, decompress, flags, CompressedHeader, CompressionContext, TcpHeader, IPV4_HEADER_LEN,
    TCP_HEADER_LEN,
};
use std::sync::Arc;

/// A TCP flow's settings: each end's configuration and the MSS from the flow's MTU.
#[derive(Clone, Debug)]
pub struct TcpSpec {
    /// Shared by both ends' connections (and by flows of equal settings, `registry::Shared`).
    pub cfg: Arc<TcpConfig>,
    /// The receiving end's settings when its profile differs.
    pub peer_cfg: Option<Arc<TcpConfig>>,
    pub mss: u32,
}

impl TcpSpec {
    pub(super) fn client(&self, ends: Ends, isn: u32) -> TcpEndpoint {
        let conn =
            Connection::connect(&self.cfg, self.mss, ends.client_port, ends.server_port, isn);
        TcpEndpoint::new(conn, ends.client_node, ends.server_node)
    }

    pub(super) fn server(&self, ends: Ends, isn: u32) -> TcpEndpoint {
        let cfg = self.peer_cfg.as_ref().unwrap_or(&self.cfg);
        let conn = Connection::listen(cfg, self.mss, ends.server_port, ends.client_port, isn);
        TcpEndpoint::new(conn, ends.server_node, ends.client_node)
    }
}

/// One end of a TCP or SCPS-TP connection.
pub struct TcpEndpoint {
    conn: Connection,
    local: [u8; 4],
    remote: [u8; 4],
    /// SCPS header compression state of the direction this end sends (set up from its own
    /// SYN) and of the direction it receives (set up from the peer's SYN).
    comp_tx: Option<CompressionContext>,
    comp_rx: Option<CompressionContext>,
}

impl TcpEndpoint {
    fn new(conn: Connection, node: u16, peer_node: u16) -> Self {
        TcpEndpoint {
            conn,
            local: node_addr(node),
            remote: node_addr(peer_node),
            comp_tx: None,
            comp_rx: None,
        }
    }

    /// The compressed header `hdr` goes out with, if the connection negotiated SCPS header
    /// compression (SYNs set the context up and travel uncompressed).
    fn compress(&mut self, hdr: &TcpHeader, len: u32) -> Option<CompressedHeader> {
        if hdr.has(flags::SYN) {
            self.comp_tx = CompressionContext::from_syn(hdr, self.local, self.remote).ok();
            return None;
        }
        if !self.conn.header_compression() {
            return None;
        }
        let ctx = self.comp_tx.as_mut()?;
        let c = compress(hdr, len as usize, ctx).ok()?;
        ctx.record(hdr);
        Some(c)
    }
}

impl Transport for TcpEndpoint {
    fn on_packet(&mut self, now: Time, wire: &Wire, _payload: &[u8]) {
        let Wire::Tcp { hdr, len, comp } = wire else {
            return; // not a TCP segment: nothing this end can read
        };
        // From the peer's first SYN only: a later SYN (a copy, or spoofed) must not replace
        // the context the connection's headers decode against.
        if hdr.has(flags::SYN) && self.comp_rx.is_none() {
            self.comp_rx = CompressionContext::from_syn(hdr, self.remote, self.local).ok();
        }
        // A compressed header decodes against the receiver's context, as on a real link:
        // fields omitted after a lost header come out with older values.
        match (comp, self.comp_rx.as_mut()) {
            (None, _) => {
                self.conn.on_segment(now, hdr, *len);
            }
            (Some(c), Some(ctx)) => {
                if let Ok(d) = decompress(c.as_bytes(), ctx) {
                    self.conn.on_segment(now, &d.header, *len);
                }
            }
            (Some(_), None) => {} // no context: undecodable, dropped
        }
    }

    fn poll_transmit(
        &mut self,
        now: Time,
        wire: &mut Wire,
        _payload: &mut Vec<u8>,
    ) -> Option<Outgoing> {
        // The connection writes its header straight into the packet slot (a reused slot
        // usually held a segment already: nothing to set up).
        if !matches!(wire, Wire::Tcp { .. }) {
            *wire = Wire::Tcp {
                hdr: TcpHeader::default(),
                len: 0,
                comp: None,
            };
        }
        let Wire::Tcp { hdr, len, comp } = wire else {
            unreachable!("set just above")
        };
        let t = self.conn.poll_transmit_into(now, hdr)?;
        *comp = self.compress(hdr, t.len);
        *len = t.len;
        let header_len = match comp {
            Some(c) => c.len() as u32,
            None => TCP_HEADER_LEN + hdr.options.padded_len(),
        };
        Some(Outgoing {
            size: IPV4_HEADER_LEN + header_len + t.len,
            low_priority: t.low_priority,
            data: (t.len > 0).then_some(DataSent {
                offset: t.pos - 1,
                len: t.len,
                retransmission: t.retransmission,
            }),
        })
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.conn.poll_timeout()
    }

    fn on_timeout(&mut self, now: Time) {
        self.conn.on_timeout(now);
    }

    fn on_timer(&mut self, now: Time) {
        self.conn.on_deadline(now);
    }

    fn write(&mut self, n: u64) -> u64 {
        self.conn.send(n)
    }

    fn end_record(&mut self) {
        self.conn.end_record();
    }

    fn close(&mut self) {
        self.conn.close();
    }

    fn set_manual_read(&mut self) {
        self.conn.set_manual_read();
    }

    fn read(&mut self, n: u64) -> u64 {
        self.conn.read(n)
    }

    fn readable(&self) -> u64 {
        self.conn.readable()
    }

    fn delivered(&self) -> u64 {
        self.conn.delivered()
    }

    fn receive_buffer(&self) -> u64 {
        self.conn.config().receive_buffer.0
    }

    fn peer_closed(&self) -> bool {
        self.conn.state() == State::CloseWait
    }

    fn is_finished(&self) -> bool {
        self.conn.is_finished()
    }

    fn failure(&self) -> Option<String> {
        self.conn
            .close_reason()
            .filter(|&r| r != CloseReason::Normal)
            .map(|r| r.as_str().to_string())
    }

    fn on_corruption_detected(&mut self) {
        self.conn.on_corruption_detected();
    }

    fn on_corruption_notice(&mut self, now: Time) {
        self.conn.on_corruption_notice(now);
    }

    fn on_link_outage(&mut self, now: Time) {
        self.conn.on_link_outage(now);
    }

    fn on_link_restored(&mut self, now: Time) {
        self.conn.on_link_restored(now);
    }

    fn sender_state(&self) -> SenderState {
        let c = &self.conn;
        SenderState {
            cwnd: c.window().cwnd,
            ssthresh: c.window().ssthresh,
            srtt: c.rtt().srtt(),
            in_flight: c.bytes_in_flight(),
            sent: c.snd_max().saturating_sub(1),
            acked: c.snd_una().saturating_sub(1),
        }
    }

    fn send_limit(&self, now: Time, _peer: &dyn Transport) -> SendLimit {
        self.conn.send_limit(now).into()
    }

    /// TCP's limit states and the settings that lift them (the receiver is asked for its
    /// window, the sender for the rest).
    fn limit_setting(&self, limit: Limit) -> Option<(String, String)> {
        let c = self.conn.config();
        let (path, value) = match limit {
            Limit::ReceiveWindow => ("receive_buffer", text::bytes(c.receive_buffer.0 as f64)),
            Limit::SendBuffer => ("send_buffer", text::bytes(c.send_buffer.0 as f64)),
            Limit::RateControl => ("tcp.scps.rate", text::rate(c.scps.rate?.0)),
            Limit::Pacing => match c.max_pacing_rate {
                Some(r) => ("tcp.max_pacing_rate", text::rate(r.0)),
                None => (
                    "tcp.congestion_control",
                    format!("{:?}", c.congestion_control),
                ),
            },
            Limit::CongestionWindow => {
                let iw = c.initial_window.bytes(self.conn.segment_size() as u64);
                ("tcp.initial_window", text::bytes(iw as f64))
            }
            Limit::Recovery => ("tcp.recovery", format!("{:?}", c.recovery).to_lowercase()),
            _ => return None,
        };
        Some((path.into(), value))
    }

    fn report_sender(&self, s: &mut FlowSummary) {
        let c = &self.conn;
        let st = c.stats();
        s.segments_sent = st.segments_sent;
        s.data_segments_sent = st.data_segments_sent;
        s.retransmitted_segments = st.retransmitted_segments;
        s.retransmitted_bytes = st.retransmitted_bytes;
        s.timeouts = st.timeouts;
        let t = s.tcp.get_or_insert_with(Default::default);
        t.spurious_timeouts = st.spurious_timeouts;
        t.fast_retransmits = st.fast_retransmits;
        t.loss_probes = st.loss_probes;
        t.loss_probe_recoveries = st.loss_probe_recoveries;
        t.nil_segments_sent = st.nil_segments_sent;
        t.snacks_received = st.snacks_received;
        t.snack_retransmits = st.snack_retransmits;
        self.add_rejections(t);
        let r = c.rtt();
        if r.samples > 0 {
            s.mean_rtt_s = Some(r.sum_rtt as f64 / r.samples as f64 / 1e9);
        }
        s.min_rtt_s = r.min_rtt().map(spacetp_proto::time::secs);
        s.final_cwnd_bytes = c.window().cwnd;
        s.state = self.state_name();
    }

    fn report_receiver(&self, s: &mut FlowSummary) {
        let c = &self.conn;
        s.acks_sent = c.stats().segments_sent;
        let t = s.tcp.get_or_insert_with(Default::default);
        t.records_delivered = c.records_delivered();
        t.bets_bytes_lost = c.bets_bytes_lost();
        self.add_rejections(t);
        s.receiver_state = self.state_name();
    }

    fn forged_segments(&mut self) -> Option<&mut dyn ForgedSegments> {
        Some(self)
    }
}

impl TcpEndpoint {
    /// RFC 5961: what this end refused of what arrived (summed over both ends).
    fn add_rejections(&self, s: &mut TcpSummary) {
        let st = self.conn.stats();
        s.rst_rejected += st.rst_rejected;
        s.syn_rejected += st.syn_rejected;
        s.ack_rejected += st.ack_rejected;
        s.out_of_window_segments += st.out_of_window_segments;
        s.challenge_acks += st.challenge_acks;
    }

    /// How the connection ended, or the state it is in.
    fn state_name(&self) -> String {
        match self.conn.close_reason() {
            Some(r) => r.as_str().to_string(),
            None => format!("{:?}", self.conn.state()).to_lowercase(),
        }
    }
}

/// The attacker of `[[attacks]]` feeds the connection forged segments.
impl ForgedSegments for TcpEndpoint {
    fn connection_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }
}
