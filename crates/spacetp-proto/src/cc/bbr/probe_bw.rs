//! ProbeBW: pace at the bandwidth estimate times a gain that cycles through eight phases of
//! about one min_rtt each: 5/4 to probe for more bandwidth, 3/4 to drain the queue that
//! probing made, then six at 1 (`bbr_pacing_gain`, `bbr_is_next_cycle_phase`). The cycle
//! starts at a random phase other than the draining one, so that flows do not probe together.

use super::{Bbr, BbrMode};
use crate::cc::{AckEvent, ControlInput};

/// Phases of the gain cycle (`CYCLE_LEN`).
pub(super) const CYCLE_LEN: usize = 8;
const PACING_GAIN: [f64; CYCLE_LEN] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// Phases a new cycle may start from (`bbr_cycle_rand`).
const CYCLE_RAND: u64 = 7;

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Cycle {
    idx: usize,
    /// When the current phase began (`cycle_mstamp`).
    start: u64,
}

impl Cycle {
    pub fn gain(&self) -> f64 {
        PACING_GAIN[self.idx]
    }

    /// Whether this is the probing phase (the quantization budget adds 2 packets to it).
    pub fn probing(&self) -> bool {
        self.idx == 0
    }
}

impl Bbr {
    /// `bbr_reset_probe_bw_mode`.
    pub(super) fn enter_probe_bw(&mut self) {
        self.mode = BbrMode::ProbeBw;
        let r = self.random(self.delivered_stamp) % CYCLE_RAND;
        self.cycle.idx = CYCLE_LEN - 1 - r as usize;
        self.advance_cycle_phase();
    }

    fn advance_cycle_phase(&mut self) {
        self.cycle.idx = (self.cycle.idx + 1) % CYCLE_LEN;
        self.cycle.start = self.delivered_stamp;
    }

    /// `bbr_update_cycle_phase`.
    pub(super) fn update_cycle_phase(&mut self, ev: &AckEvent, c: &ControlInput) {
        if self.mode == BbrMode::ProbeBw && self.is_next_cycle_phase(ev, c) {
            self.advance_cycle_phase();
        }
    }

    /// A phase lasts at least min_rtt; probing also waits until the inflight target of its
    /// gain is reached (or a loss says it will not fit); draining stops early once what is
    /// in flight is back to one BDP.
    fn is_next_cycle_phase(&self, ev: &AckEvent, c: &ControlInput) -> bool {
        let elapsed = self.delivered_stamp.saturating_sub(self.cycle.start);
        let full_length = elapsed > self.min_rtt.unwrap_or(u64::MAX);
        let gain = self.pacing_gain;
        if gain == 1.0 {
            return full_length;
        }
        let inflight = ev.flight_before;
        let bw = self.max_bw();
        if gain > 1.0 {
            return full_length && (c.losses > 0 || inflight >= self.inflight(bw, gain));
        }
        full_length || inflight <= self.inflight(bw, 1.0)
    }
}
