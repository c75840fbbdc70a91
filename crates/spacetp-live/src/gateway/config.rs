//! What a gateway does: its configuration, from JSON (the CLI's flags and files).

use super::*;
use schemars::JsonSchema;
use serde::Deserialize;
use spacetp_proto::FieldError;
use std::net::IpAddr;

/// Half-open flows a gateway holds by default (Linux's `tcp_max_syn_backlog` is of this order).
pub const DEFAULT_MAX_HALF_OPEN: u32 = 1024;

/// Keepalive across the space link (see `Flow::keepalive`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Keepalive {
    /// Silence from the peer before the first probe.
    pub idle: Time,
    /// Between probes.
    pub interval: Time,
    /// Unanswered probes after which the flow is reset on both sides.
    pub probes: u32,
}

impl Default for Keepalive {
    /// Two minutes of silence, then four probes 30 s apart: a vanished peer is noticed
    /// within four minutes. (Linux's kernel defaults, 2 h and 9 x 75 s, suit end hosts, not
    /// a relay holding resources for both ends.)
    fn default() -> Self {
        Keepalive {
            idle: 120 * SEC,
            interval: 30 * SEC,
            probes: 4,
        }
    }
}

/// What a gateway does.
#[derive(Clone, Debug)]
pub struct GatewayConfig {
    /// Settings of the SCPS-TP connections (a profile's, possibly adjusted).
    pub tcp: TcpConfig,
    /// Payload bytes of a full segment.
    pub mss: u32,
    /// This gateway's and the peer gateway's addresses on the space link (0.0.0.0 when only
    /// transparent relaying is configured).
    pub local_ip: IpAddr,
    pub peer_ip: IpAddr,
    /// Transparent listening socket (IP_TRANSPARENT): connections redirected to it by
    /// nftables `tproxy` cross the link with their own addresses. At `0.0.0.0:PORT`, an
    /// IPv6 one at `[::]:PORT` listens too when the namespace has IPv6.
    pub intercept: Option<SocketAddr>,
    /// Relay SCPS-TP connections addressed to anything but `local_ip` to their own
    /// destination address and port.
    pub forward_original: bool,
    /// Kernel-TCP listening addresses; connections accepted on one go to the peer's SCPS-TP
    /// port given with it.
    pub listen: Vec<(SocketAddr, u16)>,
    /// SCPS-TP connections arriving on this port are relayed to that kernel-TCP destination.
    pub forward: Vec<(u16, SocketAddr)>,
    /// Stop after this long (ns).
    pub duration: Option<Time>,
    /// On a stop, let open flows finish for up to this long before resetting the rest
    /// (None: reset every flow on both sides at once).
    pub drain: Option<Time>,
    pub keepalive: Keepalive,
    /// Reset both sides of a flow that moved no payload for this long (None: never).
    pub idle_timeout: Option<Time>,
    /// Keep log events (flows opened and ended, with ids) for [`Gateway::take_events`].
    pub log_events: bool,
    /// At most this many flows admitted from the peer may wait for their handshake.
    pub max_half_open: u32,
}

/// The gateway's settings as written: JSON from the CLI's flags (and the testbed). One
/// schema, derived from this type: unknown keys are rejected and every error names the
/// path of the setting.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GatewaySettings {
    /// What carries the relayed connections across the link: an SCPS-TP or TCP profile, as
    /// in scenarios (`spacetp protocols`), or a QUIC one (`quic`, `quic-cubic`, `quic-bbr`,
    /// `quic-newreno`: every connection a stream of one QUIC connection between the
    /// gateways, as QPEP does).
    #[serde(default = "default_protocol")]
    pub protocol: String,
    /// Overrides of the profile's fields, as `[flows.tcp]` in scenarios (SCPS-TP and TCP).
    #[serde(default)]
    pub tcp: Option<serde_json::Map<String, serde_json::Value>>,
    /// Overrides of a QUIC profile, as `[flows.quic]` in scenarios (QUIC only).
    #[serde(default)]
    pub quic: Option<serde_json::Map<String, serde_json::Value>>,
    /// UDP port of the QUIC connection between the gateways on both sides (QUIC only;
    /// default 4433).
    pub quic_port: Option<u16>,
    /// The PEM certificate both gateways of a QUIC pair present, and its private key
    /// (`spacetp gateway --make-cert DIR` makes a pair); each gateway trusts exactly this
    /// certificate when it dials the other (QUIC only).
    pub tls_cert: Option<std::path::PathBuf>,
    pub tls_key: Option<std::path::PathBuf>,
    /// The name the certificate carries (default "spacetp-gateway", what --make-cert
    /// writes) (QUIC only).
    pub tls_name: Option<String>,
    /// Largest IP packet on the space link, bytes, in [200, 65535]; the MSS is `mtu - 80`
    /// (IPv4 and TCP headers and 40 bytes of options: SNACK, SACK), 20 less for IPv6.
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    /// This gateway's and the peer's addresses on the space link (explicit rules), both
    /// IPv4 or both IPv6: the SCPS-TP segments travel between them.
    pub local: Option<IpAddr>,
    pub peer: Option<IpAddr>,
    /// `[ADDRESS:PORT, SCPS_PORT]`: accept kernel TCP there (IPv4 or IPv6), carry it to the
    /// peer's port.
    #[serde(default)]
    pub listen: Vec<(SocketAddr, u16)>,
    /// `[SCPS_PORT, ADDRESS:PORT]`: relay SCPS-TP connections to that port there.
    #[serde(default)]
    pub forward: Vec<(u16, SocketAddr)>,
    /// The transparent socket that nftables `tproxy` hands intercepted connections to
    /// (at `0.0.0.0:PORT`, also `[::]:PORT` for IPv6 when the namespace has IPv6).
    pub intercept: Option<SocketAddr>,
    /// Relay SCPS-TP connections addressed to other hosts to that host and port.
    #[serde(default)]
    pub forward_original: bool,
    /// Stop after this many seconds.
    pub duration_s: Option<f64>,
    /// On a stop, let open transfers finish for up to this many seconds, then reset the rest.
    pub drain_s: Option<f64>,
    /// Keepalive: seconds of silence before the first probe (default 120), between probes
    /// (default 30), unanswered probes before both sides are reset (default 4).
    pub keepalive_s: Option<f64>,
    pub keepalive_interval_s: Option<f64>,
    pub keepalive_probes: Option<u32>,
    /// Reset both ends of a relayed connection that moved no data either way for this many
    /// seconds (default: never).
    pub idle_timeout_s: Option<f64>,
    /// Log each relayed connection's opening and end, with its id (`spacetp gateway --log`).
    #[serde(default)]
    pub log_connections: bool,
    /// SYNs from the space link beyond this many half-open connections are dropped
    /// (default 1024).
    pub max_half_open: Option<u32>,
}

fn default_protocol() -> String {
    "scps-tp".into()
}

fn default_mtu() -> u32 {
    1500
}

/// The JSON Schema of a gateway's settings.
pub fn schema() -> String {
    let s = schemars::schema_for!(GatewaySettings);
    serde_json::to_string_pretty(&s).unwrap_or_default()
}

/// Seconds as `Time`, if `v` is a number of seconds in [`min`, 1e9).
pub(crate) fn seconds(v: Option<f64>, key: &str, min: f64) -> Result<Option<Time>, FieldError> {
    match v {
        None => Ok(None),
        Some(x) if x.is_finite() && x >= min && x < 1e9 => Ok(Some((x * 1e9) as Time)),
        Some(x) => Err(FieldError::new(
            format!("gateway.{key}"),
            format!("{x} is not a number of seconds in [{min}, 1e9)"),
        )),
    }
}

/// A gateway's configuration from JSON (see [`GatewaySettings`] for the keys), e.g.
/// `{"protocol": "scps-tp", "tcp": {"scps": {"rate": "10 Mb/s"}}, "local": "10.77.0.1",
///   "peer": "10.77.0.2", "listen": [["0.0.0.0:5000", 7000]]}`.
pub fn config_from_json(text: &str) -> Result<GatewayConfig, FieldError> {
    settings_to_config(parse_settings(text)?)
}

/// The settings from JSON text; errors name the key's path under `gateway`.
pub(crate) fn parse_settings(text: &str) -> Result<GatewaySettings, FieldError> {
    crate::error::from_json(text, "gateway")
}

/// The keys a carrier does not take: each one set is an error naming it.
pub(crate) fn refuse_keys(keys: &[(&str, bool)], carrier: &str) -> Result<(), FieldError> {
    match keys.iter().find(|(_, set)| *set) {
        Some((k, _)) => Err(FieldError::new(
            format!("gateway.{k}"),
            format!("is not a setting of {carrier}"),
        )),
        None => Ok(()),
    }
}

/// The destination rules shared by both carriers, checked: (local, peer) addresses.
pub(crate) fn check_rules(
    s: &GatewaySettings,
    port_name: &str,
    peer_needed: bool,
) -> Result<(IpAddr, IpAddr), FieldError> {
    for (i, (_, port)) in s.listen.iter().enumerate() {
        if *port == 0 {
            return Err(FieldError::new(
                format!("gateway.listen[{i}]"),
                format!("{port_name} port 0 is not a port"),
            ));
        }
    }
    for (i, (port, _)) in s.forward.iter().enumerate() {
        if *port == 0 {
            return Err(FieldError::new(
                format!("gateway.forward[{i}]"),
                format!("{port_name} port 0 is not a port"),
            ));
        }
    }
    // The gateways' own addresses are needed by the explicit rules only.
    let explicit = !s.listen.is_empty() || !s.forward.is_empty();
    let none = IpAddr::from([0, 0, 0, 0]);
    let addr = |a: Option<IpAddr>, key: &str, needed: bool| match (a, needed) {
        (Some(a), _) => Ok(a),
        (None, false) => Ok(none),
        (None, true) => Err(FieldError::new(
            format!("gateway.{key}"),
            "needed by the listen and forward rules (this gateway's and the \
             peer's addresses on the space link)",
        )),
    };
    let (local_ip, peer_ip) = (
        addr(s.local, "local", explicit)?,
        addr(s.peer, "peer", explicit && peer_needed)?,
    );
    if local_ip != none && peer_ip != none && local_ip.is_ipv6() != peer_ip.is_ipv6() {
        return Err(FieldError::new(
            "gateway.peer",
            format!("{peer_ip} and local {local_ip}: both IPv4 or both IPv6 (one space link)"),
        ));
    }
    if !explicit && s.intercept.is_none() && !s.forward_original {
        return Err(FieldError::new(
            "gateway",
            "nothing to do (no listen, forward or intercept rule, and forward_original is off)",
        ));
    }
    Ok((local_ip, peer_ip))
}

/// The rules between settings, then the configuration the gateway runs with.
pub(crate) fn settings_to_config(s: GatewaySettings) -> Result<GatewayConfig, FieldError> {
    refuse_keys(
        &[
            ("quic", s.quic.is_some()),
            ("quic_port", s.quic_port.is_some()),
            ("tls_cert", s.tls_cert.is_some()),
            ("tls_key", s.tls_key.is_some()),
            ("tls_name", s.tls_name.is_some()),
        ],
        &format!(
            "an SCPS-TP or TCP gateway (protocol \"{}\"); QUIC only",
            s.protocol
        ),
    )?;
    let tcp =
        spacetp_proto::settings::tcp_config(&s.protocol, s.tcp.as_ref(), None, None, "gateway")?;
    if tcp.scps.bets.is_some() {
        return Err(FieldError::new(
            "gateway.tcp.scps.bets",
            "BETS gives up missing bytes, and a gateway cannot relay a gap into a kernel TCP \
             byte stream; remove bets",
        ));
    }
    if !(200..=65535).contains(&s.mtu) {
        return Err(FieldError::new(
            "gateway.mtu",
            format!("{} must be in [200, 65535]", s.mtu),
        ));
    }
    let (local_ip, peer_ip) = check_rules(&s, "SCPS-TP", true)?;
    let d = Keepalive::default();
    let keepalive = Keepalive {
        idle: seconds(s.keepalive_s, "keepalive_s", 1.0)?.unwrap_or(d.idle),
        interval: seconds(s.keepalive_interval_s, "keepalive_interval_s", 0.1)?
            .unwrap_or(d.interval),
        probes: match s.keepalive_probes {
            None => d.probes,
            Some(n @ 1..=100) => n,
            Some(n) => {
                return Err(FieldError::new(
                    "gateway.keepalive_probes",
                    format!("{n} is not a whole number in [1, 100]"),
                ))
            }
        },
    };
    Ok(GatewayConfig {
        tcp,
        mss: s.mtu - 80,
        local_ip,
        peer_ip,
        listen: s.listen,
        forward: s.forward,
        intercept: s.intercept,
        forward_original: s.forward_original,
        duration: seconds(s.duration_s, "duration_s", 0.0)?,
        drain: seconds(s.drain_s, "drain_s", 0.0)?,
        keepalive,
        idle_timeout: seconds(s.idle_timeout_s, "idle_timeout_s", 1.0)?,
        log_events: s.log_connections,
        max_half_open: match s.max_half_open {
            None => DEFAULT_MAX_HALF_OPEN,
            Some(n @ 1..=1_000_000) => n,
            Some(n) => {
                return Err(FieldError::new(
                    "gateway.max_half_open",
                    format!("{n} is not a whole number in [1, 1000000]"),
                ))
            }
        },
    })
}
