//! One direction of a point-to-point link: a drop-tail queue in front of a transmitter of
//! fixed rate, then a propagation pipeline whose delay may follow a schedule, then the error
//! model. Packets leave the pipeline in order, so only its head needs an event.

use crate::channel::Channel;
use crate::config::CorruptedPolicy;
use crate::engine::PacketId;
use crate::schedule::Schedule;
use serde::Serialize;
use spacetp_proto::Time;
use std::collections::VecDeque;

/// Propagation delay of one direction: a linear [`Schedule`] of nanoseconds.
#[derive(Clone, Debug)]
pub struct Delay(pub Schedule);

impl Delay {
    pub fn constant(d: Time) -> Self {
        Delay(Schedule::constant(d as f64))
    }

    #[inline]
    pub fn at(&self, t: Time) -> Time {
        spacetp_proto::time::round_to_time(self.0.at(t))
    }

    pub fn max(&self) -> Time {
        self.0.max().round() as Time
    }
}

/// What one direction's rate, delay and up/down are over the run.
#[derive(Clone, Debug)]
pub struct DirSched {
    pub rate: Schedule,
    pub delay: Delay,
    /// Sorted disjoint `[start, end)` intervals when the direction is down.
    pub down: Vec<(Time, Time)>,
}

#[derive(Clone, Copy, Debug)]
pub enum QueueLimit {
    Packets(u32),
    Bytes(u64),
}

/// Counters of one link direction.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LinkStats {
    pub name: String,
    /// Packets that started transmission.
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// Packets refused by the full queue (or pushed out of it, for low-priority ones).
    pub queue_drops: u64,
    /// Of those, low-priority packets.
    pub low_priority_drops: u64,
    /// Packets lost to the error model (dropped on the link).
    pub error_drops: u64,
    /// Packets hit by the error model and delivered marked corrupted.
    pub corrupted: u64,
    /// Packets emitted while the link was down.
    pub outage_drops: u64,
    pub delivered_packets: u64,
    pub max_queue_packets: u64,
    pub max_queue_bytes: u64,
}

pub struct LinkDir {
    pub from: u16,
    pub to: u16,
    /// Bits per second: a step schedule (constant for most links).
    pub rate: Schedule,
    pub framing: u32,
    pub mtu: u32,
    pub delay: Delay,
    pub limit: QueueLimit,
    pub channel: Channel,
    pub corrupted_policy: CorruptedPolicy,
    /// Sorted, merged `[start, end)` intervals when this direction is down (the link's
    /// `outages` and this direction's `up` schedule).
    pub outages: Vec<(Time, Time)>,
    pub queue: VecDeque<PacketId>,
    /// Low-priority packets under the `priority` discipline.
    pub queue_low: VecDeque<PacketId>,
    pub priority: bool,
    pub queue_bytes: u64,
    /// The packet being serialised, when it started, and its size.
    pub on_wire: Option<(PacketId, Time, u32)>,
    /// Packets propagating, with their arrival times (non-decreasing).
    pub pipe: VecDeque<(Time, PacketId)>,
    pub last_arrival: Time,
    pub stats: LinkStats,
    /// Index of the pcap tap recording this link, if any.
    pub tap: Option<usize>,
    /// Time spent transmitting, ns, up to the last transmission's end (the limit analysis
    /// reads it through [`LinkDir::busy_time`]).
    pub busy: Time,
}

/// What the queue did with an offered packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// The transmitter was idle: the caller starts transmitting it now ([`LinkDir::begin_tx`]).
    Transmit,
    Queued,
    /// Refused by the full queue (counted); the caller frees it.
    Dropped,
}

/// What became of a packet whose transmission ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxEnd {
    /// Lost to an outage or to the error model (counted); the caller frees it.
    Lost(PacketId),
    /// Now propagating, due at `at` (already in `pipe`); `corrupted` when the error model hit
    /// it under the `deliver` policy. `head`: it is the pipe's only packet, so the caller
    /// schedules its arrival.
    Propagating {
        id: PacketId,
        at: Time,
        corrupted: bool,
        head: bool,
    },
}

/// The queue, transmitter and pipe of one direction, without the event loop: the simulator
/// and the live emulator (`spacetp-live`) call these in the same order, each with its own
/// clock and packet store.
impl LinkDir {
    /// Offer packet `id` of `size` bytes at the sending end. Under the `priority` discipline a
    /// normal packet finding the queue full pushes out the newest low-priority one; `evict`
    /// frees such a victim and returns its size.
    pub fn offer(
        &mut self,
        id: PacketId,
        size: u32,
        low: bool,
        mut evict: impl FnMut(PacketId) -> u32,
    ) -> Offer {
        let low_fifo = low && self.priority;
        if self.on_wire.is_none() {
            return Offer::Transmit;
        }
        while !low_fifo && self.priority && !self.has_room(size) {
            let Some(victim) = self.queue_low.pop_back() else {
                break;
            };
            self.queue_bytes -= evict(victim) as u64;
            self.stats.queue_drops += 1;
            self.stats.low_priority_drops += 1;
        }
        if self.has_room(size) {
            if low_fifo {
                self.queue_low.push_back(id);
            } else {
                self.queue.push_back(id);
            }
            self.queue_bytes += size as u64;
            self.note_queue();
            Offer::Queued
        } else {
            self.stats.queue_drops += 1;
            if low {
                self.stats.low_priority_drops += 1;
            }
            Offer::Dropped
        }
    }

    /// Start serialising `id` at `now`; returns when its last bit leaves.
    pub fn begin_tx(&mut self, id: PacketId, size: u32, now: Time) -> Time {
        self.on_wire = Some((id, now, size));
        self.stats.tx_packets += 1;
        self.stats.tx_bytes += size as u64;
        now + self.tx_time(size, now)
    }

    /// The packet on the wire finished at `now`: outage, error model, then propagation
    /// (packets leave the pipe in order). None if nothing was on the wire.
    pub fn end_tx(&mut self, now: Time) -> Option<TxEnd> {
        let (id, started, size) = self.on_wire.take()?;
        self.busy += now.saturating_sub(started);
        let mut corrupted = false;
        if self.is_down(started) || self.is_down(now) {
            self.stats.outage_drops += 1;
            return Some(TxEnd::Lost(id));
        } else if self.channel.hit(started, self.bits_on_wire(size)) {
            match self.corrupted_policy {
                CorruptedPolicy::Drop => {
                    self.stats.error_drops += 1;
                    return Some(TxEnd::Lost(id));
                }
                CorruptedPolicy::Deliver => {
                    self.stats.corrupted += 1;
                    corrupted = true;
                }
            }
        }
        let at = (now + self.delay.at(now)).max(self.last_arrival);
        self.last_arrival = at;
        let head = self.pipe.is_empty();
        self.pipe.push_back((at, id));
        Some(TxEnd::Propagating {
            id,
            at,
            corrupted,
            head,
        })
    }

    /// Next packet to transmit (normal before low priority), taken off the queue;
    /// `size_of` gives its size.
    pub fn dequeue(&mut self, size_of: impl Fn(PacketId) -> u32) -> Option<PacketId> {
        let next = self
            .queue
            .pop_front()
            .or_else(|| self.queue_low.pop_front())?;
        self.queue_bytes -= size_of(next) as u64;
        Some(next)
    }

    /// The pipe's head arrived: returns it and the next arrival time, if any.
    pub fn arrive(&mut self) -> Option<(PacketId, Option<Time>)> {
        let (_, id) = self.pipe.pop_front()?;
        self.stats.delivered_packets += 1;
        Some((id, self.pipe.front().map(|&(t, _)| t)))
    }

    /// Serialisation time of `size` IP bytes plus framing, started at `start`: at the rates
    /// in force while it lasts.
    pub fn tx_time(&self, size: u32, start: Time) -> Time {
        let bits = (size + self.framing) as f64 * 8.0;
        self.rate.serialise(bits, start)
    }

    /// The rate a transport is told the link has: the rate at time 0, or the schedule's
    /// highest when that is 0.
    pub fn nominal_rate(&self) -> f64 {
        match self.rate.at(0) {
            r if r > 0.0 => r,
            _ => self.rate.max(),
        }
    }

    /// The time this direction has spent transmitting by `now`, ns: a running integral, so
    /// that the busy share of any interval is a difference of two readings.
    pub fn busy_time(&self, now: Time) -> Time {
        self.busy
            + self
                .on_wire
                .map_or(0, |(_, start, _)| now.saturating_sub(start))
    }

    pub fn bits_on_wire(&self, size: u32) -> u64 {
        (size + self.framing) as u64 * 8
    }

    /// Would the queue accept a packet of `size` bytes?
    pub fn has_room(&self, size: u32) -> bool {
        match self.limit {
            QueueLimit::Packets(n) => ((self.queue.len() + self.queue_low.len()) as u64) < n as u64,
            QueueLimit::Bytes(b) => self.queue_bytes + size as u64 <= b,
        }
    }

    pub fn is_down(&self, t: Time) -> bool {
        let i = self.outages.partition_point(|&(s, _)| s <= t);
        i > 0 && t < self.outages[i - 1].1
    }

    pub fn note_queue(&mut self) {
        let n = (self.queue.len() + self.queue_low.len()) as u64;
        self.stats.max_queue_packets = self.stats.max_queue_packets.max(n);
        self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(self.queue_bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_interpolates_and_clamps() {
        let d = Delay(Schedule::from_points(
            vec![(0, 100.0), (1000, 200.0), (2000, 200.0)],
            crate::schedule::Shape::Linear,
        ));
        assert_eq!(d.at(0), 100);
        assert_eq!(d.at(500), 150);
        assert_eq!(d.at(1500), 200);
        assert_eq!(d.at(5000), 200);
        assert_eq!(d.max(), 200);
    }
}
