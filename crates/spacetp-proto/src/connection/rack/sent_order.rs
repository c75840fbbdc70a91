//! The transmissions RACK may yet deem lost, in the order they were sent (Linux's
//! `tsorted_sent_queue`): loss detection meets them oldest first and stops at the first
//! sent after the RACK segment, so an ACK visits only what it can judge, not every SACKed
//! segment of the window (a walk of the whole window on every ACK of a recovery).
//!
//! An entry is a transmission's (send time, start). It goes stale when its segment is
//! acknowledged, SACKed, marked lost or sent again; the detection drops stale entries as it
//! meets them, so each costs one visit after it went stale. The owner keeps the invariant:
//! every segment neither SACKed nor marked lost has an entry, and the entries' send times
//! never decrease from front to back.

use crate::time::Time;
use std::collections::VecDeque;

#[derive(Debug, Default)]
pub(super) struct SentOrder(VecDeque<(Time, u64)>);

impl SentOrder {
    /// A transmission at `ts`, no earlier than any before it.
    pub fn push(&mut self, ts: Time, start: u64) {
        debug_assert!(self.0.back().is_none_or(|&(t, _)| t <= ts));
        self.0.push_back((ts, start));
    }

    /// The uncovered tail of a segment partly sent again keeps its send time: it goes
    /// where that time places it (rare: a retransmission smaller than the segment).
    pub fn insert(&mut self, ts: Time, start: u64) {
        let i = self.0.partition_point(|&(t, _)| t <= ts);
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

    /// Judge every entry sent at or before `until` (`keep(ts, start)`: false drops it);
    /// those sent later are not visited. Entries are judged newest first: the caller's
    /// verdicts must not depend on their order.
    pub fn sweep(&mut self, until: Time, mut keep: impl FnMut(Time, u64) -> bool) {
        let end = self
            .0
            .iter()
            .position(|&(t, _)| t > until)
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
        let mut seen = Vec::new();
        o.sweep(3, |ts, start| {
            seen.push((ts, start));
            start == 10 || start == 99
        });
        seen.reverse();
        assert_eq!(seen, [(1, 0), (1, 10), (2, 20), (2, 99), (3, 30)]);
        assert_eq!(o.entries(), [(1, 10), (2, 99), (5, 40)]);
        o.sweep(0, |_, _| panic!("nothing was sent by 0"));
        o.rebuild([(7, 1), (4, 2), (4, 1)].into_iter());
        assert_eq!(o.entries(), [(4, 1), (4, 2), (7, 1)]);
    }
}
