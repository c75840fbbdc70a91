//! What the emulator reports: per direction the link's counters, what was read and written,
//! and how late the writes were against the model's due times (a histogram of lateness).

use super::HIST_US;
use serde::Serialize;
use spacetp_proto::Time;
use spacetp_sim::link::LinkStats;

/// Percentiles of (actual - intended) write time of the delivered packets, in microseconds.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Lateness {
    pub count: u64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
}

pub(super) struct Hist {
    buckets: Vec<u64>,
    count: u64,
    sum_ns: u128,
    max_ns: Time,
}

impl Hist {
    pub fn new() -> Self {
        Hist {
            buckets: vec![0; HIST_US + 1],
            count: 0,
            sum_ns: 0,
            max_ns: 0,
        }
    }

    pub fn add(&mut self, ns: Time) {
        let b = ((ns / 1000) as usize).min(HIST_US);
        self.buckets[b] += 1;
        self.count += 1;
        self.sum_ns += ns as u128;
        self.max_ns = self.max_ns.max(ns);
    }

    /// Upper edge of the bucket holding quantile `q` (conservative by < 1 us).
    fn quantile_us(&self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).max(1);
        let mut acc = 0;
        for (i, &n) in self.buckets.iter().enumerate() {
            acc += n;
            if acc >= rank {
                return if i == HIST_US {
                    self.max_ns as f64 / 1e3
                } else {
                    ((i + 1) as f64).min(self.max_ns as f64 / 1e3)
                };
            }
        }
        self.max_ns as f64 / 1e3
    }

    pub fn summary(&self) -> Lateness {
        Lateness {
            count: self.count,
            mean_us: if self.count == 0 {
                0.0
            } else {
                self.sum_ns as f64 / self.count as f64 / 1e3
            },
            p50_us: self.quantile_us(0.5),
            p90_us: self.quantile_us(0.9),
            p99_us: self.quantile_us(0.99),
            p999_us: self.quantile_us(0.999),
            max_us: self.max_ns as f64 / 1e3,
        }
    }
}

/// Counters of one direction.
#[derive(Clone, Debug, Serialize)]
pub struct DirReport {
    /// The simulator's counters of this direction (`name` is `a->b`).
    #[serde(flatten)]
    pub link: LinkStats,
    pub rate_bps: f64,
    /// Propagation delay at the start, seconds.
    pub delay_s: f64,
    /// Packets and bytes read from the sending side's fd.
    pub rx_packets: u64,
    pub rx_bytes: u64,
    /// Packets larger than the link's `mtu` (dropped before the queue).
    pub oversize_drops: u64,
    /// Packets written to the receiving side's fd (`delivered_packets` less write errors).
    pub written_packets: u64,
    pub written_bytes: u64,
    pub write_errors: u64,
    /// Lateness of the writes against the model's due times.
    pub lateness: Lateness,
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Wall time the emulator ran, seconds.
    pub elapsed_s: f64,
    /// `duration`, `signal` or `error: ...`.
    pub stopped: String,
    /// Whether the loop ran under SCHED_FIFO (asked for and allowed).
    pub realtime: bool,
    /// Pauses forced under SCHED_FIFO after [`super::RT_BUSY_NS`] without sleep (the loop was
    /// saturated: packets due closer together than it can sleep between).
    pub rt_pauses: u64,
    /// Link-state notices written (one per notify fd per outage start or end).
    pub link_notices: u64,
    /// Forward (`between[0] -> between[1]`, read from fd a) then back.
    pub directions: Vec<DirReport>,
}
