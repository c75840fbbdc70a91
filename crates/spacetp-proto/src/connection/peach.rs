//! TCP-Peach+ (Akyildiz, Zhang & Fang, IEEE Commun. Lett. 2002; after TCP-Peach, Akyildiz,
//! Morabito & Palazzo, ToN 2001) probes spare capacity with low-priority NIL segments:
//!
//! - Jump Start: at connection start cwnd = 1 segment; besides it the sender paces
//!   rwnd - 1 NIL segments over one RTT.
//! - Quick Recovery: after a fast retransmit halves cwnd, the sender paces as many NIL
//!   segments as the window lost over one RTT.
//!
//! Every ACK of a NIL segment adds one segment to cwnd (up to the window before the loss, or
//! the receiver window), so after a link-error loss the window is back within one RTT, while
//! under congestion routers drop the low-priority NILs first and the halving stands.
//!
//! NIL segments carry copies of unacknowledged data (so one may also repair a loss). On the
//! wire they are marked with the CWR bit and their ACKs with ECE: TCP-Peach used a spare bit,
//! and spacetp implements no ECN, so these bits are free. The packet itself is low priority.

use super::timer::{Timer, TimerTable};
use super::{Connection, Sent};
use crate::time::Time;
use spacetp_wire::{flags, TcpHeader};

#[derive(Default, Debug)]
pub(crate) struct Peach {
    /// NIL segments left in the current burst.
    remaining: u32,
    /// Spacing of the burst (the next NIL segment is due at the table's `Timer::Peach`).
    gap: Time,
    /// A NIL segment is due now.
    pub pending: bool,
    /// cwnd may grow by NIL ACKs up to this (bytes).
    pub target: u64,
    /// Next position whose data the next NIL copies.
    pub cursor: u64,
    pub sent: u64,
    /// The running burst is Jump Start's (it may still widen to the receiver's real window).
    pub jump_start: bool,
}

/// A burst of NIL segments: `count` of them from `now`, paced over `rtt`, whose ACKs may
/// raise cwnd up to `target`; the first copies the data at `from`.
pub(crate) struct Burst {
    pub now: Time,
    pub count: u32,
    pub rtt: Time,
    pub target: u64,
    pub from: u64,
}

impl Peach {
    /// Pace `count` NIL segments over `rtt`, letting their ACKs raise cwnd to `target`.
    pub fn start_burst(&mut self, b: Burst, timers: &mut TimerTable) {
        self.remaining = b.count;
        self.target = b.target;
        self.cursor = b.from;
        self.gap = (b.rtt / b.count.max(1) as u64).max(1);
        timers.put(Timer::Peach, (b.count > 0).then_some(b.now));
    }

    /// The burst's timer fired (the table stopped it): a NIL segment is due, and the next
    /// one a gap later.
    pub fn on_timer(&mut self, now: Time, timers: &mut TimerTable) {
        self.pending = true;
        self.remaining = self.remaining.saturating_sub(1);
        timers.put(Timer::Peach, (self.remaining > 0).then_some(now + self.gap));
    }

    /// The receiver's real window became known on the first ACK after the handshake (the
    /// SYN-ACK's window is never scaled, RFC 7323): raise the target, and pace the NIL
    /// segments the larger window calls for over one more round trip `rtt`.
    pub fn widen(&mut self, now: Time, target: u64, mss: u64, rtt: Time, timers: &mut TimerTable) {
        self.jump_start = false; // once: the window is known now
        if target <= self.target {
            return;
        }
        let extra = ((target - self.target) / mss.max(1)) as u32;
        self.target = target;
        if timers.is_armed(Timer::Peach) {
            self.remaining += extra;
        } else if extra > 0 {
            self.remaining = extra;
            self.gap = (rtt / extra as u64).max(1);
            timers.set(Timer::Peach, now);
        }
    }

    /// Growth from one NIL ACK: one segment, up to the target.
    pub fn on_nil_ack(&self, cwnd: u64, mss: u64) -> u64 {
        if cwnd < self.target {
            (cwnd + mss).min(self.target)
        } else {
            cwnd
        }
    }
}

/// The TCP-Peach+ behaviour of a connection.
impl Connection {
    /// Jump Start: cwnd = 1 segment, and rwnd - 1 NIL segments paced over the handshake RTT
    /// whose ACKs open the window.
    pub(super) fn jump_start(&mut self, now: Time) {
        let Some(p) = &mut self.peach else { return };
        let mss = self.win.mss;
        let rtt = self.rtt.srtt().unwrap_or(self.cfg.initial_rto.0);
        let rwnd_segs = (self.snd_wnd / mss).max(1);
        self.win.cwnd = mss;
        let burst = Burst {
            now,
            count: (rwnd_segs - 1) as u32,
            rtt,
            target: rwnd_segs * mss,
            from: 1,
        };
        p.start_burst(burst, &mut self.timers);
        p.jump_start = true;
    }

    /// Jump Start was sized from the SYN-ACK's unscaled window; the first ACK after it gives
    /// the real one, `wnd`.
    pub(super) fn widen_jump_start(&mut self, now: Time, wnd: u64) {
        let Some(p) = &mut self.peach else { return };
        if p.jump_start {
            let rwnd = wnd / self.win.mss * self.win.mss;
            let rtt = self.rtt.srtt().unwrap_or(self.cfg.initial_rto.0);
            p.widen(now, rwnd, self.win.mss, rtt, &mut self.timers);
        }
    }

    /// Quick Recovery: after the halving, pace as many NIL segments as the window lost over
    /// one RTT; their ACKs rebuild it if the loss was not congestion.
    pub(super) fn quick_recovery(&mut self, now: Time, cwnd_before: u64) {
        let Some(p) = &mut self.peach else { return };
        let lost = cwnd_before.saturating_sub(self.win.cwnd) / self.win.mss;
        let rtt = self.rtt.srtt().unwrap_or(self.cfg.initial_rto.0);
        let burst = Burst {
            now,
            count: lost as u32,
            rtt,
            target: cwnd_before,
            from: self.snd_una,
        };
        p.start_burst(burst, &mut self.timers);
        p.jump_start = false;
    }

    /// An ACK marked ECE answers a NIL segment: it grows cwnd by one segment. Returns whether
    /// it was one (it is then no duplicate ACK).
    pub(super) fn on_nil_ack(&mut self, hdr: &TcpHeader) -> bool {
        let Some(p) = self.peach.as_ref().filter(|_| hdr.has(flags::ECE)) else {
            return false;
        };
        self.win.cwnd = p.on_nil_ack(self.win.cwnd, self.win.mss);
        true
    }

    /// A NIL segment: a low-priority copy of unacknowledged data (or of the last segment
    /// sent, when all is acknowledged), marked with CWR.
    pub(super) fn transmit_nil(&mut self, now: Time, out: &mut TcpHeader) -> Sent {
        let seg = self.seg_size as u64;
        let data_top = self.snd_max.min(self.data_end);
        let p = self.peach.as_mut().expect("peach enabled");
        p.pending = false;
        p.sent += 1;
        if p.cursor < self.snd_una || p.cursor >= data_top {
            p.cursor = self.snd_una;
        }
        let mut pos = p.cursor;
        if pos >= data_top {
            pos = data_top.saturating_sub(seg).max(1);
        }
        let len = data_top.saturating_sub(pos).min(seg) as u32;
        p.cursor = pos + len as u64;
        self.sent.stop_timing(); // a copy in flight spoils the RTT sample
        self.stats.nil_segments_sent += 1;
        self.header(out, flags::ACK | flags::CWR, pos, now);
        let mut t = self.emit(out, len, pos, false);
        t.low_priority = true;
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_is_paced_over_one_rtt() {
        let mut p = Peach::default();
        let mut timers = TimerTable::default();
        let burst = Burst {
            now: 1000,
            count: 4,
            rtt: 400,
            target: 8000,
            from: 1,
        };
        p.start_burst(burst, &mut timers);
        let mut times = vec![];
        let mut now = 1000;
        while let Some(t) = timers.get(Timer::Peach) {
            now = t.max(now);
            timers.stop(Timer::Peach);
            p.on_timer(now, &mut timers);
            assert!(p.pending);
            p.pending = false;
            times.push(now);
        }
        assert_eq!(times, vec![1000, 1100, 1200, 1300]);
        assert_eq!(p.on_nil_ack(7500, 1000), 8000, "capped at the target");
        assert_eq!(p.on_nil_ack(8000, 1000), 8000);
    }
}
