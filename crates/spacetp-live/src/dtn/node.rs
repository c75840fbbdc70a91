//! A live DTN node: the simulator's bundle agent and LTP engine on a real UDP socket and the
//! real clock. One thread: each turn applies the contacts that began or ended, the timers
//! that are due, moves bundles between the agent and the engine, sends the segments that
//! may leave, and sleeps in `ppoll` until the next deadline or a datagram.

mod agent_events;
mod engine_events;

use super::config::DtnConfig;
use super::notices::Notices;
use super::report::{DtnReport, SentFile, SpanCounts};
use super::udp_cl::{self, UdpCl};
use crate::error::LiveError;
use crate::sys::monotonic_ns;
use crate::turns::Turns;
use bytes::Bytes;
use spacetp_dtn::agent::Agent;
use spacetp_dtn::bundle::{BundleId, Eid};
use spacetp_ltp::Engine;
use spacetp_proto::time::secs;
use spacetp_proto::{Time, MS};
use spacetp_sim::transport::ltp::BP_CLIENT_SERVICE;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;
use std::sync::Arc;

/// Seconds from the POSIX epoch to the DTN epoch (2000-01-01 00:00:00 UTC).
const DTN_EPOCH_UNIX: u64 = 946_684_800;
/// A node that has met its stop condition still sends what is queued for this long.
const FLUSH: Time = 500 * MS;

/// A contact of this node's beginning or ending: the span's link state and rate change.
#[derive(Clone, Copy, Debug)]
struct ContactEdge {
    at: Time,
    peer: u64,
    /// The rate from now on (bits/s), or None: the link is down.
    rate_bps: Option<f64>,
}

pub struct DtnNode {
    cfg: DtnConfig,
    socket: UdpSocket,
    addrs: HashMap<u64, SocketAddr>,
    start: Time,
    /// The DTN clock (ms since 2000) at `start`.
    clock_ms: u64,
    engine: Engine,
    agent: Agent,
    edges: Vec<ContactEdge>,
    next_edge: usize,
    /// Open export sessions: their peer and block length.
    exports: BTreeMap<u64, (u64, u64)>,
    /// Bytes handed to LTP whose session has not completed or been canceled.
    in_ltp: u64,
    /// When the stop condition was first met, and the stop's reason once stopping.
    done_since: Option<Time>,
    stop: Option<String>,
    /// Stop once peers are answered, whatever is still held (`stop_when_answered`).
    until_answered: bool,
    finished: bool,
    report: DtnReport,
    buf: Vec<u8>,
    /// The UDP convergence layer, for UDP peers.
    udp: Option<UdpCl>,
    /// LTP sessions canceled so far that carried each bundle (by ID and fragment offset).
    cancels: HashMap<(BundleId, u64), u32>,
    /// What the node has to say while it runs.
    notices: Notices,
    /// An application on this node (a CFDP entity over BP): the bundles for its service
    /// wait here for it instead of going to the output directory.
    app: Option<AppEndpoint>,
}

/// An application's endpoint on the node: `ipn:NODE.service`, and what arrived for it.
struct AppEndpoint {
    service: u64,
    inbox: VecDeque<(Eid, Vec<u8>)>,
}

impl DtnNode {
    /// Binds the socket, takes back a stored bundle set, and hands the files to send to the
    /// agent. `unix_now` is the wall clock at the start (the bundles' creation times).
    pub fn new(cfg: DtnConfig, unix_now_ms: u64) -> Result<DtnNode, LiveError> {
        let socket = UdpSocket::bind(cfg.s.bind)
            .map_err(|e| LiveError::os(format!("binding LTP's UDP socket to {}", cfg.s.bind), e))?;
        socket
            .set_nonblocking(true)
            .map_err(|e| LiveError::os("making the LTP socket non-blocking", e))?;
        crate::sys::set_socket_buffers(socket.as_raw_fd(), 4 << 20);
        let mut engine = Engine::new(cfg.s.node, cfg.engine.clone())?;
        let mut edges = Vec::new();
        for p in &cfg.peers {
            engine.add_span(p.span.clone())?;
            let max = p.span.transmission_rate.map_or(f64::MAX, |r| r.0);
            for c in cfg.plan.contacts_between(cfg.s.node, p.engine) {
                let rate = (c.rate_bytes_per_s * 8.0).min(max);
                edges.push(ContactEdge {
                    at: c.start,
                    peer: p.engine,
                    rate_bps: Some(rate),
                });
                edges.push(ContactEdge {
                    at: c.end,
                    peer: p.engine,
                    rate_bps: None,
                });
            }
            // Down until a contact opens (a contact at time 0 opens it at once).
            engine.set_link_up(0, p.engine, false);
        }
        // At one instant a contact's end comes before the next one's start.
        edges.sort_by_key(|e| (e.at, e.rate_bps.is_some()));
        let clock = unix_now_ms.saturating_sub(DTN_EPOCH_UNIX * 1000);
        let agent = Agent::new(cfg.s.node, Arc::new(cfg.plan.clone()), Some(clock)).keep_payloads();
        let udp = match (cfg.s.udp_bind, cfg.s.udp_peers.is_empty()) {
            (Some(at), _) => Some(UdpCl::new(at, &cfg.s.udp_peers)?),
            (None, false) => {
                let at = SocketAddr::new(cfg.s.bind.ip(), udp_cl::DEFAULT_PORT);
                Some(UdpCl::new(at, &cfg.s.udp_peers)?)
            }
            (None, true) => None,
        };
        let mut node = DtnNode {
            udp,
            addrs: cfg.peers.iter().map(|p| (p.engine, p.addr)).collect(),
            socket,
            start: monotonic_ns(),
            clock_ms: clock,
            engine,
            agent,
            edges,
            next_edge: 0,
            exports: BTreeMap::new(),
            in_ltp: 0,
            done_since: None,
            stop: None,
            until_answered: false,
            finished: false,
            report: DtnReport {
                node: cfg.s.node,
                ..Default::default()
            },
            buf: vec![0; 65_536],
            cancels: HashMap::new(),
            notices: Notices::default(),
            app: None,
            cfg,
        };
        node.restore()?;
        node.send_files()?;
        Ok(node)
    }

    fn restore(&mut self) -> Result<(), LiveError> {
        let Some(dir) = self.cfg.s.store_dir.clone() else {
            return Ok(());
        };
        std::fs::create_dir_all(&dir)
            .map_err(|e| LiveError::os(format!("creating the store {}", dir.display()), e))?;
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .map_err(|e| LiveError::os(format!("reading the store {}", dir.display()), e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "bundle"))
            .collect();
        files.sort();
        for f in files {
            let bytes = std::fs::read(&f)
                .map_err(|e| LiveError::os(format!("reading {}", f.display()), e))?;
            match self.agent.restore(0, &bytes) {
                Ok(()) => {
                    self.report.restored += 1;
                    std::fs::remove_file(&f)
                        .map_err(|e| LiveError::os(format!("removing {}", f.display()), e))?;
                }
                Err(e) => {
                    self.report
                        .restore_errors
                        .push(format!("{}: {e}", f.display()));
                    let _ = std::fs::rename(&f, f.with_extension("bad"));
                }
            }
        }
        Ok(())
    }

    fn send_files(&mut self) -> Result<(), LiveError> {
        let service = self.cfg.s.service.unwrap_or(1);
        for (file, node, svc) in self.cfg.s.send.clone() {
            let data = std::fs::read(&file)
                .map_err(|e| LiveError::os(format!("reading {}", file.display()), e))?;
            let digest = sha256(&data);
            let bytes = data.len() as u64;
            let dest = Eid { node, service: svc };
            let id = self.agent.send(0, service, dest, data, self.cfg.lifetime);
            self.report.sent.push(SentFile {
                file: file.display().to_string(),
                destination: format!("ipn:{node}.{svc}"),
                bytes,
                sha256: digest,
                created_ms: id.created_ms,
                seq: id.seq,
            });
        }
        Ok(())
    }

    /// The address LTP's socket is bound to.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.socket.local_addr().ok()
    }

    /// Serve an application at `ipn:NODE.service`: bundles for it are kept for
    /// [`DtnNode::take_app`], and [`DtnNode::send_app`] sends its data units.
    pub fn open_app(&mut self, service: u64) {
        self.app = Some(AppEndpoint {
            service,
            inbox: VecDeque::new(),
        });
    }

    /// The next data unit that arrived for the application: its source and payload.
    pub fn take_app(&mut self) -> Option<(Eid, Vec<u8>)> {
        self.app.as_mut()?.inbox.pop_front()
    }

    /// Sends `data` as one bundle from the node's sending endpoint (`service`) to `dest`,
    /// and moves what may move now.
    pub fn send_app(&mut self, now: Time, dest: Eid, data: Vec<u8>) {
        let service = self.cfg.s.service.unwrap_or(1);
        self.agent.send(now, service, dest, data, self.cfg.lifetime);
        self.pump(now);
    }

    /// Nothing sent from here is still on its way: no bundle stored, no LTP block waiting
    /// or unacknowledged.
    pub fn idle(&self) -> bool {
        self.agent.stored_bytes() == 0 && self.in_ltp == 0 && self.exports.is_empty()
    }

    /// Stop once everything sent from here has left (as `until_sent`): an application
    /// that has stopped lets its last bundles go.
    pub fn stop_when_sent(&mut self) {
        self.cfg.s.until_sent = true;
    }

    /// Stop once its peers have been answered for the linger, whatever is still held here:
    /// an application whose peers confirmed all they needed from it (a CFDP receiver whose
    /// Finished PDUs were acknowledged) has nothing left that must arrive. Waiting for its
    /// last bundles to leave, as `stop_when_sent`, held such a node until its duration when
    /// a copy sent again was bound for a peer that had since stopped. (An application
    /// gives its node one of the two.)
    pub fn stop_when_answered(&mut self) {
        self.until_answered = true;
    }

    /// Counts time from `start` (a monotonic instant): an application that drives the node
    /// shares its clock.
    pub fn share_clock(&mut self, start: Time) {
        self.start = start;
    }

    /// Stop at the next turn (a signal): open export sessions are canceled and their
    /// bundles kept, with every other one stored here, in the store directory.
    pub fn begin_stop(&mut self, why: &str) {
        self.stop.get_or_insert_with(|| why.to_string());
    }

    fn turn(&mut self, now: Time) {
        while let Some(e) = self.edges.get(self.next_edge).copied() {
            if e.at > now {
                break;
            }
            self.next_edge += 1;
            if let Some(r) = e.rate_bps {
                self.engine.set_transmission_rate(e.peer, Some(r));
            }
            self.engine.set_link_up(now, e.peer, e.rate_bps.is_some());
        }
        if self.engine.poll_timeout().is_some_and(|t| t <= now) {
            self.engine.on_timeout(now);
        }
        if self.agent.poll_timeout(now).is_some_and(|t| t <= now) {
            self.agent.on_timeout(now);
        }
        self.pump(now);
        self.notices.tick(now);
        self.check_stop(now);
        if self.stop.is_some() {
            self.finish(now);
        }
    }

    /// Moves bundles and blocks between the agent and the engine until neither has more.
    fn pump(&mut self, now: Time) {
        loop {
            let mut moved = false;
            while let Some((neighbor, bytes)) = self.agent.poll_forward(now) {
                moved = true;
                if let Some(udp) = self.udp.as_mut().filter(|u| u.reaches(neighbor)) {
                    if !udp.send(neighbor, &bytes) {
                        self.agent.on_forward_failed(now, neighbor, &bytes);
                        break;
                    }
                    continue;
                }
                let len = bytes.len() as u64;
                match self.engine.send(
                    now,
                    neighbor,
                    BP_CLIENT_SERVICE,
                    Bytes::from(bytes.clone()),
                    len,
                ) {
                    Ok(()) => self.in_ltp += len,
                    // No span to that neighbor (the configuration checks the plan's
                    // contacts from here, so this is a route through a node we cannot reach).
                    Err(_) => {
                        self.agent.on_forward_failed(now, neighbor, &bytes);
                        break;
                    }
                }
            }
            self.transmit(now);
            moved |= self.engine_events(now);
            moved |= self.agent_events(now);
            if !moved {
                break;
            }
        }
    }

    fn transmit(&mut self, now: Time) {
        let mut out = Vec::with_capacity(2048);
        while let Some(peer) = self.engine.poll_transmit(now, &mut out) {
            let Some(addr) = self.addrs.get(&peer) else {
                continue;
            };
            match self.socket.send_to(&out, addr) {
                Ok(n) => {
                    self.report.segments_out += 1;
                    self.report.bytes_out += n as u64;
                }
                Err(_) => self.report.send_errors += 1,
            }
        }
    }

    /// Whether every session on every span has closed.
    fn sessions_closed(&self) -> bool {
        self.cfg.peers.iter().all(|p| {
            self.engine
                .open_sessions(p.engine)
                .is_none_or(|(e, i)| e == 0 && i == 0)
        })
    }

    fn check_stop(&mut self, now: Time) {
        if self.stop.is_some() {
            return;
        }
        if self.cfg.duration.is_some_and(|d| now >= d) {
            self.stop = Some("duration".into());
            return;
        }
        // Every condition given must hold: a node that both receives and sends stops once
        // it has its data units and everything it sent has left.
        let want_delivered = self.cfg.s.until_delivered;
        let want_sent = self.cfg.s.until_sent;
        if want_delivered.is_none() && !want_sent && !self.until_answered {
            return;
        }
        let delivered = want_delivered.is_none_or(|n| self.report.delivered.len() as u64 >= n);
        let sent = !want_sent || self.idle();
        if !(delivered && sent) {
            return;
        }
        let since = *self.done_since.get_or_insert(now);
        let flushed = self.sessions_closed() && now >= since + FLUSH;
        if flushed || now >= since + self.cfg.linger.max(FLUSH) {
            let why = match (want_delivered.is_some(), want_sent) {
                (true, true) => "delivered and sent",
                (true, false) => "delivered",
                (false, true) => "sent",
                (false, false) => "answered",
            };
            self.stop = Some(why.into());
        }
    }

    /// The stop: open export sessions canceled (their bundles come back to the agent),
    /// the store written out, the counters taken.
    fn finish(&mut self, now: Time) {
        if self.finished {
            return;
        }
        let open: Vec<u64> = self.exports.keys().copied().collect();
        for s in open {
            self.engine.cancel_export(now, s);
        }
        self.engine_events(now);
        self.transmit(now);
        self.notices.flush(now);
        let held = self.agent.drain_store();
        self.report.stored_at_stop = held.len() as u64;
        if let Some(dir) = &self.cfg.s.store_dir {
            for (i, b) in held.iter().enumerate() {
                let path = dir.join(format!("{:020}-{i:06}.bundle", now));
                if let Err(e) = write_file(&path, b) {
                    eprintln!("spacetp dtn: keeping a bundle in {}: {e}", path.display());
                }
            }
        }
        self.report.elapsed_s = secs(now);
        self.report.stopped = self.stop.clone().unwrap_or_default();
        self.finished = true;
    }

    /// What the node said since the last call: canceled LTP sessions (rate-limited) and
    /// bundles given up, each line beginning with the time since the start.
    pub fn take_notices(&mut self) -> Vec<String> {
        self.notices.take()
    }

    /// The report so far (complete once `run_for` returned false).
    pub fn report(&self) -> DtnReport {
        let mut r = self.report.clone();
        r.notices = self.notices.all.clone();
        r.agent = self.agent.stats().into();
        r.udp = self.udp.as_ref().map(|u| u.counts.clone());
        r.spans = self
            .cfg
            .peers
            .iter()
            .filter_map(|p| {
                self.engine
                    .span_stats(p.engine)
                    .map(|s| SpanCounts::new(p.engine, s))
            })
            .collect();
        if !self.finished {
            r.elapsed_s = secs(self.now());
        }
        r
    }
}

impl Turns for DtnNode {
    fn now(&self) -> Time {
        monotonic_ns().saturating_sub(self.start)
    }

    fn step(&mut self, now: Time) {
        self.turn(now);
    }

    fn stopped(&self) -> bool {
        self.finished
    }

    fn next_deadline(&mut self, now: Time) -> Time {
        let mut next = now + 100 * MS;
        if let Some(t) = self.engine.poll_timeout() {
            next = next.min(t);
        }
        if let Some(t) = self.agent.poll_timeout(now) {
            next = next.min(t);
        }
        if let Some(e) = self.edges.get(self.next_edge) {
            next = next.min(e.at);
        }
        if let Some(d) = self.cfg.duration {
            next = next.min(d.max(now));
        }
        next
    }

    fn sockets(&self) -> Vec<RawFd> {
        let udp = self.udp.as_ref().map_or(-1, |u| u.socket.as_raw_fd());
        vec![self.socket.as_raw_fd(), udp]
    }

    fn receive(&mut self) {
        while let Some((neighbor, n)) = self.udp.as_mut().and_then(|u| u.receive(&mut self.buf)) {
            let now = self.now();
            self.agent.on_block(now, neighbor, &self.buf[..n]);
        }
        loop {
            let n = match self.socket.recv_from(&mut self.buf) {
                Ok((n, _)) => n,
                Err(_) => return, // WouldBlock: nothing more now
            };
            self.report.segments_in += 1;
            self.report.bytes_in += n as u64;
            let now = self.now();
            if self.engine.on_segment(now, &self.buf[..n]).is_err() {
                self.report.segments_undecodable += 1;
            }
        }
    }
}

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

fn sha256(data: &[u8]) -> String {
    hex(ring::digest::digest(&ring::digest::SHA256, data).as_ref())
}

/// Writes `data` to `path` whole: to a temporary name first, then renamed, so a reader
/// never sees half a file.
fn write_file(path: &Path, data: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("part");
    std::fs::write(&tmp, data)?;
    std::fs::rename(tmp, path)
}
