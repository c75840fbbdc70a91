//! What a QUIC gateway does: the same destination rules as the SCPS-TP gateway, quinn's
//! settings (`[flows.quic]`) for the tunnel, and the certificate the pair shares.

use crate::gateway::{check_rules, refuse_keys, seconds, GatewaySettings};
use spacetp_proto::{FieldError, Time, SEC};
use spacetp_quic::tls::{Identity, GATEWAY_NAME};
use spacetp_quic::{quic_config_on, QuicSettings};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, SocketAddrV4};

/// The tunnel's UDP port when none is given.
pub const DEFAULT_PORT: u16 = 4433;

/// What a QUIC gateway does.
#[derive(Clone)]
pub struct QuicGatewayConfig {
    /// quinn's settings for the tunnel (controller, windows, idle timeout, keep-alive).
    pub quic: QuicSettings,
    /// Largest UDP payload the link's MTU carries (MTU - 28).
    pub max_payload: u16,
    /// This gateway's tunnel address (its address on the space link and the UDP port).
    pub local: SocketAddrV4,
    /// The peer gateway's tunnel address: dialed when this gateway accepts connections
    /// from applications (listen or intercept rules).
    pub peer: Option<SocketAddrV4>,
    pub identity: Identity,
    pub tls_name: String,
    /// Kernel-TCP listening addresses; connections accepted on one go to the peer's port
    /// given with it (its `forward` rule).
    pub listen: Vec<(SocketAddrV4, u16)>,
    /// Streams that name this port are relayed to that kernel-TCP destination.
    pub forward: Vec<(u16, SocketAddrV4)>,
    /// Transparent listening socket (nftables `tproxy`): the stream names the original
    /// destination, which a peer with `forward_original` connects to.
    pub intercept: Option<SocketAddrV4>,
    pub forward_original: bool,
    /// The most relayed connections at once (streams each way); more wait for a free one.
    pub max_streams: u32,
    pub duration: Option<Time>,
    pub drain: Option<Time>,
}

impl QuicGatewayConfig {
    /// Whether this gateway dials its peer: it takes connections from applications.
    pub fn dials(&self) -> bool {
        !self.listen.is_empty() || self.intercept.is_some()
    }
}

/// The tunnel's defaults where they differ from a flow's: keep-alive every 10 s and an idle
/// timeout of 5 min, so that the tunnel (and every connection in it) outlives link outages
/// of minutes. A flow's are quinn's (no keep-alive, 30 s).
fn tunnel_defaults() -> QuicSettings {
    QuicSettings {
        max_idle_timeout: Some(spacetp_proto::units::Duration(300 * SEC)),
        keep_alive_interval: Some(spacetp_proto::units::Duration(10 * SEC)),
        ..QuicSettings::default()
    }
}

pub(crate) fn config_from_settings(s: GatewaySettings) -> Result<QuicGatewayConfig, FieldError> {
    refuse_keys(
        &[
            ("tcp", s.tcp.is_some()),
            ("keepalive_s", s.keepalive_s.is_some()),
            ("keepalive_interval_s", s.keepalive_interval_s.is_some()),
            ("keepalive_probes", s.keepalive_probes.is_some()),
            ("idle_timeout_s", s.idle_timeout_s.is_some()),
            ("log_connections", s.log_connections),
            ("max_half_open", s.max_half_open.is_some()),
        ],
        &format!(
            "a QUIC gateway (protocol \"{}\"): its tunnel's settings are under quic \
             (keep_alive_interval, max_idle_timeout, ...)",
            s.protocol
        ),
    )?;
    if !(1228..=65535).contains(&s.mtu) {
        return Err(FieldError::new(
            "gateway.mtu",
            format!(
                "{} must be in [1228, 65535]: QUIC needs UDP payloads of 1200 bytes",
                s.mtu
            ),
        ));
    }
    let max_payload = (s.mtu - 28).min(65527) as u16;
    let quic = quic_config_on(
        tunnel_defaults(),
        &s.protocol,
        s.quic.as_ref(),
        max_payload,
        "gateway",
    )?;
    // A live peer reads real packets: the tunnel always encrypts.
    quic.crypto_mode(Some("a gateway's peer reads real packets"), "gateway")?;
    // The peer's address is needed only to dial it (below).
    let (local_ip, _) = check_rules(&s, "stream", false)?;
    let local_ip = ipv4(local_ip, "gateway.local")?;
    let port = match s.quic_port {
        Some(0) => {
            return Err(FieldError::new(
                "gateway.quic_port",
                "0 is not a port (default 4433)",
            ))
        }
        Some(p) => p,
        None => DEFAULT_PORT,
    };
    let dials = !s.listen.is_empty() || s.intercept.is_some();
    let peer =
        match (dials, s.peer) {
            (true, Some(p)) => Some(SocketAddrV4::new(ipv4(p, "gateway.peer")?, port)),
            (true, None) => return Err(FieldError::new(
                "gateway.peer",
                "a QUIC gateway that accepts connections (listen or intercept) dials its peer: \
                 give the peer gateway's IPv4 address on the space link",
            )),
            (false, _) => None,
        };
    let (cert, key) = match (&s.tls_cert, &s.tls_key) {
        (Some(c), Some(k)) => (c, k),
        (None, _) => {
            return Err(FieldError::new(
                "gateway.tls_cert",
                "a QUIC gateway pair shares a certificate and key: make them with \
                 `spacetp gateway --make-cert DIR` and give both files to both gateways",
            ))
        }
        (_, None) => {
            return Err(FieldError::new(
                "gateway.tls_key",
                "the private key of tls_cert is needed",
            ))
        }
    };
    let identity =
        Identity::from_pem_files(cert, key).map_err(|e| FieldError::new("gateway.tls_cert", e))?;
    Ok(QuicGatewayConfig {
        quic,
        max_payload,
        local: SocketAddrV4::new(local_ip, port),
        peer,
        identity,
        tls_name: s.tls_name.unwrap_or_else(|| GATEWAY_NAME.to_string()),
        listen: s
            .listen
            .iter()
            .enumerate()
            .map(|(i, (a, p))| Ok((v4(*a, &format!("gateway.listen[{i}]"))?, *p)))
            .collect::<Result<_, FieldError>>()?,
        forward: s
            .forward
            .iter()
            .enumerate()
            .map(|(i, (p, a))| Ok((*p, v4(*a, &format!("gateway.forward[{i}]"))?)))
            .collect::<Result<_, FieldError>>()?,
        intercept: s
            .intercept
            .map(|a| v4(a, "gateway.intercept"))
            .transpose()?,
        forward_original: s.forward_original,
        max_streams: 10_000,
        duration: seconds(s.duration_s, "duration_s", 0.0)?,
        drain: seconds(s.drain_s, "drain_s", 0.0)?,
    })
}

/// The QUIC gateway's tunnel and rules are IPv4 (its UDP socket and packet link).
fn ipv4(a: IpAddr, path: &str) -> Result<Ipv4Addr, FieldError> {
    match a {
        IpAddr::V4(a) => Ok(a),
        IpAddr::V6(a) => Err(FieldError::new(
            path,
            format!("{a}: a QUIC gateway takes IPv4 addresses (IPv6 is SCPS-TP's for now)"),
        )),
    }
}

fn v4(a: SocketAddr, path: &str) -> Result<SocketAddrV4, FieldError> {
    Ok(SocketAddrV4::new(ipv4(a.ip(), path)?, a.port()))
}
