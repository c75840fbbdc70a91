//! Segments to resend at once, outside the loss-recovery algorithm: named by SCPS-TP SNACKs,
//! by a timeout under the corruption policy or a restored link, or held back by rate
//! control. A segment resent less than one round trip ago is not resent again, and a segment
//! is queued at most once.

use crate::time::Time;
use std::collections::VecDeque;

/// How many recent resends are remembered (older ones are long past one round trip).
const RECENT_LIMIT: usize = 4096;

#[derive(Debug, Default)]
pub(crate) struct ResendQueue {
    /// Segment starts to send now, in order, and whether a SNACK named each.
    due: VecDeque<(u64, bool)>,
    /// When recently resent segment starts went out, oldest first.
    recent: VecDeque<(u64, Time)>,
}

impl ResendQueue {
    /// Queue `pos` first, unless it is queued already: a position waits once, however often
    /// it is asked for while it waits (a retransmission held by pacing is asked for again on
    /// every ACK that arrives before its departure time, and a second copy would resend it
    /// again, unlost).
    pub fn push_front(&mut self, pos: u64) {
        if !self.contains(pos) {
            self.due.push_front((pos, false));
        }
    }

    /// Queue `pos`, named by an SCPS-TP SNACK, last, unless it is queued already.
    pub fn push_back_snacked(&mut self, pos: u64) {
        if !self.contains(pos) {
            self.due.push_back((pos, true));
        }
    }

    /// The next segment start, and whether a SNACK named it.
    pub fn front(&self) -> Option<(u64, bool)> {
        self.due.front().copied()
    }

    pub fn pop_front(&mut self) {
        self.due.pop_front();
    }

    pub fn contains(&self, pos: u64) -> bool {
        self.due.iter().any(|&(p, _)| p == pos)
    }

    pub fn is_empty(&self) -> bool {
        self.due.is_empty()
    }

    /// The segment at `pos` went out again at `now`.
    pub fn record(&mut self, pos: u64, now: Time) {
        self.recent.push_back((pos, now));
        if self.recent.len() > RECENT_LIMIT {
            self.recent.pop_front();
        }
    }

    /// Whether the segment at `pos` was resent less than `window` before `now`.
    pub fn resent_within(&self, pos: u64, now: Time, window: Time) -> bool {
        self.recent
            .iter()
            .any(|&(p, t)| p == pos && now < t + window)
    }
}
