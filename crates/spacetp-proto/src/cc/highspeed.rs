//! HighSpeed TCP, RFC 3649 (Floyd 2003), section 5, with w = cwnd in segments:
//! - `b(w) = (High_Decrease - 0.5) (log w - log Low_Window) / (log High_Window - log Low_Window) + 0.5`
//! - `p(w)` interpolates log p linearly in log w from (Low_Window, Low_P) to
//!   (High_Window, High_P), with `Low_P = 1.5 / Low_Window^2` (Reno's response function at
//!   Low_Window, as in Floyd's ns-2 implementation; so a(Low_Window) = 1 exactly);
//! - `a(w) = w^2 p(w) 2 b(w) / (2 - b(w))`; for w <= Low_Window, a = 1 and b = 0.5 (Reno).
//!
//! Avoidance adds a(w)/w segments per segment acknowledged (per ACK in the RFC, which assumes
//! one ACK per segment; ns-3 counts segments as here, Linux counts ACKs); a loss or timeout
//! sets ssthresh = max((1 - b(w)) x FlightSize, 2 MSS) with w = FlightSize in segments (ns-3;
//! RFC 5681 uses FlightSize for Reno too). Slow start is RFC 5681's. Linux and ns-3 look a and
//! b up in the RFC's Appendix B table (a step function of w) instead of evaluating them; that
//! table was computed with the rounded response function p = 0.078 / w^1.2, so it lies up to
//! 5 % below a(w) here (e.g. 8 vs 8.31 at w = 1058). Above High_Window, b stays at
//! High_Decrease (the formula would keep falling toward 0).

use super::frac::{cwnd_segments, segments_acked, slow_start, Carry};
use super::{scaled_ssthresh, AckEvent, CongestionControl, ControllerFactory, Window};
use crate::error::FieldError;
use crate::time::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// HighSpeed TCP settings (`[flows.tcp.highspeed]`), RFC 3649 section 5.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct HighSpeedParams {
    /// Low_Window, segments: at or below it HighSpeed is Reno (a = 1, b = 0.5). 38. >= 1.
    pub low_window: f64,
    /// High_Window, segments: the window reached at loss rate High_P. 83000. > low_window.
    pub high_window: f64,
    /// High_P: the loss rate at which the window is High_Window. 1e-7. In (0, 1.5 / low_window^2).
    pub high_p: f64,
    /// High_Decrease: b(High_Window), the decrease factor at High_Window. 0.1. In (0, 0.5].
    pub high_decrease: f64,
}

impl Default for HighSpeedParams {
    fn default() -> Self {
        HighSpeedParams {
            low_window: 38.0,
            high_window: 83000.0,
            high_p: 1e-7,
            high_decrease: 0.1,
        }
    }
}

impl ControllerFactory for HighSpeedParams {
    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(HighSpeed::new(self))
    }

    fn validate(&self) -> Result<(), FieldError> {
        let (lw, hw) = (self.low_window, self.high_window);
        if !(lw.is_finite() && lw >= 1.0) {
            return Err(FieldError::new(
                "low_window",
                format!("{lw} must be >= 1 segment"),
            ));
        }
        if !(hw.is_finite() && hw > lw) {
            return Err(FieldError::new(
                "high_window",
                format!("{hw} must be above low_window ({lw})"),
            ));
        }
        let low_p = 1.5 / (lw * lw);
        if !(self.high_p > 0.0 && self.high_p < low_p) {
            return Err(FieldError::new(
                "high_p",
                format!(
                    "{} must be > 0 and below 1.5 / low_window^2 = {low_p}",
                    self.high_p
                ),
            ));
        }
        if !(self.high_decrease > 0.0 && self.high_decrease <= 0.5) {
            return Err(FieldError::new(
                "high_decrease",
                format!("{} must be > 0 and <= 0.5", self.high_decrease),
            ));
        }
        Ok(())
    }
}

impl HighSpeedParams {
    /// Position of w between Low_Window and High_Window on a log scale (0 .. 1 and beyond).
    fn x(&self, w: f64) -> f64 {
        (w.ln() - self.low_window.ln()) / (self.high_window.ln() - self.low_window.ln())
    }

    /// The decrease parameter b(w).
    pub fn b(&self, w: f64) -> f64 {
        if w <= self.low_window {
            return 0.5;
        }
        (self.high_decrease - 0.5) * self.x(w.min(self.high_window)) + 0.5
    }

    /// The loss rate p(w) of the HighSpeed response function.
    pub fn p(&self, w: f64) -> f64 {
        let low_p = 1.5 / (self.low_window * self.low_window);
        (self.x(w) * (self.high_p.ln() - low_p.ln()) + low_p.ln()).exp()
    }

    /// The increase parameter a(w), segments per round trip.
    pub fn a(&self, w: f64) -> f64 {
        if w <= self.low_window {
            return 1.0;
        }
        let b = self.b(w);
        w * w * self.p(w) * 2.0 * b / (2.0 - b)
    }
}

#[derive(Debug)]
pub struct HighSpeed {
    p: HighSpeedParams,
    carry: Carry,
}

impl HighSpeed {
    pub fn new(p: &HighSpeedParams) -> Self {
        HighSpeed {
            p: p.clone(),
            carry: Carry::default(),
        }
    }

    fn decreased(&mut self, w: &Window, flight: u64) -> u64 {
        self.carry.clear();
        let b = self.p.b(flight as f64 / w.mss as f64);
        scaled_ssthresh(w, flight, 1.0 - b)
    }
}

impl CongestionControl for HighSpeed {
    fn name(&self) -> &'static str {
        "highspeed"
    }

    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        if w.in_slow_start() {
            slow_start(w, ev);
            return;
        }
        let segs = cwnd_segments(w);
        let inc = self.p.a(segs) / segs * segments_acked(w, ev) * w.mss as f64;
        self.carry.grow(w, inc);
    }

    fn ssthresh_after_loss(&mut self, w: &Window, flight: u64, _now: Time) -> u64 {
        self.decreased(w, flight)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_util::{acked, window};

    const MSS: u64 = 1000;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn a_and_b_at_the_rfc_points() {
        let p = HighSpeedParams::default();
        // w = Low_Window = 38: Reno, a = 1 and b = 0.5, and the formula agrees there:
        // 38^2 x (1.5/38^2) x 2 x 0.5 / 1.5 = 1.
        assert_eq!((p.a(38.0), p.b(38.0)), (1.0, 0.5));
        assert!(close(38.0 * 38.0 * p.p(38.0) * 2.0 * 0.5 / 1.5, 1.0, 1e-12));
        // w = High_Window = 83000: b = High_Decrease = 0.1, p = High_P = 1e-7,
        // a = 83000^2 x 1e-7 x 2 x 0.1 / 1.9 = 72.516 (RFC: "a(w) = 72").
        assert!(close(p.b(83000.0), 0.1, 1e-12));
        assert!(close(p.p(83000.0), 1e-7, 1e-18));
        assert!(close(p.a(83000.0), 72.515_789_47, 1e-6));
        // w = 1058 (Appendix B row "1058 8 0.33"): b = 0.3269 -> 0.33; a = 8.3137.
        assert!(close(p.b(1058.0), 0.326_945_23, 1e-8));
        assert!(close(p.a(1058.0), 8.313_686_94, 1e-6));
        // w = 118 (row "118 2 0.44"): b = 0.4411, a = 2.094.
        assert!(close(p.b(118.0), 0.441_053_61, 1e-8));
        assert!(close(p.a(118.0), 2.094_494_68, 1e-6));
        // Beyond High_Window b stays at High_Decrease.
        assert_eq!(p.b(200_000.0), p.b(83000.0));
    }

    #[test]
    fn appendix_b_table_comes_from_the_rounded_response_function() {
        // The table (and Linux/ns-3, which copy it) uses p = 0.078 / w^1.2; rounding a and b
        // computed that way reproduces its rows, and a(w) above stays within 5 % of it.
        let p = HighSpeedParams::default();
        let a_table = |w: f64| {
            let b = p.b(w);
            w * w * (0.078 / w.powf(1.2)) * 2.0 * b / (2.0 - b)
        };
        for (w, a, b) in [
            (38.0, 1.0, 0.50),
            (118.0, 2.0, 0.44),
            (221.0, 3.0, 0.41),
            (1058.0, 8.0, 0.33),
            (84035.0, 71.0, 0.10),
        ] {
            assert_eq!(a_table(w).round(), a, "a at w = {w}");
            assert_eq!((p.b(w) * 100.0).round() / 100.0, b, "b at w = {w}");
            assert!((p.a(w) / a_table(w) - 1.0).abs() < 0.05, "w = {w}");
        }
    }

    #[test]
    fn avoidance_adds_a_over_w_per_segment_acked() {
        let mut hs = HighSpeed::new(&HighSpeedParams::default());
        let mut w = window(1058 * MSS, 500 * MSS, MSS);
        // a(1058)/1058 x 1000 B = 7.8579 B per segment: 7 B now, 0.8579 carried.
        hs.on_ack(&mut w, &acked(MSS));
        assert_eq!(w.cwnd, 1_058_007);
        // w = 1058.007: a(w)/w x 1000 = 7.8579; carry 0.8579 + 7.8579 = 8.7158 -> 8 B.
        hs.on_ack(&mut w, &acked(MSS));
        assert_eq!(w.cwnd, 1_058_015);
        // A delayed ACK of two segments counts twice: 2 x 7.8579 + 0.7158 = 16.43 -> 16 B.
        hs.on_ack(&mut w, &acked(2 * MSS));
        assert_eq!(w.cwnd, 1_058_031);
        // At or below Low_Window: Reno's 1/w per segment: 1000/20 = 50 B.
        let mut w = window(20 * MSS, 10 * MSS, MSS);
        hs.carry.clear();
        hs.on_ack(&mut w, &acked(MSS));
        assert_eq!(w.cwnd, 20_050);
        // Slow start: RFC 5681, one MSS per ACK.
        let mut w = Window {
            ssthresh: u64::MAX,
            ..w
        };
        hs.on_ack(&mut w, &acked(2 * MSS));
        assert_eq!(w.cwnd, 21_050);
    }

    #[test]
    fn loss_decreases_by_b_of_the_flight() {
        let mut hs = HighSpeed::new(&HighSpeedParams::default());
        let w = window(1100 * MSS, u64::MAX, MSS);
        // FlightSize 1058 segments: ssthresh = (1 - 0.326945) x 1 058 000 = 712 091.9 -> 712 092 B
        assert_eq!(hs.ssthresh_after_loss(&w, 1058 * MSS, 0), 712_092);
        // 100 segments: b(100) = 0.449664 -> (1 - b) x 100 000 = 55 033.6 -> 55 034 B
        assert_eq!(hs.ssthresh_after_loss(&w, 100 * MSS, 0), 55_034);
        // Reno below Low_Window: 30 -> 15 segments; 2 MSS floor.
        assert_eq!(hs.ssthresh_after_loss(&w, 30 * MSS, 0), 15 * MSS);
        assert_eq!(hs.ssthresh_after_loss(&w, 3 * MSS, 0), 2 * MSS);
        let mut w2 = w;
        hs.on_timeout(&mut w2, 1058 * MSS, 0);
        assert_eq!((w2.cwnd, w2.ssthresh), (MSS, 712_092));
    }

    #[test]
    fn validation_names_the_field() {
        let bad = HighSpeedParams {
            high_window: 10.0,
            ..Default::default()
        };
        assert!(bad.validate().unwrap_err().path == "high_window");
        let bad = HighSpeedParams {
            high_decrease: 0.7,
            ..Default::default()
        };
        assert!(bad.validate().unwrap_err().path == "high_decrease");
        assert!(HighSpeedParams::default().validate().is_ok());
    }
}
