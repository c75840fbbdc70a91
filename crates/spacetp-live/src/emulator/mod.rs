//! `spacetp emulate`: a user-space space-link emulator. Real IP packets read from two file
//! descriptors (TUN devices in practice; any packet-preserving fd, such as a datagram socket
//! pair, in tests) cross the simulator's own link directions ([`spacetp_sim::link::LinkDir`],
//! built from a `[[links]]` entry by [`spacetp_sim::build::build_links`]): drop-tail queue,
//! serialisation at the link rate, error model (BER / PER / Gilbert-Elliott / Markov slot /
//! scripted drops), outages and `up` schedules, propagation delay and rate (constants or
//! schedules: the same ones the simulator reads, so an orbit's pass, a contact plan or a
//! replayed trace plays out in real time), and are written to the other fd when they are
//! due on the wall clock.
//!
//! The loop is a discrete-event simulation kept in step with `CLOCK_MONOTONIC`: every link
//! event is processed at its own (virtual) time once the clock has passed it, so rates are
//! exact whatever the loop's jitter; only the moment a packet is written can be late, and
//! that lateness is measured. The loop sleeps in `ppoll` (timer slack 1 ns) until
//! [`SPIN_NS`] ([`SPIN_RT_NS`] under SCHED_FIFO) before the next delivery, then spins,
//! reading both fds as it goes.
//!
//! Time 0 of outages, schedules and Markov slots is the moment [`Emulator::new`] returns.

mod describe;
mod notices;
mod report;
mod wait;

pub use describe::{describe, scenario_json};

pub use notices::{next_link_notice, LINK_DOWN, LINK_UP};
use report::Hist;
pub use report::{DirReport, Lateness, Report};
pub use wait::{RT_BREATHE_NS, RT_BUSY_NS, RT_REST_NS, SPIN_NS, SPIN_RT_NS};

use crate::error::LiveError;
use crate::sys::{monotonic_ns, set_fifo, set_nonblocking, sleep_ns};
use spacetp_proto::FieldError;
use spacetp_proto::Time;
use spacetp_sim::build;
use spacetp_sim::link::{LinkDir, Offer, TxEnd};
use spacetp_sim::packet::PacketId;
use std::os::fd::RawFd;

/// Largest packet read from an fd.
const MAX_PACKET: usize = 65_536;
/// Packets read from one fd per loop turn, so deliveries are never starved by a flood.
const READ_BATCH: usize = 32;
/// Lateness histogram: 1 us buckets up to this many us, then one overflow bucket.
const HIST_US: usize = 20_000;

/// The two directions of the single `[[links]]` entry of `scenario_json` (a scenario with two
/// nodes and one link; the seed seeds the error models as in the simulator). Errors name the
/// field, as the simulator's do.
pub fn link_from_json(scenario_json: &str) -> Result<(LinkDir, LinkDir), FieldError> {
    let sc = spacetp_sim::scenario_from_json(scenario_json)?;
    if sc.links.len() != 1 || sc.topology.is_some() {
        return Err(FieldError::new(
            "links",
            format!(
                "the emulator takes exactly one [[links]] entry (got {})",
                sc.links.len()
            ),
        ));
    }
    let idx = build::node_index(&sc)?;
    let mut b = build::build_links(&sc, &idx, 1500, &["links[0]".to_string()])?;
    let no_link = || FieldError::new("links", "no link");
    let back = b.links.pop().ok_or_else(no_link)?;
    let fwd = b.links.pop().ok_or_else(no_link)?;
    Ok((fwd, back))
}

struct Dir {
    link: LinkDir,
    /// When the packet on the wire finishes.
    done_at: Option<Time>,
    rx_packets: u64,
    rx_bytes: u64,
    oversize_drops: u64,
    written_packets: u64,
    written_bytes: u64,
    write_errors: u64,
    hist: Hist,
    delay0: Time,
}

impl Dir {
    fn new(link: LinkDir) -> Self {
        let delay0 = link.delay.at(0);
        Dir {
            link,
            done_at: None,
            rx_packets: 0,
            rx_bytes: 0,
            oversize_drops: 0,
            written_packets: 0,
            written_bytes: 0,
            write_errors: 0,
            hist: Hist::new(),
            delay0,
        }
    }

    fn next_arrival(&self) -> Option<Time> {
        self.link.pipe.front().map(|&(t, _)| t)
    }
}

/// Packet bytes by id, reused.
#[derive(Default)]
struct Store {
    bufs: Vec<Vec<u8>>,
    free: Vec<PacketId>,
}

impl Store {
    fn insert(&mut self, data: &[u8]) -> PacketId {
        if let Some(id) = self.free.pop() {
            let b = &mut self.bufs[id as usize];
            b.clear();
            b.extend_from_slice(data);
            id
        } else {
            self.bufs.push(data.to_vec());
            (self.bufs.len() - 1) as PacketId
        }
    }

    fn len(&self, id: PacketId) -> u32 {
        self.bufs[id as usize].len() as u32
    }

    fn remove(&mut self, id: PacketId) -> u32 {
        self.free.push(id);
        self.len(id)
    }
}

/// Options of a run.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Stop after this long (ns); None: until the caller stops calling [`Emulator::run_for`].
    pub duration: Option<Time>,
    /// Run the loop under SCHED_FIFO (priority 10) for tighter timing, if the system allows
    /// it (the report says). The loop sleeps between deliveries, so it holds a core only
    /// while packets are due closer together than [`SPIN_NS`].
    pub realtime: bool,
    /// Datagram fds told of the link's state: [`LINK_DOWN`] when an outage starts and
    /// [`LINK_UP`] when it ends, as a ground station tells SCPS-TP (persist mode).
    pub notify: Vec<RawFd>,
    /// Also announce on the link itself: a UDP datagram to this port of each end's address
    /// (`(port, address of end a, address of end b)`), from the other end's address, written
    /// to that end's fd, so a program in each end's namespace can listen for it.
    pub notify_udp: Option<(u16, [u8; 4], [u8; 4])>,
}

pub struct Emulator {
    dirs: [Dir; 2],
    /// fds[0] is end `between[0]`: what it yields goes forward (dirs[0]) and is written to
    /// fds[1].
    fds: [RawFd; 2],
    store: Store,
    buf: Vec<u8>,
    t0: Time,
    end: Option<Time>,
    realtime: bool,
    stopped: Option<String>,
    /// When the loop last slept a whole timeout (real-time duty cycle).
    last_sleep: Time,
    /// Forced pauses under SCHED_FIFO.
    breaths: u64,
    /// Outage starts (false) and ends (true) in time order, the next one to announce, and
    /// where to announce them.
    transitions: Vec<(Time, bool)>,
    next_transition: usize,
    notify: Vec<RawFd>,
    notify_udp: Option<(u16, [u8; 4], [u8; 4])>,
    notices_sent: u64,
}

impl Emulator {
    /// Emulate the link of `scenario_json` between `fd_a` (end `between[0]`) and `fd_b`.
    /// The fds must deliver one packet per read and take one per write (TUN with IFF_NO_PI,
    /// or datagram sockets); they are made non-blocking and stay owned by the caller.
    pub fn new(
        scenario_json: &str,
        fd_a: RawFd,
        fd_b: RawFd,
        opts: &Options,
    ) -> Result<Self, LiveError> {
        let (fwd, back) = link_from_json(scenario_json)?;
        let mut transitions: Vec<(Time, bool)> =
            spacetp_sim::link_sched::either_down(&fwd.outages, &back.outages)
                .iter()
                .flat_map(|&(a, b)| [(a, false), (b, true)])
                .filter(|&(t, _)| t != Time::MAX)
                .collect();
        transitions.sort();
        set_nonblocking(fd_a)?;
        set_nonblocking(fd_b)?;
        // SAFETY: prctl with integer arguments: wake from ppoll within 1 ns of the timeout
        // instead of the default 50 us slack.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
        let realtime = opts.realtime && set_fifo(true).is_ok();
        let t0 = monotonic_ns();
        Ok(Emulator {
            dirs: [Dir::new(fwd), Dir::new(back)],
            fds: [fd_a, fd_b],
            store: Store::default(),
            buf: vec![0; MAX_PACKET],
            t0,
            end: opts.duration.map(|d| t0.saturating_add(d)),
            realtime,
            stopped: None,
            last_sleep: 0,
            breaths: 0,
            transitions,
            next_transition: 0,
            notify: opts.notify.clone(),
            notify_udp: opts.notify_udp,
            notices_sent: 0,
        })
    }

    /// Nanoseconds since the emulator started (the model's clock).
    pub fn now(&self) -> Time {
        monotonic_ns().saturating_sub(self.t0)
    }

    /// Run for at most `chunk` ns of wall time (so a caller can check for signals between
    /// chunks). Returns false once the run's duration is over or an fd failed.
    pub fn run_for(&mut self, chunk: Time) -> bool {
        if self.stopped.is_some() {
            return false;
        }
        let chunk_end = self.now() + chunk;
        loop {
            let now = self.now();
            if self.end.is_some_and(|e| self.t0 + now >= e) {
                self.stopped = Some("duration".into());
                return false;
            }
            if now >= chunk_end {
                return true;
            }
            self.process_due(now);
            if !self.notify.is_empty() || self.notify_udp.is_some() {
                self.announce(now);
            }
            for d in 0..2 {
                if let Err(e) = self.read_from(d) {
                    self.stopped = Some(format!("error: {e}"));
                    return false;
                }
            }
            self.wait(chunk_end);
        }
    }

    /// Process every link event due at or before `now`, in time order, each at its own time.
    fn process_due(&mut self, now: Time) {
        loop {
            let mut best: Option<(Time, usize, bool)> = None; // (time, dir, is_arrival)
            for d in 0..2 {
                if let Some(t) = self.dirs[d].done_at {
                    if best.is_none_or(|b| t < b.0) {
                        best = Some((t, d, false));
                    }
                }
                if let Some(t) = self.dirs[d].next_arrival() {
                    if best.is_none_or(|b| t < b.0) {
                        best = Some((t, d, true));
                    }
                }
            }
            match best {
                Some((t, d, arrival)) if t <= now => {
                    if arrival {
                        self.arrive(d, t)
                    } else {
                        self.tx_done(d, t)
                    }
                }
                _ => return,
            }
        }
    }

    fn tx_done(&mut self, d: usize, t: Time) {
        let dir = &mut self.dirs[d];
        dir.done_at = None;
        let Some(end) = dir.link.end_tx(t) else {
            return;
        };
        match end {
            TxEnd::Lost(id) => {
                self.store.remove(id);
            }
            // Flip the low bit of the last byte: the transport checksum of the receiving
            // kernel (which covers the whole segment) discards it.
            TxEnd::Propagating {
                id,
                corrupted: true,
                ..
            } => {
                if let Some(b) = self.store.bufs[id as usize].last_mut() {
                    *b ^= 1;
                }
            }
            _ => {}
        }
        let store = &self.store;
        if let Some(next) = dir.link.dequeue(|i| store.len(i)) {
            dir.done_at = Some(dir.link.begin_tx(next, store.len(next), t));
        }
    }

    fn arrive(&mut self, d: usize, t: Time) {
        let Some((id, _)) = self.dirs[d].link.arrive() else {
            return;
        };
        let data = &self.store.bufs[id as usize];
        // SAFETY: writes `data`, which we own, to the receiving side's fd.
        let n = unsafe {
            libc::write(
                self.fds[1 - d],
                data.as_ptr() as *const libc::c_void,
                data.len(),
            )
        };
        let late = self.now().saturating_sub(t);
        let dir = &mut self.dirs[d];
        if n == data.len() as isize {
            dir.written_packets += 1;
            dir.written_bytes += data.len() as u64;
            dir.hist.add(late);
        } else {
            dir.write_errors += 1;
        }
        self.store.remove(id);
    }

    /// Read what side `d` sent and offer it to direction `d`. Each packet is stamped with the
    /// clock read just after it (never before it arrived, late by the read's own latency),
    /// and events due by then are processed first, so the model stays causal.
    fn read_from(&mut self, d: usize) -> Result<(), LiveError> {
        for _ in 0..READ_BATCH {
            // SAFETY: reads into our buffer of MAX_PACKET bytes.
            let n = unsafe {
                libc::read(
                    self.fds[d],
                    self.buf.as_mut_ptr() as *mut libc::c_void,
                    self.buf.len(),
                )
            };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                return match e.raw_os_error() {
                    Some(libc::EAGAIN) | Some(libc::EINTR) => Ok(()),
                    _ => Err(LiveError::os(format!("reading fd {}", self.fds[d]), e)),
                };
            }
            if n == 0 {
                return Err(LiveError::os(
                    format!("reading fd {}", self.fds[d]),
                    std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "it was closed"),
                ));
            }
            let n = n as usize;
            let now = self.now();
            self.process_due(now);
            let dir = &mut self.dirs[d];
            dir.rx_packets += 1;
            dir.rx_bytes += n as u64;
            if n as u32 > dir.link.mtu {
                dir.oversize_drops += 1;
                continue;
            }
            let id = self.store.insert(&self.buf[..n]);
            let store = &mut self.store;
            match dir.link.offer(id, n as u32, false, |v| store.remove(v)) {
                Offer::Transmit => dir.done_at = Some(dir.link.begin_tx(id, n as u32, now)),
                Offer::Queued => {}
                Offer::Dropped => {
                    self.store.remove(id);
                }
            }
        }
        Ok(())
    }

    /// Mark the run stopped (e.g. on a signal); later `run_for` calls return at once.
    pub fn stop(&mut self, why: &str) {
        if self.stopped.is_none() {
            self.stopped = Some(why.to_string());
        }
    }

    pub fn report(&self) -> Report {
        Report {
            elapsed_s: self.now() as f64 / 1e9,
            stopped: self.stopped.clone().unwrap_or_else(|| "running".into()),
            realtime: self.realtime,
            rt_pauses: self.breaths,
            link_notices: self.notices_sent,
            directions: self
                .dirs
                .iter()
                .map(|d| DirReport {
                    link: d.link.stats.clone(),
                    rate_bps: d.link.nominal_rate(),
                    delay_s: d.delay0 as f64 / 1e9,
                    rx_packets: d.rx_packets,
                    rx_bytes: d.rx_bytes,
                    oversize_drops: d.oversize_drops,
                    written_packets: d.written_packets,
                    written_bytes: d.written_bytes,
                    write_errors: d.write_errors,
                    lateness: d.hist.summary(),
                })
                .collect(),
        }
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        if self.realtime {
            let _ = set_fifo(false);
        }
    }
}

#[cfg(test)]
mod tests;
