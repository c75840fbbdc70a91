//! Pacing, as Linux paces with its earliest departure time (`tcp_wstamp_ns`): a data segment
//! leaves no earlier than the previous one has at the pacing rate, the controller's (BBR) or
//! `max_pacing_rate`, whichever is lower. Whether a connection paces is decided once, when its
//! controller is chosen, so that unpaced connections pay nothing for it.

use super::output::RATE_HEADER_BYTES;
use super::timer::Timer;
use super::Connection;
use crate::cc::CongestionControl;
use crate::config::TcpConfig;
use crate::time::{ceil_to_u64, Time};

/// A paced connection's schedule.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Pacing {
    /// The next data segment leaves no earlier than this.
    pub next_departure: Time,
}

impl Pacing {
    /// Pacing for a connection with these settings and this controller: None when neither
    /// may ever set a rate.
    pub fn for_controller(cfg: &TcpConfig, cc: &dyn CongestionControl) -> Option<Pacing> {
        (cfg.max_pacing_rate.is_some() || cc.pacing_rate().is_some()).then(Pacing::default)
    }
}

impl Connection {
    /// The pacing rate in bytes per second: the controller's, at most `max_pacing_rate`
    /// (Linux: `sk_pacing_rate` capped by `SO_MAX_PACING_RATE`); None when not pacing.
    pub(super) fn pacing_rate(&self) -> Option<f64> {
        let cap = self.cfg.max_pacing_rate.map(|r| r.0 / 8.0);
        match (self.cc.pacing_rate(), cap) {
            (Some(r), Some(c)) => Some(r.min(c)),
            (r, c) => r.or(c),
        }
    }

    /// Whether a data segment may leave at `now`; if not, wake up when it may. Inline: a
    /// paced sender asks on every poll, and an unpaced one only tests `pacing`.
    #[inline]
    pub(super) fn pacing_allows(&mut self, now: Time) -> bool {
        match self.pacing {
            Some(p) if now < p.next_departure => !self.pacing_holds(p.next_departure),
            _ => true,
        }
    }

    /// The next departure is at `next`, later than now: hold the segment and wake up then,
    /// unless no rate is set (nothing to pace by).
    #[inline(never)]
    fn pacing_holds(&mut self, next: Time) -> bool {
        if self.pacing_rate().is_none() {
            return false;
        }
        self.timers.set_earliest(Timer::Pace, next);
        true
    }

    /// A data segment of `len` payload bytes left at `now`: the next may leave once this one
    /// has at the pacing rate (earliest departure time; headers counted as rate control does).
    pub(super) fn pace(&mut self, now: Time, len: u32) {
        let rate = self.pacing_rate().filter(|&r| r > 0.0);
        if let (Some(p), Some(rate)) = (&mut self.pacing, rate) {
            let bytes = len as u64 + RATE_HEADER_BYTES;
            let gap = ceil_to_u64(bytes as f64 * 1e9 / rate);
            p.next_departure = p.next_departure.max(now) + gap;
        }
    }
}
