//! HyStart (Ha & Rhee, "Taming the elephants: New TCP slow start", Computer Networks 2011),
//! as Linux's `tcp_cubic.c` runs it (`hystart_update`): slow start ends, ssthresh = cwnd,
//! before the queue overflows, when either
//! - the ACK train: ACKs arriving at most 2 ms apart (`hystart_ack_delta_us`) have kept
//!   coming for more than half the minimum RTT since the round began (the pipe is full); or
//! - the delay: the least RTT of the round's first 8 samples exceeds the minimum RTT by
//!   more than min_RTT/8, clamped to [4, 16] ms (a queue is building).
//!
//! Only from 16 segments of cwnd on (`hystart_low_window`); a round ends when the ACK passes
//! what was sent when it began. Linux's pacing-aware threshold (`hystart_ack_delay`) is
//! taken for an unpaced sender, as CUBIC is here.

use super::AckEvent;
use crate::time::{Time, MS};

const LOW_WINDOW_SEGMENTS: u64 = 16;
const ACK_DELTA: Time = 2 * MS;
const MIN_SAMPLES: u32 = 8;
const DELAY_MIN: Time = 4 * MS;
const DELAY_MAX: Time = 16 * MS;

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct HyStart {
    /// The round: when it began, the position that ends it, the last ACK of its train.
    round_start: Time,
    end_seq: u64,
    last_ack: Time,
    /// The least RTT of this round's samples, and how many were taken.
    curr_rtt: Option<Time>,
    samples: u32,
    /// The least RTT seen (`delay_min`).
    delay_min: Option<Time>,
    /// Slow start was ended by HyStart (until a loss resets it).
    found: bool,
}

impl HyStart {
    /// A loss or timeout: start over (`bictcp_reset`).
    pub fn reset(&mut self) {
        *self = HyStart {
            delay_min: self.delay_min,
            ..Default::default()
        };
    }

    fn new_round(&mut self, ev: &AckEvent) {
        self.round_start = ev.now;
        self.last_ack = ev.now;
        self.end_seq = ev.snd_nxt;
        self.curr_rtt = None;
        self.samples = 0;
    }

    /// An ACK in slow start with cwnd `cwnd_segments`: true when slow start should end now.
    pub fn on_ack(&mut self, ev: &AckEvent, cwnd_segments: u64) -> bool {
        if let Some(rtt) = ev.rtt {
            self.delay_min = Some(self.delay_min.map_or(rtt, |m| m.min(rtt)));
        }
        if self.end_seq == 0 || ev.ack > self.end_seq {
            self.new_round(ev);
        }
        if self.found || cwnd_segments < LOW_WINDOW_SEGMENTS {
            return false;
        }
        let Some(delay_min) = self.delay_min else {
            return false;
        };
        if ev.now.saturating_sub(self.last_ack) <= ACK_DELTA {
            self.last_ack = ev.now;
            if ev.now - self.round_start > delay_min / 2 {
                self.found = true;
            }
        }
        if let Some(rtt) = ev.rtt {
            self.curr_rtt = Some(self.curr_rtt.map_or(rtt, |c| c.min(rtt)));
            if self.samples < MIN_SAMPLES {
                self.samples += 1;
            } else if self.curr_rtt.unwrap_or(0)
                > delay_min + (delay_min / 8).clamp(DELAY_MIN, DELAY_MAX)
            {
                self.found = true;
            }
        }
        self.found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(now: Time, ack: u64, snd_nxt: u64, rtt: Time) -> AckEvent {
        AckEvent {
            now,
            ack,
            snd_nxt,
            rtt: Some(rtt),
            ..Default::default()
        }
    }

    #[test]
    fn a_growing_queue_ends_slow_start_once_the_rtt_rises_by_an_eighth_of_the_minimum() {
        // min RTT 600 ms: the threshold is clamped to 16 ms.
        let mut h = HyStart::default();
        let mut t = 0;
        // Round 1: RTT 600 ms, ACKs 3 ms apart (no train).
        for k in 0..20u64 {
            t += 3 * MS;
            assert!(!h.on_ack(&ack(t, 1000 * (k + 1), 50_000, 600 * MS), 20));
        }
        // Round 2: RTT 610 ms is within the threshold ...
        for k in 0..20u64 {
            t += 3 * MS;
            assert!(!h.on_ack(&ack(t, 51_000 + 1000 * k, 100_000, 610 * MS), 40));
        }
        // ... round 3 at 617 ms is not: found after the 8 samples.
        let found: Vec<bool> = (0..12u64)
            .map(|k| {
                t += 3 * MS;
                h.on_ack(&ack(t, 101_000 + 1000 * k, 150_000, 617 * MS), 80)
            })
            .collect();
        assert!(!found[7] && found[8], "{found:?}");
    }

    #[test]
    fn a_train_of_close_acks_longer_than_half_the_min_rtt_ends_slow_start() {
        // min RTT 40 ms: ACKs 1 ms apart for more than 20 ms of a round.
        let mut h = HyStart::default();
        let results: Vec<bool> = (1..=30u64)
            .map(|k| h.on_ack(&ack(k * MS, 1000 * k, 100_000, 40 * MS), 32))
            .collect();
        let first = results.iter().position(|&f| f).expect("found");
        assert!((20..=22).contains(&first), "found at ACK {first}");
    }

    #[test]
    fn nothing_below_sixteen_segments() {
        let mut h = HyStart::default();
        for k in 1..=100u64 {
            assert!(!h.on_ack(&ack(k * MS, 1000 * k, 1_000_000, 40 * MS + k * MS), 15));
        }
    }
}
