//! `spacetp gateway --protocol quic`: the TCP-splitting proxy pair with QUIC across the space
//! link, as QPEP does. Kernel-TCP connections accepted on local ports (explicit `listen`
//! rules, or intercepted by nftables `tproxy`) each become a bidirectional stream of one
//! QUIC connection (quinn-proto, TLS 1.3 with the certificate the pair shares) that this
//! gateway dials to its peer; the peer reads the stream's preamble (`preamble.rs`: the
//! rule's port, or the original destination) and opens the kernel-TCP connection to the
//! destination. Applications at both ends see ordinary TCP. One congestion controller for
//! every relayed connection, streams multiplexed without head-of-line blocking between them,
//! and what QUIC does against loss and long delays (`[flows.quic]` settings).
//!
//! - `config.rs`: the settings (shared JSON schema with the SCPS-TP gateway);
//! - `link.rs`: UDP datagrams on the link (a kernel UDP socket, or IPv4 packets on a fd);
//! - `tunnel.rs`: the quinn endpoint and its connections (dialing, redialing, timers);
//! - `relay.rs`: one TCP connection <-> one stream; `preamble.rs`: a stream's first bytes;
//! - `report.rs`: the counters.
//!
//! Single-threaded: one `ppoll` over the link, the listeners and every relayed socket,
//! woken by the tunnel's earliest timer.

mod config;
mod link;
mod preamble;
mod relay;
mod report;
mod tunnel;

pub(crate) use config::config_from_settings;
pub use config::{QuicGatewayConfig, DEFAULT_PORT};
pub use link::Link;
pub use report::{QuicGatewayReport, TunnelStats};

use crate::error::LiveError;
use crate::gateway::{
    bound_addresses, close_gracefully, connect_nonblocking, explicit_listener, reset_on_close,
    transparent_listener,
};
use preamble::Preamble;
use quinn_proto::{ConnectionHandle, Dir, Event, StreamEvent, StreamId};
use relay::{code, Ended, Need, Relay};
use std::collections::{HashMap, VecDeque};
use std::net::{SocketAddr, SocketAddrV4, TcpListener};
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};
use tunnel::Tunnel;

/// After resetting its relays and closing the tunnel, a stopping gateway stays this long to
/// send the closes (and answer a retransmitted packet with one).
const STOP_LINGER: Duration = Duration::from_millis(300);

#[derive(Clone, Copy, Debug, PartialEq)]
enum Stopping {
    Draining { until: Instant },
    Closing { until: Instant },
}

pub struct QuicGateway {
    cfg: QuicGatewayConfig,
    tunnel: Tunnel,
    link_state: Option<RawFd>,
    /// Explicit listeners with the peer's port, and the transparent one (None).
    listeners: Vec<(TcpListener, Option<u16>)>,
    /// Relays with a stream, by tunnel connection and stream.
    relays: HashMap<(ConnectionHandle, StreamId), Relay>,
    /// Connections accepted from applications waiting for a stream (the tunnel is not up
    /// yet, or every stream the peer allows is in use).
    waiting: VecDeque<Relay>,
    chunk: Vec<u8>,
    t0: Instant,
    rep: QuicGatewayReport,
    stopping: Option<Stopping>,
    stop_reason: Option<String>,
    stopped: Option<String>,
}

impl QuicGateway {
    /// Bind the listeners; the tunnel's datagrams travel on `link`.
    pub fn new(cfg: QuicGatewayConfig, link: Link) -> Result<Self, LiveError> {
        let mut listeners = Vec::new();
        for &(addr, port) in &cfg.listen {
            listeners.push((explicit_listener(addr.into())?, Some(port)));
        }
        if let Some(at) = cfg.intercept {
            listeners.push((transparent_listener(at.into())?, None));
        }
        Ok(QuicGateway {
            tunnel: Tunnel::new(&cfg, link),
            cfg,
            link_state: None,
            listeners,
            relays: HashMap::new(),
            waiting: VecDeque::new(),
            chunk: vec![0; relay::CHUNK],
            t0: Instant::now(),
            rep: QuicGatewayReport {
                carrier: "quic",
                ..Default::default()
            },
            stopping: None,
            stop_reason: None,
            stopped: None,
        })
    }

    /// Link-state notices arrive on datagram fd `fd`: counted (QUIC has no persist mode;
    /// its keep-alive and idle timeout decide what an outage does).
    pub fn set_link_state_fd(&mut self, fd: RawFd) -> Result<(), LiveError> {
        crate::sys::set_nonblocking(fd)?;
        self.link_state = Some(fd);
        Ok(())
    }

    fn read_link_state(&mut self) {
        let Some(fd) = self.link_state else { return };
        while let Some(up) = crate::emulator::next_link_notice(fd) {
            match up {
                false => self.rep.link_down_notices += 1,
                true => self.rep.link_up_notices += 1,
            }
        }
    }

    pub fn stop(&mut self, why: &str) {
        self.stopped.get_or_insert_with(|| why.to_string());
    }

    /// Begin an orderly stop: stop accepting; with a drain time let open relays finish for
    /// up to that long; then reset the rest on both sides and close the tunnel. A second
    /// call while draining resets at once.
    pub fn begin_stop(&mut self, why: &str) {
        let now = Instant::now();
        self.listeners.clear();
        self.tunnel.stop_dialing();
        self.stop_reason.get_or_insert_with(|| why.to_string());
        match (self.stopping, self.cfg.drain) {
            (None, Some(d)) => {
                self.stopping = Some(Stopping::Draining {
                    until: now + Duration::from_nanos(d),
                })
            }
            (None, None) | (Some(Stopping::Draining { .. }), _) => self.close_all(now),
            (Some(Stopping::Closing { .. }), _) => {}
        }
    }

    fn close_all(&mut self, now: Instant) {
        for r in self.waiting.drain(..) {
            let mut r = r;
            r.drop_socket_with_reset();
            self.rep.reset_on_stop += 1;
        }
        for r in self.relays.values_mut().filter(|r| r.ended.is_none()) {
            self.rep.open_at_stop.push(r.describe());
            if let Some(t) = self.tunnel.conns.get_mut(&r.conn) {
                r.reset(&mut t.conn, code::STOPPING);
            } else {
                r.drop_socket_with_reset();
            }
            self.rep.reset_on_stop += 1;
        }
        // The resets go out before the close that ends the connection.
        let (n, e) = self.tunnel.transmit(now);
        self.rep.packets_out += n;
        self.rep.link_write_errors += e;
        self.tunnel.close_all(now, "gateway stopping");
        self.stopping = Some(Stopping::Closing {
            until: now + STOP_LINGER,
        });
    }

    /// Run for at most `chunk` ns; false once stopped.
    pub fn run_for(&mut self, chunk: u64) -> bool {
        if self.stopped.is_some() {
            return false;
        }
        let end = Instant::now() + Duration::from_nanos(chunk);
        loop {
            let now = Instant::now();
            if self.stopping.is_none()
                && self
                    .cfg
                    .duration
                    .is_some_and(|d| now >= self.t0 + Duration::from_nanos(d))
            {
                self.begin_stop("duration");
            }
            match self.stopping {
                Some(Stopping::Draining { until })
                    if now >= until || (self.relays.is_empty() && self.waiting.is_empty()) =>
                {
                    self.close_all(now)
                }
                Some(Stopping::Closing { until }) if now >= until => {
                    let why = self.stop_reason.clone().unwrap_or_default();
                    self.stop(&why);
                    return false;
                }
                _ => {}
            }
            if now >= end {
                return true;
            }
            self.read_link_state();
            match self.tunnel.read(now) {
                Ok((n, foreign)) => {
                    self.rep.packets_in += n;
                    self.rep.foreign += foreign;
                }
                Err(e) => {
                    let why = match &self.stop_reason {
                        Some(r) => r.clone(),
                        None => format!("error: the link: {e}"),
                    };
                    self.stop(&why);
                    return false;
                }
            }
            if self.tunnel.dial(now) {
                self.rep.dials += 1;
            }
            self.tunnel.drive(now);
            self.events(now);
            if self.accept() > 0 {
                self.tunnel.dial_soon(now);
            }
            self.open_waiting();
            self.service();
            let (n, e) = self.tunnel.transmit(now);
            self.rep.packets_out += n;
            self.rep.link_write_errors += e;
            self.reap(now);
            self.wait(end);
        }
    }

    /// What the tunnel's connections say: handshakes, streams the peer opened, losses.
    fn events(&mut self, now: Instant) {
        let mut lost = Vec::new();
        let mut established = Vec::new();
        for (&ch, t) in self.tunnel.conns.iter_mut() {
            while let Some(ev) = t.conn.poll() {
                match ev {
                    Event::Connected => established.push(ch),
                    Event::ConnectionLost { reason } => lost.push((ch, reason.to_string())),
                    Event::Stream(StreamEvent::Opened { dir: Dir::Bi }) => {
                        while let Some(id) = t.conn.streams().accept(Dir::Bi) {
                            if self.stopping.is_some() {
                                let c = quinn_proto::VarInt::from_u32(code::STOPPING);
                                t.conn.send_stream(id).reset(c).ok();
                                t.conn.recv_stream(id).stop(c).ok();
                                continue;
                            }
                            self.relays.insert((ch, id), Relay::acceptor(ch, id));
                            self.rep.admitted += 1;
                        }
                    }
                    _ => {}
                }
            }
        }
        for ch in established {
            self.tunnel.established(ch, now);
            self.rep.handshakes += 1;
        }
        for (ch, why) in lost {
            if self.tunnel.failures.len() < 20 {
                self.tunnel.failures.push(why);
            }
            self.lose(ch);
        }
    }

    /// Tunnel connection `ch` is gone: its relays' sockets are reset (the application sees
    /// the connection fail, never a silent truncation); connections waiting for a stream
    /// of it wait for the next one, unless it never came up.
    fn lose(&mut self, ch: ConnectionHandle) {
        for r in self
            .relays
            .values_mut()
            .filter(|r| r.conn == ch && r.ended.is_none())
        {
            r.drop_socket_with_reset();
            self.rep.reset_by_tunnel_loss += 1;
        }
        let never_up = !self.tunnel.conns.get(&ch).is_some_and(|t| t.established);
        if never_up && self.tunnel.dialed == Some(ch) {
            // The peer is unreachable: the applications waiting are told at once.
            for mut r in self.waiting.drain(..) {
                r.drop_socket_with_reset();
                self.rep.reset_by_tunnel_loss += 1;
            }
        }
    }

    /// Accept what the listeners have; the number of connections now waiting for a stream.
    fn accept(&mut self) -> usize {
        let mut accepted = 0;
        for i in 0..self.listeners.len() {
            loop {
                let Ok((s, client)) = self.listeners[i].0.accept() else {
                    break;
                };
                reset_on_close(&s); // inherited from the listener; said again to be sure
                s.set_nonblocking(true).ok();
                s.set_nodelay(true).ok();
                let p = match (self.listeners[i].1, client, s.local_addr()) {
                    (Some(port), _, _) => Preamble::Port(port),
                    (None, SocketAddr::V4(client), Ok(SocketAddr::V4(dst))) => {
                        Preamble::Original { dst, client }
                    }
                    _ => {
                        reset_on_close(&s);
                        self.rep.refused += 1;
                        continue;
                    }
                };
                self.rep.accepted += 1;
                accepted += 1;
                // The stream is opened on the dialed connection once it can be.
                self.waiting
                    .push_back(Relay::opener(ConnectionHandle(usize::MAX), s, p));
            }
        }
        accepted
    }

    /// Give waiting connections a stream of the dialed connection, as far as the peer
    /// allows streams.
    fn open_waiting(&mut self) {
        let Some(ch) = self.tunnel.dialed else { return };
        let Some(t) = self.tunnel.conns.get_mut(&ch) else {
            return;
        };
        if !t.established {
            return;
        }
        while !self.waiting.is_empty() {
            let Some(id) = t.conn.streams().open(Dir::Bi) else {
                break;
            };
            let mut r = self.waiting.pop_front().expect("not empty");
            r.conn = ch;
            r.stream = Some(id);
            self.relays.insert((ch, id), r);
        }
    }

    fn service(&mut self) {
        self.rep.max_relays = self.rep.max_relays.max(self.relays.len() as u64);
        let mut connects = Vec::new();
        for (&(ch, id), r) in self.relays.iter_mut() {
            let Some(t) = self.tunnel.conns.get_mut(&ch) else {
                continue;
            };
            match r.service(&mut t.conn, &mut self.chunk, &mut self.rep) {
                Need::Nothing => {}
                Need::Connect(p) => connects.push(((ch, id), p)),
                Need::BadPreamble => {
                    r.reset(&mut t.conn, code::REFUSED);
                    self.rep.refused += 1;
                }
            }
        }
        for (key, p) in connects {
            self.connect(key, p);
        }
    }

    /// The destination of a stream the peer opened, by the rules; None: refused.
    fn destination(&self, p: Preamble) -> Option<SocketAddrV4> {
        match p {
            Preamble::Port(port) => self.cfg.forward.iter().find(|f| f.0 == port).map(|f| f.1),
            Preamble::Original { dst, .. } if self.cfg.forward_original => Some(dst),
            Preamble::Original { dst, .. } => self
                .cfg
                .forward
                .iter()
                .find(|f| f.0 == dst.port())
                .map(|f| f.1),
        }
    }

    fn connect(&mut self, key: (ConnectionHandle, StreamId), p: Preamble) {
        let dst = self.destination(p);
        let Some(r) = self.relays.get_mut(&key) else {
            return;
        };
        let Some(t) = self.tunnel.conns.get_mut(&key.0) else {
            return;
        };
        match dst.map(|d| connect_nonblocking(d.into())) {
            Some(Ok(s)) => {
                r.connected_to(s);
                // Bytes that came with the preamble wait for the connection.
                r.service(&mut t.conn, &mut self.chunk, &mut self.rep);
            }
            Some(Err(_)) => {
                r.reset(&mut t.conn, code::UNREACHABLE);
                self.rep.refused += 1;
            }
            None => {
                r.reset(&mut t.conn, code::REFUSED);
                self.rep.refused += 1;
            }
        }
    }

    /// Forget ended relays and drained connections.
    fn reap(&mut self, now: Instant) {
        let rep = &mut self.rep;
        self.relays.retain(|_, r| match r.ended {
            None => true,
            Some(Ended::Closed) => {
                rep.closed += 1;
                if let Some(s) = r.sock.take() {
                    close_gracefully(s);
                }
                false
            }
            Some(Ended::Reset) => {
                rep.reset += 1;
                false
            }
        });
        for ch in self.tunnel.reap(now) {
            // Relays of a connection quinn forgot cannot go on.
            for r in self
                .relays
                .values_mut()
                .filter(|r| r.conn == ch && r.ended.is_none())
            {
                r.drop_socket_with_reset();
                self.rep.reset_by_tunnel_loss += 1;
            }
        }
    }

    fn wait(&mut self, end: Instant) {
        let now = Instant::now();
        let mut until = end.min(now + Duration::from_millis(50));
        if let Some(t) = self.tunnel.next_timeout() {
            until = until.min(t);
        }
        match self.stopping {
            Some(Stopping::Draining { until: t } | Stopping::Closing { until: t }) => {
                until = until.min(t)
            }
            None => {}
        }
        let pollin = |fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let mut fds = vec![pollin(self.tunnel.link_fd())];
        fds.extend(self.link_state.map(pollin));
        fds.extend(self.listeners.iter().map(|(l, _)| pollin(l.as_raw_fd())));
        let first_relay = fds.len();
        let mut polled = Vec::new();
        for (&key, r) in &self.relays {
            let Some(s) = &r.sock else { continue };
            let (rd, wr) = r.interest();
            let mut ev = 0;
            if rd {
                ev |= libc::POLLIN;
            }
            if wr {
                ev |= libc::POLLOUT;
            }
            // Polled even with no events: POLLERR and POLLHUP report a reset end host.
            fds.push(libc::pollfd {
                fd: s.as_raw_fd(),
                events: ev,
                revents: 0,
            });
            polled.push(key);
        }
        if until <= now {
            return;
        }
        let dt = until - now;
        let ts = libc::timespec {
            tv_sec: dt.as_secs() as libc::time_t,
            tv_nsec: dt.subsec_nanos() as libc::c_long,
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
        for (p, key) in fds[first_relay..].iter().zip(&polled) {
            if p.revents & libc::POLLERR != 0 {
                if let Some(r) = self.relays.get_mut(key) {
                    r.sock_error = true;
                }
            }
        }
    }

    pub fn report(&self) -> QuicGatewayReport {
        let mut r = self.rep.clone();
        r.elapsed_s = self.t0.elapsed().as_secs_f64();
        r.stopped = match (&self.stopped, &self.stop_reason) {
            (Some(s), _) => s.clone(),
            (None, Some(why)) => format!("stopping ({why})"),
            (None, None) => "running".into(),
        };
        r.listening = bound_addresses(&self.listeners);
        r.tunnel_failures = self.tunnel.failures.clone();
        r.quic = self.tunnel.stats();
        r
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_dial;
