//! The scenario schema, defined once. TOML files, Python dicts and `--set` overrides all end
//! here; `deny_unknown_fields` everywhere, and errors carry the path of the offending field.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use spacetp_proto::units::{Bytes, Duration, Rate};
use spacetp_proto::FieldError;

fn default_seed() -> u64 {
    1
}
fn default_protocol() -> String {
    "newreno".into()
}
fn default_mtu() -> Bytes {
    Bytes(1500)
}

/// A whole scenario: nodes, links between them, and the traffic that crosses them.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Free text shown in reports.
    #[serde(default)]
    pub name: String,
    /// Base seed of every random stream in the run.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Simulated time at which the run ends. Without it the run ends when every finite flow
    /// and workload has finished.
    pub stop: Option<Duration>,
    /// Hosts and routers.
    #[serde(default)]
    pub nodes: Vec<NodeCfg>,
    /// Point-to-point links, each with two directions configured separately.
    #[serde(default)]
    pub links: Vec<LinkCfg>,
    /// A ready-made topology that adds its nodes and links to those above.
    pub topology: Option<TopologyCfg>,
    /// Transport connections, each a bulk transfer.
    #[serde(default)]
    pub flows: Vec<FlowCfg>,
    /// Request-driven workloads (many short transfers).
    #[serde(default)]
    pub workloads: Vec<WorkloadCfg>,
    /// Background datagram traffic (no transport, no congestion control).
    #[serde(default)]
    pub traffic: Vec<DatagramCfg>,
    /// Time series to record.
    pub trace: Option<TraceCfg>,
    /// Simulated attackers: spoofed segments handed to one end of a flow.
    #[serde(default)]
    pub attacks: Vec<crate::attack::AttackCfg>,
    /// The delay-tolerant network of `bp` flows: its contact plan and its hops' LTP.
    pub dtn: Option<crate::dtn_schema::DtnCfg>,
    /// Next hops that change over time (a constellation's routing), before the static
    /// shortest-hop routes.
    #[serde(default)]
    pub forwarding: Vec<crate::forwarding::ForwardingCfg>,
    /// Satellite shells with inter-satellite links and ground stations, routed every step:
    /// turned into nodes, links and `forwarding` by the Python front before the run
    /// (`spacetp.constellation`, docs/scenario.md "Constellations").
    pub constellation: Option<crate::constellation_schema::ConstellationCfg>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    Host,
    Router,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeCfg {
    /// Unique name, used by links and flows.
    pub name: String,
    /// `host` or `router`; inferred when absent (a node that is a flow endpoint is a host).
    pub kind: Option<NodeKind>,
    /// Its ipn node number in a delay-tolerant network (contact plans, bundle endpoints,
    /// LTP engine IDs). Default: its index + 1.
    pub dtn_node: Option<u64>,
}

pub use crate::link_config::*;

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowCfg {
    /// Label in results (default `flow<i>`).
    pub name: Option<String>,
    /// Sending host.
    pub from: String,
    /// Receiving host.
    pub to: String,
    /// Protocol profile: run `spacetp protocols` for the list.
    #[serde(default = "default_protocol")]
    pub protocol: String,
    /// Profile of the receiving end when it differs (e.g. an SCPS-TP sender talking to a
    /// plain TCP receiver: SCPS-TP falls back to TCP). `tcp` overrides apply to both ends.
    pub peer_protocol: Option<String>,
    /// Bytes to transfer. Without it the flow sends until `stop`.
    pub bytes: Option<Bytes>,
    /// When the sender opens the connection.
    #[serde(default)]
    pub start: Duration,
    /// When the flow is abandoned: its connection stops sending and receiving and its counters
    /// freeze. Required for unlimited flows unless the scenario has a `stop`; a finite flow
    /// not complete by then is reported incomplete.
    pub stop: Option<Duration>,
    /// IP packet size of a full segment; the MSS is mtu - 40.
    #[serde(default = "default_mtu")]
    pub mtu: Bytes,
    /// Shorthand for `tcp.receive_buffer`.
    pub receive_buffer: Option<Bytes>,
    /// Shorthand for `tcp.send_buffer`.
    pub send_buffer: Option<Bytes>,
    /// The receiving application reads at most this fast (default: as soon as data arrives).
    /// A slow reader fills the receive buffer and closes the window.
    pub read_rate: Option<Rate>,
    /// The sending application produces data at most this fast (default: as fast as the
    /// transport takes it). A slow writer leaves the link idle: application-limited.
    pub write_rate: Option<Rate>,
    /// The sending application writes records of this size and marks the end of each
    /// (SCPS-TP record boundary option, kind 22, when both ends speak SCPS-TP).
    pub record_size: Option<Bytes>,
    /// Overrides of any profile setting (see `spacetp protocols`).
    pub tcp: Option<serde_json::Map<String, serde_json::Value>>,
    /// QUIC settings over the QUIC profile's (`protocol = "quic"`, "quic-cubic",
    /// "quic-newreno", "quic-bbr").
    pub quic: Option<serde_json::Map<String, serde_json::Value>>,
    /// LTP settings (`protocol = "ltp"`): the span's, named as ION's `ltprc` names them
    /// (`max_export_sessions`, `max_segment_size`, `aggregation_size_limit`, ...), and
    /// `block_size`, `red_share`, `own_queuing_latency`, `max_ber`. The one-way light time,
    /// transmission rate and segment size default to the path's (`spacetp schema --ltp`).
    pub ltp: Option<serde_json::Map<String, serde_json::Value>>,
    /// CFDP settings (`protocol = "cfdp"`): `class` (1 or 2), `nak_mode`, the positive-ACK,
    /// NAK and check timers and their limits, `segment_size`, `checksum`, `rate`
    /// (`spacetp schema --transport cfdp`).
    pub cfdp: Option<serde_json::Map<String, serde_json::Value>>,
    /// Bundle settings (`protocol = "bp"`: the Bundle Protocol over LTP through the
    /// `[dtn]` network's agents): `bundle_size`, `lifetime`.
    pub bp: Option<crate::dtn_schema::BpCfg>,
    /// Fit the settings a deployment configures per link to this flow's path, for those the
    /// scenario leaves unset: socket buffers, SCPS-TP's rate and ACK period, QUIC's windows,
    /// initial RTT and idle timeout, LTP's sessions and maximum BER (each rule cites its
    /// source; `spacetp fit` prints them, docs/fit.md). Default false: the profile as
    /// written.
    #[serde(default)]
    pub fit: bool,
    /// Also report the goodput over this interval of simulated time, `[from, to]`: bytes
    /// delivered in it x 8 / (to - from), as users compare "bytes in [10 s, 100 s] / 90 s".
    pub goodput_window: Option<(Duration, Duration)>,
}

impl FlowCfg {
    /// The fields only some transports take, with whether this flow sets each: the
    /// transport registry refuses those its transport does not take (`transport/registry.rs`).
    pub fn transport_fields(&self) -> [(&'static str, bool); 11] {
        [
            ("tcp", self.tcp.is_some()),
            ("quic", self.quic.is_some()),
            ("ltp", self.ltp.is_some()),
            ("bp", self.bp.is_some()),
            ("cfdp", self.cfdp.is_some()),
            ("peer_protocol", self.peer_protocol.is_some()),
            ("record_size", self.record_size.is_some()),
            ("read_rate", self.read_rate.is_some()),
            ("write_rate", self.write_rate.is_some()),
            ("receive_buffer", self.receive_buffer.is_some()),
            ("send_buffer", self.send_buffer.is_some()),
        ]
    }
}

impl WorkloadCfg {
    /// As [`FlowCfg::transport_fields`], for a workload's.
    pub fn transport_fields(&self) -> [(&'static str, bool); 5] {
        [
            ("tcp", self.tcp.is_some()),
            ("quic", self.quic.is_some()),
            ("cfdp", self.cfdp.is_some()),
            ("receive_buffer", self.receive_buffer.is_some()),
            ("send_buffer", self.send_buffer.is_some()),
        ]
    }
}

/// A distribution of values with units (sizes or durations). Give exactly one field.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DistCfg<T> {
    /// Always this value.
    pub constant: Option<T>,
    /// Exponential with this mean.
    pub exponential: Option<T>,
    /// Uniform between the two values.
    pub uniform: Option<(T, T)>,
    /// Drawn uniformly from this list.
    pub empirical: Option<Vec<T>>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// The server sends the file to the client (download).
    #[default]
    Get,
    /// The client sends the file to the server (upload).
    Put,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WorkloadKind {
    FileRequests,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkloadCfg {
    /// `file_requests`: each client requests files; each file is one new connection.
    pub kind: WorkloadKind,
    /// Requesting hosts.
    pub clients: Vec<String>,
    /// The host that serves (or receives) the files.
    pub server: String,
    /// `get`: the server sends each file to the client; `put`: the client sends it.
    #[serde(default)]
    pub direction: Direction,
    /// File size distribution.
    pub size: DistCfg<Bytes>,
    /// Time between one client's requests.
    pub interval: DistCfg<Duration>,
    /// Each client's first request comes after one interval draw from `start`.
    #[serde(default)]
    pub start: Duration,
    /// No new request after this time (default: the scenario's `stop`).
    pub stop: Option<Duration>,
    /// At most this many requests per client.
    pub count: Option<u32>,
    #[serde(default = "default_protocol")]
    pub protocol: String,
    /// IP packet size of a full segment of every transfer.
    #[serde(default = "default_mtu")]
    pub mtu: Bytes,
    /// Shorthand for `tcp.receive_buffer`.
    pub receive_buffer: Option<Bytes>,
    /// Shorthand for `tcp.send_buffer`.
    pub send_buffer: Option<Bytes>,
    /// Overrides of any profile setting (see `spacetp protocols`).
    pub tcp: Option<serde_json::Map<String, serde_json::Value>>,
    /// QUIC settings over a QUIC profile's (`protocol = "quic"`, ...): each file is one QUIC
    /// connection. Only with a QUIC protocol.
    pub quic: Option<serde_json::Map<String, serde_json::Value>>,
    /// CFDP settings (`protocol = "cfdp"`): each file is one CFDP transaction, as
    /// `flows[].cfdp`.
    pub cfdp: Option<serde_json::Map<String, serde_json::Value>>,
    /// Fit the connections' settings to the path, as `flows[].fit` does.
    #[serde(default)]
    pub fit: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DatagramPattern {
    /// Constant bit rate.
    #[default]
    Cbr,
    /// Alternating exponential on and off periods, constant rate while on.
    Onoff,
}

fn default_datagram_protocol() -> String {
    "udp".into()
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DatagramCfg {
    /// Sending node.
    pub from: String,
    /// Receiving node.
    pub to: String,
    /// Rate while sending.
    pub rate: Rate,
    /// IP packet size (`udp`), or each DATAGRAM frame's payload (QUIC).
    pub size: Bytes,
    /// `udp` (each datagram one packet, never resent, no congestion control) or a QUIC
    /// profile (`quic`, `quic-cubic`, ...): the datagrams go as RFC 9221 DATAGRAM frames
    /// over one QUIC connection, under its congestion control, never resent.
    #[serde(default = "default_datagram_protocol")]
    pub protocol: String,
    /// QUIC settings over the profile's (only with a QUIC protocol).
    pub quic: Option<serde_json::Map<String, serde_json::Value>>,
    /// `cbr` or `onoff`.
    #[serde(default)]
    pub pattern: DatagramPattern,
    /// Mean on period (onoff).
    pub on: Option<Duration>,
    /// Mean off period (onoff).
    pub off: Option<Duration>,
    /// First packet.
    #[serde(default)]
    pub start: Duration,
    /// No packet after this time (default: the scenario's `stop`).
    pub stop: Option<Duration>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceCfg {
    /// Sample every flow's sender state at this interval.
    pub interval: Option<Duration>,
    /// Log every transmitted segment (time, flow, sequence, length, retransmission).
    #[serde(default)]
    pub segments: bool,
}

/// Ready-made topologies. Their nodes and links are added to the scenario's own.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TopologyCfg {
    /// `chain`: n0 - n1 - ... ; `dumbbell`: `pairs` senders s<i> and receivers r<i> around
    /// routers `left` and `right`; `ground_stations`: `hosts` hosts h<i> behind `gs_a` and
    /// `servers` hosts srv<i> behind `gs_b`, the two ground stations joined by the space link.
    pub kind: TopologyKind,
    /// Chain length (chain).
    pub nodes: Option<u32>,
    /// Sender/receiver pairs (dumbbell).
    pub pairs: Option<u32>,
    /// Hosts behind the first ground station (ground_stations).
    pub hosts: Option<u32>,
    /// Hosts behind the second ground station (ground_stations, default 1).
    pub servers: Option<u32>,
    /// Template for every access link (`between` is filled in; write any placeholder).
    pub access: Option<LinkTemplate>,
    /// The middle link (dumbbell bottleneck / ground-station space link) or every chain link.
    pub core: LinkTemplate,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TopologyKind {
    Chain,
    Dumbbell,
    GroundStations,
}

/// Parse a scenario from JSON text; the error names the path of the bad field.
pub fn scenario_from_json(text: &str) -> Result<Scenario, FieldError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(path_error)
}

/// Parse a scenario from TOML text; the error names the path of the bad field.
pub fn scenario_from_toml(text: &str) -> Result<Scenario, FieldError> {
    if text.trim().is_empty() {
        return Err(FieldError::document(
            "the scenario is empty: it needs at least [[nodes]], [[links]] and [[flows]]",
        ));
    }
    let de = toml::Deserializer::new(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        // TOML errors carry a source excerpt; keep the message itself and the line.
        let path = e.path().to_string();
        let inner = e.into_inner();
        let line = inner
            .span()
            .map(|s| {
                format!(
                    " (line {})",
                    text[..s.start.min(text.len())].lines().count().max(1)
                )
            })
            .unwrap_or_default();
        let msg = inner.message().trim().to_string();
        if path == "." || path.is_empty() {
            FieldError::document(format!("{msg}{line}"))
        } else {
            FieldError::new(path, format!("{msg}{line}"))
        }
    })
}

fn path_error<E: std::fmt::Display>(e: serde_path_to_error::Error<E>) -> FieldError {
    let path = e.path().to_string();
    let inner = e.inner().to_string();
    // serde_json appends " at line L column C"; TOML errors are multi-line: keep the first line.
    let msg = inner
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let msg = msg.split(" at line ").next().unwrap_or(msg);
    if path == "." || path.is_empty() {
        FieldError::document(msg)
    } else {
        FieldError::new(path, msg)
    }
}

/// JSON Schema of the scenario (for docs and editors).
pub fn json_schema() -> String {
    let s = schemars::schema_for!(Scenario);
    serde_json::to_string_pretty(&s).unwrap_or_default()
}
