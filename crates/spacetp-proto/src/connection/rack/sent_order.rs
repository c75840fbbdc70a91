//! The transmissions RACK may yet deem lost, in the order they were sent (Linux's
//! `tsorted_sent_queue`): loss detection meets them oldest first and stops at the first
//! sent after the RACK segment, so an ACK visits only what it can judge, not every SACKed
//! segment of the window (a walk of the whole window on every ACK of a recovery), nor the
//! rest of a burst sent at the RACK segment's instant.
//!
//! An entry is a transmission's (send time, start). It goes stale when its segment is
//! acknowledged, SACKed, marked lost or sent again; the detection drops stale entries as it
//! meets them, so each costs one visit after it went stale. The owner keeps the invariant:
//! every segment neither SACKed nor marked lost has an entry. Entries are in the order of
//! (send time, start), RFC 8985's order of transmission (RACK_sent_after).

use crate::time::Time;
use std::collections::VecDeque;

#[derive(Debug, Default)]
pub(super) struct SentOrder(VecDeque<(Time, u64)>);

impl SentOrder {
    /// A transmission of new data at `ts`: after every entry (no earlier, and above every
    /// start).
    pub fn push(&mut self, ts: Time, start: u64) {
        debug_assert!(self.0.back().is_none_or(|&e| e < (ts, start)));
        self.0.push_back((ts, start));
    }

    /// A transmission that may belong before the last entries: a retransmission (below new
    /// data sent at the same instant), or the uncovered tail of a segment partly sent
    /// again, which keeps its send time.
    pub fn insert(&mut self, ts: Time, start: u64) {
        let i = self.0.partition_point(|&e| e <= (ts, start));
        self.0.insert(i, (ts, start));
    }

    /// Every entry is stale (a timeout marked every segment lost).
    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// The entries again from scratch: (send time, start) of every segment that may be
    /// deemed lost, in any order.
    pub fn rebuild(&mut self, live: impl Iterator<Item = (Time, u64)>) {
        let mut v: Vec<_> = live.collect();
        v.sort_unstable();
        self.0 = v.into();
    }

    /// Judge every entry before `until` (send time, start) (`keep(ts, start)`: false drops
    /// it); the later ones are not visited. Entries are judged newest first: the caller's
    /// verdicts must not depend on their order.
    pub fn sweep(&mut self, until: (Time, u64), mut keep: impl FnMut(Time, u64) -> bool) {
        let end = self
            .0
            .iter()
            .position(|&e| e >= until)
            .unwrap_or(self.0.len());
        // Kept entries move to the back of the judged range, in order; the front is cut.
        let mut w = end;
        for k in (0..end).rev() {
            let e = self.0[k];
            if keep(e.0, e.1) {
                w -= 1;
                self.0[w] = e;
            }
        }
        self.0.drain(..w);
    }

    #[cfg(test)]
    pub fn entries(&self) -> Vec<(Time, u64)> {
        self.0.iter().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_visits_only_what_was_sent_by_then_and_keeps_the_order_of_the_rest() {
        let mut o = SentOrder::default();
        for (ts, start) in [(1, 0), (1, 10), (2, 20), (3, 30), (5, 40)] {
            o.push(ts, start);
        }
        o.insert(2, 99); // a split segment's tail, sent at 2
        o.insert(3, 25); // a retransmission at 3, below new data sent at 3
        let mut seen = Vec::new();
        o.sweep((3, 30), |ts, start| {
            seen.push((ts, start));
            start == 10 || start == 99
        });
        seen.reverse();
        assert_eq!(seen, [(1, 0), (1, 10), (2, 20), (2, 99), (3, 25)]);
        assert_eq!(o.entries(), [(1, 10), (2, 99), (3, 30), (5, 40)]);
        o.sweep((1, 10), |_, _| panic!("nothing was sent before (1, 10)"));
        o.rebuild([(7, 1), (4, 2), (4, 1)].into_iter());
        assert_eq!(o.entries(), [(4, 1), (4, 2), (7, 1)]);
    }
}
