//! A live CFDP entity: one thread, one UDP socket, the real clock. Each turn wakes the
//! transactions whose timers are due, sends the PDUs that may leave (paced at the
//! settings' `rate`, if set: CFDP has no congestion control), and sleeps in `ppoll` until
//! the next deadline or a datagram. Files are sent one transaction after another; any
//! number are received at once, each by its own receiving entity, into the out directory.

use super::config::CfdpConfig;
use super::outlet::{Dest, Outlet, Way};
use super::report::{CfdpReport, Transaction};
use crate::error::LiveError;
use crate::sys::monotonic_ns;
use crate::turns::Turns;
use spacepackets::cfdp::pdu::PduHeader;
use spacepackets::cfdp::Direction;
use spacepackets::util::UnsignedEnum;
use spacetp_cfdp::{Receiver, Sender};
use spacetp_proto::time::secs;
use spacetp_proto::{Time, MS, SEC};
use std::collections::{BTreeMap, VecDeque};
use std::io::Read;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};

/// How long an entity that met its stop condition answers its peers, by default.
const LINGER: Time = 2 * SEC;

struct Sending {
    sender: Sender,
    t: Transaction,
}

struct Receiving {
    receiver: Receiver,
    t: Transaction,
    /// Where its PDUs go (its address over UDP).
    to: Dest,
    /// Its end is in the report.
    ended: bool,
}

pub struct CfdpEntity {
    cfg: CfdpConfig,
    out: Outlet,
    start: Time,
    /// Files still to send: path, entity, name there.
    queue: VecDeque<(PathBuf, u16, String)>,
    sending: Option<Sending>,
    /// Transactions sent that ended, by sequence number: a Finished PDU sent again (its
    /// ACK lost) is acknowledged again; their reports' indices.
    sent: BTreeMap<u64, (Sender, usize)>,
    next_seq: u16,
    /// Transactions received, by source entity and sequence number.
    receiving: BTreeMap<(u16, u64), Receiving>,
    done_since: Option<Time>,
    stop: Option<String>,
    finished: bool,
    report: CfdpReport,
    buf: Vec<u8>,
}

impl CfdpEntity {
    /// An entity on its own UDP socket.
    pub fn new(cfg: CfdpConfig) -> Result<CfdpEntity, LiveError> {
        let bind = cfg.s.bind.ok_or_else(|| {
            spacetp_proto::FieldError::new("cfdp.bind", "an entity over UDP needs its address")
        })?;
        let socket = UdpSocket::bind(bind)
            .map_err(|e| LiveError::os(format!("binding CFDP's UDP socket to {bind}"), e))?;
        socket
            .set_nonblocking(true)
            .map_err(|e| LiveError::os("making the CFDP socket non-blocking", e))?;
        crate::sys::set_socket_buffers(socket.as_raw_fd(), 4 << 20);
        let rate = cfg.cfdp.rate.map(|r| r.0);
        Ok(Self::with_way(cfg, Way::Udp(socket), rate))
    }

    /// An entity whose PDUs leave by `way` at `rate` bits/s.
    pub(super) fn with_way(cfg: CfdpConfig, way: Way, rate: Option<f64>) -> CfdpEntity {
        CfdpEntity {
            queue: cfg.s.send.iter().cloned().collect(),
            report: CfdpReport {
                entity: cfg.s.entity,
                ..Default::default()
            },
            out: Outlet::new(way, rate),
            start: monotonic_ns(),
            sending: None,
            sent: BTreeMap::new(),
            next_seq: 1,
            receiving: BTreeMap::new(),
            done_since: None,
            stop: None,
            finished: false,
            buf: vec![0; 65_536],
            cfg,
        }
    }

    /// The address the socket is bound to (its port, when bound to port 0).
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.out.socket()?.local_addr().ok()
    }

    /// A bundle the entity sends (over BP): the peer entity and the PDU.
    pub(super) fn take_bundle(&mut self) -> Option<(u16, Vec<u8>)> {
        self.out.take_bundle()
    }

    /// Why it stopped, once it did.
    pub(super) fn stop_reason(&self) -> Option<&str> {
        self.finished.then_some(self.stop.as_deref()?)
    }

    /// The monotonic instant its clock counts from.
    pub(super) fn started_at(&self) -> Time {
        self.start
    }

    /// Stop at the next turn (a signal); transactions still open are reported as such.
    pub fn begin_stop(&mut self, why: &str) {
        self.stop.get_or_insert_with(|| why.to_string());
    }

    pub(super) fn turn(&mut self, now: Time) {
        self.start_next(now);
        if let Some(s) = self.sending.as_mut() {
            if s.sender.next_timeout().is_some_and(|t| t <= now) {
                s.sender.on_timeout(now);
            }
        }
        for r in self.receiving.values_mut() {
            if r.receiver.next_timeout().is_some_and(|t| t <= now) {
                r.receiver.on_timeout(now);
            }
        }
        self.transmit(now);
        self.close_ended(now);
        self.check_stop(now);
        if self.stop.is_some() {
            self.finish(now);
        }
    }

    /// The next file's Put request, when no transaction is sending.
    fn start_next(&mut self, now: Time) {
        while self.sending.is_none() && self.stop.is_none() {
            let Some((path, to, name)) = self.queue.pop_front() else {
                return;
            };
            let name = match name.is_empty() {
                true => path.file_name().map(|n| n.to_string_lossy().into_owned()),
                false => Some(name),
            };
            let name = name.unwrap_or_default();
            let (seq, c) = (self.next_seq, &self.cfg);
            self.next_seq = self.next_seq.wrapping_add(1).max(1);
            let mut sender = Sender::new(&c.cfdp, c.s.entity, to, c.segment, seq);
            let mut t = Transaction {
                peer: to,
                seq: seq as u64,
                file: Some(path.display().to_string()),
                name: name.clone(),
                began_s: secs(now),
                ..Default::default()
            };
            match sender.put_file(now, &path, &name, to, &c.cfdp) {
                Ok(bytes) => {
                    t.bytes = bytes;
                    t.sha256 = sha256_of(&path).ok();
                    self.sending = Some(Sending { sender, t });
                }
                Err(e) => {
                    // The file could not be read: the transaction ends here, said so.
                    t.condition = Some("FilestoreRejection".into());
                    t.faults.insert(e, 1);
                    t.ended_s = Some(secs(now));
                    self.report.sent.push(t);
                }
            }
        }
    }

    /// Sends what may leave now: a PDU held first, then the receivers' (small: ACKs, NAKs,
    /// Finished), then the sender's.
    fn transmit(&mut self, now: Time) {
        if !self.out.flush(now) {
            return;
        }
        for r in self.receiving.values_mut() {
            while let Some((pdu, _)) = r.receiver.next_pdu() {
                if !self.out.send(now, pdu, r.to) {
                    return;
                }
            }
        }
        for (s, i) in self.sent.values_mut() {
            let to = dest(&self.cfg, self.report.sent[*i].peer);
            while let Some((pdu, _)) = s.next_pdu(now) {
                if !self.out.send(now, pdu, to) {
                    return;
                }
            }
        }
        if let Some(s) = self.sending.as_mut() {
            let to = dest(&self.cfg, s.t.peer);
            while let Some((pdu, _)) = s.sender.next_pdu(now) {
                if !self.out.send(now, pdu, to) {
                    return;
                }
            }
        }
    }

    /// Transactions that ended go to the report (a file received complete is renamed to
    /// its name and hashed).
    fn close_ended(&mut self, now: Time) {
        if let Some(s) = self.sending.as_mut() {
            if s.sender.is_finished() && !s.sender.has_data() && !self.out.holds() {
                let mut s = self.sending.take().expect("sending");
                s.t.set_stats(&s.sender.stats());
                s.t.ended_s = Some(secs(now));
                self.sent
                    .insert(s.t.seq, (s.sender, self.report.sent.len()));
                self.report.sent.push(s.t);
            }
        }
        for r in self.receiving.values_mut() {
            if r.ended || !r.receiver.is_finished() {
                continue;
            }
            r.ended = true;
            r.t.ended_s = Some(secs(now));
            r.t.set_stats(&r.receiver.stats());
            r.t.name = r.receiver.dest_name();
            r.t.bytes = r.receiver.file_size().unwrap_or(0);
            let part = r.receiver.file_on_disk();
            r.t.file = part.as_ref().map(|p| p.display().to_string());
            if let (true, Some(part)) = (r.receiver.completed(), part) {
                let whole = part.with_extension("");
                let whole = match part.extension().is_some_and(|e| e == "part") {
                    true => whole,
                    false => part.clone(),
                };
                match std::fs::rename(&part, &whole) {
                    Ok(()) => {
                        r.t.sha256 = sha256_of(&whole).ok();
                        r.t.file = Some(whole.display().to_string());
                    }
                    Err(e) => {
                        r.t.faults
                            .insert(format!("renaming {}: {e}", part.display()), 1);
                        r.t.complete = false;
                    }
                }
            }
        }
    }

    fn check_stop(&mut self, now: Time) {
        let s = &self.cfg.s;
        if s.duration_s.is_some_and(|d| now as f64 >= d * SEC as f64) {
            self.begin_stop("duration");
            return;
        }
        let sent = self.queue.is_empty() && self.sending.is_none();
        // A transaction received counts once its Finished PDU was acknowledged too.
        let closed = |r: &&Receiving| r.ended && !r.receiver.is_closing();
        let received = self.receiving.values().filter(closed).count() as u64;
        let why = match (s.until_sent, s.until_received) {
            (true, None) if sent => "sent",
            (false, Some(n)) if received >= n => "received",
            (true, Some(n)) if sent && received >= n => "sent and received",
            _ => return,
        };
        let since = *self.done_since.get_or_insert(now);
        let linger = s.linger_s.map_or(LINGER, |l| (l * SEC as f64) as Time);
        if now >= since + linger {
            self.begin_stop(why);
        }
    }

    /// The report's last word: counters as they stand now (a transaction that ended may
    /// have answered its peer since), and transactions still open as they are.
    fn finish(&mut self, now: Time) {
        for (s, i) in self.sent.values() {
            self.report.sent[*i].set_counts(&s.stats());
        }
        if let Some(mut s) = self.sending.take() {
            s.t.set_stats(&s.sender.stats());
            self.report.sent.push(s.t);
        }
        for (_, mut r) in std::mem::take(&mut self.receiving) {
            if r.ended {
                r.t.set_counts(&r.receiver.stats());
            } else {
                r.t.set_stats(&r.receiver.stats());
                r.t.name = r.receiver.dest_name();
                r.t.file = r.receiver.file_on_disk().map(|p| p.display().to_string());
            }
            self.report.received.push(r.t);
        }
        self.report.elapsed_s = secs(now);
        self.report.datagrams_out = self.out.datagrams;
        self.report.bytes_out = self.out.bytes;
        self.report.stopped = self.stop.clone().unwrap_or_default();
        self.finished = true;
    }

    /// Hands PDU `raw`, from UDP address `from` (over UDP), to its transaction; false if it
    /// has none here.
    pub(super) fn on_pdu(&mut self, now: Time, raw: &[u8], from: Option<SocketAddr>) -> bool {
        let Ok((header, _)) = PduHeader::from_bytes(raw) else {
            return false;
        };
        let conf = header.common_pdu_conf();
        let (source, dest) = (conf.source_id().value(), conf.dest_id().value());
        let seq = conf.transaction_seq_num.value();
        let me = self.cfg.s.entity as u64;
        match conf.direction {
            Direction::TowardsSender if source == me => {
                let sender = match self.sending.as_mut() {
                    Some(s) if seq == s.t.seq && dest == s.t.peer as u64 => Some(&mut s.sender),
                    _ => self.sent.get_mut(&seq).map(|(s, _)| s),
                };
                sender.map(|s| s.on_pdu(now, raw)).is_some()
            }
            Direction::TowardsSender => false,
            Direction::TowardsReceiver => {
                let (Ok(source), true) = (u16::try_from(source), dest == me) else {
                    return false;
                };
                let Some(dir) = self.cfg.s.out_dir.clone() else {
                    return false;
                };
                let c = &self.cfg;
                let r = self
                    .receiving
                    .entry((source, seq))
                    .or_insert_with(|| Receiving {
                        receiver: Receiver::in_dir(&c.cfdp, c.s.entity, source, c.segment, &dir),
                        t: Transaction {
                            peer: source,
                            seq,
                            began_s: secs(now),
                            ..Default::default()
                        },
                        to: Dest {
                            entity: source,
                            addr: c.peers.get(&source).copied().or(from),
                        },
                        ended: false,
                    });
                r.receiver.on_pdu(now, raw);
                true
            }
        }
    }

    /// The report so far (complete once `run_for` returned false).
    pub fn report(&self) -> CfdpReport {
        let mut r = self.report.clone();
        r.datagrams_out = self.out.datagrams;
        r.bytes_out = self.out.bytes;
        if !self.finished {
            r.elapsed_s = secs(self.now());
        }
        r
    }
}

impl Turns for CfdpEntity {
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
        if self.out.holds() {
            next = next.min(self.out.ready_at(now));
        }
        if let Some(s) = &self.sending {
            if s.sender.has_data() {
                next = next.min(self.out.ready_at(now));
            }
            if let Some(t) = s.sender.next_timeout() {
                next = next.min(t);
            }
        }
        for r in self.receiving.values() {
            if let Some(t) = r.receiver.next_timeout() {
                next = next.min(t);
            }
        }
        if !self.queue.is_empty() && self.sending.is_none() {
            next = now;
        }
        if let Some(d) = self.cfg.s.duration_s {
            next = next.min(((d * SEC as f64) as Time).max(now));
        }
        next
    }

    fn sockets(&self) -> Vec<RawFd> {
        self.out
            .socket()
            .map(|s| s.as_raw_fd())
            .into_iter()
            .collect()
    }

    fn receive(&mut self) {
        let mut buf = std::mem::take(&mut self.buf);
        while let Some(Ok((n, from))) = self.out.socket().map(|s| s.recv_from(&mut buf)) {
            let now = self.now();
            self.on_datagram(now, &buf[..n], Some(from));
        }
        self.buf = buf; // WouldBlock: nothing more now
    }
}

impl CfdpEntity {
    /// A PDU arrived (a datagram, or a bundle's payload over BP): counted, and handed to
    /// its transaction.
    pub(super) fn on_datagram(&mut self, now: Time, raw: &[u8], from: Option<SocketAddr>) {
        self.report.datagrams_in += 1;
        self.report.bytes_in += raw.len() as u64;
        if !self.on_pdu(now, raw, from) {
            self.report.datagrams_ignored += 1;
        }
    }
}

/// Where PDUs for peer entity `peer` go: its address over UDP.
fn dest(cfg: &CfdpConfig, peer: u16) -> Dest {
    Dest {
        entity: peer,
        addr: cfg.peers.get(&peer).copied(),
    }
}

/// The SHA-256 of the file at `path`, read in chunks.
fn sha256_of(path: &Path) -> std::io::Result<String> {
    let mut f = std::fs::File::open(path)?;
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        ctx.update(&buf[..n]);
    }
    Ok(ctx
        .finish()
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}
