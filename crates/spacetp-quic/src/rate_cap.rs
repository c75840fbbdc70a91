//! `quic.max_pacing_rate`: a cap on how fast one connection's datagrams leave, over and
//! above quinn's own pacer (which paces at the controller's rate and has no cap to set).
//! It is what quiche's `max_pacing_rate` and Linux's `SO_MAX_PACING_RATE` (with the fq
//! qdisc, which the simulator's `tcp.max_pacing_rate` follows) do: each datagram leaves
//! once the previous one, headers included, has had its time at the cap. An operator who
//! knows the link's rate sets it there, so that BBR's startup (gain 2.89) cannot overrun a
//! short queue.
//!
//! Times are nanoseconds on the caller's clock (simulated time, or an `Instant`'s offset).

use spacetp_proto::SEC;

/// IPv4 and UDP headers around a datagram: what the cap counts besides the payload.
pub const IP_UDP_HEADERS: u64 = 28;

#[derive(Clone, Debug)]
pub struct RateCap {
    bits_per_sec: f64,
    /// When the next datagram may leave.
    next_send: u64,
    /// A datagram was held back: the caller should come back at `next_send`.
    holding: bool,
}

impl RateCap {
    /// A cap of `bits_per_sec` (> 0, checked by the settings).
    pub fn new(bits_per_sec: f64) -> RateCap {
        RateCap {
            bits_per_sec,
            next_send: 0,
            holding: false,
        }
    }

    /// Whether a datagram may leave at `now`. When it may not, `wakeup` says when.
    pub fn ready(&mut self, now: u64) -> bool {
        self.holding = now < self.next_send;
        !self.holding
    }

    /// A datagram of `payload` bytes left at `now`: the next waits for its time at the cap.
    /// An idle sender earns no credit (a burst after a pause still leaves at the cap).
    pub fn sent(&mut self, now: u64, payload: usize) {
        let bits = (payload as u64 + IP_UDP_HEADERS) as f64 * 8.0;
        let gap = (bits / self.bits_per_sec * SEC as f64).ceil() as u64;
        self.next_send = self.next_send.max(now) + gap;
        self.holding = false;
    }

    /// When a held-back datagram may leave (None: nothing is held back).
    pub fn wakeup(&self) -> Option<u64> {
        self.holding.then_some(self.next_send)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datagrams_leave_one_wire_time_apart_at_the_cap() {
        // 1172 B of payload + 28 B of headers = 1200 B = 9600 bits: 9.6 ms at 1 Mb/s.
        let mut c = RateCap::new(1e6);
        assert!(c.ready(0));
        c.sent(0, 1172);
        assert!(!c.ready(5_000_000), "a second datagram 5 ms later waits");
        assert_eq!(c.wakeup(), Some(9_600_000));
        assert!(c.ready(9_600_000));
        c.sent(9_600_000, 1172);
        assert_eq!(c.wakeup(), None, "nothing held back once sent");
        assert!(!c.ready(19_000_000));
        assert_eq!(c.wakeup(), Some(19_200_000));
    }

    #[test]
    fn an_idle_sender_earns_no_burst() {
        let mut c = RateCap::new(1e6);
        c.sent(0, 1172);
        // A second later the first datagram leaves at once, the next a wire time after it.
        assert!(c.ready(1_000_000_000));
        c.sent(1_000_000_000, 1172);
        assert!(!c.ready(1_000_000_001));
        assert_eq!(c.wakeup(), Some(1_009_600_000));
    }
}
