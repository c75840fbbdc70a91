//! TCP Hybla: Caini & Firrincieli, "TCP Hybla: a TCP enhancement for heterogeneous networks",
//! Int. J. Satellite Communications and Networking 22(5), 2004, section 3.
//!
//! With the normalised round trip `rho = max(RTT / RTT0, 1)` (RTT: the minimum RTT seen, as
//! ns-3; Linux uses the minimum smoothed RTT), Hybla scales Reno's per-ACK increments so that
//! a long-delay connection grows like one with round trip RTT0:
//! - slow start: cwnd += (2^rho - 1) segments per ACK (never past ssthresh, as Linux and ns-3);
//! - avoidance: cwnd += rho^2 / cwnd segments per ACK.
//!
//! Per ACK as the paper and Linux (ns-3 counts acknowledged segments in avoidance), so that
//! at rho = 1 Hybla is exactly this crate's NewReno: an ACK of a short segment grows slow start
//! by (2^rho - 1) x the bytes it acks. Losses and timeouts are Reno's (RFC 5681). Linux also
//! sets the initial window to rho segments; here `initial_window` decides.

use super::frac::Carry;
use super::{reno_ssthresh, AckEvent, CongestionControl, ControllerFactory, Window};
use crate::error::FieldError;
use crate::time::{Time, MS};
use crate::units::Duration;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Hybla settings (`[flows.tcp.hybla]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct HyblaParams {
    /// Reference round trip RTT0: connections with a longer RTT grow as fast (in segments per
    /// second) as one with this RTT. 25 ms (Caini & Firrincieli; Linux); ns-3 uses 50 ms. > 0.
    pub rtt0: Duration,
}

impl Default for HyblaParams {
    fn default() -> Self {
        HyblaParams {
            rtt0: Duration(25 * MS),
        }
    }
}

impl ControllerFactory for HyblaParams {
    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(Hybla::new(self))
    }

    fn validate(&self) -> Result<(), FieldError> {
        if self.rtt0.0 == 0 {
            return Err(FieldError::new("rtt0", "must be > 0"));
        }
        Ok(())
    }
}

#[derive(Debug)]
pub struct Hybla {
    p: HyblaParams,
    rho: f64,
    carry: Carry,
}

impl Hybla {
    pub fn new(p: &HyblaParams) -> Self {
        Hybla {
            p: p.clone(),
            rho: 1.0,
            carry: Carry::default(),
        }
    }

    /// rho = max(RTT / RTT0, 1).
    pub fn rho(&self) -> f64 {
        self.rho
    }
}

impl CongestionControl for Hybla {
    fn name(&self) -> &'static str {
        "hybla"
    }

    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        if let Some(rtt) = ev.min_rtt.or(ev.srtt) {
            self.rho = (rtt as f64 / self.p.rtt0.0 as f64).max(1.0);
        }
        let mss = w.mss as f64;
        if w.in_slow_start() {
            let inc = (self.rho.exp2() - 1.0) * ev.acked.min(w.mss) as f64;
            w.cwnd = w.cwnd.saturating_add(self.carry.take(inc)).min(w.ssthresh);
        } else {
            let inc = self.rho * self.rho * mss * mss / w.cwnd as f64;
            self.carry.grow(w, inc);
        }
    }

    fn ssthresh_after_loss(&mut self, w: &Window, flight: u64, _now: Time) -> u64 {
        self.carry.clear();
        reno_ssthresh(w, flight)
    }

    // Not the default: a timeout keeps the growth carry that a loss clears.
    fn on_timeout(&mut self, w: &mut Window, flight: u64, _now: Time) {
        w.ssthresh = reno_ssthresh(w, flight);
        w.cwnd = w.mss;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_util::window;
    use crate::cc::NewReno;

    const MSS: u64 = 1000;

    fn ack(acked: u64, min_rtt_ms: u64) -> AckEvent {
        AckEvent {
            acked,
            min_rtt: Some(min_rtt_ms * MS),
            ..Default::default()
        }
    }

    #[test]
    fn rho_is_rtt_over_rtt0_at_least_one() {
        let mut h = Hybla::new(&HyblaParams::default());
        let mut w = window(10 * MSS, u64::MAX, MSS);
        h.on_ack(&mut w, &ack(MSS, 100));
        assert_eq!(h.rho(), 4.0, "100 ms / 25 ms");
        h.on_ack(&mut w, &ack(MSS, 10));
        assert_eq!(h.rho(), 1.0, "10 ms / 25 ms < 1");
        h.on_ack(&mut w, &ack(MSS, 600));
        assert_eq!(h.rho(), 24.0, "a GEO hop");
    }

    #[test]
    fn slow_start_adds_two_to_the_rho_minus_one_segments_per_ack() {
        let mut h = Hybla::new(&HyblaParams::default());
        let mut w = window(10 * MSS, u64::MAX, MSS);
        // rho = 4: 2^4 - 1 = 15 segments per ACK
        h.on_ack(&mut w, &ack(MSS, 100));
        assert_eq!(w.cwnd, 25 * MSS);
        // rho = 60 / 25 = 2.4: 2^2.4 - 1 = 4.278032 segments = 4278.03 B: 4278 B now
        h.on_ack(&mut w, &ack(MSS, 60));
        assert_eq!(w.cwnd, 25 * MSS + 4278);
        // never past ssthresh
        let mut w = window(10 * MSS, 20 * MSS, MSS);
        h.on_ack(&mut w, &ack(MSS, 100));
        assert_eq!(w.cwnd, 20 * MSS);
    }

    #[test]
    fn avoidance_adds_rho_squared_over_cwnd_per_ack() {
        let mut h = Hybla::new(&HyblaParams::default());
        let mut w = window(100 * MSS, 50 * MSS, MSS);
        // rho = 4: 16/100 segment = 160 B per ACK
        h.on_ack(&mut w, &ack(MSS, 100));
        assert_eq!(w.cwnd, 100_160);
        // next: 16 x 10^6 / 100 160 = 159.744 B -> 159, 0.744 carried
        h.on_ack(&mut w, &ack(MSS, 100));
        assert_eq!(w.cwnd, 100_319);
        // 16 x 10^6 / 100 319 = 159.492 + 0.744 = 160.236 -> 160
        h.on_ack(&mut w, &ack(MSS, 100));
        assert_eq!(w.cwnd, 100_479);
    }

    #[test]
    fn rho_one_is_newreno() {
        let mut h = Hybla::new(&HyblaParams::default());
        for (cwnd, ssthresh) in [(4000, u64::MAX), (20_000, 10_000)] {
            let mut a = window(cwnd, ssthresh, MSS);
            let mut b = a;
            for acked in [MSS, 500, 2 * MSS] {
                h.on_ack(&mut a, &ack(acked, 20));
                NewReno.on_ack(&mut b, &ack(acked, 20));
                assert!(a.cwnd.abs_diff(b.cwnd) <= 1, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn loss_and_timeout_are_reno() {
        let mut h = Hybla::new(&HyblaParams::default());
        let w = window(100 * MSS, u64::MAX, MSS);
        assert_eq!(h.ssthresh_after_loss(&w, 100 * MSS, 0), 50 * MSS);
        let mut w2 = w;
        h.on_timeout(&mut w2, 100 * MSS, 0);
        assert_eq!((w2.cwnd, w2.ssthresh), (MSS, 50 * MSS));
        let e = HyblaParams { rtt0: Duration(0) }.validate().unwrap_err();
        assert_eq!(e.path, "rtt0");
    }
}
