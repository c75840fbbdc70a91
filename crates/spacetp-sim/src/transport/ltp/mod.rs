//! LTP through the transport interface: `spacetp-ltp`'s engine at each end of a flow, one
//! span to the other end. The application's bytes are cut into client service data units
//! of `block_size` (each a block, or aggregated into blocks by the span's aggregation
//! limits); segments are real LTP bytes in UDP datagrams on port 1113, so the links count
//! their true sizes and pcaps hold what tshark decodes. LTP has no congestion control: the
//! span paces its segments to `transmission_rate` (the path's bottleneck by default, as
//! ION meters output to the contact's rate). A ground station's link-state notices are
//! RFC 5326 section 6's link state cues: timers stop while the link is down.

use super::capabilities::ConvergenceLayer;
use super::{DataSent, Ends, Outgoing, SendLimit, SenderState, Transport, Wire};
use crate::limits::{text, Limit};
use crate::result::{FlowSummary, LtpSummary};
use bytes::Bytes;
use spacetp_ltp::{Engine, EngineConfig, Event, SpanConfig, SpanStats};
use spacetp_proto::time::secs;
use spacetp_proto::units::{self, Duration, Rate};
use spacetp_proto::{FieldError, Time};
use std::collections::{HashMap, VecDeque};

/// LTP's UDP port (IANA: ltp-deepspace, 1113).
pub const LTP_PORT: u16 = 1113;
/// IPv4 and UDP headers around a segment.
const IP_UDP_HEADERS: u32 = 28;
/// The LTP client service of plain data (ION's test client, ltpdriver / ltpcounter, uses 2).
const CLIENT_SERVICE: u64 = 2;
/// The Bundle Protocol's LTP client service (ION's LTP convergence layer).
pub const BP_CLIENT_SERVICE: u64 = 1;
/// Closed blocks kept waiting in the engine beyond those in sessions: enough to keep the
/// span busy, few enough that a large flow is not held in memory at once.
const BLOCKS_AHEAD: usize = 2;

pub mod entry;
pub mod fit;
mod spec;
pub use spec::{hop_settings, ltp_schema, LtpFlowKeys, LtpSpec, PathDefaults};

/// One end of an LTP flow.
pub struct LtpTransport {
    engine: Engine,
    peer: u64,
    /// The span's pacing rate (b/s, IPv4 and UDP headers excluded), if set: the limit
    /// analysis names it when it holds data back.
    transmission_rate: Option<f64>,
    /// A ground station told this end the link is down.
    link_down: bool,
    /// The flow's sending end (the other only receives).
    sender: bool,
    max_export_sessions: u32,
    block_size: u64,
    red_share: f64,
    /// Zeros that client data units are cut from (a reference, not a copy, per unit).
    zeros: Bytes,
    /// Application bytes not yet handed to the engine, and units handed back by a canceled
    /// session, to hand again first.
    pending: u64,
    returned: VecDeque<Bytes>,
    close_requested: bool,
    /// Bytes handed to the engine, and those whose session completed (red part
    /// acknowledged, green part sent).
    handed: u64,
    acked: u64,
    /// Length of each export session's block and whether it has a green part, until it
    /// completes or is canceled.
    session_len: HashMap<u64, (u64, bool)>,
    /// A green part is complete when its last segment leaves, not when it arrives: the
    /// sender counts as done only one light time (and a margin) later.
    green_settles: Time,
    one_way: Time,
    now: Time,
    blocks_canceled: u64,
    /// Bytes delivered to the application (red parts and green segments).
    delivered: u64,
    segments_undecodable: u64,
    /// When the first segment left and the last session completed: the span's active time.
    first_sent: Option<Time>,
    last_completed: Time,
    /// The engine's next deadline, as of the last call that could move it.
    deadline: Option<Time>,
    /// A hop of the Bundle Protocol (a convergence layer): its client hands it bundles
    /// (`send_sdu`) and takes the blocks that arrived and the units canceled sessions gave
    /// back, instead of a flow's bytes.
    hop: Option<HopIo>,
}

/// What a convergence-layer hop collects for its bundle agent.
#[derive(Default)]
struct HopIo {
    blocks_in: Vec<Bytes>,
    given_back: Vec<Bytes>,
}

impl LtpTransport {
    fn new(engine: Engine, peer: u64, spec: &LtpSpec) -> Self {
        LtpTransport {
            engine,
            peer,
            transmission_rate: spec.span.transmission_rate.map(|r| r.0),
            link_down: false,
            sender: false,
            max_export_sessions: spec.span.max_export_sessions,
            block_size: spec.block_size,
            red_share: spec.red_share,
            zeros: Bytes::from(vec![0u8; spec.block_size.min(1 << 24) as usize]),
            pending: 0,
            returned: VecDeque::new(),
            close_requested: false,
            handed: 0,
            acked: 0,
            session_len: HashMap::new(),
            blocks_canceled: 0,
            delivered: 0,
            segments_undecodable: 0,
            hop: None,
            first_sent: None,
            last_completed: 0,
            green_settles: 0,
            one_way: spec.span.one_way_light_time.0 + spec.span.queuing_latency.0,
            now: 0,
            deadline: None,
        }
    }

    /// Hand the engine client data while it has few blocks waiting for a session.
    fn feed(&mut self, now: Time) {
        while self.engine.blocks_waiting(self.peer).unwrap_or(0) < BLOCKS_AHEAD {
            let sdu = match self.returned.pop_front() {
                Some(b) => b,
                None if self.pending > 0 => {
                    let n = self.pending.min(self.block_size);
                    self.pending -= n;
                    self.handed += n;
                    self.zero_unit(n)
                }
                None => break,
            };
            let len = sdu.len() as u64;
            let red = ((len as f64) * self.red_share).round() as u64;
            self.engine
                .send(now, self.peer, CLIENT_SERVICE, sdu, red.min(len))
                .expect("the span exists and the unit is not empty");
        }
    }

    /// Make this end a Bundle Protocol hop (a convergence layer): see `send_sdu`.
    pub fn into_hop(mut self) -> Self {
        self.hop = Some(HopIo::default());
        self
    }

    /// `n` zero bytes, a slice of the shared buffer when it is large enough.
    fn zero_unit(&self, n: u64) -> Bytes {
        if n as usize <= self.zeros.len() {
            self.zeros.slice(..n as usize)
        } else {
            Bytes::from(vec![0u8; n as usize])
        }
    }

    fn events(&mut self, now: Time) {
        while let Some(ev) = self.engine.poll_event() {
            match ev {
                Event::ExportStarted {
                    session,
                    length,
                    red_length,
                    ..
                } => {
                    self.session_len
                        .insert(session, (length, red_length < length));
                }
                Event::ExportCompleted { session, .. } => {
                    let (len, green) = self.session_len.remove(&session).unwrap_or((0, false));
                    self.acked += len;
                    self.last_completed = now;
                    if green {
                        self.green_settles = self.green_settles.max(now + self.one_way);
                    }
                }
                Event::ExportCanceled { session, sdus, .. } => {
                    self.session_len.remove(&session);
                    self.blocks_canceled += 1;
                    match &mut self.hop {
                        // The bundle agent routes the bundles again (ION's BP re-forwards
                        // the bundles of a canceled block).
                        Some(h) => h.given_back.extend(sdus),
                        // A flow's client sends the data again in a new session.
                        None => self.returned.extend(sdus),
                    }
                }
                Event::RedPartReceived { data, .. } => {
                    self.delivered += data.len() as u64;
                    if let Some(h) = &mut self.hop {
                        h.blocks_in.push(data);
                    }
                }
                Event::GreenSegment { data, .. } => self.delivered += data.len() as u64,
                Event::ImportCanceled { .. } => {}
            }
        }
    }

    fn refresh(&mut self) {
        self.deadline = self.engine.poll_timeout();
        if self.green_settles > self.now {
            self.deadline = Some(
                self.deadline
                    .map_or(self.green_settles, |d| d.min(self.green_settles)),
            );
        }
    }

    fn span(&self) -> SpanStats {
        self.engine
            .span_stats(self.peer)
            .cloned()
            .unwrap_or_default()
    }

    fn sending_done(&self) -> bool {
        self.close_requested
            && self.pending == 0
            && self.returned.is_empty()
            && self.acked >= self.handed
            && self.now >= self.green_settles
    }
}

impl Transport for LtpTransport {
    fn on_packet(&mut self, now: Time, wire: &Wire, payload: &[u8]) {
        self.now = now;
        if let Wire::Udp { len, .. } = wire {
            if self
                .engine
                .on_segment(now, &payload[..*len as usize])
                .is_err()
            {
                self.segments_undecodable += 1;
            }
        }
        self.events(now);
        self.feed(now);
        self.refresh();
    }

    fn poll_transmit(
        &mut self,
        now: Time,
        wire: &mut Wire,
        payload: &mut Vec<u8>,
    ) -> Option<Outgoing> {
        self.now = now;
        self.feed(now);
        payload.clear();
        let sent = self.engine.poll_transmit(now, payload);
        self.events(now);
        self.refresh();
        sent?;
        self.first_sent.get_or_insert(now);
        let len = payload.len() as u32;
        *wire = Wire::Udp {
            src_port: LTP_PORT,
            dst_port: LTP_PORT,
            len,
        };
        Some(Outgoing {
            size: IP_UDP_HEADERS + len,
            low_priority: false,
            data: None::<DataSent>,
        })
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.deadline
    }

    fn on_timeout(&mut self, now: Time) {
        self.now = now;
        self.engine.on_timeout(now);
        self.events(now);
        self.feed(now);
        self.refresh();
    }

    fn write(&mut self, n: u64) -> u64 {
        if self.close_requested {
            return 0;
        }
        self.pending += n;
        n
    }

    fn close(&mut self) {
        self.close_requested = true;
    }

    fn delivered(&self) -> u64 {
        self.delivered
    }

    /// The sender is done when every byte's session completed; the receiver when no import
    /// session is open (the last one closes on the final report's acknowledgment).
    fn is_finished(&self) -> bool {
        if self.sender {
            self.sending_done()
        } else {
            self.engine
                .open_sessions(self.peer)
                .is_none_or(|(_, imports)| imports == 0)
        }
    }

    fn listens_for_link_state(&self) -> bool {
        true
    }

    /// LTP does not give up on a flow: a session canceled at its retransmission limit is
    /// sent again in a new one.
    fn failure(&self) -> Option<String> {
        None
    }

    fn on_link_outage(&mut self, now: Time) {
        self.link_down = true;
        self.engine.set_link_up(now, self.peer, false);
        self.refresh();
    }

    fn on_link_restored(&mut self, now: Time) {
        self.link_down = false;
        self.engine.set_link_up(now, self.peer, true);
        self.refresh();
    }

    fn sender_state(&self) -> SenderState {
        let (open, _) = self.engine.open_sessions(self.peer).unwrap_or((0, 0));
        SenderState {
            cwnd: 0,
            ssthresh: u64::MAX,
            srtt: None,
            in_flight: open as u64,
            sent: self.handed,
            acked: self.acked,
        }
    }

    /// LTP's limit states: no handshake and no congestion control. Blocks wait for an
    /// export session when every one awaits its report (the deep-space limit); with a
    /// session free, only the span's pacing rate holds data back.
    fn send_limit(&self, _now: Time, _peer: &dyn Transport) -> SendLimit {
        if self.sending_done() {
            return SendLimit::Closed;
        }
        if self.link_down {
            return SendLimit::Outage;
        }
        let waiting = self.engine.blocks_waiting(self.peer).unwrap_or(0);
        let (open, _) = self.engine.open_sessions(self.peer).unwrap_or((0, 0));
        if waiting > 0 && open >= self.max_export_sessions {
            return SendLimit::Sessions;
        }
        if waiting > 0 || self.pending > 0 || !self.returned.is_empty() {
            return SendLimit::RateControl;
        }
        SendLimit::AllSent
    }

    fn limit_setting(&self, limit: Limit) -> Option<(String, String)> {
        match limit {
            Limit::LtpSessions => Some((
                "ltp.max_export_sessions".into(),
                self.max_export_sessions.to_string(),
            )),
            Limit::RateControl => Some((
                "ltp.transmission_rate".into(),
                text::rate(self.transmission_rate?),
            )),
            _ => None,
        }
    }

    fn report_sender(&self, s: &mut FlowSummary) {
        let st = self.span();
        s.segments_sent = st.segments_sent;
        s.data_segments_sent = st.data_segments_sent;
        s.retransmitted_segments = st.data_segments_retransmitted;
        s.retransmitted_bytes = st.data_bytes_retransmitted;
        s.timeouts = st.checkpoints_retransmitted;
        s.state = if self.sending_done() {
            "closed".into()
        } else {
            "open".into()
        };
        let l = s.ltp.get_or_insert_with(LtpSummary::default);
        l.sessions = st.export_sessions_started;
        l.sessions_completed = st.export_sessions_completed;
        l.sessions_canceled =
            st.export_canceled_locally.total() + st.export_canceled_by_peer.total();
        l.checkpoints_sent = st.checkpoints_sent;
        l.checkpoints_retransmitted = st.checkpoints_retransmitted;
        l.report_segments_received = st.reports_received;
        l.report_acks_sent = st.report_acks_sent;
        l.cancel_segments_sent = st.cancel_segments_sent;
        l.blocks_waited_for_session = st.blocks_waited_for_session;
        l.session_wait_mean_s = (st.blocks_waited_for_session > 0)
            .then(|| secs(st.session_wait_total) / st.blocks_waited_for_session as f64);
        l.session_wait_max_s = secs(st.session_wait_max);
        // Session-limited: the link sat idle for more than 5% of the span's active time
        // while blocks waited for a session (every session awaiting its report).
        let active = self
            .last_completed
            .saturating_sub(self.first_sent.unwrap_or(0));
        l.session_limited_s = secs(st.session_limited_time);
        l.session_limited = st.session_limited_time * 20 > active;
        l.max_export_sessions = self.max_export_sessions;
        l.segments_undecodable += self.segments_undecodable;
    }

    fn report_receiver(&self, s: &mut FlowSummary) {
        let st = self.span();
        s.acks_sent = st.reports_sent;
        // LTP has no connection to close: sessions come and go.
        s.receiver_state = "sessions".into();
        let l = s.ltp.get_or_insert_with(LtpSummary::default);
        l.report_segments_sent = st.reports_sent;
        l.reports_retransmitted = st.reports_retransmitted;
        l.blocks_delivered = st.blocks_delivered;
        l.redundant_segments_received = st.redundant_segments_received;
        l.segments_undecodable += self.segments_undecodable;
    }

    fn convergence_layer(&mut self) -> Option<&mut dyn ConvergenceLayer> {
        Some(self)
    }

    fn convergence_layer_ref(&self) -> Option<&dyn ConvergenceLayer> {
        Some(self)
    }
}

/// A Bundle Protocol hop (`into_hop`): the world's DTN layer drives it through this.
impl ConvergenceLayer for LtpTransport {
    /// A bundle agent hands a bundle to this hop (all red, client service 1).
    fn send_sdu(&mut self, now: Time, data: Vec<u8>) {
        let len = data.len() as u64;
        self.engine
            .send(now, self.peer, BP_CLIENT_SERVICE, Bytes::from(data), len)
            .expect("the span exists and a bundle is not empty");
        self.handed += len;
        self.refresh();
    }

    /// The blocks that arrived whole since the last call, and the units of canceled
    /// sessions given back (a hop's client).
    fn take_hop_io(&mut self) -> (Vec<Bytes>, Vec<Bytes>) {
        match &mut self.hop {
            Some(h) => (
                std::mem::take(&mut h.blocks_in),
                std::mem::take(&mut h.given_back),
            ),
            None => (Vec::new(), Vec::new()),
        }
    }

    /// The contact plan's cues: the span's link up or down, and its rate (bits/s).
    fn set_contact(&mut self, now: Time, up: bool, rate_bps: Option<f64>) {
        self.now = now;
        self.link_down = !up;
        if let Some(r) = rate_bps {
            self.engine.set_transmission_rate(self.peer, Some(r));
        }
        self.engine.set_link_up(now, self.peer, up);
        self.refresh();
    }

    /// The span's counters (a hop's summary).
    fn span_stats(&self) -> SpanStats {
        self.span()
    }
}
