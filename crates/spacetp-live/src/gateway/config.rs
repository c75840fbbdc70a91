//! What a gateway does: its configuration, from JSON (the CLI's flags and files).

use super::*;

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
    pub local_ip: [u8; 4],
    pub peer_ip: [u8; 4],
    /// Transparent listening socket (IP_TRANSPARENT): connections redirected to it by
    /// nftables `tproxy` cross the link with their own addresses.
    pub intercept: Option<SocketAddrV4>,
    /// Relay SCPS-TP connections addressed to anything but `local_ip` to their own
    /// destination address and port.
    pub forward_original: bool,
    /// Kernel-TCP listening addresses; connections accepted on one go to the peer's SCPS-TP
    /// port given with it.
    pub listen: Vec<(SocketAddrV4, u16)>,
    /// SCPS-TP connections arriving on this port are relayed to that kernel-TCP destination.
    pub forward: Vec<(u16, SocketAddrV4)>,
    /// Stop after this long (ns).
    pub duration: Option<Time>,
    /// On a stop, let open flows finish for up to this long before resetting the rest
    /// (None: reset every flow on both sides at once).
    pub drain: Option<Time>,
    pub keepalive: Keepalive,
}

fn parse_ip(v: &serde_json::Value, path: &str) -> Result<[u8; 4], String> {
    v.as_str()
        .and_then(|s| s.parse::<std::net::Ipv4Addr>().ok())
        .map(|a| a.octets())
        .ok_or_else(|| format!("{path}: {v} is not an IPv4 address"))
}

/// The pairs of `gateway.KEY` (each a two-element array, shaped as `want`), parsed by `parse`.
fn rules<T>(
    o: &serde_json::Map<String, serde_json::Value>,
    key: &str,
    want: &str,
    parse: impl Fn(&[serde_json::Value], &str) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    let empty = Vec::new();
    let items = o
        .get(key)
        .and_then(serde_json::Value::as_array)
        .unwrap_or(&empty);
    items
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let p = format!("gateway.{key}[{i}]");
            let a = e
                .as_array()
                .filter(|a| a.len() == 2)
                .ok_or(format!("{p}: want {want}"))?;
            parse(a, &p)
        })
        .collect()
}

fn parse_sock(v: &serde_json::Value, path: &str) -> Result<SocketAddrV4, String> {
    v.as_str()
        .and_then(|s| s.parse::<SocketAddrV4>().ok())
        .ok_or_else(|| format!("{path}: {v} is not an IPv4 ADDRESS:PORT"))
}

fn parse_port(v: &serde_json::Value, path: &str) -> Result<u16, String> {
    v.as_u64()
        .filter(|&p| (1..=65535).contains(&p))
        .map(|p| p as u16)
        .ok_or_else(|| format!("{path}: {v} is not a port number"))
}

/// A gateway's configuration from JSON:
/// `{"protocol": "scps-tp", "tcp": {..overrides as in [flows.tcp]..}, "mtu": 1500,
///   "local": "10.77.0.1", "peer": "10.77.0.2", "listen": [["0.0.0.0:5000", 7000]],
///   "forward": [[7000, "10.0.2.2:5001"]], "intercept": "0.0.0.0:5999",
///   "forward_original": true, "duration_s": 60}`.
/// The MSS is `mtu - 80`: IPv4 and TCP headers and 40 bytes of options (SNACK, SACK).
pub fn config_from_json(text: &str) -> Result<GatewayConfig, String> {
    use serde_json::Value;
    let v: Value = serde_json::from_str(text).map_err(|e| format!("gateway config: {e}"))?;
    let o = v.as_object().ok_or("gateway config: not an object")?;
    for k in o.keys() {
        if ![
            "protocol",
            "tcp",
            "mtu",
            "local",
            "peer",
            "listen",
            "forward",
            "intercept",
            "forward_original",
            "duration_s",
            "drain_s",
            "keepalive_s",
            "keepalive_interval_s",
            "keepalive_probes",
        ]
        .contains(&k.as_str())
        {
            return Err(format!("gateway.{k}: unknown setting"));
        }
    }
    let protocol = o
        .get("protocol")
        .and_then(Value::as_str)
        .unwrap_or("scps-tp");
    let tcp = spacetp_sim::build::tcp_config(
        protocol,
        o.get("tcp").and_then(Value::as_object),
        None,
        None,
        "gateway",
    )?;
    let mtu = o.get("mtu").and_then(Value::as_u64).unwrap_or(1500);
    if !(200..=65535).contains(&mtu) {
        return Err(format!("gateway.mtu: {mtu} must be in [200, 65535]"));
    }
    let listen = rules(o, "listen", "[ADDRESS:PORT, SCPS_PORT]", |a, p| {
        Ok((parse_sock(&a[0], p)?, parse_port(&a[1], p)?))
    })?;
    let forward = rules(o, "forward", "[SCPS_PORT, ADDRESS:PORT]", |a, p| {
        Ok((parse_port(&a[0], p)?, parse_sock(&a[1], p)?))
    })?;
    let intercept = match o.get("intercept") {
        None | Some(Value::Null) => None,
        Some(v) => Some(parse_sock(v, "gateway.intercept")?),
    };
    let forward_original = match o.get("forward_original") {
        None => false,
        Some(v) => v.as_bool().ok_or(format!(
            "gateway.forward_original: {v} is not true or false"
        ))?,
    };
    // The gateways' own addresses are needed by the explicit rules only.
    let explicit = !listen.is_empty() || !forward.is_empty();
    let addr = |key: &str| match o.get(key) {
        None if !explicit => Ok([0; 4]),
        v => parse_ip(v.unwrap_or(&Value::Null), &format!("gateway.{key}")),
    };
    let (local, peer) = (addr("local")?, addr("peer")?);
    if !explicit && intercept.is_none() && !forward_original {
        return Err(
            "gateway: nothing to do (no listen, forward or intercept rule, and forward_original \
             is off)"
                .into(),
        );
    }
    if tcp.scps.bets.is_some() {
        return Err(
            "gateway.tcp.scps.bets: BETS gives up missing bytes, and a gateway cannot \
                    relay a gap into a kernel TCP byte stream; remove bets"
                .into(),
        );
    }
    let seconds = |key: &str, min: f64| -> Result<Option<Time>, String> {
        match o.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => match v.as_f64() {
                Some(x) if x.is_finite() && x >= min && x < 1e9 => Ok(Some((x * 1e9) as Time)),
                _ => Err(format!(
                    "gateway.{key}: {v} is not a number of seconds >= {min} (and below 1e9)"
                )),
            },
        }
    };
    let duration = seconds("duration_s", 0.0)?;
    let drain = seconds("drain_s", 0.0)?;
    let d = Keepalive::default();
    let keepalive = Keepalive {
        idle: seconds("keepalive_s", 1.0)?.unwrap_or(d.idle),
        interval: seconds("keepalive_interval_s", 0.1)?.unwrap_or(d.interval),
        probes: match o.get("keepalive_probes") {
            None => d.probes,
            Some(v) => v
                .as_u64()
                .filter(|&n| (1..=100).contains(&n))
                .ok_or(format!(
                    "gateway.keepalive_probes: {v} is not a whole number in [1, 100]"
                ))? as u32,
        },
    };
    Ok(GatewayConfig {
        tcp,
        mss: mtu as u32 - 80,
        local_ip: local,
        peer_ip: peer,
        listen,
        forward,
        intercept,
        forward_original,
        duration,
        drain,
        keepalive,
    })
}
