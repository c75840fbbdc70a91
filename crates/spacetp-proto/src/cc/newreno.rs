//! RFC 5681 AIMD: slow start adds min(acked, SMSS) per ACK; congestion avoidance adds
//! SMSS*SMSS/cwnd per ACK (eq. 3), about one segment per RTT. With RFC 3465 byte counting
//! (`abc_limit`, as Linux's `tcp_slow_start` and `tcp_cong_avoid_ai` count segments),
//! slow start adds what was acknowledged up to L SMSS and avoidance SMSS x acked / cwnd, one
//! segment per window of bytes acknowledged, however many ACKs carried them.

use super::{AckEvent, CongestionControl, ControllerFactory, Window};

#[derive(Default, Debug)]
pub struct NewReno;

/// It has no settings: the controller is its own factory.
impl ControllerFactory for NewReno {
    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(NewReno)
    }
}

impl CongestionControl for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }

    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        if w.in_slow_start() {
            w.cwnd += ev.slow_start_increase(w.mss);
        } else if ev.abc_limit.is_some() {
            w.cwnd += (w.mss * ev.acked / w.cwnd).max(1);
        } else {
            w.cwnd += (w.mss * w.mss / w.cwnd).max(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_util::{acked, window};

    #[test]
    fn slow_start_adds_at_most_one_mss_per_ack() {
        let mut w = window(1000, u64::MAX, 1000);
        NewReno.on_ack(&mut w, &acked(2000));
        assert_eq!(w.cwnd, 2000);
        NewReno.on_ack(&mut w, &acked(500));
        assert_eq!(w.cwnd, 2500);
    }

    #[test]
    fn avoidance_adds_one_mss_per_window_of_acks() {
        let mut w = window(10_000, 5_000, 1000);
        for _ in 0..10 {
            NewReno.on_ack(&mut w, &acked(1000));
        }
        // 10 ACKs at cwnd ~10 segments: growth a little under one segment (eq. 3 is per ACK)
        assert!(w.cwnd > 10_900 && w.cwnd <= 11_000, "{}", w.cwnd);
    }

    #[test]
    fn byte_counting_grows_one_segment_per_window_acknowledged_whatever_the_ack_count() {
        // Delayed ACKs (2 segments each): per-ACK counting grows half as fast (RFC 3465 2.1).
        let grow = |abc: Option<u32>| {
            let mut w = window(10_000, u64::MAX, 1000);
            for _ in 0..5 {
                NewReno.on_ack(
                    &mut w,
                    &AckEvent {
                        acked: 2000,
                        abc_limit: abc,
                        ..Default::default()
                    },
                );
            }
            let slow = w.cwnd;
            let mut w = window(20_000, 10_000, 1000);
            for _ in 0..10 {
                NewReno.on_ack(
                    &mut w,
                    &AckEvent {
                        acked: 2000,
                        abc_limit: abc,
                        ..Default::default()
                    },
                );
            }
            (slow, w.cwnd)
        };
        let (slow, avoid) = grow(None);
        assert_eq!(slow, 15_000, "1 SMSS per ACK: x1.5 per window");
        assert!(
            (20_450..=20_500).contains(&avoid),
            "{avoid}: half a segment"
        );
        let (slow, avoid) = grow(Some(2));
        assert_eq!(slow, 20_000, "slow start doubles per window");
        assert!((20_950..=21_000).contains(&avoid), "{avoid}");
    }

    #[test]
    fn loss_halves_flight_with_two_segment_floor() {
        let mut r = NewReno;
        let w = window(10_000, u64::MAX, 1000);
        assert_eq!(r.ssthresh_after_loss(&w, 10_000, 0), 5_000);
        assert_eq!(r.ssthresh_after_loss(&w, 3_000, 0), 2_000);
        let mut w2 = w;
        r.on_timeout(&mut w2, 8_000, 0);
        assert_eq!((w2.cwnd, w2.ssthresh), (1000, 4000));
    }
}
