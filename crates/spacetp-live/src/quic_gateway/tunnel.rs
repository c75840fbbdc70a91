//! The QUIC side of a gateway: one quinn endpoint on the link, the connection this gateway
//! dials to its peer (redialed with backoff when it fails or ends), and the connections the
//! peer dialed to it. Every relayed TCP connection is a bidirectional stream of one of
//! them.

use super::link::{Link, Received};
use super::report::TunnelStats;
use super::QuicGatewayConfig;
use bytes::BytesMut;
use quinn_proto::{
    ClientConfig, Connection, ConnectionHandle, DatagramEvent, Endpoint, EndpointConfig,
    ServerConfig, VarInt,
};
use spacetp_quic::rate_cap::RateCap;
use std::collections::HashMap;
use std::net::{SocketAddr, SocketAddrV4};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Datagrams read from the link before the relays are serviced again.
const READ_BATCH: usize = 256;
/// Received datagrams are cut from buffers of this size (one allocation per many).
const RX_ARENA: usize = 256 * 1024;
/// First wait before dialing again after a failed or ended connection, and the longest.
const REDIAL_FIRST: Duration = Duration::from_secs(1);
const REDIAL_MAX: Duration = Duration::from_secs(30);

pub struct Tun {
    pub conn: Connection,
    pub peer: SocketAddrV4,
    /// This gateway dialed it (it opens the streams of the connections it accepted).
    pub dialed: bool,
    pub established: bool,
    /// `quic.max_pacing_rate`: this connection's datagrams leave no faster.
    pub cap: Option<RateCap>,
}

pub struct Tunnel {
    endpoint: Endpoint,
    pub conns: HashMap<ConnectionHandle, Tun>,
    /// Our connection to the peer, once dialed.
    pub dialed: Option<ConnectionHandle>,
    client: Option<ClientConfig>,
    dial_to: Option<SocketAddrV4>,
    tls_name: String,
    redial_at: Option<Instant>,
    backoff: Duration,
    link: Link,
    rx: Vec<u8>,
    rx_arena: BytesMut,
    tx: Vec<u8>,
    /// What ended connections counted (quinn's counters go with the connection).
    ended: TunnelStats,
    /// Why each ended connection ended, as quinn said (a handful are kept).
    pub failures: Vec<String>,
    /// `quic.max_pacing_rate` of every connection, and the instant its clock counts from.
    cap: Option<f64>,
    epoch: Instant,
}

impl Tunnel {
    pub fn new(cfg: &QuicGatewayConfig, link: Link) -> Tunnel {
        let transport = Arc::new(transport(cfg));
        let mut ec = EndpointConfig::default();
        ec.max_udp_payload_size(cfg.max_payload)
            .expect("max_payload is between 1200 and 65527");
        let mut sc =
            ServerConfig::with_crypto(spacetp_quic::tls::gateway_server_crypto(&cfg.identity));
        sc.transport_config(transport.clone());
        let client = cfg.peer.map(|_| {
            let mut cc = ClientConfig::new(spacetp_quic::tls::gateway_client_crypto(&cfg.identity));
            cc.transport_config(transport);
            cc
        });
        Tunnel {
            endpoint: Endpoint::new(Arc::new(ec), Some(Arc::new(sc)), true, None),
            conns: HashMap::new(),
            dialed: None,
            client,
            dial_to: cfg.peer,
            tls_name: cfg.tls_name.clone(),
            redial_at: cfg.peer.map(|_| Instant::now()),
            backoff: REDIAL_FIRST,
            link,
            rx: vec![0; 65_536],
            rx_arena: BytesMut::new(),
            tx: Vec::with_capacity(2048),
            ended: TunnelStats::default(),
            failures: Vec::new(),
            cap: cfg.quic.max_pacing_rate.map(|r| r.0),
            epoch: Instant::now(),
        }
    }

    pub fn link_fd(&self) -> std::os::fd::RawFd {
        self.link.fd()
    }

    /// Dial the peer if this gateway dials and has no connection (and the backoff is over).
    pub fn dial(&mut self, now: Instant) -> bool {
        let (Some(to), Some(cc)) = (self.dial_to, &self.client) else {
            return false;
        };
        if self.dialed.is_some() || self.redial_at.is_some_and(|t| t > now) {
            return false;
        }
        self.redial_at = None;
        match self
            .endpoint
            .connect(now, cc.clone(), SocketAddr::V4(to), &self.tls_name)
        {
            Ok((ch, conn)) => {
                self.conns.insert(
                    ch,
                    Tun {
                        conn,
                        peer: to,
                        dialed: true,
                        established: false,
                        cap: self.cap.map(RateCap::new),
                    },
                );
                self.dialed = Some(ch);
                true
            }
            Err(e) => {
                self.note_failure(format!("dial {to}: {e}"));
                self.redial_at = Some(now + self.backoff);
                self.backoff = (self.backoff * 2).min(REDIAL_MAX);
                false
            }
        }
    }

    /// A connection completed its handshake: the peer is up, so the next failure waits the
    /// first backoff again; and if it was the peer's connection while ours is still to be
    /// dialed, ours is dialed now, not at the end of a backoff that grew while the peer was
    /// down.
    pub fn established(&mut self, ch: ConnectionHandle, now: Instant) {
        let Some(t) = self.conns.get_mut(&ch) else {
            return;
        };
        t.established = true;
        self.backoff = REDIAL_FIRST;
        if !t.dialed {
            self.dial_soon(now);
        }
    }

    /// An application connection arrived and waits for a stream: if no connection to the
    /// peer is dialed or being dialed, dial at `now` rather than at the end of the backoff
    /// (up to 30 s after a peer that was down for a while). Each dial lasts until its
    /// handshake succeeds or times out, so arrivals cannot make it dial faster than that.
    pub fn dial_soon(&mut self, now: Instant) {
        if self.dialed.is_none() && self.dial_to.is_some() {
            self.redial_at = Some(now);
        }
    }

    /// When the next dial may happen, if one is to happen.
    pub fn next_dial(&self) -> Option<Instant> {
        self.redial_at
            .filter(|_| self.dialed.is_none() && self.dial_to.is_some())
    }

    fn note_failure(&mut self, why: String) {
        if self.failures.len() < 20 {
            self.failures.push(why);
        }
    }

    /// Read what the link has (a batch); the number of packets read, and of those that were
    /// not for the tunnel.
    pub fn read(&mut self, now: Instant) -> std::io::Result<(u64, u64)> {
        let (mut n, mut foreign) = (0, 0);
        for _ in 0..READ_BATCH {
            let (from, range) = match self.link.recv(&mut self.rx)? {
                Received::Empty => break,
                Received::Foreign => {
                    n += 1;
                    foreign += 1;
                    continue;
                }
                Received::Datagram { from, range } => (from, range),
            };
            n += 1;
            let data = &self.rx[range];
            if self.rx_arena.capacity() < data.len() {
                self.rx_arena = BytesMut::with_capacity(RX_ARENA.max(data.len()));
            }
            self.rx_arena.extend_from_slice(data);
            let datagram = self.rx_arena.split();
            self.tx.clear();
            match self.endpoint.handle(
                now,
                SocketAddr::V4(from),
                None,
                None,
                datagram,
                &mut self.tx,
            ) {
                Some(DatagramEvent::ConnectionEvent(ch, ev)) => {
                    if let Some(t) = self.conns.get_mut(&ch) {
                        t.conn.handle_event(ev);
                    }
                }
                Some(DatagramEvent::NewConnection(incoming)) => {
                    self.tx.clear();
                    match self.endpoint.accept(incoming, now, &mut self.tx, None) {
                        Ok((ch, conn)) => {
                            self.conns.insert(
                                ch,
                                Tun {
                                    conn,
                                    peer: from,
                                    dialed: false,
                                    established: false,
                                    cap: self.cap.map(RateCap::new),
                                },
                            );
                        }
                        Err(e) => {
                            if let Some(t) = e.response {
                                let d = self.tx[..t.size].to_vec();
                                self.link.send(from, &d).ok();
                            }
                            self.note_failure(format!(
                                "refused a connection from {from}: {}",
                                e.cause
                            ));
                        }
                    }
                }
                Some(DatagramEvent::Response(t)) => {
                    let d = self.tx[..t.size].to_vec();
                    self.link.send(from, &d).ok();
                }
                None => {}
            }
        }
        Ok((n, foreign))
    }

    /// Timers that are due, and what connections tell the endpoint.
    pub fn drive(&mut self, now: Instant) {
        for (&ch, t) in self.conns.iter_mut() {
            if t.conn.poll_timeout().is_some_and(|d| d <= now) {
                t.conn.handle_timeout(now);
            }
            while let Some(ev) = t.conn.poll_endpoint_events() {
                if let Some(back) = self.endpoint.handle_event(ch, ev) {
                    t.conn.handle_event(back);
                }
            }
        }
    }

    /// Send what every connection has to send now; the number of datagrams, and of write
    /// errors.
    pub fn transmit(&mut self, now: Instant) -> (u64, u64) {
        let (mut sent, mut errors) = (0, 0);
        let at = self.nanos(now);
        for t in self.conns.values_mut() {
            loop {
                if t.cap.as_mut().is_some_and(|c| !c.ready(at)) {
                    break;
                }
                self.tx.clear();
                let Some(tr) = t.conn.poll_transmit(now, 1, &mut self.tx) else {
                    break;
                };
                if let Some(c) = t.cap.as_mut() {
                    c.sent(at, tr.size);
                }
                let to = match tr.destination {
                    SocketAddr::V4(a) => a,
                    SocketAddr::V6(_) => t.peer,
                };
                match self.link.send(to, &self.tx[..tr.size]) {
                    Ok(()) => sent += 1,
                    Err(_) => errors += 1,
                }
            }
        }
        (sent, errors)
    }

    /// Nanoseconds since the tunnel began: the rate caps' clock.
    fn nanos(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.epoch).as_nanos() as u64
    }

    /// When `drive` (or `transmit`) next has work: the earliest connection timer, datagram
    /// a rate cap held back, or the next dial.
    pub fn next_timeout(&mut self) -> Option<Instant> {
        let epoch = self.epoch;
        let t = self
            .conns
            .values_mut()
            .flat_map(|t| {
                let held = t.cap.as_ref().and_then(RateCap::wakeup);
                let held = held.map(|ns| epoch + Duration::from_nanos(ns));
                t.conn.poll_timeout().into_iter().chain(held)
            })
            .min();
        match (t, self.next_dial()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Forget connections quinn is done with; the handles removed (their streams are gone).
    /// A lost dialed connection is dialed again after the backoff.
    pub fn reap(&mut self, now: Instant) -> Vec<ConnectionHandle> {
        let gone: Vec<ConnectionHandle> = self
            .conns
            .iter()
            .filter(|(_, t)| t.conn.is_drained())
            .map(|(&ch, _)| ch)
            .collect();
        for ch in &gone {
            let t = self.conns.remove(ch).expect("listed above");
            self.ended.add(&t.conn);
            if self.dialed == Some(*ch) {
                self.dialed = None;
                self.redial_at = Some(now + self.backoff);
                self.backoff = (self.backoff * 2).min(REDIAL_MAX);
            }
        }
        gone
    }

    /// No more dialing (the gateway stops).
    pub fn stop_dialing(&mut self) {
        self.dial_to = None;
    }

    /// Close every connection (the gateway stops): peers see an application close, not a
    /// timeout. No more dialing.
    pub fn close_all(&mut self, now: Instant, why: &str) {
        self.stop_dialing();
        for t in self.conns.values_mut() {
            t.conn.close(
                now,
                VarInt::from_u32(0),
                bytes::Bytes::copy_from_slice(why.as_bytes()),
            );
        }
    }

    pub fn stats(&self) -> TunnelStats {
        let mut s = self.ended.clone();
        for t in self.conns.values() {
            s.add(&t.conn);
        }
        s
    }
}

/// quinn's transport configuration for the tunnel: the user's settings, and room for every
/// relayed connection as a stream.
fn transport(cfg: &QuicGatewayConfig) -> quinn_proto::TransportConfig {
    let mut t = cfg.quic.transport_config(cfg.max_payload);
    t.max_concurrent_bidi_streams(VarInt::from_u32(cfg.max_streams));
    t.max_concurrent_uni_streams(VarInt::from_u32(0));
    t
}
