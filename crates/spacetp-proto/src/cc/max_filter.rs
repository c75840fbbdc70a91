//! A windowed maximum over a window counted in rounds: Kathleen Nichols' algorithm as Linux's
//! `lib/minmax.c` keeps it, three samples (the best, the second best after it, the third
//! best after that) so that an old maximum ages out within the window without storing every
//! sample. BBR v1's bottleneck bandwidth is this filter over 10 packet-timed rounds; BBRv3's over
//! two ProbeBW cycles, and its ACK-aggregation estimate over 10 rounds.

#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Sample {
    t: u64,
    v: f64,
}

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct MaxFilter {
    s: [Sample; 3],
}

impl MaxFilter {
    /// The windowed maximum (0 before any sample).
    pub fn get(&self) -> f64 {
        self.s[0].v
    }

    /// Forget everything but `v` measured at `t`.
    pub fn reset(&mut self, t: u64, v: f64) {
        self.s = [Sample { t, v }; 3];
    }

    /// `minmax_running_max`: add the measurement `v` taken at round `t`, the window being
    /// `win` rounds long.
    pub fn update(&mut self, win: u64, t: u64, v: f64) {
        let val = Sample { t, v };
        if v >= self.s[0].v || t.wrapping_sub(self.s[2].t) > win {
            self.reset(t, v);
            return;
        }
        if v >= self.s[1].v {
            self.s[2] = val;
            self.s[1] = val;
        } else if v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwindow_update(win, val);
    }

    /// `minmax_subwin_update`: age the best out once it is older than the window, and keep
    /// the second and third samples from the later quarter and half of it.
    fn subwindow_update(&mut self, win: u64, val: Sample) {
        let dt = val.t.wrapping_sub(self.s[0].t);
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.wrapping_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            self.s[2] = val;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_maximum_holds_for_the_window_then_ages_out() {
        let mut f = MaxFilter::default();
        f.update(10, 1, 100.0);
        for t in 2..=11 {
            f.update(10, t, 50.0);
            assert_eq!(f.get(), 100.0, "round {t}: still inside the window");
        }
        f.update(10, 12, 50.0);
        assert_eq!(f.get(), 50.0, "11 rounds after it, the peak is gone");
    }

    #[test]
    fn a_new_maximum_replaces_the_old_at_once() {
        let mut f = MaxFilter::default();
        f.update(10, 1, 100.0);
        f.update(10, 2, 150.0);
        assert_eq!(f.get(), 150.0);
    }

    #[test]
    fn a_falling_rate_is_followed_within_one_window() {
        // Samples fall by 10 per round: after the window the max is a recent sample.
        let mut f = MaxFilter::default();
        for t in 0..30u64 {
            f.update(10, t, 1000.0 - 10.0 * t as f64);
        }
        let m = f.get();
        assert!(
            (1000.0 - 10.0 * 29.0..=1000.0 - 10.0 * 19.0).contains(&m),
            "{m}"
        );
    }
}
