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
//! `spacetp emulate` in tests) carrying IPv4 or IPv6 packets of protocol 6 with the SCPS
//! options (the flow's addresses decide the family), full headers with checksums
//! (`spacetp-wire`). Many connections share the fd; they are
//! told apart by their addresses and ports. Payload never enters the connection: each flow keeps the
//! bytes it sent by stream position (retransmissions re-read them) and writes received
//! payload into a reassembly buffer by position; the connection says how much of it is in
//! order (`readable`), and the flow reads it (`read`) as the kernel socket accepts it, so a
//! slow destination closes the advertised window.
//!
//! Single-threaded: one `poll` over the link fd, the listening sockets and every relayed
//! socket, woken by the earliest connection timer ([`Connection::poll_timeout`]).

use crate::error::LiveError;
use crate::monotonic_ns;
use crate::reassembly::Reassembly;
use serde::Serialize;
use spacetp_proto::{
    reset_reply, CloseReason, ConnStats, Connection, State, TcpConfig, Time, TokenBucket, MS, SEC,
    US,
};
use spacetp_wire::{
    compress_with_payload, decode_ipv4_header, decode_ipv4_tcp, decode_ipv6_tcp, decompress,
    encode_ipv4_packet, encode_ipv4_tcp, encode_ipv6_tcp, flags, CompressionContext, Ipv4Params,
    Ipv6Header, Payload, TcpHeader, WireError, PROTO_SCPS_COMPRESSED,
};
use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;

mod config;
mod flow;
mod inbound;
mod link;
mod link_state;
mod opening;
mod owed_reset;
mod reload;
mod report;
pub use reload::Reload;
mod sockets;
mod stopping;
use stopping::Stopping;

pub(crate) use config::{check_rules, parse_settings, refuse_keys, seconds, settings_to_config};
pub use config::{
    config_from_json, schema, GatewayConfig, GatewaySettings, Keepalive, DEFAULT_MAX_HALF_OPEN,
};
use flow::{comp_context, Flow};
use link::LinkOut;
pub use report::GatewayReport;
pub(crate) use sockets::{bound_addresses, close_gracefully, reset_on_close};
pub(crate) use sockets::{connect_nonblocking, explicit_listener, ipv6_twin, transparent_listener};

/// IP protocol number the SCPS-TP segments travel as (TCP with SCPS options, as the RI gateway).
pub(crate) const PROTO: u8 = 6;
/// How much longer an IPv6 header is than an IPv4 one (an IPv6 flow's MSS is this much less).
const IPV6_EXTRA: u32 = 20;
/// A flow stays this long after its connection finished, to answer late segments.
const LINGER: Time = 2 * SEC;
/// A random port in 49152..=65535.
fn first_ephemeral_port() -> u16 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(monotonic_ns());
    EPHEMERAL_PORTS + (h.finish() % (u16::MAX - EPHEMERAL_PORTS) as u64) as u16
}

/// The shared bucket of the link rate, as deep as a connection's (`tcp.scps.bucket`).
fn link_bucket(tcp: &TcpConfig) -> Option<TokenBucket> {
    let rate = tcp.scps.rate?;
    Some(TokenBucket::new(rate.0, tcp.scps.bucket.0))
}

/// Connections the kernel may hold for each listener before the gateway accepts them.
const LISTEN_BACKLOG: libc::c_int = 4096;
/// How long accepting pauses when the process is out of file descriptors.
const ACCEPT_PAUSE: Time = 100 * MS;
/// Bytes read from a kernel socket at once.
const CHUNK: usize = 65_536;
/// Packets read from the link before the sockets are serviced again.
const READ_BATCH: usize = 256;
/// Local ports of explicit-rule flows start here (IANA's dynamic range).
const EPHEMERAL_PORTS: u16 = 49152;
/// Resets answering segments for no flow, at most this many a second (a flood of forged
/// segments must not become a flood of resets).
const RESETS_PER_SECOND: u32 = 100;

/// What one turn of [`Gateway::service`] sends with.
struct Sender<'a> {
    /// Where a flow's end is logged, if logging.
    events: Option<&'a mut Vec<serde_json::Value>>,
    peers: &'a mut report::PeerTotals,
    out: &'a mut LinkOut,
    link_rate: &'a mut Option<TokenBucket>,
    ready_at: &'a mut Option<Time>,
    rep: &'a mut GatewayReport,
    dead: &'a mut Vec<Key>,
    /// The link is down: finished flows stay (below).
    link_down: bool,
}

impl Sender<'_> {
    /// Flow `f`'s packets to the link, then what follows from them.
    fn send_and_tidy(&mut self, key: Key, f: &mut Flow, now: Time) {
        if let Some(t) = self.out.transmit(key, f, now, self.link_rate, self.rep) {
            *self.ready_at = Some(self.ready_at.map_or(t, |u| u.min(t)));
        }
        f.release_acknowledged();
        let was_open = f.finished_at.is_none();
        f.finish(now, self.rep);
        if was_open && f.finished_at.is_some() {
            let rtx = f.conn.stats().retransmitted_segments;
            let ip = key.1.ip();
            self.peers.add(ip, f.bytes_up, f.bytes_down, rtx, false);
            if let Some(ev) = self.events.as_mut() {
                ev.push(f.close_event(now));
            }
        }
        // A finished flow lingers to acknowledge a retransmitted FIN (its TIME-WAIT). While
        // the link is down the peer cannot retransmit, so the lingering waits for the link;
        // the link-up notice restarts it (last_heard).
        if f.lingered(now) && !self.link_down {
            self.dead.push(key);
        }
    }
}

/// A flow's addresses on the link: (this gateway's side, the peer's side).
type Key = (SocketAddr, SocketAddr);

pub struct Gateway {
    cfg: GatewayConfig,
    link: RawFd,
    /// Datagram fd of link-state notices (the emulator's, or a modem manager's), if any.
    link_state: Option<RawFd>,
    /// The space link is down (a `link down` notice and no `link up` since): no keepalives.
    link_down: bool,
    /// Explicit listeners with the peer's SCPS-TP port, and the transparent one (None).
    listeners: Vec<(TcpListener, Option<u16>)>,
    /// Out of file descriptors (EMFILE, ENFILE): accepting waits until then, rather than
    /// spinning on a listener the kernel keeps reporting readable.
    accept_paused_until: Time,
    flows: HashMap<Key, Flow>,
    next_port: u16,
    /// Secret of the initial sequence numbers (RFC 6528), new for every gateway.
    isn_secret: std::collections::hash_map::RandomState,
    t0: Time,
    /// Packets read from the link, and bytes read from a kernel socket.
    buf: Vec<u8>,
    chunk: Vec<u8>,
    out: LinkOut,
    /// The space link's rate (`tcp.scps.rate`), shared by every connection as the SCPS
    /// Reference Implementation shares a route's rate: N connections each paced at the link
    /// rate would overflow it N times. None: no rate control.
    link_rate: Option<TokenBucket>,
    /// When the link rate next lets a packet go, if it held one back.
    link_ready_at: Option<Time>,
    /// Where the next turn starts sending, so no flow always comes first for the link rate.
    turn: usize,
    /// Resets answering segments for no flow: the current second and how many went out in it.
    rst_window: (Time, u32),
    /// The flows whose sockets the last poll covered, in order, and what it reported.
    polled: Vec<Key>,
    rep: GatewayReport,
    stopping: Option<Stopping>,
    /// Flows admitted from the peer whose handshake has not completed (counted each turn).
    half_open: u32,
    /// Per-peer totals of the finished flows.
    peers: report::PeerTotals,
    /// Flows opened so far (the next flow's id is one more).
    opened: u64,
    /// Log events (JSON objects) not yet taken by [`Gateway::take_events`], if logging.
    events: Vec<serde_json::Value>,
    /// Why the gateway is stopping, and once it has stopped.
    stop_reason: Option<String>,
    stopped: Option<String>,
}

impl Gateway {
    /// Bind the listening sockets; `link` (one IPv4 packet per read and write) stays owned by
    /// the caller and is made non-blocking.
    pub fn new(cfg: GatewayConfig, link: RawFd) -> Result<Self, LiveError> {
        cfg.tcp.validate().map_err(|e| e.within("gateway.tcp"))?;
        crate::sys::set_nonblocking(link)?;
        let mut listeners = Vec::new();
        for &(addr, port) in &cfg.listen {
            listeners.push((explicit_listener(addr)?, Some(port)));
        }
        if let Some(at) = cfg.intercept {
            listeners.push((transparent_listener(at)?, None));
            // Dual stack: `spacetp gateway` then tproxies IPv6 TCP to the same port.
            if let Some(at6) = ipv6_twin(at) {
                listeners.push((transparent_listener(at6)?, None));
            }
        }
        let fd_limit = crate::sys::raise_fd_limit();
        // Rate control refills its bucket every few tens of microseconds at hundreds of Mb/s:
        // the default 50 us timer slack would wake the loop late and lose the tokens.
        // SAFETY: prctl on this thread only.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
        let link_rate = link_bucket(&cfg.tcp);
        Ok(Gateway {
            accept_paused_until: 0,
            cfg,
            link,
            link_state: None,
            link_down: false,
            listeners,
            flows: HashMap::new(),
            // A random first port (RFC 6056): a gateway started again after a crash does not
            // reuse the ports of connections its peer may still hold.
            next_port: first_ephemeral_port(),
            isn_secret: Default::default(),
            t0: monotonic_ns(),
            buf: vec![0; 65_536],
            chunk: vec![0; CHUNK],
            out: LinkOut {
                fd: link,
                ip_id: 0,
                buf: Vec::with_capacity(2048),
            },
            link_rate,
            link_ready_at: None,
            turn: 0,
            rst_window: (0, 0),
            polled: Vec::new(),
            rep: GatewayReport {
                fd_limit,
                ..Default::default()
            },
            half_open: 0,
            peers: Default::default(),
            opened: 0,
            events: Vec::new(),
            stopping: None,
            stop_reason: None,
            stopped: None,
        })
    }

    /// Time of the connections: ns since the gateway started, plus one second (so no timer
    /// is ever at 0).
    fn now(&self) -> Time {
        monotonic_ns() - self.t0 + SEC
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
                // A finished flow still lingers (TIME-WAIT): the peer may not have our ACK of
                // its FIN and will retransmit it. Stopping before the lingering ends would
                // leave that peer waiting for an ACK that never comes.
                Some(Stopping::Draining { until }) if now >= until || self.flows.is_empty() => {
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

    fn service(&mut self, now: Time) {
        self.rep.max_flows = self.rep.max_flows.max(self.flows.len() as u64);
        let keepalive = (!self.link_down).then_some(self.cfg.keepalive);
        // Sending starts at a different flow each turn (the link rate may run out).
        let first = self.turn % self.flows.len().max(1);
        self.turn = self.turn.wrapping_add(1);
        self.link_ready_at = None;
        self.half_open = 0;
        let mut dead = Vec::new();
        let mut send = Sender {
            events: self.cfg.log_events.then_some(&mut self.events),
            peers: &mut self.peers,
            out: &mut self.out,
            link_rate: &mut self.link_rate,
            ready_at: &mut self.link_ready_at,
            rep: &mut self.rep,
            dead: &mut dead,
            link_down: self.link_down,
        };
        for (i, (&key, f)) in self.flows.iter_mut().enumerate() {
            f.check_socket();
            f.socket_to_connection(now, &mut self.chunk, send.rep);
            f.connection_to_socket(now, send.rep);
            if let Some(k) = keepalive {
                f.keepalive(now, &k, send.rep);
            }
            f.reap_if_idle(now, self.cfg.idle_timeout, send.rep);
            if f.finished_at.is_none() && f.conn.state() == State::SynReceived {
                self.half_open += 1;
            }
            if self.link_down {
                // A handshake that ended in an outage (its SYN-ACK was on its way when the
                // notice came) enters persist mode now, as the open connections did then.
                f.conn.on_link_outage(now);
            }
            if f.conn.poll_timeout().is_some_and(|t| t <= now) {
                f.conn.on_timeout(now);
            }
            f.repeat_owed_reset(now);
            if i >= first {
                send.send_and_tidy(key, f, now);
            }
        }
        for (&key, f) in self.flows.iter_mut().take(first) {
            send.send_and_tidy(key, f, now);
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
        let paused = now < self.accept_paused_until;
        if paused {
            until = until.min(self.accept_paused_until);
        }
        fds.extend(self.listeners.iter().map(|(l, _)| libc::pollfd {
            events: if paused { 0 } else { libc::POLLIN },
            ..pollin(l.as_raw_fd())
        }));
        if let Some(t) = self.link_ready_at {
            until = until.min(t);
        }
        let first_flow = fds.len();
        self.polled.clear();
        for (&key, f) in &self.flows {
            if let Some(t) = f.next_deadline(&self.cfg.keepalive, self.cfg.idle_timeout) {
                until = until.min(t);
            }
            if let Some(p) = f.socket_poll() {
                fds.push(p);
                self.polled.push(key);
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
        self.rep.wakeups += 1;
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

    /// The log events since the last call (empty unless the configuration asks for them).
    pub fn take_events(&mut self) -> Vec<serde_json::Value> {
        std::mem::take(&mut self.events)
    }

    /// A new flow's id, and its open event if logging.
    fn open_event(&mut self, key: Key, side: &str) -> u64 {
        self.opened += 1;
        if self.cfg.log_events {
            self.events.push(serde_json::json!({
                "event": "open",
                "conn": self.opened,
                "side": side,
                "local": key.0.to_string(),
                "remote": key.1.to_string(),
            }));
        }
        self.opened
    }

    pub fn report(&self) -> GatewayReport {
        let mut r = self.rep.clone();
        r.elapsed_s = (self.now() - SEC) as f64 / 1e9;
        r.stopped = match (&self.stopped, &self.stop_reason) {
            (Some(s), _) => s.clone(),
            (None, Some(why)) => format!("stopping ({why})"),
            (None, None) => "running".into(),
        };
        r.link_up = !self.link_down;
        r.listening = sockets::bound_addresses(&self.listeners);
        r.rtt_buckets = report::RTT_BUCKETS.iter().map(|&b| (b, 0)).collect();
        // Flows still open count too.
        let mut peers = self.peers.snapshot();
        for (key, f) in self.flows.iter().filter(|(_, f)| f.finished_at.is_none()) {
            let rtx = f.conn.stats().retransmitted_segments;
            peers.add(key.1.ip(), f.bytes_up, f.bytes_down, rtx, true);
            r.add_connection_stats(f.conn.stats());
            r.open_connections += 1;
            if let Some(srtt) = f.conn.rtt().srtt() {
                r.observe_rtt(srtt as f64 / 1e9);
            }
        }
        r.peers = peers.into_sorted();
        r
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_exact_or_reset;
#[cfg(test)]
mod tests_idle_and_outage;
#[cfg(test)]
mod tests_under_attack;
