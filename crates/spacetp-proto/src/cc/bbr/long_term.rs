//! Long-term bandwidth sampling (`bbr_lt_bw_sampling`): a token-bucket policer lets bursts
//! through and then drops at its rate, which the max filter would overestimate. From the
//! first loss, BBR measures delivery over intervals of 4 to 16 rounds that each end with a
//! loss; when two consecutive intervals both lose at least 20% and their rates agree within
//! 1/8 or 4 kb/s, it paces at their mean (gain 1) for 48 rounds, then probes again.

use super::{Bbr, BbrMode};
use crate::cc::ControlInput;
use crate::time::{Time, MS};

/// Rounds an interval lasts at least (`bbr_lt_intvl_min_rtts`); at most 4 times that.
const MIN_ROUNDS: u32 = 4;
/// Loss rate that suggests a policer (`bbr_lt_loss_thresh`, 50/256).
const LOSS_THRESHOLD: f64 = 50.0 / 256.0;
/// Two intervals agree within this ratio (`bbr_lt_bw_ratio`, 1/8) ...
const BW_RATIO: f64 = 1.0 / 8.0;
/// ... or this difference, bytes per second (`bbr_lt_bw_diff`, 4 kb/s).
const BW_DIFF: f64 = 4000.0 / 8.0;
/// Rounds the policed rate is used before probing again (`bbr_lt_bw_max_rtts`).
const MAX_ROUNDS: u32 = 48;

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct LongTerm {
    is_sampling: bool,
    use_bw: bool,
    /// The rate of the last interval, or the policed rate in use (bytes per second).
    bw: f64,
    rounds: u32,
    /// Where the interval began: time (ms resolution, as Linux), delivered and lost.
    last_stamp: Time,
    last_delivered: u64,
    last_lost: u64,
}

impl LongTerm {
    pub fn bw_in_use(&self) -> Option<f64> {
        self.use_bw.then_some(self.bw)
    }

    fn reset_interval(&mut self, stamp: Time, c: &ControlInput) {
        self.last_stamp = stamp / MS * MS;
        self.last_delivered = c.delivered;
        self.last_lost = c.lost;
        self.rounds = 0;
    }

    fn reset(&mut self, stamp: Time, c: &ControlInput) {
        self.bw = 0.0;
        self.use_bw = false;
        self.is_sampling = false;
        self.reset_interval(stamp, c);
    }
}

impl Bbr {
    /// `bbr_reset_lt_bw_sampling`: forget the policer estimate and start over.
    pub(super) fn reset_long_term(&mut self) {
        let (stamp, last) = (self.delivered_stamp, self.last);
        self.lt.reset(stamp, &last);
    }

    pub(super) fn long_term_sampling(&mut self, app_limited: bool, c: &ControlInput) {
        let stamp = self.delivered_stamp;
        let lt = &mut self.lt;
        if lt.use_bw {
            if self.mode == BbrMode::ProbeBw && self.round_start {
                lt.rounds += 1;
                if lt.rounds >= MAX_ROUNDS {
                    lt.reset(stamp, c);
                    self.enter_probe_bw();
                }
            }
            return;
        }
        // Wait for the first loss, which empties the policer's bucket.
        if !lt.is_sampling {
            if c.losses == 0 {
                return;
            }
            lt.reset_interval(stamp, c);
            lt.is_sampling = true;
        }
        if app_limited {
            lt.reset(stamp, c);
            return;
        }
        if self.round_start {
            lt.rounds += 1;
        }
        if lt.rounds < MIN_ROUNDS {
            return;
        }
        if lt.rounds > 4 * MIN_ROUNDS {
            lt.reset(stamp, c);
            return;
        }
        // End the interval at a loss: the bucket is empty then.
        if c.losses == 0 {
            return;
        }
        let lost = c.lost - lt.last_lost;
        let delivered = c.delivered - lt.last_delivered;
        if delivered == 0 || (lost as f64) < LOSS_THRESHOLD * delivered as f64 {
            return;
        }
        let t = (stamp / MS * MS).saturating_sub(lt.last_stamp);
        if t < MS {
            return;
        }
        let bw = delivered as f64 * 1e9 / t as f64;
        self.long_term_interval_done(bw, c);
    }

    /// `bbr_lt_bw_interval_done`: two intervals that agree mean a policer.
    fn long_term_interval_done(&mut self, bw: f64, c: &ControlInput) {
        let lt = &mut self.lt;
        if lt.bw > 0.0 {
            let diff = (bw - lt.bw).abs();
            if diff <= BW_RATIO * lt.bw || diff * 0.99 <= BW_DIFF {
                lt.bw = (bw + lt.bw) / 2.0;
                lt.use_bw = true;
                self.pacing_gain = 1.0;
                lt.rounds = 0;
                return;
            }
        }
        lt.bw = bw;
        lt.reset_interval(self.delivered_stamp, c);
    }
}
