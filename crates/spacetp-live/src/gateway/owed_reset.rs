//! The RST a flow owes its peer gateway after this side aborted, repeated until it has
//! surely crossed a lossy link.
//!
//! TCP sends an abort's RST once, and nothing acknowledges it. A peer that sends nothing
//! (its end host only receives) never draws the answer to a lost one, so its end host would
//! wait on a dead connection until keepalives gave up, minutes later. The flow therefore
//! sends it `REPEATS` more times, the first after twice the smoothed RTT (at least
//! `MIN_INTERVAL`), each next one after twice as long: with 5% loss all five are lost once
//! in 3 million aborts. The repeats alternate between what the peer acknowledged last and
//! what we sent last (its next expected number is one of them unless data was in flight
//! with holes; then it answers with a challenge ACK, which the closed connection answers
//! with the exact RST).

use spacetp_proto::{Connection, Time, MS};

/// Repeats after the first RST.
const REPEATS: u32 = 4;
/// The shortest wait before the first repeat (loopback and LAN round trips).
const MIN_INTERVAL: Time = 50 * MS;

#[derive(Clone, Copy, Debug)]
pub(super) struct OwedReset {
    /// Repeats still to send, and when the next one is due.
    left: u32,
    next: Time,
    interval: Time,
    /// When the last RST went (the flow lingers past it for challenge ACKs).
    pub(super) last: Time,
}

impl OwedReset {
    /// What `conn`, aborted by this side at `now` (its first RST on its way), still owes;
    /// None if it owes nothing (the peer reset it, or it closed).
    pub(super) fn after_abort(conn: &Connection, now: Time) -> Option<Self> {
        if !conn.we_aborted() {
            return None;
        }
        // Without an RTT sample (the handshake never completed), the RTO stands in for it.
        let rtt = conn.rtt();
        let interval = rtt.srtt().map_or(rtt.rto(), |s| 2 * s).max(MIN_INTERVAL);
        Some(OwedReset {
            left: REPEATS,
            next: now + interval,
            interval,
            last: now,
        })
    }

    /// When the next repeat is due, if one is.
    pub(super) fn due(&self) -> Option<Time> {
        (self.left > 0).then_some(self.next)
    }

    /// When the last repeat goes.
    pub(super) fn end(&self) -> Time {
        let mut t = self.next;
        let mut d = self.interval;
        for _ in 1..self.left {
            d *= 2;
            t += d;
        }
        t
    }

    /// Send the next repeat through `conn` if it is due.
    pub(super) fn on_time(&mut self, conn: &mut Connection, now: Time) {
        if self.due().is_none_or(|t| now < t) {
            return;
        }
        conn.repeat_reset(self.left.is_multiple_of(2));
        self.left -= 1;
        self.interval *= 2;
        self.next = now + self.interval;
        self.last = now;
    }
}
