//! A two-endpoint test pipe: fixed one-way delay, an a->b bottleneck (serialisation gap and
//! optional drop-tail limit), scripted drops both ways, a log of a's transmissions and a trace
//! of a's window. Connection tests and controller tests share it.

use crate::config::TcpConfig;
use crate::connection::{Connection, State, Transmit};
use crate::time::Time;
use spacetp_wire::TcpHeader;
use std::collections::BTreeMap;

/// a's window after an event.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    pub t: Time,
    pub cwnd: u64,
    pub ssthresh: u64,
    pub recovery: bool,
    pub flight: u64,
}

pub struct Pipe {
    pub a: Connection,
    pub b: Connection,
    pub delay: Time,
    /// Serialisation time per segment from a to b (the bottleneck).
    pub gap_ab: Time,
    busy_ab: Time,
    /// Segments the bottleneck holds waiting (None: unbounded).
    pub queue_limit: Option<u64>,
    pub queue_drops: u64,
    inflight: BTreeMap<(Time, u64), (bool, Transmit)>,
    serial: u64,
    /// Indices (0-based) of a->b and b->a segments to drop.
    pub drop_ab: Vec<u64>,
    pub drop_ba: Vec<u64>,
    /// b->a segments sent in `[from, to)` are dropped: the return path is down.
    pub drop_ba_during: Option<(Time, Time)>,
    /// Positions whose a->b segments are dropped every time they are sent.
    pub drop_pos_ab: Vec<u64>,
    /// Positions whose first `n` a->b transmissions are dropped: (position, n).
    pub drop_pos_times_ab: Vec<(u64, u32)>,
    /// a->b segments (0-based index) delayed by this much more than the others: reordering.
    pub extra_delay_ab: Vec<(u64, Time)>,
    /// The application writes records of this size and marks the end of each.
    pub record_size: Option<u64>,
    sent_ab: u64,
    sent_ba: u64,
    /// a's transmissions: (time, position, length, retransmission, flags).
    pub log_ab: Vec<(Time, u64, u32, bool, u8)>,
    /// Every header sent, with its direction (true: a -> b) and time.
    pub headers: Vec<(bool, Time, TcpHeader)>,
    pub trace: Vec<Sample>,
    pub now: Time,
    /// Application bytes not yet accepted by a's send buffer.
    to_send: u64,
    total: u64,
    /// When b had everything.
    pub done_at: Option<Time>,
}

impl Pipe {
    /// a sends `bytes` to b over a 50 ms one-way pipe (no bottleneck until `gap_ab` is set).
    pub fn new(cfg: &TcpConfig, mss: u32, bytes: u64) -> Self {
        Pipe {
            a: Connection::connect(cfg, mss, 1000, 80, 0xFFFF_FFF0),
            b: Connection::listen(cfg, mss, 80, 1000, 77),
            delay: 50 * crate::time::MS,
            gap_ab: 0,
            busy_ab: 0,
            queue_limit: None,
            queue_drops: 0,
            inflight: BTreeMap::new(),
            serial: 0,
            drop_ab: vec![],
            drop_ba: vec![],
            drop_ba_during: None,
            drop_pos_ab: vec![],
            drop_pos_times_ab: vec![],
            extra_delay_ab: vec![],
            record_size: None,
            sent_ab: 0,
            sent_ba: 0,
            log_ab: vec![],
            headers: vec![],
            trace: vec![],
            now: 0,
            to_send: bytes,
            total: bytes,
            done_at: None,
        }
    }

    fn flush(&mut self) {
        while self.to_send > 0 {
            // With records, write up to the end of the current one and mark it.
            let written = self.total - self.to_send;
            let want = match self.record_size {
                Some(r) => self.to_send.min(r - written % r),
                None => self.to_send,
            };
            let n = self.a.send(want);
            self.to_send -= n;
            if self.record_size.is_some() && n == want {
                self.a.end_record();
            }
            if self.to_send == 0 {
                self.a.close();
            }
            if n < want {
                break;
            }
        }
        while let Some(t) = self.a.poll_transmit(self.now) {
            let idx = self.sent_ab;
            self.sent_ab += 1;
            self.log_ab
                .push((self.now, t.pos, t.len, t.retransmission, t.hdr.flags));
            self.headers.push((true, self.now, t.hdr));
            let waiting = self.busy_ab.saturating_sub(self.now) / self.gap_ab.max(1);
            if self.queue_limit.is_some_and(|q| waiting >= q) {
                self.queue_drops += 1;
                continue;
            }
            let start = self.busy_ab.max(self.now);
            self.busy_ab = start + self.gap_ab;
            let dropped_this_time = match self
                .drop_pos_times_ab
                .iter_mut()
                .find(|d| d.0 == t.pos && d.1 > 0)
            {
                Some(d) => {
                    d.1 -= 1;
                    true
                }
                None => false,
            };
            if !self.drop_ab.contains(&idx)
                && !self.drop_pos_ab.contains(&t.pos)
                && !dropped_this_time
            {
                self.serial += 1;
                let extra = self
                    .extra_delay_ab
                    .iter()
                    .find(|d| d.0 == idx)
                    .map_or(0, |d| d.1);
                self.inflight
                    .insert((self.busy_ab + self.delay + extra, self.serial), (true, t));
            }
        }
        while let Some(t) = self.b.poll_transmit(self.now) {
            self.headers.push((false, self.now, t.hdr));
            let idx = self.sent_ba;
            self.sent_ba += 1;
            let down = self
                .drop_ba_during
                .is_some_and(|(from, to)| (from..to).contains(&self.now));
            if !self.drop_ba.contains(&idx) && !down {
                self.serial += 1;
                self.inflight
                    .insert((self.now + self.delay, self.serial), (false, t));
            }
        }
        if self.b.state() == State::CloseWait {
            self.b.close();
            self.flush();
        }
    }

    /// Run until both ends are finished, nothing is left to happen, or `limit`.
    pub fn run(&mut self, limit: Time) {
        self.flush();
        while self.now < limit && !(self.a.is_finished() && self.b.is_finished()) {
            let next_pkt = self.inflight.keys().next().map(|k| k.0);
            let next_t = [next_pkt, self.a.poll_timeout(), self.b.poll_timeout()]
                .into_iter()
                .flatten()
                .min();
            let Some(t) = next_t else { break };
            self.now = t;
            if next_pkt == Some(t) {
                let k = *self.inflight.keys().next().expect("a packet is due");
                let (to_b, seg) = self.inflight.remove(&k).expect("a packet is due");
                if to_b {
                    self.b.on_segment(t, &seg.hdr, seg.len);
                } else {
                    self.a.on_segment(t, &seg.hdr, seg.len);
                }
            }
            if self.a.poll_timeout().is_some_and(|d| d <= t) {
                self.a.on_timeout(t);
            }
            if self.b.poll_timeout().is_some_and(|d| d <= t) {
                self.b.on_timeout(t);
            }
            self.flush();
            assert!(
                self.a.recovery_shortcuts_hold(t),
                "at {t} ns the recovery policy broke a promise the output path relies on: \
                 its flight outside a recovery, or a retransmission it said it had not"
            );
            let w = self.a.window();
            self.trace.push(Sample {
                t,
                cwnd: w.cwnd,
                ssthresh: w.ssthresh,
                recovery: self.a.in_recovery(),
                flight: self.a.bytes_in_flight(),
            });
            if self.done_at.is_none() && self.b.delivered() == self.total {
                self.done_at = Some(t);
            }
        }
    }

    /// Positions of retransmitted data segments, in order.
    pub fn retransmissions(&self) -> Vec<u64> {
        self.log_ab
            .iter()
            .filter(|l| l.3 && l.2 > 0)
            .map(|l| l.1)
            .collect()
    }

    /// Index in the trace of the first fast retransmit (recovery entered).
    pub fn first_recovery(&self) -> usize {
        self.trace.iter().position(|s| s.recovery).expect("a loss")
    }

    /// Index of the first sample after the recovery that starts at `i`.
    pub fn recovery_end(&self, i: usize) -> usize {
        i + self.trace[i..]
            .iter()
            .position(|s| !s.recovery)
            .expect("recovery ends")
    }

    /// cwnd at time `t` (the last sample at or before it).
    pub fn cwnd_at(&self, t: Time) -> u64 {
        let i = self.trace.partition_point(|s| s.t <= t);
        self.trace[i - 1].cwnd
    }

    pub fn done(&self) -> Time {
        self.done_at.expect("delivered")
    }
}
