//! BIC TCP: Xu, Harfoush & Rhee, "Binary Increase Congestion Control for Fast, Long Distance
//! Networks", INFOCOM 2004, section 3, with the Linux `tcp_bic` defaults and regions.
//!
//! W_max is the window at the last loss. Per round trip, in segments, with B the search
//! divisor: below W_max, binary search: cwnd grows by dist = (W_max - cwnd) / B, at most S_max
//! (additive increase far from W_max) and S_min once dist <= 1; above W_max, max probing:
//! S_min within B segments of W_max, then (cwnd - W_max) / (B - 1) (slow start mirrored), then
//! S_max. Before any loss (W_max unknown) growth is at least cwnd/20 per round trip (Linux).
//! At or below `low_window` BIC is Reno. Each acknowledged segment adds increment/cwnd (Linux,
//! ns-3). Slow start is RFC 5681's.
//!
//! On a loss, with W the window in use (min(cwnd, FlightSize)): W_max = W x (1 + beta)/2 if
//! W < W_max and fast convergence is on (paper: (2 - beta')/2 with beta' = 1 - beta; Linux;
//! ns-3 uses beta x W), else W_max = W; ssthresh = max(beta x FlightSize, 2 MSS), or Reno's half
//! at or below `low_window`. A timeout sets ssthresh the same way, then forgets W_max (Linux
//! resets BIC on entering the Loss state). Computed on real-valued segments (Linux uses
//! integers, e.g. its `dist <= 1` holds up to W_max - cwnd < 2B).

use super::frac::{cwnd_segments, segments_acked, slow_start, Carry};
use super::{scaled_ssthresh, AckEvent, CongestionControl, ControllerFactory, Window};
use crate::error::FieldError;
use crate::time::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// BIC settings (`[flows.tcp.bic]`), Linux `tcp_bic` defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct BicParams {
    /// Multiplicative decrease: ssthresh = beta x FlightSize. 0.8 (Linux 819/1024, ns-3). In (0, 1).
    pub beta: f64,
    /// S_max, segments: the largest increase per round trip. 16 (Linux `max_increment`). > 0.
    pub max_increment: f64,
    /// S_min, segments: the increase per round trip next to W_max. 0.2, Linux's
    /// B / smooth_part = 4/20 (ns-3's smooth part 5 gives 0.8; the paper uses 0.01).
    /// > 0 and <= max_increment.
    pub min_increment: f64,
    /// B: each round trip of the binary search covers 1/B of the distance to W_max. 4 (Linux,
    /// ns-3). >= 2.
    pub search_divisor: u32,
    /// Segments at or below which BIC behaves as Reno (TCP friendliness). 14 (Linux). >= 0.
    pub low_window: u32,
    /// Fast convergence: a loss below the previous W_max lowers W_max further, to
    /// W x (1 + beta)/2, to release bandwidth to new flows. true (Linux, ns-3).
    pub fast_convergence: bool,
}

impl Default for BicParams {
    fn default() -> Self {
        BicParams {
            beta: 0.8,
            max_increment: 16.0,
            min_increment: 0.2,
            search_divisor: 4,
            low_window: 14,
            fast_convergence: true,
        }
    }
}

impl ControllerFactory for BicParams {
    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(Bic::new(self))
    }

    fn validate(&self) -> Result<(), FieldError> {
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err(FieldError::new(
                "beta",
                format!("{} must be > 0 and < 1", self.beta),
            ));
        }
        if !(self.max_increment.is_finite() && self.max_increment > 0.0) {
            return Err(FieldError::new(
                "max_increment",
                format!("{} must be > 0", self.max_increment),
            ));
        }
        if !(self.min_increment > 0.0 && self.min_increment <= self.max_increment) {
            return Err(FieldError::new(
                "min_increment",
                format!(
                    "{} must be > 0 and <= max_increment ({})",
                    self.min_increment, self.max_increment
                ),
            ));
        }
        if self.search_divisor < 2 {
            return Err(FieldError::new(
                "search_divisor",
                format!("{} must be >= 2", self.search_divisor),
            ));
        }
        Ok(())
    }
}

#[derive(Debug)]
pub struct Bic {
    p: BicParams,
    /// Window at the last loss, segments (0: none yet).
    w_max: f64,
    carry: Carry,
}

impl Bic {
    pub fn new(p: &BicParams) -> Self {
        Bic {
            p: p.clone(),
            w_max: 0.0,
            carry: Carry::default(),
        }
    }

    /// The increase over the next round trip at window `c` segments.
    fn increment(&self, c: f64) -> f64 {
        let p = &self.p;
        if c <= p.low_window as f64 {
            return 1.0;
        }
        let (b, smax, smin, wmax) = (
            p.search_divisor as f64,
            p.max_increment,
            p.min_increment,
            self.w_max,
        );
        let inc = if c < wmax {
            let dist = (wmax - c) / b;
            if dist > smax {
                smax
            } else if dist <= 1.0 {
                smin
            } else {
                dist
            }
        } else if c < wmax + b {
            smin
        } else if c < wmax + smax * (b - 1.0) {
            (c - wmax) / (b - 1.0)
        } else {
            smax
        };
        if wmax == 0.0 {
            inc.max(c / 20.0)
        } else {
            inc
        }
    }

    fn decreased(&mut self, w: &Window, flight: u64) -> u64 {
        self.carry.clear();
        let c = w.cwnd.min(flight) as f64 / w.mss as f64;
        self.w_max = if self.p.fast_convergence && c < self.w_max {
            c * (1.0 + self.p.beta) / 2.0
        } else {
            c
        };
        let factor = if c <= self.p.low_window as f64 {
            0.5
        } else {
            self.p.beta
        };
        scaled_ssthresh(w, flight, factor)
    }
}

impl CongestionControl for Bic {
    fn name(&self) -> &'static str {
        "bic"
    }

    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        if w.in_slow_start() {
            slow_start(w, ev);
            return;
        }
        let c = cwnd_segments(w);
        let inc = self.increment(c) / c * segments_acked(w, ev) * w.mss as f64;
        self.carry.grow(w, inc);
    }

    fn ssthresh_after_loss(&mut self, w: &Window, flight: u64, _now: Time) -> u64 {
        self.decreased(w, flight)
    }

    // Not the default: a timeout also forgets W_max (Linux resets BIC on entering Loss).
    fn on_timeout(&mut self, w: &mut Window, flight: u64, _now: Time) {
        w.ssthresh = self.decreased(w, flight);
        w.cwnd = w.mss;
        self.w_max = 0.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_util::{acked, window};

    const MSS: u64 = 1000;

    fn bic_with_wmax(w_max: f64) -> Bic {
        let mut b = Bic::new(&BicParams::default());
        b.w_max = w_max;
        b
    }

    #[test]
    fn increment_per_round_trip_in_each_region() {
        let b = bic_with_wmax(100.0);
        // binary search: dist = (100 - 60)/4 = 10
        assert_eq!(b.increment(60.0), 10.0);
        // dist <= 1 (within B of W_max): S_min
        assert_eq!(b.increment(97.0), 0.2);
        // just above W_max (< W_max + B): S_min
        assert_eq!(b.increment(102.0), 0.2);
        // max probing: (110 - 100)/(4 - 1)
        assert!((b.increment(110.0) - 10.0 / 3.0).abs() < 1e-12);
        // beyond W_max + S_max (B - 1) = 148: S_max
        assert_eq!(b.increment(150.0), 16.0);
        // far below: dist = (200 - 60)/4 = 35 > S_max: additive increase S_max
        assert_eq!(bic_with_wmax(200.0).increment(60.0), 16.0);
        // at or below low_window: Reno, one segment per round trip
        assert_eq!(b.increment(14.0), 1.0);
        // no loss yet: max(region increment, cwnd/20)
        let fresh = bic_with_wmax(0.0);
        assert_eq!(fresh.increment(100.0), 16.0);
        assert_eq!(fresh.increment(400.0), 20.0);
        assert!(
            (fresh.increment(30.0) - 10.0).abs() < 1e-12,
            "30/3 below 0 + 16 x 3"
        );
    }

    #[test]
    fn each_segment_acked_adds_increment_over_cwnd() {
        let mut b = bic_with_wmax(100.0);
        let mut w = window(60 * MSS, 50 * MSS, MSS);
        // 10/60 segment = 166.667 B: 166 now, 0.667 carried
        b.on_ack(&mut w, &acked(MSS));
        assert_eq!(w.cwnd, 60_166);
        // c = 60.166: dist = 9.9585; 9.9585/60.166 x 1000 = 165.517 + 0.667 = 166.18 -> 166
        b.on_ack(&mut w, &acked(MSS));
        assert_eq!(w.cwnd, 60_332);
        // a delayed ACK of two segments counts twice: c = 60.332, dist = 9.917,
        // 2 x 9.917/60.332 x 1000 = 328.75 + 0.18 carried -> 328
        b.on_ack(&mut w, &acked(2 * MSS));
        assert_eq!(w.cwnd, 60_660);
        // slow start: RFC 5681
        let mut w = window(10 * MSS, u64::MAX, MSS);
        b.on_ack(&mut w, &acked(2 * MSS));
        assert_eq!(w.cwnd, 11 * MSS);
    }

    #[test]
    fn loss_sets_w_max_with_fast_convergence_and_beta() {
        let mut b = Bic::new(&BicParams::default());
        let w = |segs: u64| window(segs * MSS, u64::MAX, MSS);
        // First loss at 100 segments: W_max = 100, ssthresh = 0.8 x 100 000
        assert_eq!(b.ssthresh_after_loss(&w(100), 100 * MSS, 0), 80_000);
        assert_eq!(b.w_max, 100.0);
        // Next loss at 90 < W_max: fast convergence, W_max = 90 x 1.8/2 = 81
        assert_eq!(b.ssthresh_after_loss(&w(90), 90 * MSS, 0), 72_000);
        assert!((b.w_max - 81.0).abs() < 1e-12);
        // At 120 > W_max: W_max = 120
        b.ssthresh_after_loss(&w(120), 122 * MSS, 0);
        assert_eq!(b.w_max, 120.0, "min(cwnd, flight)");
        // Without fast convergence W_max is the window
        let mut nf = Bic::new(&BicParams {
            fast_convergence: false,
            ..Default::default()
        });
        nf.ssthresh_after_loss(&w(100), 100 * MSS, 0);
        nf.ssthresh_after_loss(&w(90), 90 * MSS, 0);
        assert_eq!(nf.w_max, 90.0);
        // At or below low_window: Reno's half
        assert_eq!(b.ssthresh_after_loss(&w(10), 10 * MSS, 0), 5 * MSS);
        // Timeout: same ssthresh, cwnd 1 MSS, W_max forgotten
        let mut w2 = w(100);
        b.on_timeout(&mut w2, 100 * MSS, 0);
        assert_eq!((w2.cwnd, w2.ssthresh, b.w_max), (MSS, 80_000, 0.0));
    }

    #[test]
    fn validation_names_the_field() {
        let p = BicParams {
            search_divisor: 1,
            ..Default::default()
        };
        assert!(p.validate().unwrap_err().path == "search_divisor");
        let p = BicParams {
            min_increment: 20.0,
            ..Default::default()
        };
        assert!(p.validate().unwrap_err().path == "min_increment");
    }
}
