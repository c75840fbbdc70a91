//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation-02; Linux
//! `net/ipv4/tcp_rate.c`): each ACK yields the rate at which the network delivered the most
//! recent flight, `delivered / max(send_elapsed, ack_elapsed)`, and whether the application
//! limited it. Any controller may use it (BBR needs it); the connection keeps it only when
//! one does.
//!
//! Every transmission of a segment (original or retransmission) snapshots the connection's
//! delivery state; when the segment is delivered (cumulatively ACKed or SACKed, once) the
//! snapshot of the most recently sent delivered segment becomes the sample's start.

use super::sack_scan::SackScan;
use crate::cc::RateSample;
use crate::time::Time;
use std::collections::VecDeque;

/// The snapshot a transmission takes (draft section 3.2, `P.*`).
#[derive(Clone, Copy, Debug)]
struct Sent {
    start: u64,
    end: u64,
    sent_time: Time,
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
    is_app_limited: bool,
    /// This transmission repeats an earlier one (its ACK may answer either: Karn).
    is_retrans: bool,
    /// What was in flight just after it left, and the connection's lost count then
    /// (draft-ietf-ccwg-bbr 4.1.2.2, `P.tx_in_flight`, `P.lost`).
    tx_in_flight: u64,
    lost: u64,
    /// Counted as delivered already (SACKed before the cumulative ACK reached it).
    done: bool,
}

/// The sample being built from the segments one ACK delivers (draft `rs.*`).
#[derive(Clone, Copy, Debug, Default)]
struct Building {
    has_data: bool,
    /// The delivered segment that was sent last, whose snapshot the sample starts from.
    last_sent_time: Time,
    last_end: u64,
    prior_delivered: u64,
    prior_time: Time,
    send_elapsed: Time,
    ack_elapsed: Time,
    is_app_limited: bool,
    is_retrans: bool,
    rtt: Time,
    tx_in_flight: u64,
    lost: u64,
}

#[derive(Debug, Default)]
pub(crate) struct DeliveryRate {
    /// Segments in flight, in stream order.
    sent: VecDeque<Sent>,
    /// Bytes delivered so far (`C.delivered`), when the count last grew, and the send time
    /// of the most recently sent segment delivered (`C.first_sent_time`).
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
    /// The delivered count at which the current application-limited period ends (0: none).
    app_limited_until: u64,
    rs: Building,
    /// The SACK blocks scanned: every entry whose end lies in one's (start, end] is done
    /// (`sack_scan.rs`), while the entries are sorted and do not overlap.
    scan: SackScan,
    /// An entry overlaps another (a retransmission from inside a segment): blocks are
    /// scanned whole until none does.
    irregular: bool,
}

impl DeliveryRate {
    /// `[start, end)` leaves at `now` with `in_flight` bytes outstanding before it; `at_send`:
    /// what is in flight just after it left and the bytes lost so far (`P.tx_in_flight`,
    /// `P.lost`, which BBRv3 reads).
    pub fn on_sent(
        &mut self,
        start: u64,
        end: u64,
        now: Time,
        in_flight: u64,
        at_send: (u64, u64),
    ) {
        if in_flight == 0 {
            // Sending after idle: the interval starts now (draft 3.2).
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        let snap = Sent {
            start,
            end,
            sent_time: now,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            is_app_limited: self.app_limited_until != 0,
            is_retrans: false,
            tx_in_flight: at_send.0,
            lost: at_send.1,
            done: false,
        };
        // New data goes after everything in flight: where the search would put it.
        if let Some(last) = self.sent.back().filter(|s| s.start < start) {
            if last.end > start {
                // From inside the last segment: it overlaps.
                self.irregular = true;
                self.scan.forget();
            }
            self.sent.push_back(snap);
            return;
        } else if self.sent.is_empty() {
            self.sent.push_back(snap);
            return;
        }
        // A retransmission: a fresh snapshot (not done) among the blocks scanned.
        self.scan.forget();
        let i = self.sent.partition_point(|s| s.start < start);
        match self.sent.get_mut(i) {
            Some(s) if s.start == start => {
                *s = Sent {
                    end: s.end.max(end),
                    is_retrans: true,
                    ..snap
                }
            }
            _ => self.sent.insert(i, snap),
        }
        let overlaps =
            |a: Option<&Sent>, b: Option<&Sent>| a.zip(b).is_some_and(|(a, b)| a.end > b.start);
        self.irregular |= overlaps(
            i.checked_sub(1).and_then(|p| self.sent.get(p)),
            self.sent.get(i),
        ) || overlaps(self.sent.get(i), self.sent.get(i + 1));
    }

    /// The segments inside `[start, end)` were delivered (SACKed) at `now`: those that end
    /// inside it (one reaching in from below too). While the entries do not overlap, those
    /// ending inside a block scanned before are done, and only the stretches around it
    /// are looked at (`sack_scan.rs`).
    pub fn on_sacked(&mut self, start: u64, end: u64, now: Time) {
        if self.irregular {
            self.scan.forget();
            return self.deliver_ending_in(start, end, end, now);
        }
        for (from, to) in self.scan.stretches(start, end) {
            self.deliver_ending_in(from, to, end, now);
        }
    }

    /// Delivers the entries not yet done that end in `(from, to]`, of a block ending at
    /// `end` (the entries are looked at from the first ending after `from` until one
    /// starts at `end`, or, while they do not overlap, ends after `to`).
    fn deliver_ending_in(&mut self, from: u64, to: u64, end: u64, now: Time) {
        if from >= to {
            return;
        }
        let first = self.sent.partition_point(|s| s.end <= from);
        for i in first..self.sent.len() {
            let s = self.sent[i];
            if s.start >= end || (!self.irregular && s.end > to) {
                break;
            }
            if s.end <= to && !s.done {
                self.deliver(s, now);
                self.sent[i].done = true;
            }
        }
    }

    /// Everything below `ack` was delivered at `now`.
    pub fn on_cumulative_ack(&mut self, ack: u64, now: Time) {
        while let Some(s) = self.sent.front().copied().filter(|s| s.end <= ack) {
            if !s.done {
                self.deliver(s, now);
            }
            self.sent.pop_front();
        }
        self.scan.forget_below(ack);
        if self.irregular {
            let sent = &self.sent;
            self.irregular = (1..sent.len()).any(|i| sent[i - 1].end > sent[i].start);
        }
    }

    /// Draft 3.3, UpdateRateSample; of the segments one ACK delivers, the sample starts from
    /// the one sent last (Linux `tcp_rate_skb_delivered`, `tcp_skb_sent_after`).
    fn deliver(&mut self, s: Sent, now: Time) {
        self.delivered += s.end - s.start;
        self.delivered_time = now;
        let newer = (s.sent_time, s.end) > (self.rs.last_sent_time, self.rs.last_end);
        if !self.rs.has_data || newer {
            self.rs = Building {
                has_data: true,
                last_sent_time: s.sent_time,
                last_end: s.end,
                prior_delivered: s.delivered,
                prior_time: s.delivered_time,
                send_elapsed: s.sent_time - s.first_sent_time,
                ack_elapsed: self.delivered_time - s.delivered_time,
                is_app_limited: s.is_app_limited,
                is_retrans: s.is_retrans,
                rtt: now - s.sent_time,
                tx_in_flight: s.tx_in_flight,
                lost: s.lost,
            };
            self.first_sent_time = s.sent_time;
        }
    }

    /// Draft 3.3, GenerateRateSample, once per ACK after its segments were delivered. None
    /// when the ACK delivered nothing, or the interval is shorter than `min_rtt` (ACK
    /// compression or a stale snapshot: no valid rate).
    pub fn take_sample(&mut self, min_rtt: Option<Time>) -> Option<RateSample> {
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        let rs = std::mem::take(&mut self.rs);
        if !rs.has_data || rs.prior_time == 0 {
            return None;
        }
        let interval = rs.send_elapsed.max(rs.ack_elapsed);
        if interval == 0 || min_rtt.is_some_and(|m| interval < m) {
            return None;
        }
        Some(RateSample {
            delivered: self.delivered - rs.prior_delivered,
            interval,
            prior_delivered: rs.prior_delivered,
            is_app_limited: rs.is_app_limited,
            is_retrans: rs.is_retrans,
            rtt: rs.rtt,
            tx_in_flight: rs.tx_in_flight,
            prior_lost: rs.lost,
        })
    }

    /// The application has nothing to send while the windows would allow it (draft 3.4):
    /// samples until what is now in flight is delivered are application-limited.
    pub fn on_app_limited(&mut self, in_flight: u64) {
        self.app_limited_until = (self.delivered + in_flight).max(1);
    }

    /// Bytes delivered so far (`C.delivered`).
    pub fn delivered(&self) -> u64 {
        self.delivered
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    use super::super::sack_scan::story::{block, Rnd};

    const SEG: u64 = 1000;

    /// A sender that keeps `window` segments in flight over a path of one-way delay
    /// `rtt / 2` whose bottleneck serves one segment per `gap`; ACKs come back one per
    /// segment. Returns the samples.
    fn steady(window: u64, gap: Time, rtt: Time, n: u64) -> Vec<RateSample> {
        let mut d = DeliveryRate::default();
        let (mut next, mut acked, mut out) = (0u64, 0u64, vec![]);
        let mut now = 1;
        // Send time of segment k: as fast as the window allows, spaced by the bottleneck.
        let mut sent_at = vec![];
        while acked < n {
            while next < acked + window && next < n {
                let t = now.max(sent_at.last().map_or(0, |&t| t + gap));
                sent_at.push(t);
                d.on_sent(
                    next * SEG,
                    (next + 1) * SEG,
                    t,
                    (next - acked) * SEG,
                    (0, 0),
                );
                next += 1;
            }
            now = sent_at[acked as usize] + rtt;
            acked += 1;
            d.on_cumulative_ack(acked * SEG, now);
            out.extend(d.take_sample(Some(rtt)));
        }
        out
    }

    #[test]
    fn a_window_limited_flow_measures_window_over_rtt() {
        // 10 segments per 100 ms RTT, the bottleneck far faster: 100 kB/s.
        let samples = steady(10, MS / 10, 100 * MS, 200);
        let last = samples.last().expect("samples");
        assert!(
            (last.rate() - 100_000.0).abs() / 100_000.0 < 0.02,
            "{}",
            last.rate()
        );
    }

    #[test]
    fn a_bottleneck_limited_flow_measures_the_bottleneck() {
        // 50 segments in flight, the bottleneck one segment per 5 ms: 200 kB/s.
        let samples = steady(50, 5 * MS, 100 * MS, 400);
        let last = samples.last().expect("samples");
        assert!(
            (last.rate() - 200_000.0).abs() / 200_000.0 < 0.02,
            "{}",
            last.rate()
        );
    }

    #[test]
    fn the_interval_is_the_longer_of_the_send_and_ack_spans() {
        let mut d = DeliveryRate::default();
        d.on_sent(0, SEG, 1, 0, (0, 0));
        d.on_cumulative_ack(SEG, 50 * MS);
        d.take_sample(None);
        // Ten segments sent 10 ms apart after that ACK, from idle: send span 90 ms...
        for k in 1..=10u64 {
            d.on_sent(
                k * SEG,
                (k + 1) * SEG,
                50 * MS + (k - 1) * 10 * MS,
                SEG * (k - 1),
                (0, 0),
            );
        }
        // ... acknowledged at one instant 100 ms after the flight began: ACK span 100 ms.
        d.on_cumulative_ack(11 * SEG, 150 * MS);
        let s = d.take_sample(None).expect("a sample");
        assert_eq!((s.delivered, s.interval), (10 * SEG, 100 * MS));
        assert_eq!(s.rtt, 10 * MS, "from the segment sent last");
    }

    #[test]
    fn a_segment_sacked_then_acked_counts_once() {
        let mut d = DeliveryRate::default();
        for k in 0..4u64 {
            d.on_sent(k * SEG, (k + 1) * SEG, 1 + k * MS, k * SEG, (0, 0));
        }
        d.on_sacked(2 * SEG, 4 * SEG, 100 * MS);
        assert_eq!(d.delivered(), 2 * SEG);
        d.on_cumulative_ack(4 * SEG, 110 * MS);
        assert_eq!(d.delivered(), 4 * SEG);
    }

    #[test]
    fn samples_are_application_limited_until_the_flight_then_in_flight_is_delivered() {
        let mut d = DeliveryRate::default();
        d.on_sent(0, SEG, 1, 0, (0, 0));
        d.on_app_limited(SEG);
        d.on_sent(SEG, 2 * SEG, 2, SEG, (0, 0));
        d.on_cumulative_ack(SEG, 100 * MS);
        let first = d.take_sample(None).expect("sample");
        assert!(!first.is_app_limited, "sent before the application ran dry");
        d.on_cumulative_ack(2 * SEG, 101 * MS);
        let second = d.take_sample(None).expect("sample");
        assert!(second.is_app_limited, "sent while it was");
        d.on_sent(2 * SEG, 3 * SEG, 102 * MS, 0, (0, 0));
        d.on_cumulative_ack(3 * SEG, 202 * MS);
        assert!(!d.take_sample(None).expect("sample").is_app_limited);
    }

    /// `on_sacked` as it was before the scanned-blocks shortcut.
    fn plain_sacked(d: &mut DeliveryRate, start: u64, end: u64, now: Time) {
        let first = d.sent.partition_point(|s| s.end <= start);
        for i in first..d.sent.len() {
            let s = d.sent[i];
            if s.start >= end {
                break;
            }
            if s.end <= end && !s.done {
                d.deliver(s, now);
                d.sent[i].done = true;
            }
        }
    }

    #[test]
    fn sack_blocks_that_repeat_and_grow_deliver_as_the_plain_scan_does() {
        // Two samplers fed the same pseudo-random story: new segments, retransmissions of
        // whole segments, of their second halves and from inside them (entries that
        // overlap), ACKs with up to 4 SACK blocks growing and moving, block edges inside
        // segments, cumulative ACKs. One delivers with on_sacked, the other with the plain
        // scan; every sample and count is the same.
        let (mut fast, mut plain) = (DeliveryRate::default(), DeliveryRate::default());
        let mut rnd = Rnd(7);
        let (mut next, mut una, mut now) = (0u64, 0u64, 1);
        let mut last: Option<(u64, u64)> = None;
        let mut overlapped = 0;
        for _ in 0..6000 {
            now += MS;
            match rnd.below(12) {
                0..=3 => {
                    for d in [&mut fast, &mut plain] {
                        d.on_sent(next * SEG, (next + 1) * SEG, now, 0, (0, 0));
                    }
                    next += 1;
                }
                4 if next > una => {
                    let k = una + rnd.below(next - una);
                    let (start, end) = match rnd.below(3) {
                        0 => (k * SEG, (k + 1) * SEG),
                        1 => (k * SEG + SEG / 2, (k + 1) * SEG),
                        _ => (k * SEG + SEG / 4, (k + 2).min(next) * SEG),
                    };
                    overlapped += fast.irregular as u32;
                    for d in [&mut fast, &mut plain] {
                        d.on_sent(start, end, now, 0, (0, 0));
                    }
                }
                5 if next > una => {
                    una += 1 + rnd.below((next - una).min(5));
                    for d in [&mut fast, &mut plain] {
                        d.on_cumulative_ack(una * SEG, now);
                    }
                }
                _ if next > una + 2 => {
                    for _ in 0..1 + rnd.below(4) {
                        let (l, r) = block(&mut rnd, &mut last, (una, next, SEG), true);
                        fast.on_sacked(l, r, now);
                        plain_sacked(&mut plain, l, r, now);
                    }
                }
                _ => {}
            }
            let (a, b) = (fast.take_sample(None), plain.take_sample(None));
            assert_eq!(format!("{a:?}"), format!("{b:?}"));
            assert_eq!(fast.delivered(), plain.delivered());
        }
        assert!(fast.delivered() > 100 * SEG);
        assert!(overlapped > 10, "the story had overlapping entries");
    }

    #[test]
    fn a_retransmission_takes_a_fresh_snapshot() {
        let mut d = DeliveryRate::default();
        d.on_sent(0, SEG, 1, 0, (0, 0));
        d.on_sent(SEG, 2 * SEG, 2, SEG, (0, 0));
        d.on_sacked(SEG, 2 * SEG, 100 * MS);
        d.take_sample(None);
        d.on_sent(0, SEG, 300 * MS, SEG, (0, 0)); // the first segment resent after a timeout
        d.on_cumulative_ack(2 * SEG, 400 * MS);
        let s = d.take_sample(None).expect("sample");
        assert_eq!(s.rtt, 100 * MS, "timed from the retransmission");
        assert!(
            s.is_retrans,
            "and marked as such (Karn: the ACK may answer either)"
        );
        assert_eq!(s.prior_delivered, SEG);
    }
}
