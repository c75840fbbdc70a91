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

mod sent_order;

use super::sack_scan::SackScan;
use crate::time::{Time, MS};
use sent_order::SentOrder;
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
    /// The segments neither SACKed nor marked lost, in the order they were sent, for the
    /// loss detection (`sent_order.rs`).
    order: SentOrder,
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

/// The segment that starts at `start`, if one does.
fn seg_mut(segs: &mut VecDeque<Seg>, start: u64) -> Option<&mut Seg> {
    if segs.front()?.start > start {
        return None;
    }
    let i = segs.partition_point(|s| s.start < start);
    segs.get_mut(i).filter(|s| s.start == start)
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
            if retx {
                self.order.insert(now, start); // below new data sent at this instant
            } else {
                self.order.push(now, start);
            }
            self.segs.push_back(seg);
            return;
        }
        self.order.insert(now, start);
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
                if !s.sacked && !s.lost {
                    // The head keeps the segment's entry (same start, same time); the
                    // tail needs its own.
                    self.order.insert(s.xmit_ts, end);
                }
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

    /// How many transmissions it holds (tests: what it keeps stays bounded).
    #[cfg(test)]
    pub fn held(&self) -> usize {
        self.segs.len()
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
    /// the reordering timer. Only segments sent by the RACK segment's time are visited.
    pub fn detect_loss(&mut self, now: Time, reo_wnd: Time) -> Time {
        let mut timeout = 0;
        let (segs, lost_bytes) = (&mut self.segs, &mut self.lost_bytes);
        let (rack_ts, rack_end, rack_rtt) = (self.xmit_ts, self.end_seq, self.rtt);
        // Those sent after the RACK segment (at its instant, those above it) cannot be lost
        // by it: RACK_sent_after orders by time, then by sequence.
        self.order.sweep((rack_ts, rack_end), |ts, start| {
            let Some(s) = seg_mut(segs, start) else {
                return false; // acknowledged, or covered by a retransmission
            };
            if s.xmit_ts != ts || s.sacked || s.lost {
                return false; // sent again since, SACKed or lost already
            }
            if !sent_after(rack_ts, rack_end, s.xmit_ts, s.end) {
                return true;
            }
            let deadline = s.xmit_ts + rack_rtt + reo_wnd;
            if deadline <= now {
                s.lost = true;
                *lost_bytes += s.end - s.start;
                false
            } else {
                timeout = timeout.max(deadline - now);
                true
            }
        });
        timeout
    }

    /// Step 5 as RFC 8985 writes it, a walk of every segment: what `detect_loss` must equal.
    #[cfg(test)]
    fn detect_loss_by_walk(&mut self, now: Time, reo_wnd: Time) -> Time {
        let mut timeout = 0;
        for s in self.segs.iter_mut() {
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
        self.order.clear();
        self.probe = None;
    }

    /// A spurious timeout was undone: nothing stays marked lost (`tcp_undo_cwnd_reduction`
    /// unmarks every segment).
    pub fn on_timeout_undone(&mut self) {
        self.lost_bytes = 0;
        for s in self.segs.iter_mut() {
            s.lost = false;
        }
        let live = self.segs.iter().filter(|s| !s.sacked);
        self.order.rebuild(live.map(|s| (s.xmit_ts, s.start)));
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
mod tests;
