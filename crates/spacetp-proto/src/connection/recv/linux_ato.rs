//! Linux's delayed-ACK timing (`adaptive_ack_delay`), as a 6.x kernel has it:
//! - `tcp_event_data_recv` (tcp_input.c): the ACK timeout `ato` follows the gap `m` between
//!   in-order data segments, starting at TCP_ATO_MIN (our `ack_delay`, 40 ms): a gap of at
//!   most ATO_MIN/2 pulls it to ato/2 + ATO_MIN/2, a gap below ato to ato/2 + m (at most the
//!   RTO); a gap longer than the RTO means the sender idled, and quick-ACK mode restarts
//!   (`tcp_incr_quickack`: rcv_wnd / (2 MSS) segments, at least 2, at most `quick_acks`).
//! - `tcp_delack_timer_handler` (tcp_timer.c): a delayed ACK that waited for its timer doubles
//!   ato (at most the RTO). Interactive ("pingpong") mode is not modelled: the receivers here
//!   send no data of their own while they receive.
//! - `tcp_send_delayed_ack` (tcp_output.c): the timer waits ato, but once ato exceeds
//!   ATO_MIN at most max(SRTT, 40 ms) and 500 ms, and never more than TCP_DELACK_MAX (200 ms).

use crate::time::{Time, MS};

const DELACK_MIN: Time = 40 * MS;
const DELACK_MAX: Time = 200 * MS;
const HALF_SECOND: Time = 500 * MS;

pub(crate) struct LinuxAto {
    ato_min: Time,
    ato: Time,
    last_in_order: Option<Time>,
}

impl LinuxAto {
    pub fn new(ato_min: Time) -> Self {
        LinuxAto {
            ato_min,
            ato: ato_min,
            last_in_order: None,
        }
    }

    /// In-order data arrived at `now`. Returns true when the gap since the previous in-order
    /// data exceeded `rto`: the sender was idle and the receiver goes back to quick ACKs.
    pub fn on_in_order_data(&mut self, now: Time, rto: Time) -> bool {
        let Some(last) = self.last_in_order.replace(now) else {
            self.ato = self.ato_min;
            return false;
        };
        let m = now.saturating_sub(last);
        if m <= self.ato_min / 2 {
            self.ato = self.ato / 2 + self.ato_min / 2;
        } else if m < self.ato {
            self.ato = (self.ato / 2 + m).min(rto);
        } else if m > rto {
            return true;
        }
        false
    }

    /// The delayed-ACK timer fired with an ACK pending: the ACKs come slower than ato said.
    pub fn on_timer(&mut self, rto: Time) {
        self.ato = (2 * self.ato).min(rto).max(self.ato_min);
    }

    /// How long the next delayed ACK waits.
    pub fn delay(&self, srtt: Option<Time>) -> Time {
        let mut ato = self.ato;
        if ato > DELACK_MIN {
            let max_ato = srtt.map_or(HALF_SECOND, |s| s.clamp(DELACK_MIN, HALF_SECOND));
            ato = ato.min(max_ato);
        }
        ato.min(DELACK_MAX)
    }

    /// Quick-ACK mode ended (`tcp_dec_quickack_mode`): ato starts again from its floor.
    pub fn on_quick_acks_done(&mut self) {
        self.ato = self.ato_min;
    }

    #[cfg(test)]
    pub fn ato(&self) -> Time {
        self.ato
    }
}

/// Quick ACKs granted on entering quick-ACK mode (`tcp_incr_quickack`).
pub(crate) fn quick_acks_for(window: u64, mss: u64, cap: u32) -> u32 {
    let n = (window / (2 * mss.max(1))).min(u32::MAX as u64) as u32;
    (if n == 0 { 2 } else { n }).min(cap)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RTO: Time = 1000 * MS;

    #[test]
    fn back_to_back_segments_hold_ato_at_its_floor() {
        let mut a = LinuxAto::new(40 * MS);
        for i in 0..50 {
            assert!(!a.on_in_order_data(i * MS, RTO));
        }
        assert_eq!(a.ato(), 40 * MS);
        assert_eq!(a.delay(Some(600 * MS)), 40 * MS);
    }

    #[test]
    fn sparse_segments_raise_ato_toward_the_gap_and_the_rtt_caps_the_wait() {
        // 64 kb/s of 1500-byte segments: one every 187.5 ms, more than ato but below the RTO:
        // ato is left alone by the arrivals, and each timer that fires doubles it.
        let mut a = LinuxAto::new(40 * MS);
        a.on_in_order_data(0, RTO);
        a.on_in_order_data(30 * MS, RTO); // 30 ms < ato: ato = 20 + 30 = 50 ms
        assert_eq!(a.ato(), 50 * MS);
        a.on_timer(RTO);
        assert_eq!(a.ato(), 100 * MS);
        assert_eq!(a.delay(Some(600 * MS)), 100 * MS);
        assert_eq!(
            a.delay(Some(60 * MS)),
            60 * MS,
            "max(SRTT, 40 ms) caps the wait"
        );
        for _ in 0..5 {
            a.on_timer(RTO);
        }
        assert_eq!(a.ato(), RTO, "doubling stops at the RTO");
        assert_eq!(a.delay(Some(3000 * MS)), 200 * MS, "TCP_DELACK_MAX");
    }

    #[test]
    fn a_gap_longer_than_the_rto_restarts_quick_acks() {
        let mut a = LinuxAto::new(40 * MS);
        a.on_in_order_data(0, RTO);
        assert!(!a.on_in_order_data(900 * MS, RTO));
        assert!(a.on_in_order_data(2000 * MS, RTO));
    }

    #[test]
    fn quick_acks_follow_the_window_between_two_and_the_cap() {
        assert_eq!(quick_acks_for(65_160, 1448, 16), 16);
        assert_eq!(quick_acks_for(8_688, 1448, 16), 3);
        assert_eq!(quick_acks_for(1_000, 1448, 16), 2);
        assert_eq!(quick_acks_for(1_000, 1448, 1), 1);
    }
}
