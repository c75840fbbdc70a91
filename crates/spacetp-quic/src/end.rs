//! One end of a QUIC connection: a quinn `Endpoint` with its one `Connection`, on
//! simulated time. The world hands it datagrams and timeouts and asks it for datagrams to
//! send; the application writes a byte count (the bytes are zeros: only their number and
//! timing matter) on `streams` unidirectional streams at once, in turns of `STREAM_TURN`
//! bytes (as an HTTP/3 server sends the objects of a page), which the other end reads.

mod config;
mod datagrams;
mod stats;
pub use config::{EndConfig, EndOutputs};
pub use datagrams::DatagramStats;
pub use stats::QuicStats;

use crate::clock::SimClock;
use crate::rate_cap::RateCap;
use crate::sizes::{CryptoMode, SizesClient, SizesServer};
use crate::tls;
use bytes::{Bytes, BytesMut};
use quinn_proto::{
    ClientConfig, Connection, ConnectionError, ConnectionHandle, DatagramEvent, Dir, Endpoint,
    EndpointConfig, Event, ServerConfig, StreamEvent, StreamId, VarInt,
};
use spacetp_proto::Time;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;

/// What the application writes: zeros, at most this much per call into quinn.
static ZEROS: [u8; 65536] = [0; 65536];
/// Bytes written into one stream before the next stream's turn.
const STREAM_TURN: u64 = 16 * 1024;
/// Received datagrams are cut from buffers of this size.
const RX_ARENA: usize = 64 * 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Client,
    Server,
}

pub struct QuicEnd {
    role: Role,
    clock: SimClock,
    endpoint: Endpoint,
    server_config: Option<Arc<ServerConfig>>,
    conn: Option<(ConnectionHandle, Connection)>,
    /// A client's configuration until it connects (on its first poll).
    pending_connect: Option<ClientConfig>,
    local: SocketAddr,
    remote: SocketAddr,
    /// Datagrams the endpoint itself answered with (version negotiation, retry, reset).
    endpoint_tx: VecDeque<Vec<u8>>,
    buf: Vec<u8>,
    rx_arena: BytesMut,
    started: Time,
    handshake_done: Option<Time>,
    /// The streams of the transfer (opened by the client, accepted by the server), how many
    /// there are to be, whose turn it is to be written, and which have ended (FIN read by
    /// the server; all acknowledged, for the client).
    streams: Vec<StreamId>,
    /// The server's streams with something new since it last read (quinn's `Opened` and
    /// `Readable` events): only these are read, not all of a page's thousands.
    to_read: Vec<StreamId>,
    n_streams: usize,
    turn: usize,
    streams_done: usize,
    /// Bytes the application wrote that quinn has not taken yet, and the most it may hold.
    backlog: u64,
    backlog_limit: u64,
    written: u64,
    close_requested: bool,
    stream_finished: bool,
    received: u64,
    peer_finished: bool,
    /// Why the connection ended, if it did (quinn's reason).
    ended: Option<ConnectionError>,
    /// quinn's next deadline, as of the last call that could move it.
    deadline: Option<Time>,
    /// Application datagrams (`datagrams.rs`).
    datagrams: datagrams::Datagrams,
    /// The client sent 0-RTT data; once the handshake is over, whether it was accepted.
    zero_rtt: Option<bool>,
    /// The server has checked whether to close since its handshake ended.
    close_sent: bool,
    /// `quic.max_pacing_rate`, if set.
    rate_cap: Option<RateCap>,
}

impl QuicEnd {
    /// A client at `local` that connects to `remote` when first polled.
    pub fn client(cfg: &EndConfig, local: SocketAddr, remote: SocketAddr) -> Self {
        let mut end = QuicEnd::new(Role::Client, cfg, local, remote, None);
        let key_log = cfg.out.key_log.clone();
        let crypto = match &cfg.resumption {
            Some(r) => r.crypto(local.ip(), remote.ip(), key_log).0,
            None => tls::client_crypto(key_log),
        };
        let mut cc = match cfg.crypto {
            CryptoMode::Real => ClientConfig::new(crypto),
            CryptoMode::Sizes => ClientConfig::new(Arc::new(SizesClient(crypto))),
        };
        cc.transport_config(cfg.transport("client"));
        end.pending_connect = Some(cc);
        end
    }

    /// The client opens its connection (its first flight) at `now`.
    fn connect(&mut self, now: Time) {
        let Some(cfg) = self.pending_connect.take() else {
            return;
        };
        let (ch, conn) = self
            .endpoint
            .connect(self.clock.instant(now), cfg, self.remote, tls::SERVER_NAME)
            .expect("a fresh endpoint has connection IDs and the remote is a real address");
        self.started = now;
        self.conn = Some((ch, conn));
    }

    /// A server at `local` that accepts the first connection from `remote`.
    pub fn server(cfg: &EndConfig, local: SocketAddr, remote: SocketAddr) -> Self {
        let crypto = match &cfg.resumption {
            Some(r) => r.crypto(remote.ip(), local.ip(), cfg.out.key_log.clone()).1,
            None => tls::server_crypto(),
        };
        let mut sc = match cfg.crypto {
            CryptoMode::Real => ServerConfig::with_crypto(crypto),
            CryptoMode::Sizes => ServerConfig::with_crypto(Arc::new(SizesServer(crypto))),
        };
        sc.transport_config(cfg.transport("server"));
        QuicEnd::new(Role::Server, cfg, local, remote, Some(Arc::new(sc)))
    }

    fn new(
        role: Role,
        cfg: &EndConfig,
        local: SocketAddr,
        remote: SocketAddr,
        server_config: Option<Arc<ServerConfig>>,
    ) -> Self {
        let mut rng_seed = [0u8; 32];
        rng_seed[..8].copy_from_slice(&cfg.seed.to_le_bytes());
        rng_seed[8] = role as u8;
        // The largest UDP payload this end takes (a transport parameter): what the flow's MTU
        // carries, so that MTU discovery may probe up to it.
        let mut ec = EndpointConfig::default();
        ec.max_udp_payload_size(cfg.max_payload)
            .expect("max_payload is between 1200 and 65527");
        let endpoint = Endpoint::new(Arc::new(ec), server_config.clone(), true, Some(rng_seed));
        QuicEnd {
            role,
            clock: cfg.clock,
            endpoint,
            server_config,
            conn: None,
            local,
            remote,
            pending_connect: None,
            endpoint_tx: VecDeque::new(),
            buf: Vec::with_capacity(2048),
            rx_arena: BytesMut::new(),
            started: 0,
            handshake_done: None,
            streams: Vec::new(),
            to_read: Vec::new(),
            n_streams: cfg.settings.streams as usize,
            turn: 0,
            streams_done: 0,
            backlog: 0,
            backlog_limit: cfg.settings.send_window.0,
            written: 0,
            close_requested: false,
            stream_finished: false,
            received: 0,
            peer_finished: false,
            ended: None,
            deadline: None,
            datagrams: Default::default(),
            zero_rtt: None,
            close_sent: false,
            rate_cap: cfg.settings.max_pacing_rate.map(|r| RateCap::new(r.0)),
        }
    }

    pub fn role(&self) -> Role {
        self.role
    }

    /// A UDP datagram for this end arrived.
    pub fn on_datagram(&mut self, now: Time, data: &[u8]) {
        let at = self.clock.instant(now);
        // Datagrams are cut from one larger buffer, so that receiving allocates once per
        // many packets (quinn keeps a datagram while it holds stream data from it).
        if self.rx_arena.capacity() < data.len() {
            self.rx_arena = BytesMut::with_capacity(RX_ARENA.max(data.len()));
        }
        self.rx_arena.extend_from_slice(data);
        let datagram = self.rx_arena.split();
        // quinn appends an answer the endpoint writes (version negotiation, a close) to it.
        self.buf.clear();
        let ev = self.endpoint.handle(
            at,
            self.remote,
            Some(self.local.ip()),
            None,
            datagram,
            &mut self.buf,
        );
        match ev {
            Some(DatagramEvent::ConnectionEvent(ch, ev)) => {
                if let Some((h, c)) = self.conn.as_mut() {
                    if *h == ch {
                        c.handle_event(ev);
                    }
                }
            }
            Some(DatagramEvent::NewConnection(incoming)) => {
                if self.conn.is_none() {
                    let sc = self.server_config.clone();
                    self.buf.clear();
                    match self.endpoint.accept(incoming, at, &mut self.buf, sc) {
                        Ok((ch, conn)) => {
                            self.started = now;
                            self.conn = Some((ch, conn));
                        }
                        Err(e) => {
                            if let Some(t) = e.response {
                                self.endpoint_tx.push_back(self.buf[..t.size].to_vec());
                            }
                        }
                    }
                } else {
                    self.endpoint.ignore(incoming);
                }
            }
            Some(DatagramEvent::Response(t)) => {
                self.endpoint_tx.push_back(self.buf[..t.size].to_vec());
            }
            None => {}
        }
        self.process(now);
    }

    /// The next datagram to send at `now`, written into `out` (cleared first); false when
    /// there is nothing to send now.
    pub fn poll_transmit(&mut self, now: Time, out: &mut Vec<u8>) -> bool {
        out.clear();
        self.connect(now);
        if let Some(d) = self.endpoint_tx.pop_front() {
            out.extend_from_slice(&d);
            return true;
        }
        self.pump();
        let Some((_, conn)) = self.conn.as_mut() else {
            return false;
        };
        if self.rate_cap.as_mut().is_some_and(|c| !c.ready(now)) {
            return false;
        }
        let sent = match conn.poll_transmit(self.clock.instant(now), 1, out) {
            Some(t) => {
                out.truncate(t.size);
                if let Some(c) = self.rate_cap.as_mut() {
                    c.sent(now, t.size);
                }
                true
            }
            None => false,
        };
        self.refresh_deadline();
        sent
    }

    /// When `on_timeout` next has work.
    pub fn poll_timeout(&mut self) -> Option<Time> {
        self.refresh_deadline();
        self.next_timeout()
    }

    /// The same, for callers that hold only a shared reference: the deadline as it stood
    /// after the last input or output. A client not yet connected wants its first poll at
    /// once.
    pub fn next_timeout(&self) -> Option<Time> {
        if self.pending_connect.is_some() {
            return Some(0);
        }
        // A datagram the rate cap held back wants a poll when its time comes.
        let held = self.rate_cap.as_ref().and_then(RateCap::wakeup);
        self.deadline.into_iter().chain(held).min()
    }

    /// quinn's next deadline may move after any input, output or application call.
    fn refresh_deadline(&mut self) {
        self.deadline = match self.conn.as_mut() {
            Some((_, conn)) => conn.poll_timeout().map(|i| self.clock.time(i)),
            None => None,
        };
    }

    pub fn on_timeout(&mut self, now: Time) {
        if let Some((_, conn)) = self.conn.as_mut() {
            conn.handle_timeout(self.clock.instant(now));
        }
        self.process(now);
    }

    /// Endpoint and connection events after an input: the handshake's end, the stream
    /// opening, data to read, the connection's end.
    fn process(&mut self, now: Time) {
        let Some((ch, conn)) = self.conn.as_mut() else {
            return;
        };
        while let Some(ev) = conn.poll_endpoint_events() {
            if let Some(back) = self.endpoint.handle_event(*ch, ev) {
                conn.handle_event(back);
            }
        }
        while let Some(ev) = conn.poll() {
            match ev {
                Event::Connected => {
                    self.handshake_done = Some(now - self.started);
                    if self.zero_rtt.is_some() {
                        let accepted = conn.accepted_0rtt();
                        self.zero_rtt = Some(accepted);
                        if !accepted {
                            // quinn dropped the streams and what was written on them: it is
                            // written again on new ones.
                            self.backlog += self.written;
                            self.written = 0;
                            self.streams.clear();
                            self.turn = 0;
                            self.stream_finished = false;
                        }
                    }
                }
                Event::ConnectionLost { reason } => self.ended = Some(reason),
                Event::Stream(StreamEvent::Opened { dir: Dir::Uni }) => {
                    while let Some(id) = conn.streams().accept(Dir::Uni) {
                        self.streams.push(id);
                        self.to_read.push(id);
                    }
                }
                Event::Stream(StreamEvent::Readable { id }) => self.to_read.push(id),
                Event::Stream(StreamEvent::Finished { id }) if self.streams.contains(&id) => {
                    // Every byte of one of our streams, its end included, is acknowledged.
                    self.streams_done += 1;
                }
                _ => {}
            }
        }
        if self.role == Role::Server {
            self.read_all();
            if self.handshake_done.is_some() && !self.close_sent {
                self.close_sent = true;
                self.close_server(now);
            }
        }
        self.read_datagrams();
        self.pump();
        self.pump_datagrams();
        self.refresh_deadline();
    }

    /// Take what arrived in order on the peer's streams that have something new. A stream
    /// named twice is read once: the second read finds it empty or closed.
    fn read_all(&mut self) {
        let Some((_, conn)) = self.conn.as_mut() else {
            return;
        };
        for id in self.to_read.drain(..) {
            let mut rs = conn.recv_stream(id);
            let Ok(mut chunks) = rs.read(true) else {
                continue; // already finished and read
            };
            loop {
                match chunks.next(usize::MAX) {
                    Ok(Some(c)) => self.received += c.bytes.len() as u64,
                    Ok(None) => {
                        self.streams_done += 1;
                        break;
                    }
                    Err(_) => break,
                }
            }
            let _ = chunks.finalize();
        }
        self.peer_finished = self.streams_done == self.n_streams;
    }

    /// Move the application's backlog into the streams, in turns, as far as quinn takes it,
    /// and finish them once the application has closed and everything is in.
    fn pump(&mut self) {
        if self.role != Role::Client {
            return;
        }
        let Some((_, conn)) = self.conn.as_mut() else {
            return;
        };
        // With 0-RTT keys (a resumed session) the streams open and carry data before the
        // handshake ends.
        let early = conn.is_handshaking() && conn.has_0rtt();
        while self.streams.len() < self.n_streams && (!conn.is_handshaking() || early) {
            match conn.streams().open(Dir::Uni) {
                Some(id) => {
                    self.streams.push(id);
                    if early {
                        self.zero_rtt.get_or_insert(false);
                    }
                }
                None => break,
            }
        }
        if self.streams.is_empty() {
            return;
        }
        let mut blocked = 0;
        while self.backlog > 0 && blocked < self.streams.len() {
            let id = self.streams[self.turn % self.streams.len()];
            // Static zeros: quinn keeps a reference to them, no copy and no allocation.
            let n = self.backlog.min(STREAM_TURN) as usize;
            let mut chunk = [Bytes::from_static(&ZEROS[..n])];
            match conn.send_stream(id).write_chunks(&mut chunk) {
                Ok(w) if w.bytes > 0 => {
                    self.backlog -= w.bytes as u64;
                    self.written += w.bytes as u64;
                    blocked = 0;
                }
                _ => blocked += 1,
            }
            self.turn += 1;
        }
        if self.close_requested && self.backlog == 0 && !self.stream_finished {
            let all = self.streams.len() == self.n_streams;
            self.stream_finished = all
                && self
                    .streams
                    .iter()
                    .all(|&id| conn.send_stream(id).finish().is_ok());
        }
    }

    /// The application offers `n` more bytes; returns how many were taken (what fits in
    /// the send buffer, `send_window`).
    pub fn write(&mut self, n: u64) -> u64 {
        if self.close_requested {
            return 0;
        }
        let take = n.min(self.backlog_limit.saturating_sub(self.backlog));
        self.backlog += take;
        self.pump();
        self.refresh_deadline();
        take
    }

    /// The application is done: the client finishes its stream once everything is in; the
    /// server closes the connection (after the peer's stream ended, as a bulk receiver).
    pub fn close(&mut self, now: Time) {
        if self.close_requested {
            return;
        }
        self.close_requested = true;
        self.close_server(now);
        self.pump();
        self.refresh_deadline();
    }

    /// A server closes once its handshake is over: with 0-RTT every byte may be in before
    /// it, and a close during the handshake is an error to the client (RFC 9000 10.2.3).
    fn close_server(&mut self, now: Time) {
        if self.role != Role::Server || !self.close_requested || self.handshake_done.is_none() {
            return;
        }
        if let Some((_, conn)) = self.conn.as_mut() {
            conn.close(self.clock.instant(now), VarInt::from_u32(0), "done".into());
        }
    }

    /// Bytes of the peer's streams received in order.
    pub fn delivered(&self) -> u64 {
        self.received
    }

    /// The peer's streams have ended and every byte of them is in.
    pub fn peer_finished(&self) -> bool {
        self.peer_finished
    }

    /// The client's streams are finished and the peer has acknowledged all of them.
    pub fn stream_acked(&self) -> bool {
        self.role == Role::Client && self.streams_done == self.n_streams
    }

    /// Bytes the application wrote that quinn has not taken yet (its streams' flow-control
    /// credit or its send window refused them).
    pub fn backlog(&self) -> u64 {
        self.backlog
    }

    /// The handshake has completed (at this end).
    /// `quic.max_pacing_rate` holds a datagram back.
    pub fn rate_capped(&self) -> bool {
        self.rate_cap.as_ref().is_some_and(|c| c.wakeup().is_some())
    }

    pub fn handshake_done(&self) -> bool {
        self.handshake_done.is_some()
    }

    /// The application has closed this end.
    pub fn close_requested(&self) -> bool {
        self.close_requested
    }

    /// The connection has ended (closed by either end, timed out, or failed).
    pub fn is_closed(&self) -> bool {
        self.conn.as_ref().is_some_and(|(_, c)| c.is_closed()) || self.ended.is_some()
    }

    /// Why the connection ended abnormally (quinn's reason), if it did.
    pub fn failure(&self) -> Option<String> {
        match &self.ended {
            None
            | Some(ConnectionError::ApplicationClosed(_))
            | Some(ConnectionError::LocallyClosed) => None,
            Some(e) => Some(e.to_string()),
        }
    }
}
