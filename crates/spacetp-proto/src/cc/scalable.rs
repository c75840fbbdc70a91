//! Scalable TCP: Kelly, "Scalable TCP: Improving Performance in Highspeed Wide Area
//! Networks", CCR 33(2), 2003, section 2; the MIMD model of Altman et al., "Analysis of
//! Scalable TCP in the presence of Markovian losses" (W <- alpha W per loss-free RTT,
//! W <- beta W on loss; Kelly's alpha 1.01, beta 0.875; Altman et al. simulate beta 0.86).
//!
//! In congestion avoidance with cwnd >= `low_window` segments, cwnd grows by (alpha - 1)
//! segments per segment acknowledged (Kelly: 0.01 per ACK, one ACK per segment; Linux and ns-3
//! count segments as here), i.e. x alpha per round trip; a loss or timeout sets
//! ssthresh = max(beta x FlightSize, 2 MSS). Below `low_window` (Kelly's legacy window) the
//! increase is Reno's (1/cwnd per segment) and the decrease halves, as Kelly prescribes
//! (Linux and ns-3 apply beta at every size). Slow start is RFC 5681's. Increments are summed
//! in micro-bytes, so 100 ACKs add exactly 100 x (alpha - 1) MSS.

use super::frac::{cwnd_segments, segments_acked, slow_start, Carry};
use super::{scaled_ssthresh, AckEvent, CongestionControl, ControllerFactory, Window};
use crate::error::FieldError;
use crate::time::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Scalable TCP settings (`[flows.tcp.scalable]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ScalableParams {
    /// Multiplicative increase per loss-free round trip: cwnd grows by (alpha - 1) segments
    /// per segment acknowledged. 1.01 (Kelly). > 1.
    pub alpha: f64,
    /// Multiplicative decrease on a loss: ssthresh = beta x FlightSize. 0.875 (Kelly; Altman
    /// et al. use 0.86). In (0, 1).
    pub beta: f64,
    /// Legacy window, segments: below it the window grows and shrinks as Reno. 16 (Kelly;
    /// Altman et al.'s B_l is 8). >= 0.
    pub low_window: u32,
    /// Legacy window of the decrease alone, segments (absent: `low_window`): below it a loss
    /// halves, at or above it beta applies. ns-3's TcpScalable grows by 1/min(cwnd,
    /// AIFactor = 50) per ACK (`low_window = 50`, `alpha = 1.02`) but cuts by beta at every
    /// size: `low_window_decrease = 0`.
    #[serde(default)]
    pub low_window_decrease: Option<u32>,
}

impl Default for ScalableParams {
    fn default() -> Self {
        ScalableParams {
            alpha: 1.01,
            beta: 0.875,
            low_window: 16,
            low_window_decrease: None,
        }
    }
}

impl ControllerFactory for ScalableParams {
    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(Scalable::new(self))
    }

    fn validate(&self) -> Result<(), FieldError> {
        if !(self.alpha.is_finite() && self.alpha > 1.0) {
            return Err(FieldError::new(
                "alpha",
                format!("{} must be > 1", self.alpha),
            ));
        }
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err(FieldError::new(
                "beta",
                format!("{} must be > 0 and < 1", self.beta),
            ));
        }
        Ok(())
    }
}

#[derive(Debug)]
pub struct Scalable {
    p: ScalableParams,
    carry: Carry,
}

impl Scalable {
    pub fn new(p: &ScalableParams) -> Self {
        Scalable {
            p: p.clone(),
            carry: Carry::default(),
        }
    }

    fn decreased(&mut self, w: &Window, flight: u64) -> u64 {
        self.carry.clear();
        let low = self.p.low_window_decrease.unwrap_or(self.p.low_window);
        let factor = if flight < low as u64 * w.mss {
            0.5
        } else {
            self.p.beta
        };
        scaled_ssthresh(w, flight, factor)
    }
}

impl CongestionControl for Scalable {
    fn name(&self) -> &'static str {
        "scalable"
    }

    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        if w.in_slow_start() {
            slow_start(w, ev);
            return;
        }
        let segs = segments_acked(w, ev);
        let per_segment = if cwnd_segments(w) >= self.p.low_window as f64 {
            self.p.alpha - 1.0
        } else {
            1.0 / cwnd_segments(w)
        };
        self.carry.grow(w, per_segment * segs * w.mss as f64);
    }

    fn ssthresh_after_loss(&mut self, w: &Window, flight: u64, _now: Time) -> u64 {
        self.decreased(w, flight)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_util::{acked, window};

    #[test]
    fn hundred_acks_add_exactly_hundred_times_alpha_minus_one_segments() {
        for mss in [1000u64, 1460, 536] {
            let mut s = Scalable::new(&ScalableParams::default());
            let mut w = window(100 * mss, 50 * mss, mss);
            for _ in 0..100 {
                s.on_ack(&mut w, &acked(mss));
            }
            // 100 x 0.01 x MSS = exactly one MSS
            assert_eq!(w.cwnd, 101 * mss, "mss {mss}");
        }
        // alpha 1.05, MSS 1000: 50 B per segment; a delayed ACK of 2 segments adds 100 B.
        let mut s = Scalable::new(&ScalableParams {
            alpha: 1.05,
            ..Default::default()
        });
        let mut w = window(40_000, 1000, 1000);
        s.on_ack(&mut w, &acked(2000));
        assert_eq!(w.cwnd, 40_100);
    }

    #[test]
    fn per_rtt_growth_is_multiplicative() {
        // One round trip at W = 200 segments, one ACK per segment: W x 1.01 (to the byte,
        // as W grows within the round: 200 x 0.01 = 2 segments).
        let mut s = Scalable::new(&ScalableParams::default());
        let mut w = window(200_000, 1000, 1000);
        for _ in 0..200 {
            s.on_ack(&mut w, &acked(1000));
        }
        assert_eq!(w.cwnd, 202_000);
    }

    #[test]
    fn below_the_legacy_window_grows_as_reno() {
        let mut s = Scalable::new(&ScalableParams::default());
        // 10 segments < 16: 1/10 segment per segment acked = 100 B
        let mut w = window(10_000, 5_000, 1000);
        s.on_ack(&mut w, &acked(1000));
        assert_eq!(w.cwnd, 10_100);
        // Slow start: RFC 5681
        let mut w = Window {
            ssthresh: u64::MAX,
            ..w
        };
        s.on_ack(&mut w, &acked(1000));
        assert_eq!(w.cwnd, 11_100);
    }

    #[test]
    fn loss_and_timeout_multiply_the_flight_by_beta() {
        let mut s = Scalable::new(&ScalableParams::default());
        let w = window(100_000, u64::MAX, 1000);
        // 0.875 x 100 000
        assert_eq!(s.ssthresh_after_loss(&w, 100_000, 0), 87_500);
        // Below the legacy window (16 segments): Reno's half
        assert_eq!(s.ssthresh_after_loss(&w, 10_000, 0), 5_000);
        assert_eq!(s.ssthresh_after_loss(&w, 3_000, 0), 2_000);
        // Altman et al.'s beta 0.86, B_l 8: 0.86 x 10 000
        let mut a = Scalable::new(&ScalableParams {
            beta: 0.86,
            low_window: 8,
            ..Default::default()
        });
        assert_eq!(a.ssthresh_after_loss(&w, 10_000, 0), 8_600);
        let mut w2 = w;
        s.on_timeout(&mut w2, 100_000, 0);
        assert_eq!((w2.cwnd, w2.ssthresh), (1000, 87_500));
    }

    #[test]
    fn validation_names_the_field() {
        let p = ScalableParams {
            alpha: 1.0,
            ..Default::default()
        };
        assert!(p.validate().unwrap_err().path == "alpha");
        let p = ScalableParams {
            beta: 1.2,
            ..Default::default()
        };
        assert!(p.validate().unwrap_err().path == "beta");
    }

    #[test]
    fn the_decrease_can_ignore_the_legacy_window_as_ns3() {
        // Kelly: below low_window a loss halves; ns-3's TcpScalable cuts by MDFactor at
        // every size (low_window_decrease = 0) while still growing Reno-like below AIFactor.
        let w = window(10_000, 5_000, 1000);
        let kelly = Scalable::new(&ScalableParams::default()).decreased(&w, 10_000);
        let ns3 = Scalable::new(&ScalableParams {
            low_window_decrease: Some(0),
            ..Default::default()
        })
        .decreased(&w, 10_000);
        assert_eq!((kelly, ns3), (5_000, 8_750));
        // The increase still follows low_window: 10 segments < 16 grows by 1/cwnd per segment.
        let grow = |p: ScalableParams| {
            let mut s = Scalable::new(&p);
            let mut w = window(10_000, 5_000, 1000);
            for _ in 0..10 {
                s.on_ack(&mut w, &acked(1000));
            }
            w.cwnd
        };
        let ns3 = ScalableParams {
            low_window_decrease: Some(0),
            ..Default::default()
        };
        assert_eq!(grow(ns3), grow(ScalableParams::default()));
        assert!(
            grow(ScalableParams::default()) < 10_100 + 900,
            "Reno-like, about 1 MSS"
        );
    }
}
