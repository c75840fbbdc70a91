//! Startup: pacing and cwnd gains of 2/ln 2 double the sending rate each round until the
//! pipe is full, which BBR estimates when the bandwidth maximum grew by less than 25% over
//! three rounds that were not application-limited (`bbr_check_full_bw_reached`: one round
//! for receive-window autotuning to grow the window, one to fill it, one to see the rate).

use super::Bbr;
use crate::cc::AckEvent;

/// Growth that counts as "still growing" (`bbr_full_bw_thresh`, 1.25).
const FULL_BW_GROWTH: f64 = 1.25;
/// Rounds without such growth that mean the pipe is full (`bbr_full_bw_cnt`).
const FULL_BW_ROUNDS: u32 = 3;

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct FullPipe {
    /// The bandwidth at the last growth, and rounds since without growth.
    full_bw: f64,
    rounds_without_growth: u32,
    reached: bool,
}

impl FullPipe {
    pub fn reached(&self) -> bool {
        self.reached
    }

    /// A timeout: the next rounds are compared afresh (`full_bw = 0`); whether the pipe was
    /// once full stays known.
    pub fn restart_full_bw(&mut self) {
        self.full_bw = 0.0;
    }
}

impl Bbr {
    pub(super) fn check_full_bw_reached(&mut self, ev: &AckEvent) {
        let app_limited = ev.rate.is_some_and(|r| r.is_app_limited);
        if self.startup.reached || !self.round_start || app_limited {
            return;
        }
        let max_bw = self.max_bw();
        let s = &mut self.startup;
        if max_bw >= s.full_bw * FULL_BW_GROWTH {
            s.full_bw = max_bw;
            s.rounds_without_growth = 0;
            return;
        }
        s.rounds_without_growth += 1;
        s.reached = s.rounds_without_growth >= FULL_BW_ROUNDS;
    }
}
