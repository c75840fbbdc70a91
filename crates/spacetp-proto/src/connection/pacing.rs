//! Pacing, as Linux paces with its earliest departure time (`tcp_wstamp_ns`): a departure
//! leaves no earlier than the previous one has at the pacing rate, the controller's (BBR) or
//! `max_pacing_rate`, whichever is lower. A departure is one segment, or as many as the
//! controller sends together (`pacing_burst`: Linux's TSO/GSO packet, the BBR draft's send
//! quantum), all at one instant; the next waits for all of them. A departure carries one
//! contiguous range of one kind, new data or retransmissions (a TSO/GSO packet; in Linux one
//! skb), so a segment that does not continue it waits for the next. A Linux TSO sender held
//! by its window may also wait for an ACK to send a fuller packet (`tso_defers`). Whether a
//! connection paces is decided once, when its controller is chosen, so that unpaced
//! connections pay nothing.
//!
//! What a departure counts: a controller that paces itself is paced as Linux's TCP paces
//! (`tcp_update_skb_after_send`: the write queue's skb, which holds no headers), by payload
//! alone; `max_pacing_rate` alone paces as the fq qdisc does, each packet with its headers.

use super::output::RATE_HEADER_BYTES;
use super::timer::Timer;
use super::Connection;
use crate::cc::CongestionControl;
use crate::config::TcpConfig;
use crate::time::{ceil_to_u64, Time, MS};

/// A paced connection's schedule.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Pacing {
    /// The next departure leaves no earlier than this.
    pub next_departure: Time,
    /// The instant of the current departure, and how many more segments it may carry.
    burst_at: Time,
    burst_left: u64,
    /// Where the current departure's next segment must start, and whether it resends.
    burst_next: u64,
    burst_retx: bool,
    /// Bytes a departure counts beyond its payload: 0, or the headers (`max_pacing_rate`).
    header_bytes: u64,
    /// Its departures are Linux TSO packets (`CongestionControl::linux_tso`).
    linux_tso: bool,
}

impl Pacing {
    /// Pacing for a connection with these settings and this controller: None when neither
    /// may ever set a rate.
    pub fn for_controller(cfg: &TcpConfig, cc: &dyn CongestionControl) -> Option<Pacing> {
        let own = cc.pacing_rate().is_some();
        (cfg.max_pacing_rate.is_some() || own).then(|| Pacing {
            header_bytes: if own { 0 } else { RATE_HEADER_BYTES },
            linux_tso: cc.linux_tso(),
            ..Pacing::default()
        })
    }

    /// A departure under way at `now` may carry more.
    fn joins_burst(&self, now: Time) -> bool {
        self.burst_left > 0 && self.burst_at == now
    }

    /// The segment from `pos` continues the departure under way at `now`.
    fn continues(&self, now: Time, pos: u64, retx: bool) -> bool {
        self.joins_burst(now) && pos == self.burst_next && retx == self.burst_retx
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
            Some(p) if now < p.next_departure && !p.joins_burst(now) => {
                !self.pacing_holds(p.next_departure)
            }
            _ => true,
        }
    }

    /// Whether the segment from `pos`, chosen after `pacing_allows`, may leave at `now`: a
    /// departure under way takes only the segment that continues it (contiguous, of its
    /// kind); another ends it, and waits with everything else for the next departure.
    #[inline]
    pub(super) fn departure_takes(&mut self, now: Time, pos: u64) -> bool {
        match self.pacing {
            Some(p) if now < p.next_departure => self.departure_continues(now, pos),
            _ => true,
        }
    }

    /// Before the next departure time, only the segment that continues the departure under
    /// way at `now` leaves; any other ends it and waits (unless no rate is set).
    #[inline(never)]
    fn departure_continues(&mut self, now: Time, pos: u64) -> bool {
        let retx = pos < self.snd_max;
        let Some(p) = &mut self.pacing else {
            return true;
        };
        if p.continues(now, pos, retx) {
            return true;
        }
        p.burst_left = 0;
        let next = p.next_departure;
        !self.pacing_holds(next)
    }

    /// Linux's TSO deferral (`tcp_tso_should_defer`, Linux 6.18), for a controller whose
    /// departures are Linux TSO packets: a sender whose windows leave `room` bytes, less than
    /// one TSO packet and less than a third of the window, waits for the next ACK to open
    /// more, so that it sends fewer, larger departures. Not while recovering or after a
    /// timeout (Linux: from the Recovery state on), nor for a single segment, nor past 1 ms
    /// after the departure time (the last departure was not recent), nor when the oldest
    /// data in flight is not acknowledged within min(srtt / 2, 1 ms) of now by its round trip
    /// (the ACK would come too late: "tcp: fix tcp_tso_should_defer() vs large RTT", 2025),
    /// nor for the last of the data or of a record when the windows hold all of it.
    #[inline]
    pub(super) fn tso_defers(&self, now: Time, room: u64) -> bool {
        match self.pacing {
            Some(p) if p.linux_tso => self.linux_tso_defers(p, now, room),
            _ => false,
        }
    }

    /// `tso_defers` for a Linux TSO sender: the cheap tests first, as it asks on every poll
    /// that has room.
    #[inline(never)]
    fn linux_tso_defers(&self, p: Pacing, now: Time, room: u64) -> bool {
        if p.joins_burst(now) || now > p.next_departure + MS {
            return false;
        }
        if room >= self.snd_wnd.min(self.win.cwnd) / 3 {
            return false; // sysctl_tcp_tso_win_divisor: a third of the window is enough
        }
        let mss = self.seg_size as u64;
        let end = self
            .record_end_after(self.snd_nxt)
            .unwrap_or(u64::MAX)
            .min(self.data_end);
        let left = end.saturating_sub(self.snd_nxt);
        if left <= mss {
            return false; // one segment: no TSO packet to fill
        }
        let in_loss = self.control.as_ref().is_some_and(|c| c.in_loss());
        if self.in_recovery() || in_loss || self.snd_nxt < self.snd_max {
            return false;
        }
        let ack_near = match (self.sent.oldest_sent_at(), self.rtt.srtt()) {
            (Some(head), Some(srtt)) => (head + srtt).saturating_sub(now) <= (srtt / 2).min(MS),
            _ => false,
        };
        let Some(rate) = self.pacing_rate().filter(|&r| r > 0.0) else {
            return false;
        };
        let segs = self.departure_segments(rate);
        if !ack_near || segs <= 1 || room >= segs * mss {
            return false; // tcp_write_xmit defers only a TSO packet
        }
        // The packet would carry the rest of the data (FIN) or of a record (EOR), and the
        // windows hold it all: it will not grow, so it leaves.
        let last = end == self.data_end && self.app_closed || end < self.data_end;
        !(last && left <= segs * mss && room > left)
    }

    /// Segments a departure carries at a pacing rate of `rate` bytes per second (the
    /// controller's `pacing_burst`: Linux's TSO packet, the draft's send quantum).
    fn departure_segments(&self, rate: f64) -> u64 {
        self.cc
            .pacing_burst(rate, self.rtt.min_rtt(), self.seg_size as u64)
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

    /// The data segment `pos..pos + len` (a retransmission if `retx`) left at `now`: the
    /// next departure may leave once this one has at the pacing rate (earliest departure
    /// time). The first segment of a departure sizes it (`pacing_burst`), unless it left
    /// before its time (a loss probe is not held): then it leaves alone, and what follows
    /// waits.
    pub(super) fn pace(&mut self, now: Time, pos: u64, len: u32, retx: bool) {
        let (Some(p), Some(rate)) = (self.pacing, self.pacing_rate().filter(|&r| r > 0.0)) else {
            return;
        };
        let starts = !p.continues(now, pos, retx);
        let burst = if starts && now >= p.next_departure {
            self.departure_segments(rate).max(1)
        } else {
            1
        };
        let Some(p) = &mut self.pacing else {
            return;
        };
        let mut bytes = len as u64;
        if starts {
            p.burst_at = now;
            p.burst_left = burst;
            p.burst_retx = retx;
            p.next_departure = p.next_departure.max(now);
            bytes += p.header_bytes;
        }
        p.burst_next = pos + len as u64;
        p.burst_left -= 1;
        p.next_departure += ceil_to_u64(bytes as f64 * 1e9 / rate);
    }
}
