//! One direction of a point-to-point link: a drop-tail queue in front of a transmitter of
//! fixed rate, then a propagation pipeline whose delay may follow a schedule, then the error
//! model. Packets leave the pipeline in order, so only its head needs an event.

use crate::channel::Channel;
use crate::config::CorruptedPolicy;
use crate::packet::PacketId;
use serde::Serialize;
use spacetp_proto::Time;
use std::collections::VecDeque;

/// Propagation delay of one direction.
#[derive(Clone, Debug)]
pub enum Delay {
    Constant(Time),
    /// Piecewise linear through `(time, delay)` points; constant outside them.
    Schedule(Vec<(Time, Time)>),
}

impl Delay {
    pub fn at(&self, t: Time) -> Time {
        match self {
            Delay::Constant(d) => *d,
            Delay::Schedule(pts) => {
                let i = pts.partition_point(|&(pt, _)| pt <= t);
                if i == 0 {
                    return pts[0].1;
                }
                if i == pts.len() {
                    return pts[i - 1].1;
                }
                let (t0, d0) = pts[i - 1];
                let (t1, d1) = pts[i];
                let f = (t - t0) as f64 / (t1 - t0) as f64;
                (d0 as f64 + f * (d1 as f64 - d0 as f64)).round() as Time
            }
        }
    }

    pub fn max(&self) -> Time {
        match self {
            Delay::Constant(d) => *d,
            Delay::Schedule(pts) => pts.iter().map(|p| p.1).max().unwrap_or(0),
        }
    }
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
    pub rate_bps: f64,
    pub framing: u32,
    pub mtu: u32,
    pub delay: Delay,
    pub limit: QueueLimit,
    pub channel: Channel,
    pub corrupted_policy: CorruptedPolicy,
    /// Sorted, merged `[start, end)` intervals when the link is down.
    pub outages: Vec<(Time, Time)>,
    pub queue: VecDeque<PacketId>,
    /// Low-priority packets under the `priority` discipline.
    pub queue_low: VecDeque<PacketId>,
    pub priority: bool,
    pub queue_bytes: u64,
    /// The packet being serialised and when it started.
    pub on_wire: Option<(PacketId, Time)>,
    /// Packets propagating, with their arrival times (non-decreasing).
    pub pipe: VecDeque<(Time, PacketId)>,
    pub last_arrival: Time,
    pub stats: LinkStats,
    /// Index of the pcap tap recording this link, if any.
    pub tap: Option<usize>,
}

impl LinkDir {
    /// Serialisation time of `size` IP bytes plus framing.
    pub fn tx_time(&self, size: u32) -> Time {
        let bits = (size + self.framing) as f64 * 8.0;
        (bits / self.rate_bps * 1e9).round() as Time
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
        let d = Delay::Schedule(vec![(0, 100), (1000, 200), (2000, 200)]);
        assert_eq!(d.at(0), 100);
        assert_eq!(d.at(500), 150);
        assert_eq!(d.at(1500), 200);
        assert_eq!(d.at(5000), 200);
        assert_eq!(d.max(), 200);
    }
}
