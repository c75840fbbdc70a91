//! What the sender remembers of the data it sent, for round-trip-time samples: the segment
//! timed for the RFC 6298 estimator (one per round trip) and every new-data segment in flight
//! for the congestion controller (a sample per ACK: Vegas needs several per round trip, as
//! ns-3 and Linux keep). Karn's rule: a retransmission spoils the samples of what it covers.

use crate::time::Time;
use std::collections::VecDeque;

/// One new-data segment in flight.
#[derive(Clone, Copy, Debug)]
struct SentSegment {
    start: u64,
    end: u64,
    sent_at: Time,
    /// Never retransmitted, so its ACK times it (Karn).
    timeable: bool,
}

#[derive(Debug, Default)]
pub(crate) struct SentLog {
    in_flight: VecDeque<SentSegment>,
    /// The segment end timed for the estimator, and when it was sent.
    timed: Option<(u64, Time)>,
}

impl SentLog {
    /// New data `[start, end)` left at `now`.
    pub fn on_sent(&mut self, start: u64, end: u64, now: Time) {
        self.timed.get_or_insert((end, now));
        self.in_flight.push_back(SentSegment {
            start,
            end,
            sent_at: now,
            timeable: true,
        });
    }

    /// When the oldest new data still in flight was sent.
    pub fn oldest_sent_at(&self) -> Option<Time> {
        self.in_flight.front().map(|s| s.sent_at)
    }

    /// `[start, end)` was sent again: an ACK covering it no longer times its first
    /// transmission.
    pub fn on_resent(&mut self, start: u64, end: u64) {
        self.timed = None;
        // Segments are recorded in stream order, so those that overlap are found by
        // bisection: a retransmission in a window of thousands costs a few steps, not a scan.
        let first = self.in_flight.partition_point(|s| s.end <= start);
        for s in self.in_flight.range_mut(first..) {
            if s.start >= end {
                break;
            }
            s.timeable = false;
        }
    }

    /// Time the segment ending at `end`, sent at `now` (the SYN).
    pub fn time(&mut self, end: u64, now: Time) {
        self.timed = Some((end, now));
    }

    /// A copy in flight (a timeout, a retransmitted SYN, a NIL segment) spoils the sample.
    pub fn stop_timing(&mut self) {
        self.timed = None;
    }

    /// The handshake's sample: when the SYN (or SYN-ACK) timed was sent.
    pub fn take_timed(&mut self) -> Option<Time> {
        self.timed.take().map(|(_, sent)| sent)
    }

    /// The estimator's sample, when the ACK covers the timed segment.
    pub fn estimator_sample(&mut self, ack: u64, now: Time) -> Option<Time> {
        let (end, sent) = self.timed?;
        (ack >= end).then(|| {
            self.timed = None;
            now - sent
        })
    }

    /// Forget the segments the ACK covers; the RTT of the newest never-retransmitted one.
    pub fn controller_sample(&mut self, ack: u64, now: Time) -> Option<Time> {
        let mut sample = None;
        while let Some(s) = self.in_flight.front().filter(|s| s.end <= ack) {
            if s.timeable {
                sample = Some(now - s.sent_at);
            }
            self.in_flight.pop_front();
        }
        sample
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resent_segment_gives_no_sample_but_later_ones_do() {
        let mut log = SentLog::default();
        log.on_sent(1, 101, 10);
        log.on_sent(101, 201, 20);
        log.on_resent(1, 101);
        assert_eq!(log.estimator_sample(201, 100), None, "Karn: timing stopped");
        assert_eq!(
            log.controller_sample(101, 100),
            None,
            "the resent one is skipped"
        );
        assert_eq!(log.controller_sample(201, 100), Some(80));
    }

    #[test]
    fn a_resend_spoils_exactly_the_segments_it_overlaps() {
        let mut log = SentLog::default();
        for i in 0..10u64 {
            log.on_sent(1 + 100 * i, 101 + 100 * i, i);
        }
        log.on_resent(250, 420); // overlaps [201, 301), [301, 401), [401, 501)
        let timeable: Vec<bool> = log.in_flight.iter().map(|s| s.timeable).collect();
        let mut want = [true; 10];
        want[2..5].fill(false);
        assert_eq!(timeable, want);
    }

    #[test]
    fn the_estimator_times_one_segment_at_a_time() {
        let mut log = SentLog::default();
        log.on_sent(1, 101, 10);
        log.on_sent(101, 201, 20);
        assert_eq!(log.estimator_sample(50, 90), None, "not yet covered");
        assert_eq!(log.estimator_sample(101, 90), Some(80));
        assert_eq!(
            log.estimator_sample(201, 95),
            None,
            "one sample per round trip"
        );
    }
}
