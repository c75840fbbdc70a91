//! `spacetp gateway`: a TCP-splitting performance-enhancing proxy. Kernel-TCP connections
//! accepted on local ports are each carried across the space link as an SCPS-TP connection
//! (a [`Connection`] of `spacetp-proto`, the one the simulator drives), and the peer gateway
//! opens a kernel-TCP connection to the destination configured for that port.
//!
//! Two ways to choose the destination:
//! - explicit rules: `listen` (local port -> peer's SCPS-TP port) and `forward` (SCPS-TP port
//!   -> kernel-TCP destination); the SCPS-TP segments carry the gateways' own addresses;
//! - transparent: connections redirected to the `intercept` socket (nftables `tproxy`) keep
//!   their addresses: the SCPS-TP segments go from the client's address and port to the
//!   original destination's, and a peer with `forward_original` connects to that destination.
//!   This is how the SCPS Reference Implementation's gateway and XIPLink carry traffic.
//!
//! The space link is one packet fd (a TUN device, or a datagram socket joined to
//! `spacetp emulate` in tests) carrying IPv4 packets of protocol 6 with the SCPS options,
//! full headers with checksums (`spacetp-wire`). Many connections share the fd; they are
//! told apart by their addresses and ports. Payload never enters the connection: each flow keeps the
//! bytes it sent by stream position (retransmissions re-read them) and writes received
//! payload into a reassembly buffer by position; the connection says how much of it is in
//! order (`readable`), and the flow reads it (`read`) as the kernel socket accepts it, so a
//! slow destination closes the advertised window.
//!
//! Single-threaded: one `poll` over the link fd, the listening sockets and every relayed
//! socket, woken by the earliest connection timer ([`Connection::poll_timeout`]).

use crate::monotonic_ns;
use crate::reassembly::Reassembly;
use serde::Serialize;
use spacetp_proto::{
    reset_reply, CloseReason, ConnStats, Connection, State, TcpConfig, Time, MS, SEC, US,
};
use spacetp_wire::{
    compress_with_payload, decode_ipv4_header, decode_ipv4_tcp, decompress, encode_ipv4_packet,
    encode_ipv4_tcp, flags, CompressionContext, DecodedPacket, Ipv4Params, Payload, TcpHeader,
    PROTO_SCPS_COMPRESSED,
};
use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// IP protocol number the SCPS-TP segments travel as (TCP with SCPS options, as the RI gateway).
pub(crate) const PROTO: u8 = 6;
/// A flow stays this long after its connection finished, to answer late segments.
const LINGER: Time = 2 * SEC;
/// Bytes read from a kernel socket at once.
const CHUNK: usize = 65_536;
/// Packets read from the link before the sockets are serviced again.
const READ_BATCH: usize = 256;
/// Local ports of explicit-rule flows start here (IANA's dynamic range).
const EPHEMERAL_PORTS: u16 = 49152;
/// Resets answering segments for no flow, at most this many a second (a flood of forged
/// segments must not become a flood of resets).
const RESETS_PER_SECOND: u32 = 100;
/// A stopping gateway that reset its flows stays two round trips plus this long to answer
/// challenge ACKs, and never longer than `STOP_LINGER_MAX`.
const STOP_MARGIN: Time = 100 * MS;
const STOP_LINGER_MAX: Time = 5 * SEC;

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

/// Counters of a run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct GatewayReport {
    pub elapsed_s: f64,
    pub stopped: String,
    /// Connections accepted from local applications, and SCPS-TP connections admitted.
    pub accepted: u64,
    pub admitted: u64,
    /// SCPS-TP SYNs for ports without a forwarding rule (answered with RST).
    pub refused: u64,
    /// Segments that are neither for a flow nor a SYN this gateway admits (not answered).
    pub foreign: u64,
    /// Flows ended by a FIN exchange, and by a reset or an abort on either side.
    pub closed: u64,
    pub reset: u64,
    /// Payload bytes from local applications onto the link, and from the link to them.
    pub bytes_up: u64,
    pub bytes_down: u64,
    pub packets_in: u64,
    pub packets_out: u64,
    pub bad_checksum: u64,
    pub undecodable: u64,
    pub link_write_errors: u64,
    pub segments_sent: u64,
    pub retransmitted_segments: u64,
    pub max_flows: u64,
    /// Packets with compressed SCPS-TP headers (IP protocol 105) sent and received, and
    /// received ones that could not be decoded (no context, bad checksum).
    pub compressed_out: u64,
    pub compressed_in: u64,
    pub compressed_bad: u64,
    /// Link-state notices received (`link down`, `link up`), each passed to every flow.
    pub link_down_notices: u64,
    pub link_up_notices: u64,
    /// Resets sent in answer to segments for no flow (RFC 9293), and those held back by the
    /// rate limit.
    pub rst_replies: u64,
    pub rst_replies_suppressed: u64,
    /// RFC 5961 in the connections: RSTs not at the exact next sequence number, SYNs on a
    /// synchronized connection, unacceptable ACK values, data beyond the window; the
    /// challenge ACKs sent for them.
    pub rst_rejected: u64,
    pub syn_rejected: u64,
    pub ack_rejected: u64,
    pub out_of_window: u64,
    pub challenge_acks: u64,
    /// Flows reset because the gateway stopped; keepalive probes sent; flows reset after
    /// unanswered probes (the peer vanished).
    pub reset_on_stop: u64,
    pub keepalive_probes: u64,
    pub reaped: u64,
    /// Flows reset because relaying would have broken exactness (must stay 0: a bug).
    pub integrity_resets: u64,
}

impl GatewayReport {
    fn add_connection_stats(&mut self, st: &ConnStats) {
        self.segments_sent += st.segments_sent;
        self.retransmitted_segments += st.retransmitted_segments;
        self.rst_rejected += st.rst_rejected;
        self.syn_rejected += st.syn_rejected;
        self.ack_rejected += st.ack_rejected;
        self.out_of_window += st.out_of_window_segments;
        self.challenge_acks += st.challenge_acks;
    }
}

struct Flow {
    conn: Connection,
    sock: Option<TcpStream>,
    connecting: bool,
    /// Sent bytes from stream position `sbase` on (position 1 is the first data byte).
    sbuf: Vec<u8>,
    sbase: u64,
    /// Read from the socket but not yet taken by the connection.
    stage: Vec<u8>,
    /// Bytes received from the link, by position, until the socket takes them.
    received: Reassembly,
    sock_eof: bool,
    close_sent: bool,
    shut_wr: bool,
    finished_at: Option<Time>,
    /// The last segment from the peer, and the keepalive probes sent since.
    last_heard: Time,
    probes: u32,
    /// The kernel socket reported an error (a reset from the end host): abort at once.
    sock_error: bool,
    /// Header compression contexts of the two directions, set up from the SYNs (used once
    /// both ends offered COMP).
    comp_tx: Option<CompressionContext>,
    comp_rx: Option<CompressionContext>,
}

impl Flow {
    fn new(conn: Connection, sock: Option<TcpStream>, connecting: bool, now: Time) -> Self {
        Flow {
            conn,
            sock,
            connecting,
            sbuf: Vec::new(),
            sbase: 1,
            stage: Vec::new(),
            received: Reassembly::new(),
            sock_eof: false,
            close_sent: false,
            shut_wr: false,
            finished_at: None,
            last_heard: now,
            probes: 0,
            sock_error: false,
            comp_tx: None,
            comp_rx: None,
        }
    }

    /// A segment from the peer: the connection decides what of its payload it takes, and
    /// exactly that is stored.
    fn on_segment(&mut self, now: Time, h: &TcpHeader, payload: &[u8]) {
        self.last_heard = now;
        self.probes = 0;
        if let Some(a) = self.conn.on_segment(now, h, payload.len() as u32) {
            self.received.store(a, payload);
        }
    }

    fn peer_fin(&self) -> bool {
        matches!(
            self.conn.state(),
            State::CloseWait | State::LastAck | State::Closing | State::TimeWait
        ) || (self.conn.state() == State::Closed
            && self.conn.close_reason() == Some(CloseReason::Normal))
    }

    fn aborted(&self) -> bool {
        self.conn
            .close_reason()
            .is_some_and(|r| r != CloseReason::Normal)
    }

    /// Abort both sides: the end host gets a reset (SO_LINGER 0), the peer gateway an RST,
    /// and nothing read from the socket but not yet sent goes on.
    fn abort(&mut self) {
        self.stage.clear();
        self.conn.reset();
        if let Some(s) = self.sock.take() {
            linger_zero(&s);
        }
    }

    /// How long a finished flow stays to answer late segments (a retransmitted FIN whose
    /// ACK was lost): at least `LINGER`, and four retransmission timeouts on slow links.
    fn linger(&self) -> Time {
        LINGER.max(4 * self.conn.rtt().rto())
    }

    /// The kernel side's state: a connect that completed or failed, or an error (a reset from
    /// the end host) reported by the last poll. An error aborts at once, without sending on
    /// what the socket held: an abort is an abort.
    fn check_socket(&mut self) {
        let Some(s) = self.sock.as_ref() else { return };
        if self.connecting || self.sock_error {
            self.sock_error = false;
            match s.take_error() {
                Ok(None) if !self.connecting || s.peer_addr().is_ok() => self.connecting = false,
                Ok(None) => {}
                _ => return self.abort(),
            }
        }
        if self.aborted() {
            self.abort();
        }
    }

    /// Kernel -> link: what the socket has, as far as the connection's send buffer takes it.
    fn socket_to_connection(&mut self, tmp: &mut [u8], rep: &mut GatewayReport) {
        let Some(s) = self.sock.as_mut().filter(|_| !self.connecting) else {
            return;
        };
        if !self.stage.is_empty() {
            let n = self.conn.send(self.stage.len() as u64) as usize;
            self.sbuf.extend_from_slice(&self.stage[..n]);
            self.stage.drain(..n);
        }
        while self.stage.is_empty() && !self.sock_eof {
            match s.read(tmp) {
                Ok(0) => self.sock_eof = true,
                Ok(n) => {
                    rep.bytes_up += n as u64;
                    let k = self.conn.send(n as u64) as usize;
                    self.sbuf.extend_from_slice(&tmp[..k]);
                    self.stage.extend_from_slice(&tmp[k..n]);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return self.abort(),
            }
        }
        if self.sock_eof && self.stage.is_empty() && !self.close_sent {
            self.conn.close();
            self.close_sent = true;
        }
    }

    /// Link -> kernel: in-order bytes, only those both the connection counts as received
    /// and the reassembly buffer holds. The two agree by construction; if they ever did not,
    /// the flow is reset rather than a gap filled.
    fn connection_to_socket(&mut self, rep: &mut GatewayReport) {
        let Some(s) = self.sock.as_mut().filter(|_| !self.connecting) else {
            return;
        };
        loop {
            let readable = self.conn.readable();
            debug_assert!(
                readable <= self.received.in_order(),
                "the connection counts {readable} bytes in order, the buffer holds {}",
                self.received.in_order()
            );
            if readable > self.received.in_order() {
                rep.integrity_resets += 1;
                return self.abort();
            }
            let chunk = self.received.peek(readable as usize);
            if chunk.is_empty() {
                break;
            }
            match s.write(chunk) {
                Ok(n) => {
                    self.conn.read(n as u64);
                    self.received.consume(n);
                    rep.bytes_down += n as u64;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(_) => return self.abort(),
            }
        }
        if self.peer_fin() && self.conn.readable() == 0 && !self.shut_wr {
            if let Some(s) = &self.sock {
                s.shutdown(Shutdown::Write).ok();
            }
            self.shut_wr = true;
        }
    }

    /// Keepalive across the space link: after `idle` without a segment from the peer, a
    /// probe every `interval`; after `probes` unanswered ones the peer is gone (its gateway
    /// crashed, or a reset was lost) and the flow is reset on both sides.
    fn keepalive(&mut self, now: Time, k: &Keepalive, rep: &mut GatewayReport) {
        let Some(due) = self.keepalive_due(k) else {
            return;
        };
        if now < due {
            return;
        }
        if self.probes >= k.probes {
            rep.reaped += 1;
            return self.abort();
        }
        self.probes += 1;
        rep.keepalive_probes += 1;
        self.conn.probe();
    }

    /// When the next keepalive probe (or the reaping) is due, for a flow that waits on its
    /// peer: handshake done, not finished.
    fn keepalive_due(&self, k: &Keepalive) -> Option<Time> {
        let waiting = self.finished_at.is_none()
            && !matches!(
                self.conn.state(),
                State::Closed | State::Listen | State::SynSent | State::SynReceived
            );
        waiting.then(|| self.last_heard + k.idle + self.probes as Time * k.interval)
    }

    /// The earliest time this flow has work without input: a connection timer, keepalive,
    /// or the end of its linger.
    fn next_deadline(&self, k: &Keepalive) -> Option<Time> {
        let linger = self.finished_at.map(|t| t + self.linger());
        [self.conn.poll_timeout(), self.keepalive_due(k), linger]
            .into_iter()
            .flatten()
            .min()
    }

    /// Acknowledged bytes are no longer needed.
    fn release_acknowledged(&mut self) {
        let una = self.conn.snd_una();
        if una > self.sbase {
            let k = ((una - self.sbase) as usize).min(self.sbuf.len());
            self.sbuf.drain(..k);
            self.sbase += k as u64;
        }
    }

    /// Note the end of the flow: both directions closed and delivered, or an abort.
    fn finish(&mut self, now: Time, rep: &mut GatewayReport) {
        let done = (self.aborted() && self.conn.state() == State::Closed)
            || (self.conn.is_finished() && self.conn.readable() == 0 && self.shut_wr);
        if !done || self.finished_at.is_some() {
            return;
        }
        self.finished_at = Some(now);
        if self.aborted() {
            rep.reset += 1;
            if let Some(s) = self.sock.take() {
                linger_zero(&s);
            }
        } else {
            rep.closed += 1;
            self.sock = None;
        }
        self.sbuf = Vec::new();
        self.stage = Vec::new();
        rep.add_connection_stats(self.conn.stats());
    }
}

/// The compression context of the direction that sent `syn` from `src` to `dst`, if the SYN
/// offers COMP. The checksum pseudo-header carries protocol 6, as with the RI gateway.
fn comp_context(syn: &TcpHeader, src: [u8; 4], dst: [u8; 4]) -> Option<CompressionContext> {
    let mut c = CompressionContext::from_syn(syn, src, dst).ok()?;
    c.pseudo_protocol = PROTO;
    Some(c)
}

/// Reset-on-close for a kernel socket (SO_LINGER 0): dropping it sends an RST.
pub(crate) fn linger_zero(s: &TcpStream) {
    let l = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    set_opt(s.as_raw_fd(), libc::SOL_SOCKET, libc::SO_LINGER, &l).ok();
}

/// setsockopt(2) with a value of type `T`.
fn set_opt<T>(fd: RawFd, level: libc::c_int, opt: libc::c_int, v: &T) -> std::io::Result<()> {
    // SAFETY: setsockopt reads size_of::<T>() bytes of a value we own.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            v as *const T as *const libc::c_void,
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// A new non-blocking, close-on-exec IPv4 TCP socket.
fn tcp_socket() -> std::io::Result<OwnedFd> {
    // SAFETY: socket(2) returns a new fd that we wrap (and so own) at once.
    let fd = unsafe {
        libc::socket(
            libc::AF_INET,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh socket nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// bind(2) or connect(2) (`call`) socket `fd` to `a`.
fn to_addr(
    fd: RawFd,
    a: SocketAddrV4,
    call: unsafe extern "C" fn(libc::c_int, *const libc::sockaddr, libc::socklen_t) -> libc::c_int,
) -> std::io::Result<()> {
    let sa = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: a.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(a.ip().octets()),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: the call reads a sockaddr_in we own, of the size we pass.
    let r = unsafe {
        call(
            fd,
            &sa as *const _ as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// A listening socket with IP_TRANSPARENT set before bind, so it accepts connections that
/// nftables `tproxy` redirects to it; each accepted socket's local address is the original
/// destination. Needs CAP_NET_ADMIN.
fn transparent_listener(at: SocketAddrV4) -> Result<TcpListener, String> {
    let err = |what: &str, e: std::io::Error| format!("intercept {at}: {what}: {e}");
    let fd = tcp_socket().map_err(|e| err("socket", e))?;
    let one: libc::c_int = 1;
    set_opt(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_REUSEADDR, &one)
        .map_err(|e| err("SO_REUSEADDR", e))?;
    set_opt(fd.as_raw_fd(), libc::SOL_IP, libc::IP_TRANSPARENT, &one)
        .map_err(|e| err("IP_TRANSPARENT (needs CAP_NET_ADMIN)", e))?;
    to_addr(fd.as_raw_fd(), at, libc::bind).map_err(|e| err("bind", e))?;
    // SAFETY: listen on our socket.
    if unsafe { libc::listen(fd.as_raw_fd(), 1024) } < 0 {
        return Err(err("listen", std::io::Error::last_os_error()));
    }
    Ok(TcpListener::from(fd))
}

/// Start a non-blocking kernel-TCP connect.
fn connect_nonblocking(to: SocketAddrV4) -> std::io::Result<TcpStream> {
    let s = TcpStream::from(tcp_socket()?);
    if let Err(e) = to_addr(s.as_raw_fd(), to, libc::connect) {
        if e.raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(e);
        }
    }
    s.set_nodelay(true).ok();
    Ok(s)
}

/// A flow's addresses on the link: (this gateway's side, the peer's side).
type Key = (SocketAddrV4, SocketAddrV4);

/// How a stopping gateway ends its flows.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Stopping {
    /// Not accepting; open flows may finish until then, the rest are reset.
    Draining { until: Time },
    /// Every flow was reset; the gateway stays until then to repeat the resets to a peer
    /// that challenges them (RFC 5961), then stops.
    Resetting { until: Time },
}

/// Packets this gateway writes to the space link.
struct LinkOut {
    fd: RawFd,
    ip_id: u16,
    buf: Vec<u8>,
}

impl LinkOut {
    fn write(&mut self, rep: &mut GatewayReport) {
        // SAFETY: writes our buffer to the link fd.
        let n = unsafe {
            libc::write(
                self.fd,
                self.buf.as_ptr() as *const libc::c_void,
                self.buf.len(),
            )
        };
        if n == self.buf.len() as isize {
            rep.packets_out += 1;
        } else {
            rep.link_write_errors += 1;
        }
    }

    fn ip(&mut self, key: Key, protocol: u8) -> Ipv4Params {
        self.ip_id = self.ip_id.wrapping_add(1);
        Ipv4Params {
            src: key.0.ip().octets(),
            dst: key.1.ip().octets(),
            protocol,
            id: self.ip_id,
        }
    }

    /// A bare header (no flow): the reset that answers a segment for no connection.
    fn header(&mut self, key: Key, h: &TcpHeader, rep: &mut GatewayReport) {
        self.buf.clear();
        let ip = self.ip(key, PROTO);
        if encode_ipv4_tcp(&ip, h, Payload::Bytes(&[]), &mut self.buf).is_ok() {
            self.write(rep);
        }
    }

    /// Everything flow `f` has to send now.
    fn transmit(&mut self, key: Key, f: &mut Flow, now: Time, rep: &mut GatewayReport) {
        while let Some(t) = f.conn.poll_transmit(now) {
            let payload: &[u8] = if t.len == 0 {
                &[]
            } else {
                let a = t.pos.checked_sub(f.sbase).map(|a| a as usize);
                match a.and_then(|a| f.sbuf.get(a..a + t.len as usize)) {
                    Some(p) => p,
                    None => {
                        // The bytes are kept until acknowledged, so this cannot happen; if it
                        // did, sending anything else would corrupt the stream.
                        debug_assert!(false, "segment at {} beyond the send buffer", t.pos);
                        rep.integrity_resets += 1;
                        f.abort();
                        continue;
                    }
                }
            };
            self.buf.clear();
            let mut ip = self.ip(key, PROTO);
            if t.hdr.flags & flags::SYN != 0 {
                f.comp_tx = comp_context(&t.hdr, ip.src, ip.dst);
            }
            // Compressed once both ends offered COMP (SYNs travel in full).
            let comp = match (&mut f.comp_tx, f.conn.header_compression()) {
                (Some(ctx), true) if t.hdr.flags & flags::SYN == 0 => {
                    let c = compress_with_payload(&t.hdr, payload, ctx).ok();
                    if c.is_some() {
                        ctx.record(&t.hdr);
                    }
                    c
                }
                _ => None,
            };
            let encoded = match comp {
                Some(c) => {
                    ip.protocol = PROTO_SCPS_COMPRESSED;
                    rep.compressed_out += 1;
                    encode_ipv4_packet(&ip, c.as_bytes(), Payload::Bytes(payload), &mut self.buf)
                }
                None => encode_ipv4_tcp(&ip, &t.hdr, Payload::Bytes(payload), &mut self.buf),
            };
            match encoded {
                Ok(_) => self.write(rep),
                Err(_) => rep.link_write_errors += 1,
            }
        }
    }
}

pub struct Gateway {
    cfg: GatewayConfig,
    link: RawFd,
    /// Datagram fd of link-state notices (the emulator's, or a modem manager's), if any.
    link_state: Option<RawFd>,
    /// The space link is down (a `link down` notice and no `link up` since): no keepalives.
    link_down: bool,
    /// Explicit listeners with the peer's SCPS-TP port, and the transparent one (None).
    listeners: Vec<(TcpListener, Option<u16>)>,
    flows: HashMap<Key, Flow>,
    next_port: u16,
    /// Secret of the initial sequence numbers (RFC 6528), new for every gateway.
    isn_secret: std::collections::hash_map::RandomState,
    t0: Time,
    /// Packets read from the link, and bytes read from a kernel socket.
    buf: Vec<u8>,
    chunk: Vec<u8>,
    out: LinkOut,
    /// Resets answering segments for no flow: the current second and how many went out in it.
    rst_window: (Time, u32),
    /// The flows whose sockets the last poll covered, in order, and what it reported.
    polled: Vec<Key>,
    rep: GatewayReport,
    stopping: Option<Stopping>,
    /// Why the gateway is stopping, and once it has stopped.
    stop_reason: Option<String>,
    stopped: Option<String>,
}

impl Gateway {
    /// Bind the listening sockets; `link` (one IPv4 packet per read and write) stays owned by
    /// the caller and is made non-blocking.
    pub fn new(cfg: GatewayConfig, link: RawFd) -> Result<Self, String> {
        cfg.tcp.validate()?;
        crate::set_nonblocking(link)?;
        let mut listeners = Vec::new();
        for &(addr, port) in &cfg.listen {
            let l = TcpListener::bind(addr).map_err(|e| format!("listen {addr}: {e}"))?;
            l.set_nonblocking(true).map_err(|e| e.to_string())?;
            listeners.push((l, Some(port)));
        }
        if let Some(at) = cfg.intercept {
            listeners.push((transparent_listener(at)?, None));
        }
        Ok(Gateway {
            cfg,
            link,
            link_state: None,
            link_down: false,
            listeners,
            flows: HashMap::new(),
            next_port: EPHEMERAL_PORTS,
            isn_secret: Default::default(),
            t0: monotonic_ns(),
            buf: vec![0; 65_536],
            chunk: vec![0; CHUNK],
            out: LinkOut {
                fd: link,
                ip_id: 0,
                buf: Vec::with_capacity(2048),
            },
            rst_window: (0, 0),
            polled: Vec::new(),
            rep: GatewayReport::default(),
            stopping: None,
            stop_reason: None,
            stopped: None,
        })
    }

    /// Take link-state notices from datagram fd `fd` (owned by the caller): each
    /// `link down` puts every SCPS-TP connection in persist mode (no retransmission
    /// timeouts, one probe per RTO), each `link up` resumes it at once, as in the simulator.
    pub fn set_link_state_fd(&mut self, fd: RawFd) -> Result<(), String> {
        crate::set_nonblocking(fd)?;
        self.link_state = Some(fd);
        Ok(())
    }

    fn read_link_state(&mut self, now: Time) {
        let Some(fd) = self.link_state else { return };
        let mut b = [0u8; 64];
        loop {
            // SAFETY: reads into our own buffer.
            let n = unsafe { libc::read(fd, b.as_mut_ptr() as *mut libc::c_void, b.len()) };
            if n <= 0 {
                return;
            }
            let up = match &b[..n as usize] {
                m if m == crate::LINK_DOWN => false,
                m if m == crate::LINK_UP => true,
                _ => continue,
            };
            self.link_down = !up;
            for f in self.flows.values_mut() {
                if up {
                    f.conn.on_link_restored(now);
                    // Silence during the outage says nothing about the peer.
                    f.last_heard = now;
                    f.probes = 0;
                } else {
                    f.conn.on_link_outage(now);
                }
            }
            if up {
                self.rep.link_up_notices += 1;
            } else {
                self.rep.link_down_notices += 1;
            }
        }
    }

    /// Time of the connections: ns since the gateway started, plus one second (so no timer
    /// is ever at 0).
    fn now(&self) -> Time {
        monotonic_ns() - self.t0 + SEC
    }

    /// Stop at once, relaying nothing more (an unusable link fd).
    pub fn stop(&mut self, why: &str) {
        self.stopped.get_or_insert_with(|| why.to_string());
    }

    /// Begin an orderly stop (a signal, or the configured duration): stop accepting, and with
    /// a drain time let open flows finish for up to that long; every flow still open then is
    /// reset on both sides. A second call while draining resets at once. `run_for` returns
    /// false once done.
    pub fn begin_stop(&mut self, why: &str) {
        let now = self.now();
        self.listeners.clear();
        self.stop_reason.get_or_insert_with(|| why.to_string());
        match (self.stopping, self.cfg.drain) {
            (None, Some(d)) => self.stopping = Some(Stopping::Draining { until: now + d }),
            (None, None) | (Some(Stopping::Draining { .. }), _) => self.reset_all(now),
            (Some(Stopping::Resetting { .. }), _) => {}
        }
    }

    /// Reset every open flow on both sides, then linger long enough for a peer that
    /// challenges the RST (its RCV.NXT was not our SND.NXT) to get the exact one.
    fn reset_all(&mut self, now: Time) {
        let mut until = now;
        for f in self.flows.values_mut() {
            if f.finished_at.is_some() {
                continue;
            }
            f.abort();
            self.rep.reset_on_stop += 1;
            let rtt = f.conn.rtt().srtt().unwrap_or(self.cfg.tcp.initial_rto.0);
            until = until.max(now + 2 * rtt + STOP_MARGIN);
        }
        self.stopping = Some(Stopping::Resetting {
            until: until.min(now + STOP_LINGER_MAX),
        });
    }

    /// Run for at most `chunk` ns. Returns false once stopped (after `begin_stop`, the
    /// duration, or an fd failure).
    pub fn run_for(&mut self, chunk: Time) -> bool {
        if self.stopped.is_some() {
            return false;
        }
        let end = self.now() + chunk;
        loop {
            let now = self.now();
            if self.stopping.is_none() && self.cfg.duration.is_some_and(|d| now >= d + SEC) {
                self.begin_stop("duration");
            }
            match self.stopping {
                Some(Stopping::Draining { until })
                    if now >= until || self.flows.values().all(|f| f.finished_at.is_some()) =>
                {
                    self.reset_all(now)
                }
                Some(Stopping::Resetting { until }) if now >= until => {
                    let why = self.stop_reason.clone().unwrap_or_default();
                    self.stop(&why);
                    return false;
                }
                _ => {}
            }
            if now >= end {
                return true;
            }
            self.read_link_state(now);
            if let Err(e) = self.read_link(now) {
                // A link that ends while the gateway stops (the emulator stopped first) is
                // part of stopping, not a failure.
                let why = match &self.stop_reason {
                    Some(r) => r.clone(),
                    None => format!("error: {e}"),
                };
                self.stop(&why);
                return false;
            }
            self.accept(now);
            self.service(now);
            self.wait(end);
        }
    }

    fn read_link(&mut self, now: Time) -> Result<(), String> {
        // The buffer is taken out of `self` while its packets are handled (no copy each).
        let mut buf = std::mem::take(&mut self.buf);
        let r = self.read_packets(now, &mut buf);
        self.buf = buf;
        r
    }

    fn read_packets(&mut self, now: Time, buf: &mut [u8]) -> Result<(), String> {
        for _ in 0..READ_BATCH {
            // SAFETY: reads into our own buffer.
            let n =
                unsafe { libc::read(self.link, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                return match e.raw_os_error() {
                    Some(libc::EAGAIN) | Some(libc::EINTR) => Ok(()),
                    _ => Err(format!("reading the link fd: {e}")),
                };
            }
            if n == 0 {
                return Err("the link fd was closed".into());
            }
            self.rep.packets_in += 1;
            self.on_packet(now, &buf[..n as usize]);
        }
        Ok(())
    }

    /// A packet with a compressed header: the flow between its addresses whose peer
    /// announced its connection id, decoded against that flow's context.
    fn on_compressed(&mut self, now: Time, pkt: &[u8]) {
        let Ok(ip) = decode_ipv4_header(pkt) else {
            self.rep.undecodable += 1;
            return;
        };
        let body = &pkt[ip.header_len as usize..(ip.total_len as usize).min(pkt.len())];
        let id = body.first().copied();
        // A live flow before a lingering one that had the same id.
        let flow = self
            .flows
            .values_mut()
            .filter(|f| {
                f.comp_rx.is_some_and(|c| {
                    c.src_addr == ip.src && c.dst_addr == ip.dst && Some(c.conn_id) == id
                })
            })
            .min_by_key(|f| f.finished_at.is_some());
        let Some(f) = flow else {
            self.rep.compressed_bad += 1;
            return;
        };
        let Some(ctx) = f.comp_rx.as_mut() else {
            return;
        };
        if !ctx.checksum_ok(body) {
            self.rep.compressed_bad += 1;
            return;
        }
        let Ok(d) = decompress(body, ctx) else {
            self.rep.compressed_bad += 1;
            return;
        };
        self.rep.compressed_in += 1;
        f.on_segment(now, &d.header, &body[d.header_len..]);
    }

    fn on_packet(&mut self, now: Time, pkt: &[u8]) {
        if pkt.len() > 9 && pkt[9] == PROTO_SCPS_COMPRESSED {
            return self.on_compressed(now, pkt);
        }
        let Ok(d) = decode_ipv4_tcp(pkt) else {
            self.rep.undecodable += 1;
            return;
        };
        if d.ip.protocol != PROTO {
            self.rep.undecodable += 1;
            return;
        }
        if !d.tcp_checksum_ok(pkt) {
            self.rep.bad_checksum += 1;
            return;
        }
        let h = &d.tcp;
        let key: Key = (
            SocketAddrV4::new(d.ip.dst.into(), h.dst_port),
            SocketAddrV4::new(d.ip.src.into(), h.src_port),
        );
        let payload = d.payload(pkt);
        match self.flows.get_mut(&key) {
            Some(f) => {
                let opening = f.conn.state() == State::SynSent;
                f.on_segment(now, h, payload);
                // Only the SYN-ACK that completes our handshake sets up the peer's context.
                if opening && f.conn.state() != State::SynSent && h.flags & flags::SYN != 0 {
                    f.comp_rx = comp_context(h, d.ip.src, d.ip.dst);
                }
            }
            None => self.on_new_segment(now, key, &d, payload.len() as u32),
        }
    }

    /// A segment for no flow: a SYN this gateway admits opens one; anything else is
    /// answered with a reset (RFC 9293 3.10.7.1), so a peer whose gateway restarted learns
    /// at once that its connections are gone.
    fn on_new_segment(&mut self, now: Time, key: Key, d: &DecodedPacket, len: u32) {
        let h = &d.tcp;
        let is_syn = h.flags & flags::SYN != 0 && h.flags & flags::ACK == 0;
        // A SYN to this gateway's own address follows the explicit rules (no rule: RST);
        // one to any other address is relayed to that address with forward_original.
        let to_us = d.ip.dst == self.cfg.local_ip && self.cfg.local_ip != [0; 4];
        let ours = is_syn && (to_us || self.cfg.forward_original) && self.stopping.is_none();
        if !ours {
            if is_syn {
                self.rep.refused += 1;
            } else {
                self.rep.foreign += 1;
            }
            self.reply_reset(now, key, h, len);
            return;
        }
        let dest = if to_us {
            self.cfg
                .forward
                .iter()
                .find(|f| f.0 == h.dst_port)
                .map(|f| f.1)
        } else {
            Some(key.0)
        };
        let iss = self.isn(now, key);
        let conn = self.connection(key, iss, Connection::listen);
        let sock = match dest.map(connect_nonblocking) {
            Some(Ok(s)) => Some(s),
            _ => None,
        };
        let ok = sock.is_some();
        let mut f = Flow::new(conn, sock, true, now);
        f.comp_rx = comp_context(h, d.ip.src, d.ip.dst);
        f.on_segment(now, h, &[]);
        if ok {
            self.rep.admitted += 1;
        } else {
            self.rep.refused += 1;
            f.conn.reset();
        }
        self.flows.insert(key, f);
    }

    /// Answer a segment for no flow with a reset, at most `RESETS_PER_SECOND` a second.
    fn reply_reset(&mut self, now: Time, key: Key, h: &TcpHeader, len: u32) {
        let Some(r) = reset_reply(h, len) else { return };
        if now >= self.rst_window.0 + SEC {
            self.rst_window = (now, 0);
        }
        if self.rst_window.1 >= RESETS_PER_SECOND {
            self.rep.rst_replies_suppressed += 1;
            return;
        }
        self.rst_window.1 += 1;
        self.rep.rst_replies += 1;
        self.out.header(key, &r, &mut self.rep);
    }

    /// RFC 6528: a 4-microsecond clock plus a keyed hash of the addresses and ports, so
    /// that an off-path attacker cannot guess the sequence numbers of a new connection.
    fn isn(&self, now: Time, key: Key) -> u32 {
        use std::hash::BuildHasher;
        let f = self.isn_secret.hash_one(key) as u32;
        ((now / (4 * US)) as u32).wrapping_add(f)
    }

    fn accept(&mut self, now: Time) {
        for i in 0..self.listeners.len() {
            loop {
                let (s, client) = match self.listeners[i].0.accept() {
                    Ok(x) => x,
                    Err(_) => break,
                };
                s.set_nonblocking(true).ok();
                s.set_nodelay(true).ok();
                let key = match self.listeners[i].1 {
                    Some(port) => self.explicit_key(port),
                    // Intercepted: the client's address and port to the original destination.
                    None => match (client, s.local_addr()) {
                        (SocketAddr::V4(c), Ok(SocketAddr::V4(d))) => (c, d),
                        _ => {
                            linger_zero(&s);
                            self.rep.refused += 1;
                            continue;
                        }
                    },
                };
                if self.flows.contains_key(&key) {
                    // The same addresses and ports as a flow still lingering: refuse.
                    linger_zero(&s);
                    self.rep.refused += 1;
                    continue;
                }
                let iss = self.isn(now, key);
                let conn = self.connection(key, iss, Connection::connect);
                self.flows.insert(key, Flow::new(conn, Some(s), false, now));
                self.rep.accepted += 1;
            }
        }
    }

    /// The SCPS-TP connection of a new flow with addresses `key` (`open` is
    /// `Connection::connect` or `Connection::listen`). Payload stays in the flow
    /// (manual reads). Its connection id is its local port's low byte, or the next one no
    /// other flow between the same two addresses uses, so that the peer can tell their
    /// compressed headers apart.
    fn connection(
        &self,
        key: Key,
        iss: u32,
        open: fn(&TcpConfig, u32, u16, u16, u32) -> Connection,
    ) -> Connection {
        let mut conn = open(&self.cfg.tcp, self.cfg.mss, key.0.port(), key.1.port(), iss);
        conn.set_manual_read();
        let used: std::collections::HashSet<u8> = self
            .flows
            .iter()
            .filter(|(k, _)| k.0.ip() == key.0.ip() && k.1.ip() == key.1.ip())
            .map(|(_, f)| f.conn.connection_id())
            .collect();
        let first = key.0.port() as u8;
        let id = (0..=255u8)
            .map(|i| first.wrapping_add(i))
            .find(|id| !used.contains(id))
            .unwrap_or(first);
        conn.set_connection_id(id);
        conn
    }

    /// Addresses of a new flow of an explicit listener: a free local port (from
    /// `EPHEMERAL_PORTS`) to the peer gateway's SCPS-TP `port`.
    fn explicit_key(&mut self, port: u16) -> Key {
        let peer = SocketAddrV4::new(self.cfg.peer_ip.into(), port);
        let next = |p: u16| {
            if p == u16::MAX {
                EPHEMERAL_PORTS
            } else {
                p + 1
            }
        };
        let mut lp = self.next_port;
        while self
            .flows
            .contains_key(&(SocketAddrV4::new(self.cfg.local_ip.into(), lp), peer))
        {
            lp = next(lp);
        }
        self.next_port = next(lp);
        (SocketAddrV4::new(self.cfg.local_ip.into(), lp), peer)
    }

    fn service(&mut self, now: Time) {
        self.rep.max_flows = self.rep.max_flows.max(self.flows.len() as u64);
        let keepalive = (!self.link_down).then_some(self.cfg.keepalive);
        let mut dead = Vec::new();
        for (&key, f) in self.flows.iter_mut() {
            f.check_socket();
            f.socket_to_connection(&mut self.chunk, &mut self.rep);
            f.connection_to_socket(&mut self.rep);
            if let Some(k) = keepalive {
                f.keepalive(now, &k, &mut self.rep);
            }
            if f.conn.poll_timeout().is_some_and(|t| t <= now) {
                f.conn.on_timeout(now);
            }
            self.out.transmit(key, f, now, &mut self.rep);
            f.release_acknowledged();
            f.finish(now, &mut self.rep);
            if f.finished_at.is_some_and(|t| now >= t + f.linger()) {
                dead.push(key);
            }
        }
        for k in dead {
            self.flows.remove(&k);
        }
    }

    fn wait(&mut self, end: Time) {
        let now = self.now();
        let mut until = end.min(now + 50 * MS);
        match self.stopping {
            Some(Stopping::Draining { until: t } | Stopping::Resetting { until: t }) => {
                until = until.min(t)
            }
            None => {}
        }
        let pollin = |fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let mut fds = vec![pollin(self.link)];
        fds.extend(self.link_state.map(pollin));
        fds.extend(self.listeners.iter().map(|(l, _)| pollin(l.as_raw_fd())));
        let first_flow = fds.len();
        self.polled.clear();
        for (&key, f) in &self.flows {
            if let Some(t) = f.next_deadline(&self.cfg.keepalive) {
                until = until.min(t);
            }
            let Some(s) = &f.sock else { continue };
            let mut ev = 0;
            if f.connecting || (f.conn.readable() > 0 && f.received.in_order() > 0) {
                ev |= libc::POLLOUT;
            }
            if !f.connecting && f.stage.is_empty() && !f.sock_eof {
                ev |= libc::POLLIN;
            }
            // Polled even with no events: POLLERR reports a reset from the end host.
            fds.push(libc::pollfd {
                fd: s.as_raw_fd(),
                events: ev,
                revents: 0,
            });
            self.polled.push(key);
        }
        if until <= now {
            return;
        }
        let dt = until - now;
        let ts = libc::timespec {
            tv_sec: (dt / SEC) as libc::time_t,
            tv_nsec: (dt % SEC) as libc::c_long,
        };
        // SAFETY: ppoll over our pollfds with a timeout we own.
        let n = unsafe {
            libc::ppoll(
                fds.as_mut_ptr(),
                fds.len() as libc::nfds_t,
                &ts,
                std::ptr::null(),
            )
        };
        if n <= 0 {
            return;
        }
        for (p, key) in fds[first_flow..].iter().zip(&self.polled) {
            if p.revents & libc::POLLERR != 0 {
                if let Some(f) = self.flows.get_mut(key) {
                    f.sock_error = true;
                }
            }
        }
    }

    pub fn report(&self) -> GatewayReport {
        let mut r = self.rep.clone();
        r.elapsed_s = (self.now() - SEC) as f64 / 1e9;
        r.stopped = match (&self.stopped, &self.stop_reason) {
            (Some(s), _) => s.clone(),
            (None, Some(why)) => format!("stopping ({why})"),
            (None, None) => "running".into(),
        };
        // Flows still open count too.
        for f in self.flows.values().filter(|f| f.finished_at.is_none()) {
            r.add_connection_stats(f.conn.stats());
        }
        r
    }
}

#[cfg(test)]
#[path = "gateway_tests.rs"]
mod tests;
