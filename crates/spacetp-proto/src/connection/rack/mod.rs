//! RACK-TLP loss detection (RFC 8985; Linux's default since 4.18, `tcp_recovery.c`):
//! - RACK: a segment is lost when a segment sent after it has been delivered and more than
//!   RACK.rtt + reo_wnd has passed since it was sent. Time, not a count of duplicate ACKs,
//!   so a lost retransmission is detected like any other segment, and reordering within the
//!   reordering window is not a loss. reo_wnd = min_RTT / 4 (x a multiplier that DSACKs
//!   raise), at most SRTT, and 0 before any reordering is seen once in recovery or once
//!   DupThresh segments are SACKed (section 6.2).
//! - TLP: when the sender stops hearing ACKs, a probe after PTO = 2 SRTT (+ the worst-case
//!   delayed ACK when one segment is in flight) sends one new segment or resends the last,
//!   so that a tail loss is repaired by RACK instead of by the RTO (section 7).
//!
//! This module keeps what RFC 8985 needs per segment (its latest transmission time, whether
//! it was retransmitted, SACKed or is deemed lost); the recovery policy (`recovery/rack.rs`)
//! retransmits what it marks lost.

use super::sack_scan::SackScan;
use crate::time::{Time, MS};
use std::collections::VecDeque;

/// The worst-case delayed-ACK time added to PTO when one segment is in flight (RFC 8985
/// WCDelAckT, 200 ms; Linux adds TCP_RTO_MIN, also 200 ms).
const WC_DEL_ACK: Time = 200 * MS;
/// DSACK-free recoveries after which the reordering window shrinks back (section 6.2).
const REO_WND_PERSIST: u32 = 16;

/// One transmission still unacknowledged (`Segment.*` of RFC 8985).
#[derive(Clone, Copy, Debug)]
struct Seg {
    start: u64,
    end: u64,
    xmit_ts: Time,
    retransmitted: bool,
    sacked: bool,
    lost: bool,
}

/// A probe sent and not yet answered (section 7.4: `TLP.end_seq`, `TLP.is_retrans`).
#[derive(Clone, Copy, Debug)]
pub(super) struct Probe {
    pub end_seq: u64,
    pub is_retrans: bool,
}

/// What a probe's answer says (section 7.4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ProbeOutcome {
    /// Still waiting, or no probe.
    Pending,
    /// Nothing was lost (the probe was new data, or a DSACK showed it redundant).
    NoLoss,
    /// The probe repaired a loss: the congestion controller must react to it.
    RepairedLoss,
}

#[derive(Debug, Default)]
pub(super) struct Rack {
    segs: VecDeque<Seg>,
    /// The SACK blocks scanned: a segment wholly inside one is SACKed (`sack_scan.rs`).
    scan: SackScan,
    /// The most recently sent segment among those delivered: its send time and end.
    xmit_ts: Time,
    end_seq: u64,
    /// RACK.rtt: the RTT of that segment, and whether it was a retransmission.
    rtt: Time,
    retransmitted: bool,
    /// RACK.fack: the highest end delivered.
    fack: u64,
    reordering_seen: bool,
    reo_wnd_mult: u32,
    reo_wnd_persist: u32,
    dsack_round: Option<u64>,
    /// Bytes marked lost and not yet retransmitted.
    lost_bytes: u64,
    probe: Option<Probe>,
    /// A loss probe the timer asked for and the connection has yet to send (section 7.3):
    /// new data (None) or the last segment again (its start).
    pub due_probe: Option<Option<u64>>,
    /// Segments delivered by the ACK being processed, for step 3's ordering by send time.
    delivered: Vec<(Time, u64, bool)>,
}

/// RFC 8985 RACK_sent_after: t1/seq1 was sent after t2/seq2.
fn sent_after(t1: Time, seq1: u64, t2: Time, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

impl Rack {
    pub fn new() -> Self {
        Rack {
            reo_wnd_mult: 1,
            ..Default::default()
        }
    }

    /// `[start, end)` left at `now` (a retransmission if `retx`).
    pub fn on_sent(&mut self, start: u64, end: u64, now: Time, retx: bool) {
        if end <= start {
            return;
        }
        let seg = Seg {
            start,
            end,
            xmit_ts: now,
            retransmitted: retx,
            sacked: false,
            lost: false,
        };
        if self.segs.back().is_none_or(|s| s.end <= start) {
            self.segs.push_back(seg);
            return;
        }
        self.scan.forget(); // it may land inside a block scanned before
                            // A retransmission: it replaces what it covers, the uncovered parts keep theirs
                            // (in place: no allocation per retransmission).
        let i = self.segs.partition_point(|s| s.end <= start);
        let mut j = i;
        let mut pieces: [Option<Seg>; 2] = [None, None];
        while j < self.segs.len() && self.segs[j].start < end {
            let s = self.segs[j];
            if s.lost {
                self.lost_bytes -= s.end - s.start;
            }
            if s.start < start {
                pieces[0] = Some(Seg { end: start, ..s });
            }
            if s.end > end {
                pieces[1] = Some(Seg { start: end, ..s });
            }
            j += 1;
        }
        self.segs.drain(i..j);
        let replacement = pieces[0].iter().chain([&seg]).chain(pieces[1].iter());
        for (at, p) in (i..).zip(replacement) {
            if p.lost {
                self.lost_bytes += p.end - p.start;
            }
            self.segs.insert(at, *p);
        }
    }

    /// Where the highest segment sent starts (what a loss probe resends).
    pub fn last_segment_start(&self) -> Option<u64> {
        self.segs.back().map(|s| s.start)
    }

    /// Bytes marked lost and not yet retransmitted (what `pipe` leaves out).
    pub fn lost_bytes(&self) -> u64 {
        self.lost_bytes
    }

    /// The first position at or after `from` that is marked lost, unSACKed and not yet
    /// retransmitted.
    pub fn first_lost(&self, from: u64) -> Option<u64> {
        if self.lost_bytes == 0 {
            return None;
        }
        let i = self.segs.partition_point(|s| s.end <= from);
        self.segs
            .range(i..)
            .find(|s| s.lost && !s.sacked)
            .map(|s| s.start.max(from))
    }

    /// Step 2 and 3 for one ACK: the segments inside `sacked` blocks and below `ack` are
    /// delivered at `now`. `min_rtt`: Karn's guard for retransmissions (an RTT shorter
    /// than the minimum answers the original).
    pub fn on_ack(&mut self, ack: u64, sacked: &[(u64, u64)], now: Time, min_rtt: Option<Time>) {
        self.delivered.clear();
        while let Some(s) = self.segs.front().copied().filter(|s| s.end <= ack) {
            if !s.sacked {
                self.delivered.push((s.xmit_ts, s.end, s.retransmitted));
            }
            if s.lost {
                self.lost_bytes -= s.end - s.start;
            }
            self.segs.pop_front();
        }
        self.scan.forget_below(ack);
        for &(l, r) in sacked {
            // Those around the blocks scanned before (`sack_scan.rs`).
            for (from, to) in self.scan.stretches(l, r) {
                if from >= to {
                    continue;
                }
                let i = self.segs.partition_point(|s| s.end <= from);
                for s in self.segs.range_mut(i..) {
                    if s.start >= to {
                        break;
                    }
                    if s.start >= l && s.end <= r && !s.sacked {
                        s.sacked = true;
                        if s.lost {
                            s.lost = false;
                            self.lost_bytes -= s.end - s.start;
                        }
                        self.delivered.push((s.xmit_ts, s.end, s.retransmitted));
                    }
                }
            }
        }
        self.delivered.sort_unstable();
        for k in 0..self.delivered.len() {
            let (xmit_ts, end, retx) = self.delivered[k];
            let rtt = now.saturating_sub(xmit_ts);
            // Step 2: a retransmission's ACK may answer the original (Karn).
            let ambiguous = retx && min_rtt.is_some_and(|m| rtt < m);
            if !ambiguous && sent_after(xmit_ts, end, self.xmit_ts, self.end_seq) {
                self.rtt = rtt;
                self.xmit_ts = xmit_ts;
                self.end_seq = end;
                self.retransmitted = retx;
            }
            // Step 3: delivered below the highest delivered, never retransmitted: reordering.
            if end > self.fack {
                self.fack = end;
            } else if end < self.fack && !retx {
                self.reordering_seen = true;
            }
        }
    }

    /// Whether a segment sent after some still-unacknowledged one has been delivered: the
    /// only case in which RACK can find a loss, so the caller may skip `detect_loss`.
    pub fn has_delivery(&self) -> bool {
        self.end_seq > 0
    }

    /// Step 4: the reordering window. `dsack`: this ACK carried a DSACK; `snd_una`,
    /// `snd_nxt` the sender's; `in_recovery` its state; `sacked_segments` how many
    /// segments are SACKed; `srtt`, `min_rtt` its estimates.
    #[allow(clippy::too_many_arguments)]
    pub fn reo_wnd(
        &mut self,
        dsack: bool,
        snd_una: u64,
        snd_nxt: u64,
        in_recovery: bool,
        sacked_segments: u64,
        dupthresh: u32,
        srtt: Time,
        min_rtt: Time,
    ) -> Time {
        if self.dsack_round.is_some_and(|r| snd_una >= r) {
            self.dsack_round = None;
        }
        if self.dsack_round.is_none() && dsack {
            self.dsack_round = Some(snd_nxt);
            self.reo_wnd_mult += 1;
            self.reo_wnd_persist = REO_WND_PERSIST;
        }
        if !self.reordering_seen && (in_recovery || sacked_segments >= dupthresh as u64) {
            return 0;
        }
        (min_rtt / 4 * self.reo_wnd_mult as u64).min(srtt)
    }

    /// A recovery ended without a DSACK since the window last grew: after 16 such, the
    /// multiplier returns to 1.
    pub fn on_recovery_exit(&mut self) {
        self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1);
        if self.reo_wnd_persist == 0 {
            self.reo_wnd_mult = 1;
        }
    }

    /// Step 5: mark lost every unSACKed segment sent before the most recently delivered one
    /// whose time is up. Returns how long until the next one's would be (0: none waits):
    /// the reordering timer.
    pub fn detect_loss(&mut self, now: Time, reo_wnd: Time) -> Time {
        let mut timeout = 0;
        for s in self.segs.iter_mut() {
            // Beyond an original RACK segment, everything was sent after it (in order, or
            // resent later); beyond a retransmitted one, originals sent before it may wait.
            if s.start >= self.end_seq && !self.retransmitted {
                break;
            }
            if s.sacked || s.lost || !sent_after(self.xmit_ts, self.end_seq, s.xmit_ts, s.end) {
                continue;
            }
            let deadline = s.xmit_ts + self.rtt + reo_wnd;
            if deadline <= now {
                s.lost = true;
                self.lost_bytes += s.end - s.start;
            } else {
                timeout = timeout.max(deadline - now);
            }
        }
        timeout
    }

    /// Everything outstanding is deemed lost after a retransmission timeout (Linux
    /// `tcp_enter_loss` marks it all).
    pub fn on_timeout(&mut self) {
        self.lost_bytes = 0;
        for s in self.segs.iter_mut() {
            s.lost = !s.sacked;
            if s.lost {
                self.lost_bytes += s.end - s.start;
            }
        }
        self.probe = None;
    }

    /// A spurious timeout was undone: nothing stays marked lost (`tcp_undo_cwnd_reduction`
    /// unmarks every segment).
    pub fn on_timeout_undone(&mut self) {
        self.lost_bytes = 0;
        for s in self.segs.iter_mut() {
            s.lost = false;
        }
    }

    /// Section 7.2: PTO for `flight` bytes in flight of `mss`-byte segments, before the RTO
    /// due at `rto_at`.
    pub fn pto(srtt: Option<Time>, flight: u64, mss: u64, now: Time, rto_at: Option<Time>) -> Time {
        let mut pto = match srtt {
            Some(s) => 2 * s + if flight <= mss { WC_DEL_ACK } else { 0 },
            None => 1_000 * MS,
        };
        if let Some(rto) = rto_at {
            pto = pto.min(rto.saturating_sub(now));
        }
        pto
    }

    pub fn probe(&self) -> Option<Probe> {
        self.probe
    }

    pub fn set_probe(&mut self, p: Probe) {
        self.probe = Some(p);
    }

    /// Section 7.4.2, TLP_process_ack. `dsack_end`: the end of this ACK's DSACK block, if
    /// any; `dupack_without_sack`: a duplicate ACK with no SACK blocks.
    pub fn on_probe_ack(
        &mut self,
        ack: u64,
        dsack_end: Option<u64>,
        dupack_without_sack: bool,
    ) -> ProbeOutcome {
        let Some(p) = self.probe.filter(|p| ack >= p.end_seq) else {
            return ProbeOutcome::Pending;
        };
        if !p.is_retrans || dsack_end == Some(p.end_seq) {
            self.probe = None;
            return ProbeOutcome::NoLoss;
        }
        if ack > p.end_seq || dupack_without_sack {
            self.probe = None;
            return ProbeOutcome::RepairedLoss;
        }
        ProbeOutcome::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::super::sack_scan::story::{block, Rnd};

    const SEG: u64 = 1000;

    /// Everything but the scanned blocks.
    fn state(r: &Rack) -> String {
        format!(
            "{:?} {} {} {} {} {} {} {} {:?}",
            r.segs,
            r.xmit_ts,
            r.end_seq,
            r.rtt,
            r.retransmitted,
            r.fack,
            r.reordering_seen,
            r.lost_bytes,
            r.delivered
        )
    }

    #[test]
    fn sack_blocks_that_repeat_and_grow_mark_as_a_full_scan_does() {
        // Two RACKs fed the same pseudo-random story (new segments, retransmissions of whole
        // segments and of their second halves, ACKs with up to 4 SACK blocks growing and
        // moving, RTO marking); one forgets its scanned blocks before every ACK (a full
        // scan each time). Their state stays the same.
        let (mut fast, mut full) = (Rack::new(), Rack::new());
        let mut rnd = Rnd(5);
        let (mut next, mut una, mut now) = (0u64, 0u64, 1);
        let mut last: Option<(u64, u64)> = None;
        for _ in 0..4000 {
            now += MS;
            match rnd.below(10) {
                0..=3 => {
                    for r in [&mut fast, &mut full] {
                        r.on_sent(next * SEG, (next + 1) * SEG, now, false);
                    }
                    next += 1;
                }
                4 if next > una => {
                    let k = una + rnd.below(next - una);
                    let start = k * SEG + if rnd.below(2) == 0 { 0 } else { SEG / 2 };
                    for r in [&mut fast, &mut full] {
                        r.on_sent(start, (k + 1) * SEG, now, true);
                    }
                }
                5 => {
                    for r in [&mut fast, &mut full] {
                        r.on_timeout();
                    }
                }
                _ if next > una + 2 => {
                    let mut blocks = Vec::new();
                    for _ in 0..1 + rnd.below(4) {
                        let (l, r) = block(&mut rnd, &mut last, (una, next, SEG), false);
                        blocks.push((l, r));
                    }
                    if rnd.below(3) == 0 {
                        una += 1 + rnd.below((next - una).min(5));
                    }
                    full.scan.forget();
                    for r in [&mut fast, &mut full] {
                        r.on_ack(una * SEG, &blocks, now, Some(10 * MS));
                    }
                }
                _ => {}
            }
            assert_eq!(state(&fast), state(&full));
        }
        assert!(fast.fack > 100 * SEG);
    }

    /// Ten segments sent 1 ms apart from t = 0.
    fn ten() -> Rack {
        let mut r = Rack::new();
        for k in 0..10 {
            r.on_sent(1 + k * SEG, 1 + (k + 1) * SEG, k * MS, false);
        }
        r
    }

    #[test]
    fn a_segment_is_lost_once_a_later_one_is_delivered_and_rtt_plus_reo_wnd_passed() {
        let mut r = ten();
        // Segment 0 missing; segment 1 (sent at 1 ms) SACKed at 101 ms: RACK.rtt 100 ms.
        r.on_ack(1, &[(1 + SEG, 1 + 2 * SEG)], 101 * MS, Some(100 * MS));
        let reo = 25 * MS;
        let wait = r.detect_loss(101 * MS, reo);
        assert_eq!(r.first_lost(1), None, "within the reordering window");
        assert_eq!(wait, 24 * MS, "sent at 0: lost at 0 + 100 + 25 ms");
        r.detect_loss(125 * MS, reo);
        assert_eq!(r.first_lost(1), Some(1));
        assert_eq!(r.lost_bytes(), SEG);
    }

    #[test]
    fn a_reordered_segment_delivered_within_the_window_is_not_lost() {
        let mut r = ten();
        r.on_ack(1, &[(1 + SEG, 1 + 2 * SEG)], 101 * MS, Some(100 * MS));
        r.detect_loss(101 * MS, 25 * MS);
        // Segment 0 arrives late, 10 ms after its successor: reordering, not loss.
        r.on_ack(1 + 2 * SEG, &[], 111 * MS, Some(100 * MS));
        assert!(r.reordering_seen);
        assert_eq!(r.detect_loss(200 * MS, 25 * MS), 0);
        assert_eq!(r.first_lost(1), None);
    }

    #[test]
    fn a_lost_retransmission_is_detected_by_time() {
        let mut r = ten();
        r.on_ack(1, &[(1 + SEG, 1 + 10 * SEG)], 110 * MS, Some(100 * MS));
        r.detect_loss(130 * MS, 0);
        assert_eq!(r.first_lost(1), Some(1));
        // Resent at 130 ms, and lost again; new data sent at 131 ms is SACKed at 231 ms.
        r.on_sent(1, 1 + SEG, 130 * MS, true);
        assert_eq!(r.first_lost(1), None, "retransmitted, in flight again");
        r.on_sent(1 + 10 * SEG, 1 + 11 * SEG, 131 * MS, false);
        r.on_ack(1, &[(1 + SEG, 1 + 11 * SEG)], 231 * MS, Some(100 * MS));
        r.detect_loss(231 * MS, 0);
        assert_eq!(r.first_lost(1), Some(1), "the retransmission is lost");
    }

    #[test]
    fn the_window_is_zero_in_recovery_until_reordering_is_seen_and_then_a_quarter_min_rtt() {
        let mut r = ten();
        assert_eq!(r.reo_wnd(false, 1, 1, true, 0, 3, 100 * MS, 80 * MS), 0);
        assert_eq!(
            r.reo_wnd(false, 1, 1, false, 3, 3, 100 * MS, 80 * MS),
            0,
            "DupThresh segments SACKed"
        );
        assert_eq!(
            r.reo_wnd(false, 1, 1, false, 1, 3, 100 * MS, 80 * MS),
            20 * MS
        );
        r.reordering_seen = true;
        assert_eq!(
            r.reo_wnd(false, 1, 1, true, 5, 3, 100 * MS, 80 * MS),
            20 * MS
        );
        // A DSACK widens it by a quarter min_RTT per round, up to SRTT.
        assert_eq!(
            r.reo_wnd(true, 1, 5000, true, 5, 3, 100 * MS, 80 * MS),
            40 * MS
        );
        r.reo_wnd_mult = 9;
        assert_eq!(
            r.reo_wnd(false, 1, 5000, true, 5, 3, 100 * MS, 80 * MS),
            100 * MS
        );
    }

    #[test]
    fn pto_is_two_srtt_plus_the_delayed_ack_for_a_single_segment_and_before_the_rto() {
        assert_eq!(Rack::pto(Some(100 * MS), 5000, 1000, 0, None), 200 * MS);
        assert_eq!(Rack::pto(Some(100 * MS), 1000, 1000, 0, None), 400 * MS);
        assert_eq!(Rack::pto(None, 5000, 1000, 0, None), 1000 * MS);
        assert_eq!(
            Rack::pto(Some(100 * MS), 5000, 1000, 0, Some(150 * MS)),
            150 * MS
        );
    }

    #[test]
    fn a_probe_that_resent_data_acked_beyond_itself_repaired_a_loss_unless_dsacked() {
        let mut r = Rack::new();
        r.set_probe(Probe {
            end_seq: 100,
            is_retrans: true,
        });
        assert_eq!(r.on_probe_ack(90, None, false), ProbeOutcome::Pending);
        assert_eq!(r.on_probe_ack(100, None, false), ProbeOutcome::Pending);
        assert_eq!(r.on_probe_ack(150, None, false), ProbeOutcome::RepairedLoss);
        r.set_probe(Probe {
            end_seq: 100,
            is_retrans: true,
        });
        assert_eq!(r.on_probe_ack(100, Some(100), false), ProbeOutcome::NoLoss);
        r.set_probe(Probe {
            end_seq: 100,
            is_retrans: false,
        });
        assert_eq!(r.on_probe_ack(100, None, false), ProbeOutcome::NoLoss);
    }

    #[test]
    fn a_tail_segment_beyond_a_delivered_retransmission_is_lost_once_its_time_is_up() {
        // Segments 3 and 9 lost; 3 resent at 200 ms and delivered: 9, sent at 9 ms, before
        // the retransmission, is lost although it lies beyond it in sequence.
        let mut r = ten();
        r.on_ack(
            1,
            &[(1, 1 + 3 * SEG), (1 + 4 * SEG, 1 + 9 * SEG)],
            110 * MS,
            Some(100 * MS),
        );
        r.on_sent(1 + 3 * SEG, 1 + 4 * SEG, 200 * MS, true);
        r.on_ack(1 + 9 * SEG, &[], 300 * MS, Some(100 * MS));
        r.detect_loss(300 * MS, 0);
        assert_eq!(r.first_lost(1), Some(1 + 9 * SEG));
    }

    #[test]
    fn a_retransmission_of_part_of_a_segment_splits_it() {
        let mut r = ten();
        r.on_ack(1, &[(1 + 5 * SEG, 1 + 10 * SEG)], 110 * MS, None);
        r.detect_loss(200 * MS, 0);
        assert_eq!(r.lost_bytes(), 5 * SEG);
        r.on_sent(1 + 500, 1 + 1500, 200 * MS, true);
        assert_eq!(r.lost_bytes(), 4 * SEG, "half of two segments resent");
        assert_eq!(r.first_lost(1), Some(1));
        assert_eq!(r.first_lost(501), Some(1 + 1500));
    }
}
