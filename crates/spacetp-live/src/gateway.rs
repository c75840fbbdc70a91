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
use serde::Serialize;
use spacetp_proto::{CloseReason, Connection, State, TcpConfig, Time, MS, SEC};
use spacetp_wire::{
    compress_with_payload, decode_ipv4_header, decode_ipv4_tcp, decompress, encode_ipv4_packet,
    encode_ipv4_tcp, flags, CompressionContext, Ipv4Params, Payload, TcpHeader,
    PROTO_SCPS_COMPRESSED,
};
use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// IP protocol number the SCPS-TP segments travel as (TCP with SCPS options, as the RI gateway).
const PROTO: u8 = 6;
/// A flow stays this long after its connection finished, to answer late segments.
const LINGER: Time = 2 * SEC;
/// Bytes read from a kernel socket at once.
const CHUNK: usize = 65_536;

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
    let duration = o
        .get("duration_s")
        .and_then(Value::as_f64)
        .map(|s| (s.max(0.0) * 1e9) as Time);
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
    /// Received bytes from position `rbase` (the next to hand to the socket) on.
    rbuf: Vec<u8>,
    rbase: u64,
    irs: Option<u32>,
    sock_eof: bool,
    close_sent: bool,
    shut_wr: bool,
    finished_at: Option<Time>,
    /// Header compression contexts of the two directions, set up from the SYNs (used once
    /// both ends offered COMP).
    comp_tx: Option<CompressionContext>,
    comp_rx: Option<CompressionContext>,
}

impl Flow {
    fn new(conn: Connection, sock: Option<TcpStream>, connecting: bool) -> Self {
        Flow {
            conn,
            sock,
            connecting,
            sbuf: Vec::new(),
            sbase: 1,
            stage: Vec::new(),
            rbuf: Vec::new(),
            rbase: 1,
            irs: None,
            sock_eof: false,
            close_sent: false,
            shut_wr: false,
            finished_at: None,
            comp_tx: None,
            comp_rx: None,
        }
    }

    /// Store received payload by stream position.
    fn store(&mut self, seq: u32, data: &[u8]) {
        let Some(irs) = self.irs else { return };
        if data.is_empty() {
            return;
        }
        let rel = seq.wrapping_sub(irs);
        let off = rel.wrapping_sub(self.rbase as u32) as i32 as i64;
        let (mut pos, mut data) = (off, data);
        if pos < 0 {
            let cut = (-pos) as usize;
            if cut >= data.len() {
                return;
            }
            data = &data[cut..];
            pos = 0;
        }
        let pos = pos as usize;
        if pos > 64 << 20 {
            return;
        }
        if self.rbuf.len() < pos + data.len() {
            self.rbuf.resize(pos + data.len(), 0);
        }
        self.rbuf[pos..pos + data.len()].copy_from_slice(data);
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
}

/// The compression context of the direction that sent `syn` from `src` to `dst`, if the SYN
/// offers COMP. The checksum pseudo-header carries protocol 6, as with the RI gateway.
fn comp_context(syn: &TcpHeader, src: [u8; 4], dst: [u8; 4]) -> Option<CompressionContext> {
    let mut c = CompressionContext::from_syn(syn, src, dst).ok()?;
    c.pseudo_protocol = PROTO;
    Some(c)
}

/// Reset-on-close for a kernel socket (SO_LINGER 0): dropping it sends an RST.
fn linger_zero(s: &TcpStream) {
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

pub struct Gateway {
    cfg: GatewayConfig,
    link: RawFd,
    /// Datagram fd of link-state notices (the emulator's, or a modem manager's), if any.
    link_state: Option<RawFd>,
    /// Explicit listeners with the peer's SCPS-TP port, and the transparent one (None).
    listeners: Vec<(TcpListener, Option<u16>)>,
    flows: HashMap<Key, Flow>,
    next_port: u16,
    ip_id: u16,
    t0: Time,
    /// Packets read from the link, packets written to it, and bytes read from a kernel socket.
    buf: Vec<u8>,
    out: Vec<u8>,
    chunk: Vec<u8>,
    rep: GatewayReport,
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
            listeners,
            flows: HashMap::new(),
            next_port: 49152,
            ip_id: 1,
            t0: monotonic_ns(),
            buf: vec![0; 65_536],
            out: Vec::with_capacity(2048),
            chunk: vec![0; CHUNK],
            rep: GatewayReport::default(),
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
            for f in self.flows.values_mut() {
                if up {
                    f.conn.on_link_restored(now);
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

    pub fn stop(&mut self, why: &str) {
        self.stopped.get_or_insert_with(|| why.to_string());
    }

    /// Run for at most `chunk` ns. Returns false once stopped (duration over, fd failure).
    pub fn run_for(&mut self, chunk: Time) -> bool {
        if self.stopped.is_some() {
            return false;
        }
        let end = self.now() + chunk;
        loop {
            let now = self.now();
            if self.cfg.duration.is_some_and(|d| now >= d + SEC) {
                self.stop("duration");
                return false;
            }
            if now >= end {
                return true;
            }
            self.read_link_state(now);
            if let Err(e) = self.read_link(now) {
                self.stop(&format!("error: {e}"));
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
        for _ in 0..256 {
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
        let ctx = f.comp_rx.as_mut().unwrap();
        if !ctx.checksum_ok(body) {
            self.rep.compressed_bad += 1;
            return;
        }
        let Ok(d) = decompress(body, ctx) else {
            self.rep.compressed_bad += 1;
            return;
        };
        self.rep.compressed_in += 1;
        let payload = &body[d.header_len..];
        f.store(d.header.seq, payload);
        f.conn.on_segment(now, &d.header, payload.len() as u32);
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
        if !self.flows.contains_key(&key) {
            let is_syn = h.flags & flags::SYN != 0 && h.flags & flags::ACK == 0;
            // A SYN to this gateway's own address follows the explicit rules (no rule: RST);
            // one to any other address is relayed to that address with forward_original.
            let to_us = d.ip.dst == self.cfg.local_ip && self.cfg.local_ip != [0; 4];
            if !is_syn || !(to_us || self.cfg.forward_original) {
                self.rep.foreign += 1;
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
            let iss = (monotonic_ns() as u32).wrapping_mul(2_654_435_761);
            let conn = self.connection(key, iss, Connection::listen);
            let (sock, ok) = match dest.map(connect_nonblocking) {
                Some(Ok(s)) => (Some(s), true),
                _ => (None, false),
            };
            let mut f = Flow::new(conn, sock, true);
            if ok {
                self.rep.admitted += 1;
            } else {
                self.rep.refused += 1;
            }
            f.irs = Some(h.seq);
            f.comp_rx = comp_context(h, d.ip.src, d.ip.dst);
            f.conn.on_segment(now, h, 0);
            if !ok {
                f.conn.reset();
            }
            self.flows.insert(key, f);
            return;
        }
        let f = self.flows.get_mut(&key).unwrap();
        if h.flags & flags::SYN != 0 {
            f.irs = Some(h.seq);
            f.comp_rx = comp_context(h, d.ip.src, d.ip.dst);
        }
        let payload = d.payload(pkt);
        f.store(
            h.seq.wrapping_add((h.flags & flags::SYN != 0) as u32),
            payload,
        );
        f.conn.on_segment(now, h, payload.len() as u32);
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
                        _ => continue,
                    },
                };
                if self.flows.contains_key(&key) {
                    // The same addresses and ports as a flow still lingering: refuse.
                    linger_zero(&s);
                    self.rep.refused += 1;
                    continue;
                }
                let iss = (now as u32 ^ (key.0.port() as u32) << 16).wrapping_mul(2_654_435_761);
                let conn = self.connection(key, iss, Connection::connect);
                self.flows.insert(key, Flow::new(conn, Some(s), false));
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

    /// Addresses of a new flow of an explicit listener: a free local port (from 49152) to
    /// the peer gateway's SCPS-TP `port`.
    fn explicit_key(&mut self, port: u16) -> Key {
        let peer = SocketAddrV4::new(self.cfg.peer_ip.into(), port);
        let mut lp = self.next_port;
        while self
            .flows
            .contains_key(&(SocketAddrV4::new(self.cfg.local_ip.into(), lp), peer))
        {
            lp = if lp == u16::MAX { 49152 } else { lp + 1 };
        }
        self.next_port = if lp == u16::MAX { 49152 } else { lp + 1 };
        (SocketAddrV4::new(self.cfg.local_ip.into(), lp), peer)
    }

    fn service(&mut self, now: Time) {
        let tmp = &mut self.chunk;
        let mut dead = Vec::new();
        self.rep.max_flows = self.rep.max_flows.max(self.flows.len() as u64);
        for (&key, f) in self.flows.iter_mut() {
            // Kernel side.
            if let Some(s) = f.sock.as_ref() {
                if f.connecting {
                    match s.take_error() {
                        Ok(None) if s.peer_addr().is_ok() => f.connecting = false,
                        Ok(None) => {}
                        _ => {
                            f.sock = None;
                            f.conn.reset();
                        }
                    }
                }
            }
            if f.aborted() {
                if let Some(s) = f.sock.take() {
                    linger_zero(&s);
                }
            }
            if let (Some(s), false) = (f.sock.as_mut(), f.connecting) {
                // Kernel -> link.
                if !f.stage.is_empty() {
                    let n = f.conn.send(f.stage.len() as u64) as usize;
                    f.sbuf.extend_from_slice(&f.stage[..n]);
                    f.stage.drain(..n);
                }
                while f.stage.is_empty() && !f.sock_eof {
                    match s.read(tmp) {
                        Ok(0) => f.sock_eof = true,
                        Ok(n) => {
                            self.rep.bytes_up += n as u64;
                            let k = f.conn.send(n as u64) as usize;
                            f.sbuf.extend_from_slice(&tmp[..k]);
                            f.stage.extend_from_slice(&tmp[k..n]);
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                        Err(e) if e.kind() == ErrorKind::Interrupted => {}
                        Err(_) => {
                            f.sock_eof = true;
                            f.conn.reset();
                            break;
                        }
                    }
                }
                if f.sock_eof && f.stage.is_empty() && !f.close_sent {
                    f.conn.close();
                    f.close_sent = true;
                }
                // Link -> kernel.
                loop {
                    let avail = (f.conn.readable() as usize).min(f.rbuf.len());
                    if avail == 0 {
                        break;
                    }
                    match s.write(&f.rbuf[..avail]) {
                        Ok(n) => {
                            f.conn.read(n as u64);
                            f.rbuf.drain(..n);
                            f.rbase += n as u64;
                            self.rep.bytes_down += n as u64;
                        }
                        Err(e) if e.kind() == ErrorKind::Interrupted => {}
                        Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                        Err(_) => {
                            f.conn.reset();
                            break;
                        }
                    }
                }
            }
            if !f.connecting && f.peer_fin() && f.conn.readable() == 0 && !f.shut_wr {
                if let Some(s) = f.sock.as_ref() {
                    s.shutdown(Shutdown::Write).ok();
                    f.shut_wr = true;
                }
            }
            // Connection timers and output.
            if f.conn.poll_timeout().is_some_and(|t| t <= now) {
                f.conn.on_timeout(now);
            }
            while let Some(t) = f.conn.poll_transmit(now) {
                let payload: &[u8] = if t.len > 0 && t.pos >= f.sbase {
                    let a = (t.pos - f.sbase) as usize;
                    let b = a + t.len as usize;
                    if b <= f.sbuf.len() {
                        &f.sbuf[a..b]
                    } else {
                        &[]
                    }
                } else {
                    &[]
                };
                if payload.len() != t.len as usize {
                    continue; // cannot happen: the bytes are kept until acknowledged
                }
                self.out.clear();
                let (src, dst) = (key.0.ip().octets(), key.1.ip().octets());
                let mut ip = Ipv4Params {
                    src,
                    dst,
                    protocol: PROTO,
                    id: self.ip_id,
                };
                self.ip_id = self.ip_id.wrapping_add(1);
                if t.hdr.flags & flags::SYN != 0 {
                    f.comp_tx = comp_context(&t.hdr, src, dst);
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
                        self.rep.compressed_out += 1;
                        encode_ipv4_packet(
                            &ip,
                            c.as_bytes(),
                            Payload::Bytes(payload),
                            &mut self.out,
                        )
                    }
                    None => encode_ipv4_tcp(&ip, &t.hdr, Payload::Bytes(payload), &mut self.out),
                };
                if encoded.is_err() {
                    continue;
                }
                // SAFETY: writes our buffer to the link fd.
                let n = unsafe {
                    libc::write(
                        self.link,
                        self.out.as_ptr() as *const libc::c_void,
                        self.out.len(),
                    )
                };
                if n == self.out.len() as isize {
                    self.rep.packets_out += 1;
                } else {
                    self.rep.link_write_errors += 1;
                }
            }
            // Acknowledged bytes are no longer needed.
            let una = f.conn.snd_una();
            if una > f.sbase {
                let k = ((una - f.sbase) as usize).min(f.sbuf.len());
                f.sbuf.drain(..k);
                f.sbase += k as u64;
            }
            // End of the flow.
            let done = (f.aborted() && f.conn.state() == State::Closed)
                || (f.conn.is_finished() && f.conn.readable() == 0 && f.shut_wr);
            if done && f.finished_at.is_none() {
                f.finished_at = Some(now);
                if f.aborted() {
                    self.rep.reset += 1;
                } else {
                    self.rep.closed += 1;
                }
                if let Some(s) = f.sock.take() {
                    if f.aborted() {
                        linger_zero(&s);
                    }
                }
                let st = f.conn.stats();
                self.rep.segments_sent += st.segments_sent;
                self.rep.retransmitted_segments += st.retransmitted_segments;
            }
            if f.finished_at.is_some_and(|t| now >= t + LINGER) {
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
        let mut fds = vec![libc::pollfd {
            fd: self.link,
            events: libc::POLLIN,
            revents: 0,
        }];
        if let Some(fd) = self.link_state {
            fds.push(libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            });
        }
        for (l, _) in &self.listeners {
            fds.push(libc::pollfd {
                fd: l.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            });
        }
        for f in self.flows.values() {
            if let Some(t) = f.conn.poll_timeout() {
                until = until.min(t);
            }
            if f.finished_at.is_some_and(|t| t + LINGER > now) {
                until = until.min(f.finished_at.unwrap() + LINGER);
            }
            if let Some(s) = &f.sock {
                let mut ev = 0;
                if f.connecting || (f.conn.readable() > 0 && !f.rbuf.is_empty()) {
                    ev |= libc::POLLOUT;
                }
                if !f.connecting && f.stage.is_empty() && !f.sock_eof {
                    ev |= libc::POLLIN;
                }
                if ev != 0 {
                    fds.push(libc::pollfd {
                        fd: s.as_raw_fd(),
                        events: ev,
                        revents: 0,
                    });
                }
            }
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
        unsafe {
            libc::ppoll(
                fds.as_mut_ptr(),
                fds.len() as libc::nfds_t,
                &ts,
                std::ptr::null(),
            )
        };
    }

    pub fn report(&self) -> GatewayReport {
        let mut r = self.rep.clone();
        r.elapsed_s = (self.now() - SEC) as f64 / 1e9;
        r.stopped = self.stopped.clone().unwrap_or_else(|| "running".into());
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Emulator, Options};
    use std::net::Ipv4Addr;
    use std::os::unix::net::UnixDatagram;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    /// The emulator and two gateways, each in a thread, joined by datagram socket pairs.
    struct Running {
        stop: Arc<AtomicBool>,
        em: std::thread::JoinHandle<crate::Report>,
        gws: Vec<std::thread::JoinHandle<GatewayReport>>,
    }

    impl Running {
        fn start(link: &str, a: GatewayConfig, b: GatewayConfig) -> Self {
            let (ga, ea) = UnixDatagram::pair().unwrap();
            let (gb, eb) = UnixDatagram::pair().unwrap();
            let stop = Arc::new(AtomicBool::new(false));
            let sc = crate::tests::scenario(7, link);
            let st = stop.clone();
            let em = std::thread::spawn(move || {
                let mut e = Emulator::new(&sc, ea.as_raw_fd(), eb.as_raw_fd(), &Options::default())
                    .unwrap();
                while !st.load(Ordering::Relaxed) && e.run_for(20 * MS) {}
                e.report()
            });
            let gws = [(a, ga), (b, gb)]
                .into_iter()
                .map(|(cfg, fd)| {
                    let st = stop.clone();
                    std::thread::spawn(move || {
                        let mut g = Gateway::new(cfg, fd.as_raw_fd()).unwrap();
                        while !st.load(Ordering::Relaxed) && g.run_for(20 * MS) {}
                        g.report()
                    })
                })
                .collect();
            Running { stop, em, gws }
        }

        /// Stop everything; the gateways' reports (A, B).
        fn finish(self) -> Vec<GatewayReport> {
            self.stop.store(true, Ordering::Relaxed);
            let reps = self.gws.into_iter().map(|g| g.join().unwrap()).collect();
            self.em.join().unwrap();
            reps
        }
    }

    /// A free local port (bound, then released).
    fn free_port() -> u16 {
        let probe = TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    }

    fn config(profile: &str, local: [u8; 4], peer: [u8; 4]) -> GatewayConfig {
        let mut tcp = spacetp_proto::profiles::profile(profile).unwrap();
        tcp.scps.rate = Some(spacetp_proto::units::Rate(20e6));
        GatewayConfig {
            tcp,
            mss: 1400,
            local_ip: local,
            peer_ip: peer,
            listen: vec![],
            forward: vec![],
            intercept: None,
            forward_original: false,
            duration: None,
        }
    }

    /// Connect once the gateway thread listens.
    fn connect(port: u16) -> TcpStream {
        for _ in 0..200 {
            if let Ok(s) = TcpStream::connect(("127.0.0.1", port)) {
                return s;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("nothing listens on port {port}");
    }

    fn pattern(n: usize, seed: u8) -> Vec<u8> {
        (0..n).map(|i| ((i * 31 + i / 977) as u8) ^ seed).collect()
    }

    /// Emulator between two gateways (datagram socket pairs), all in threads; a kernel-TCP
    /// client on loopback sends through gateway A, a loopback server behind gateway B echoes
    /// what it got back after the client's FIN. With `original`, gateway B has no rule for
    /// the port and relays to the destination address the SCPS-TP segments carry.
    fn through_gateways(
        link: &str,
        profile: &str,
        flows: usize,
        size: usize,
        original: bool,
    ) -> Vec<GatewayReport> {
        let server = TcpListener::bind("127.0.0.1:0").unwrap();
        let sport = server.local_addr().unwrap().port();
        let aport = free_port();
        let local = |port| SocketAddrV4::new(Ipv4Addr::LOCALHOST, port);
        // With `original`, gateway A addresses the server itself (127.0.0.1:sport), not B.
        let peer_of_a = if original {
            [127, 0, 0, 1]
        } else {
            [10, 77, 0, 2]
        };
        let mut a = config(profile, [10, 77, 0, 1], peer_of_a);
        let mut b = config(profile, [10, 77, 0, 2], [10, 77, 0, 1]);
        if original {
            a.listen = vec![(local(aport), sport)];
            b.forward_original = true;
        } else {
            a.listen = vec![(local(aport), 7000)];
            b.forward = vec![(7000, local(sport))];
        }
        let running = Running::start(link, a, b);
        let srv = std::thread::spawn(move || {
            let mut hs = Vec::new();
            for _ in 0..flows {
                let (mut s, _) = server.accept().unwrap();
                hs.push(std::thread::spawn(move || {
                    let mut got = Vec::new();
                    s.read_to_end(&mut got).unwrap();
                    s.write_all(&got[..1000.min(got.len())]).unwrap();
                    got
                }));
            }
            hs.into_iter()
                .map(|h| h.join().unwrap())
                .collect::<Vec<_>>()
        });
        let clients: Vec<_> = (0..flows)
            .map(|i| {
                std::thread::spawn(move || {
                    let data = pattern(size, i as u8);
                    let mut s = connect(aport);
                    s.write_all(&data).unwrap();
                    s.shutdown(Shutdown::Write).unwrap();
                    let mut back = Vec::new();
                    s.read_to_end(&mut back).unwrap();
                    assert_eq!(back, data[..1000.min(size)]);
                })
            })
            .collect();
        for c in clients {
            c.join().unwrap();
        }
        let mut got = srv.join().unwrap();
        got.sort_by_key(|g| g[0]);
        let mut want: Vec<_> = (0..flows).map(|i| pattern(size, i as u8)).collect();
        want.sort_by_key(|g| g[0]);
        for (g, w) in got.iter().zip(&want) {
            assert!(g == w, "received bytes differ");
        }
        std::thread::sleep(std::time::Duration::from_millis(300));
        let reps = running.finish();
        assert_eq!(reps[0].accepted, flows as u64);
        assert_eq!(reps[1].admitted, flows as u64);
        assert_eq!(reps[1].bytes_down, (flows * size) as u64);
        reps
    }

    #[test]
    fn compresses_headers_when_both_offer_comp() {
        // scps-2a offers COMP: after the SYNs, both directions travel as IP protocol 105,
        // under loss (a header whose omitted fields went with a lost packet must still decode
        // right, or the bytes would differ), with three connections sharing the address pair.
        let reps = through_gateways(
            r#""rate": "50 Mb/s", "delay": "5 ms", "errors": {"per": 0.02}"#,
            "scps-2a",
            3,
            300_000,
            false,
        );
        for r in &reps {
            assert!(r.compressed_out > 100 && r.compressed_in > 10, "{r:?}");
            assert_eq!(r.compressed_bad, 0, "{r:?}");
        }
        // Without COMP nothing is compressed.
        let reps = through_gateways(
            r#""rate": "50 Mb/s", "delay": "5 ms""#,
            "scps-tp",
            1,
            100_000,
            false,
        );
        assert!(reps
            .iter()
            .all(|r| r.compressed_out == 0 && r.compressed_in == 0));
    }

    #[test]
    fn relays_exact_bytes() {
        through_gateways(
            r#""rate": "50 Mb/s", "delay": "5 ms""#,
            "scps-tp",
            1,
            1_000_000,
            false,
        );
    }

    #[test]
    fn relays_to_the_destination_the_segments_carry() {
        through_gateways(
            r#""rate": "50 Mb/s", "delay": "5 ms", "errors": {"per": 0.01}"#,
            "scps-tp",
            3,
            200_000,
            true,
        );
    }

    #[test]
    fn relays_under_loss_and_in_parallel() {
        through_gateways(
            r#""rate": "50 Mb/s", "delay": "5 ms", "errors": {"per": 0.02}"#,
            "scps-tp",
            5,
            300_000,
            false,
        );
    }

    #[test]
    fn configuration_errors_name_the_setting() {
        let err = |j: &str| config_from_json(j).unwrap_err();
        assert!(err(r#"{"intercept": "0.0.0.0:99999"}"#).starts_with("gateway.intercept:"));
        assert!(err(r#"{"forward_original": "yes"}"#).starts_with("gateway.forward_original:"));
        assert!(err(r#"{"local": "10.0.0.1"}"#).contains("nothing to do"));
        assert!(err(r#"{"listen": [["1.2.3.4:5", 6]]}"#).starts_with("gateway.local:"));
        assert!(
            err(r#"{"forward": [[0, "1.2.3.4:5"]], "local": "1.1.1.1", "peer": "1.1.1.2"}"#)
                .starts_with("gateway.forward[0]:")
        );
        assert!(err(r#"{"intercept": "0.0.0.0:1", "mtu": 20}"#).starts_with("gateway.mtu:"));
        assert!(err(r#"{"intercepts": 1}"#).starts_with("gateway.intercepts: unknown"));
        // Transparent relaying alone needs no addresses of the gateways.
        let c =
            config_from_json(r#"{"intercept": "0.0.0.0:5999", "forward_original": true}"#).unwrap();
        assert_eq!(c.intercept, Some("0.0.0.0:5999".parse().unwrap()));
        assert!(c.forward_original && c.local_ip == [0; 4]);
    }

    #[test]
    fn refused_port_resets_the_client() {
        let aport = free_port();
        let mut a = config("scps-tp", [10, 77, 0, 1], [10, 77, 0, 2]);
        a.listen = vec![(SocketAddrV4::new(Ipv4Addr::LOCALHOST, aport), 7001)];
        let b = config("scps-tp", [10, 77, 0, 2], [10, 77, 0, 1]);
        let running = Running::start(r#""rate": "10 Mb/s", "delay": "2 ms""#, a, b);
        let mut s = connect(aport);
        s.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let mut b = [0u8; 10];
        let r = s.read(&mut b);
        assert!(
            matches!(&r, Err(e) if e.kind() == ErrorKind::ConnectionReset),
            "{r:?}"
        );
        let reps = running.finish();
        assert_eq!(reps[1].refused, 1);
        assert_eq!(reps[0].reset, 1);
    }
}
