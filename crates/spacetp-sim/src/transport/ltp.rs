//! LTP through the transport interface: `spacetp-ltp`'s engine at each end of a flow, one
//! span to the other end. The application's bytes are cut into client service data units
//! of `block_size` (each a block, or aggregated into blocks by the span's aggregation
//! limits); segments are real LTP bytes in UDP datagrams on port 1113, so the links count
//! their true sizes and pcaps hold what tshark decodes. LTP has no congestion control: the
//! span paces its segments to `transmission_rate` (the path's bottleneck by default, as
//! ION meters output to the contact's rate). A ground station's link-state notices are
//! RFC 5326 section 6's link state cues: timers stop while the link is down.

use super::{DataSent, Ends, Outgoing, SenderState, Transport, Wire};
use crate::result::{FlowSummary, LtpSummary};
use bytes::Bytes;
use spacetp_ltp::{Engine, EngineConfig, Event, SpanConfig, SpanStats};
use spacetp_proto::time::secs;
use spacetp_proto::units::{self, Duration, Rate};
use spacetp_proto::{FieldError, Time};
use std::any::Any;
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

/// What an LTP flow runs: its span's settings (ION's names), the engine's, and how the
/// application's bytes become client data.
#[derive(Clone, Debug)]
pub struct LtpSpec {
    /// The span; `peer_engine_id` is set for each end when the flow opens.
    pub span: SpanConfig,
    pub engine: EngineConfig,
    /// Bytes of one client service data unit.
    pub block_size: u64,
    /// Share of each unit sent red (reliable); the rest green (sent once).
    pub red_share: f64,
}

/// The `[flows.ltp]` keys that are not span settings.
#[derive(Clone, Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LtpFlowKeys {
    /// The application's data is handed to LTP in units of this size (ION's client service
    /// data units); each is a block unless the span's aggregation limits join several.
    /// Default: the span's `aggregation_size_limit`.
    pub block_size: Option<units::Bytes>,
    /// Share of each unit sent red (reliable, acknowledged and resent): 1 (default) all
    /// red, 0 all green (sent once, never resent), in between a red head and a green tail.
    pub red_share: Option<f64>,
    /// The engine's own turnaround added to its deadlines (ION `m ownqtime`, default 1 s).
    pub own_queuing_latency: Option<Duration>,
    /// The bit error rate the retransmission limits are derived from (ION `m maxber`,
    /// default 1e-6).
    pub max_ber: Option<f64>,
}

/// What the path tells an LTP flow by default: its one-way propagation delay, its
/// bottleneck rate and its largest segment.
pub struct PathDefaults {
    pub one_way: Time,
    pub rate_bps: f64,
    pub max_segment: u64,
}

impl LtpSpec {
    /// `[flows.ltp]` over the defaults, checked; errors name the field under `path`.
    pub fn from_settings(
        overrides: Option<&serde_json::Map<String, serde_json::Value>>,
        defaults: &PathDefaults,
        path: &str,
    ) -> Result<LtpSpec, FieldError> {
        const OWN: [&str; 4] = ["block_size", "red_share", "own_queuing_latency", "max_ber"];
        let p = format!("{path}.ltp");
        let mut span = overrides.cloned().unwrap_or_default();
        let mut own = serde_json::Map::new();
        for k in OWN {
            if let Some(v) = span.remove(k) {
                own.insert(k.into(), v);
            }
        }
        if span.contains_key("peer_engine_id") {
            return Err(FieldError::new(
                format!("{p}.peer_engine_id"),
                "is the other end of the flow; it is not set here",
            ));
        }
        let keys: LtpFlowKeys = from_map(own, &p)?;
        span.insert("peer_engine_id".into(), 1.into());
        span.entry("one_way_light_time")
            .or_insert_with(|| format!("{} ns", defaults.one_way).into());
        // Paced so that the packets, IPv4 and UDP headers included, fill the bottleneck.
        let seg = match span.get("max_segment_size") {
            Some(v) => serde_json::from_value::<units::Bytes>(v.clone())
                .map_or(defaults.max_segment, |b| b.0),
            None => defaults.max_segment,
        };
        let share = seg as f64 / (seg + IP_UDP_HEADERS as u64) as f64;
        span.entry("transmission_rate")
            .or_insert_with(|| format!("{} b/s", defaults.rate_bps * share).into());
        span.entry("max_segment_size")
            .or_insert_with(|| format!("{} B", defaults.max_segment).into());
        // Both ends are configured alike: the receiver takes as many sessions at once as
        // the sender opens (ION's max_import_sessions is the peer's export window).
        if let Some(n) = span.get("max_export_sessions").cloned() {
            span.entry("max_import_sessions").or_insert(n);
        }
        let span: SpanConfig = from_map(span, &p)?;
        span.validate().map_err(|e| e.within(&p))?;
        let mut engine = EngineConfig::default();
        if let Some(q) = keys.own_queuing_latency {
            engine.own_queuing_latency = q;
        }
        if let Some(b) = keys.max_ber {
            engine.max_ber = b;
        }
        engine.validate().map_err(|e| e.within(&p))?;
        let red_share = keys.red_share.unwrap_or(1.0);
        if !(0.0..=1.0).contains(&red_share) {
            return Err(FieldError::new(
                format!("{p}.red_share"),
                format!("{red_share} must be from 0 (all green) to 1 (all red)"),
            ));
        }
        let block_size = keys
            .block_size
            .map_or(span.aggregation_size_limit.0, |b| b.0);
        if block_size == 0 {
            return Err(FieldError::new(
                format!("{p}.block_size"),
                "must be at least 1 B",
            ));
        }
        if span.transmission_rate.is_some_and(|r: Rate| r.0 <= 0.0) {
            return Err(FieldError::new(
                format!("{p}.transmission_rate"),
                "must be above 0 b/s",
            ));
        }
        Ok(LtpSpec {
            span,
            engine,
            block_size,
            red_share,
        })
    }

    /// The two ends of a flow: engine IDs are the nodes' numbers (index + 1), `seed` seeds
    /// both engines' session and serial numbers.
    pub(crate) fn open(&self, ends: Ends, seed: u64) -> (LtpTransport, LtpTransport) {
        self.open_engines(
            ends.client_node as u64 + 1,
            ends.server_node as u64 + 1,
            seed,
        )
    }

    /// The two ends of a Bundle Protocol hop between engines `a` and `b` (the nodes' ipn
    /// numbers), in hop mode.
    pub(crate) fn open_hop(&self, a: u64, b: u64, seed: u64) -> (LtpTransport, LtpTransport) {
        let (x, y) = self.open_engines(a, b, seed);
        (x.into_hop(), y.into_hop())
    }

    fn open_engines(&self, a: u64, b: u64, seed: u64) -> (LtpTransport, LtpTransport) {
        let end = |me: u64, peer: u64, salt: u64| {
            let mut engine = self.engine.clone();
            engine.seed = seed ^ salt;
            let mut e = Engine::new(me, engine).expect("validated when the scenario was read");
            let mut span = self.span.clone();
            span.peer_engine_id = peer;
            e.add_span(span)
                .expect("validated when the scenario was read");
            LtpTransport::new(e, peer, self)
        };
        let (mut client, server) = (end(a, b, 0), end(b, a, 0x5a5a_5a5a));
        client.sender = true;
        (client, server)
    }
}

/// The JSON Schema of `[flows.ltp]`: the span's settings (but the peer, which is the flow's
/// other end) and the keys of the flow's own.
pub fn ltp_schema() -> serde_json::Value {
    let mut span = serde_json::to_value(schemars::schema_for!(SpanConfig)).unwrap_or_default();
    let own = serde_json::to_value(schemars::schema_for!(LtpFlowKeys)).unwrap_or_default();
    if let Some(props) = span.get_mut("properties").and_then(|p| p.as_object_mut()) {
        props.remove("peer_engine_id");
        if let Some(o) = own.get("properties").and_then(|p| p.as_object()) {
            props.extend(o.clone());
        }
    }
    if let Some(req) = span.get_mut("required").and_then(|r| r.as_array_mut()) {
        req.retain(|r| r != "peer_engine_id" && r != "one_way_light_time");
    }
    if let (Some(d), Some(o)) = (
        span.get_mut("definitions").and_then(|d| d.as_object_mut()),
        own.get("definitions").and_then(|d| d.as_object()),
    ) {
        d.extend(o.clone());
    }
    span["title"] = "LtpFlowSettings".into();
    span
}

/// A Bundle Protocol hop's LTP settings between engines `a` and `b`: `overrides` (`[dtn]
/// ltp`), and where they do not set them, export sessions for the hop's bandwidth-delay
/// product (ION's configuration guide: rate x round trip / block size; twice that, since a
/// block that lost a segment keeps its session another round trip, and the timers'
/// margins), and the plan's light time.
pub fn hop_settings(
    plan: &spacetp_dtn::ContactPlan,
    a: u64,
    b: u64,
    overrides: Option<&serde_json::Map<String, serde_json::Value>>,
    path: &PathDefaults,
) -> serde_json::Map<String, serde_json::Value> {
    let mut m = overrides.cloned().unwrap_or_default();
    let rate = plan
        .contacts_between(a, b)
        .iter()
        .chain(plan.contacts_between(b, a))
        .map(|c| c.rate_bytes_per_s)
        .fold(0.0, f64::max);
    let owlt = plan
        .range_table()
        .iter()
        .map(|e| &e.range)
        .filter(|r| (r.from, r.to) == (a, b))
        .map(|r| r.owlt)
        .max()
        .unwrap_or(path.one_way);
    m.entry("one_way_light_time")
        .or_insert_with(|| format!("{owlt} ns").into());
    if !m.contains_key("max_export_sessions") {
        let block = m
            .get("aggregation_size_limit")
            .and_then(|v| serde_json::from_value::<spacetp_proto::units::Bytes>(v.clone()).ok())
            .map_or(64_000.0, |b| b.0 as f64);
        let round_trip = 2.0 * spacetp_proto::time::secs(owlt) + 2.0;
        let sessions = (2.0 * rate * round_trip / block).ceil() as u64 + 1;
        m.insert(
            "max_export_sessions".into(),
            sessions.clamp(10, 100_000).into(),
        );
    }
    m
}

fn from_map<T: serde::de::DeserializeOwned>(
    m: serde_json::Map<String, serde_json::Value>,
    p: &str,
) -> Result<T, FieldError> {
    serde_path_to_error::deserialize(serde_json::Value::Object(m)).map_err(|e| {
        let at = e.path().to_string();
        let msg = e.into_inner().to_string();
        if at == "." {
            FieldError::new(p.to_string(), msg)
        } else {
            FieldError::new(format!("{p}.{at}"), msg)
        }
    })
}

/// One end of an LTP flow.
pub struct LtpTransport {
    engine: Engine,
    peer: u64,
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

    /// A bundle agent hands a bundle to this hop (all red, client service 1).
    pub fn send_sdu(&mut self, now: Time, data: Vec<u8>) {
        let len = data.len() as u64;
        self.engine
            .send(now, self.peer, BP_CLIENT_SERVICE, Bytes::from(data), len)
            .expect("the span exists and a bundle is not empty");
        self.handed += len;
        self.refresh();
    }

    /// The blocks that arrived whole since the last call, and the units of canceled
    /// sessions given back (a hop's client).
    pub fn take_hop_io(&mut self) -> (Vec<Bytes>, Vec<Bytes>) {
        match &mut self.hop {
            Some(h) => (
                std::mem::take(&mut h.blocks_in),
                std::mem::take(&mut h.given_back),
            ),
            None => (Vec::new(), Vec::new()),
        }
    }

    /// The contact plan's cues: the span's link up or down, and its rate (bits/s).
    pub fn set_contact(&mut self, now: Time, up: bool, rate_bps: Option<f64>) {
        self.now = now;
        if let Some(r) = rate_bps {
            self.engine.set_transmission_rate(self.peer, Some(r));
        }
        self.engine.set_link_up(now, self.peer, up);
        self.refresh();
    }

    /// The span's counters (a hop's summary).
    pub fn span_stats(&self) -> SpanStats {
        self.span()
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

    fn end_record(&mut self) {}

    fn close(&mut self) {
        self.close_requested = true;
    }

    fn set_manual_read(&mut self) {}

    fn read(&mut self, _n: u64) -> u64 {
        0
    }

    fn readable(&self) -> u64 {
        0
    }

    fn delivered(&self) -> u64 {
        self.delivered
    }

    fn receive_buffer(&self) -> u64 {
        u64::MAX
    }

    fn peer_closed(&self) -> bool {
        false
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

    fn failed(&self) -> bool {
        false
    }

    fn on_link_outage(&mut self, now: Time) {
        self.engine.set_link_up(now, self.peer, false);
        self.refresh();
    }

    fn on_link_restored(&mut self, now: Time) {
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

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}
