//! CUBIC, RFC 9438 (Xu, Ha, Rhee, Goel & Eggert 2023), section 4, windows in segments:
//! - eq. 1: `W_cubic(t) = C (t - K)^3 + W_max`, t in seconds since the epoch (the first ACK in
//!   congestion avoidance after a loss, timeout or slow start);
//! - eq. 2: `K = cbrt((W_max - cwnd_epoch) / C)` (= cbrt(W_max (1 - beta) / C) when the epoch
//!   starts at beta x W_max);
//! - 4.2: `target = W_cubic(t + RTT)` clamped to [cwnd, 1.5 cwnd], RTT = srtt; each new ACK adds
//!   (target - cwnd)/cwnd per segment acknowledged (as Linux and ns-3; the RFC says per ACK);
//! - 4.3, eq. 4: `W_est += alpha_cubic x segments_acked / cwnd` from W_est = cwnd_epoch, with
//!   alpha_cubic = 3 (1 - beta)/(1 + beta), and 1 once W_est >= cwnd_prior; if
//!   W_cubic(t) < W_est, cwnd = W_est (never lowered: Linux takes the faster of the two);
//! - 4.6: on a loss `ssthresh = max(beta x FlightSize, 2 MSS)`, cwnd_prior = W_max = the window
//!   in use, min(cwnd, FlightSize) (the RFC's cwnd; the connection does not stop cwnd growing
//!   when it is not the limit, which the RFC requires of cwnd-based implementations);
//! - 4.7: fast convergence: a loss below the previous W_max sets W_max = W (1 + beta)/2;
//! - 4.8: a timeout sets ssthresh as 4.6 and cwnd = 1 MSS; the next epoch has K = 0 and
//!   W_max = cwnd_epoch, as does the first one if slow start ends without a loss (4.10).
//!
//! Slow start is RFC 5681's (4.10 allows it), ended early by HyStart when `hystart = true`
//! (Linux's default; `hystart.rs`). The elapsed time is not paused while the application is
//! idle (the trait has no app-limited signal).

use super::frac::{cwnd_segments, segments_acked, slow_start, Carry};
use super::{scaled_ssthresh, AckEvent, CongestionControl, ControllerFactory, Window};
use crate::error::FieldError;
use crate::time::{Time, SEC};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// CUBIC settings (`[flows.tcp.cubic]`), RFC 9438.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CubicParams {
    /// C, segments per second^3: aggressiveness of the cubic growth. 0.4 (RFC 9438). > 0.
    pub c: f64,
    /// beta_cubic: multiplicative decrease, ssthresh = beta x FlightSize. 0.7 (RFC 9438). In (0, 1).
    pub beta: f64,
    /// Fast convergence (RFC 9438 section 4.7): a loss below the previous W_max lowers W_max to
    /// W (1 + beta)/2. true (Linux, ns-3; the RFC advises turning it off for a lone flow).
    pub fast_convergence: bool,
    /// Reno-friendly region (section 4.3): never grow slower than an AIMD(alpha_cubic, beta)
    /// flow with Reno's average window. true.
    pub reno_friendly: bool,
    /// HyStart (Linux `tcp_cubic.c`, ACK train and delay detection): leave slow start before
    /// the queue overflows. false here (RFC 9438 and ns-3's default); Linux: true.
    pub hystart: bool,
}

impl Default for CubicParams {
    fn default() -> Self {
        CubicParams {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            reno_friendly: true,
            hystart: false,
        }
    }
}

impl ControllerFactory for CubicParams {
    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(Cubic::new(self))
    }

    fn validate(&self) -> Result<(), FieldError> {
        if !(self.c.is_finite() && self.c > 0.0) {
            return Err(FieldError::new("c", format!("{} must be > 0", self.c)));
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

#[derive(Clone, Copy, Debug)]
struct Epoch {
    start: Time,
    k: f64,
    w_max: f64,
}

#[derive(Debug)]
pub struct Cubic {
    p: CubicParams,
    /// Window before the last reduction (after fast convergence), segments.
    w_max: Option<f64>,
    cwnd_prior: Option<f64>,
    epoch: Option<Epoch>,
    w_est: f64,
    after_timeout: bool,
    carry: Carry,
    hystart: Option<super::hystart::HyStart>,
}

impl Cubic {
    pub fn new(p: &CubicParams) -> Self {
        Cubic {
            p: p.clone(),
            w_max: None,
            cwnd_prior: None,
            epoch: None,
            w_est: 0.0,
            after_timeout: false,
            carry: Carry::default(),
            hystart: p.hystart.then(Default::default),
        }
    }

    /// Eq. 1.
    fn w_cubic(&self, e: &Epoch, t: f64) -> f64 {
        self.p.c * (t - e.k).powi(3) + e.w_max
    }

    fn decreased(&mut self, w: &Window, flight: u64) -> u64 {
        let cwnd = w.cwnd.min(flight) as f64 / w.mss as f64;
        self.w_max = Some(match self.w_max {
            Some(m) if self.p.fast_convergence && cwnd < m => cwnd * (1.0 + self.p.beta) / 2.0,
            _ => cwnd,
        });
        self.cwnd_prior = Some(cwnd);
        self.epoch = None;
        self.carry.clear();
        if let Some(h) = &mut self.hystart {
            h.reset();
        }
        scaled_ssthresh(w, flight, self.p.beta)
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        if w.in_slow_start() {
            slow_start(w, ev);
            let segments = w.cwnd / w.mss.max(1);
            if let Some(h) = &mut self.hystart {
                if h.on_ack(ev, segments) {
                    w.ssthresh = w.cwnd;
                }
            }
            return;
        }
        let cwnd = cwnd_segments(w);
        let e = match self.epoch {
            Some(e) => e,
            None => {
                let w_max = match self.w_max {
                    Some(m) if !self.after_timeout => m,
                    _ => cwnd,
                };
                let e = Epoch {
                    start: ev.now,
                    k: ((w_max - cwnd) / self.p.c).cbrt(),
                    w_max,
                };
                self.epoch = Some(e);
                self.w_est = cwnd;
                self.after_timeout = false;
                self.cwnd_prior.get_or_insert(cwnd);
                e
            }
        };
        let t = ev.now.saturating_sub(e.start) as f64 / SEC as f64;
        let rtt = ev.srtt.or(ev.min_rtt).unwrap_or(0) as f64 / SEC as f64;
        let segs = segments_acked(w, ev);
        let mss = w.mss as f64;
        if self.p.reno_friendly {
            let beta = self.p.beta;
            let alpha = if self.w_est >= self.cwnd_prior.unwrap_or(f64::MAX) {
                1.0
            } else {
                3.0 * (1.0 - beta) / (1.0 + beta)
            };
            self.w_est += alpha * segs / cwnd;
            if self.w_cubic(&e, t) < self.w_est {
                w.cwnd = w.cwnd.max((self.w_est * mss) as u64);
                return;
            }
        }
        let target = self.w_cubic(&e, t + rtt).clamp(cwnd, 1.5 * cwnd);
        self.carry.grow(w, (target - cwnd) / cwnd * segs * mss);
    }

    fn ssthresh_after_loss(&mut self, w: &Window, flight: u64, _now: Time) -> u64 {
        self.decreased(w, flight)
    }

    // Not the default: after a timeout the next epoch starts from cwnd, not W_max.
    fn on_timeout(&mut self, w: &mut Window, flight: u64, _now: Time) {
        w.ssthresh = self.decreased(w, flight);
        w.cwnd = w.mss;
        self.after_timeout = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_util::window;
    use crate::time::MS;

    const MSS: u64 = 1000;

    fn ack(now: Time, acked: u64) -> AckEvent {
        AckEvent {
            now,
            acked,
            srtt: Some(100 * MS),
            ..Default::default()
        }
    }

    /// A CUBIC that lost at 100 segments (FlightSize 100) and a window as recovery leaves it.
    fn after_loss(p: CubicParams) -> (Cubic, Window) {
        let mut c = Cubic::new(&p);
        let w = window(100 * MSS, u64::MAX, MSS);
        let ssthresh = c.ssthresh_after_loss(&w, 100 * MSS, 0);
        (c, window(ssthresh, ssthresh, MSS))
    }

    #[test]
    fn loss_sets_w_max_and_beta_times_flight() {
        let (c, w) = after_loss(CubicParams::default());
        // 4.6: ssthresh = 0.7 x 100 000; W_max = cwnd_prior = 100
        assert_eq!(w.ssthresh, 70_000);
        assert_eq!((c.w_max, c.cwnd_prior), (Some(100.0), Some(100.0)));
    }

    #[test]
    fn epoch_follows_the_cubic_function_step_by_step() {
        let p = CubicParams {
            reno_friendly: false,
            ..Default::default()
        };
        let (mut c, mut w) = after_loss(p);
        let t0 = 10 * SEC;
        // First ACK in avoidance starts the epoch: cwnd_epoch = 70,
        // K = cbrt((100 - 70)/0.4) = cbrt(75) = 4.217163 s (= cbrt(W_max (1 - beta)/C)).
        c.on_ack(&mut w, &ack(t0, MSS));
        let e = c.epoch.unwrap();
        assert!((e.k - 4.217_163_326).abs() < 1e-8);
        assert!((e.k - (100.0f64 * 0.3 / 0.4).cbrt()).abs() < 1e-12);
        // t = 0: target = W_cubic(0 + 0.1) = 0.4 (0.1 - 4.217163)^3 + 100 = 72.0839;
        // (72.0839 - 70)/70 x 1000 = 29.77 B
        assert_eq!(w.cwnd, 70_029);
        // t = 1 s, cwnd = 70.029: target = W(1.1) = 0.4 (1.1 - 4.217163)^3 + 100 = 87.8846;
        // (87.8846 - 70.029)/70.029 x 1000 = 254.97 + 0.77 carried -> 255 B
        c.on_ack(&mut w, &ack(t0 + SEC, MSS));
        assert_eq!(w.cwnd, 70_284);
        // t = K - RTT: target = W(K) = W_max = 100 (the plateau)
        let tk = t0 + (e.k * 1e9) as u64 - 100 * MS;
        let before = w.cwnd;
        c.on_ack(&mut w, &ack(tk, MSS));
        let expect = (100.0 - 70.284) / 70.284 * 1000.0; // 422.8 B
        assert!(((w.cwnd - before) as f64 - expect).abs() < 1.0);
        // Far in the convex region the target is capped at 1.5 cwnd: +0.5 segment per segment.
        let before = w.cwnd;
        c.on_ack(&mut w, &ack(t0 + 30 * SEC, MSS));
        assert!(w.cwnd - before == 500 || w.cwnd - before == 501);
        // A target below cwnd does not shrink it.
        let mut w2 = Window {
            cwnd: 90 * MSS,
            ..w
        };
        c.on_ack(&mut w2, &ack(t0 + 2 * SEC, MSS)); // W(2.1) = 96.2 > 90: grows
        assert!(w2.cwnd > 90 * MSS);
        let mut w3 = Window {
            cwnd: 99 * MSS,
            ..w
        };
        c.on_ack(&mut w3, &ack(t0 + 3 * SEC, MSS)); // W(3.1) = 99.44 > 99: a little
        let mut w4 = Window {
            cwnd: 120 * MSS,
            ..w
        };
        c.on_ack(&mut w4, &ack(t0 + 2 * SEC, MSS)); // W(2.1) = 96.2 < 120: clamp at cwnd
        assert_eq!(w4.cwnd, 120 * MSS);
    }

    #[test]
    fn reno_friendly_region_uses_w_est() {
        let (mut c, mut w) = after_loss(CubicParams::default());
        // t = 0: W_est = 70 + alpha_cubic x 1/70, alpha_cubic = 3 x 0.3/1.7 = 0.529412,
        // = 70.007563 > W_cubic(0) = 70: Reno-friendly, cwnd = W_est
        c.on_ack(&mut w, &ack(0, MSS));
        assert_eq!(w.cwnd, 70_007);
        assert!((c.w_est - 70.007_563).abs() < 1e-6);
        // t = 1 s: W_cubic(1) = 86.68 > W_est: the cubic step (target W(1.1) = 87.8846),
        // (87.8846 - 70.007)/70.007 x 1000 = 255.37 B
        c.on_ack(&mut w, &ack(SEC, MSS));
        assert_eq!(w.cwnd, 70_262);
        // Once W_est >= cwnd_prior (100), alpha_cubic = 1: W_est += 1/cwnd per segment.
        c.w_est = 100.0;
        let cw = cwnd_segments(&w);
        c.on_ack(&mut w, &ack(SEC + MS, MSS));
        assert!((c.w_est - (100.0 + 1.0 / cw)).abs() < 1e-12);
        assert_eq!(w.cwnd, 100_014, "cwnd = W_est = 100.0142");
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        let (mut c, _) = after_loss(CubicParams::default());
        let w = window(90 * MSS, 70 * MSS, MSS);
        // 90 < W_max = 100: W_max = 90 x (1 + 0.7)/2 = 76.5
        assert_eq!(c.ssthresh_after_loss(&w, 90 * MSS, 0), 63_000);
        assert!((c.w_max.unwrap() - 76.5).abs() < 1e-12);
        let (mut c, _) = after_loss(CubicParams {
            fast_convergence: false,
            ..Default::default()
        });
        c.ssthresh_after_loss(&w, 90 * MSS, 0);
        assert_eq!(c.w_max, Some(90.0));
    }

    #[test]
    fn timeout_then_epoch_with_k_zero() {
        let (mut c, _) = after_loss(CubicParams {
            reno_friendly: false,
            ..Default::default()
        });
        let mut w = window(80 * MSS, 70 * MSS, MSS);
        // 4.8: ssthresh = 0.7 x FlightSize, cwnd = 1 MSS
        c.on_timeout(&mut w, 80 * MSS, 0);
        assert_eq!((w.cwnd, w.ssthresh), (MSS, 56_000));
        // Slow start up to ssthresh, then the epoch: K = 0, W_max = cwnd_epoch = 56.
        w.cwnd = 56 * MSS;
        c.on_ack(&mut w, &ack(5 * SEC, MSS));
        let e = c.epoch.unwrap();
        assert_eq!((e.k, e.w_max), (0.0, 56.0));
        // target = W(0.1) = 0.4 x 0.001 + 56 = 56.0004: +0.0004/56 segment
        assert_eq!(w.cwnd, 56 * MSS);
        // t = 2 s: W(2.1) = 0.4 x 9.261 + 56 = 59.7044; (59.7044 - 56)/56 x 1000 = 66.15 B
        c.on_ack(&mut w, &ack(7 * SEC, MSS));
        assert_eq!(w.cwnd, 56_066);
    }

    #[test]
    fn slow_start_exit_without_loss_starts_a_flat_epoch() {
        let mut c = Cubic::new(&CubicParams::default());
        let mut w = window(40 * MSS, 40 * MSS, MSS);
        c.on_ack(&mut w, &ack(0, MSS));
        let e = c.epoch.unwrap();
        assert_eq!((e.k, e.w_max, c.cwnd_prior), (0.0, 40.0, Some(40.0)));
        // slow start itself is RFC 5681
        let mut w = window(10 * MSS, u64::MAX, MSS);
        c.on_ack(&mut w, &ack(0, 2 * MSS));
        assert_eq!(w.cwnd, 11 * MSS);
    }

    #[test]
    fn validation_names_the_field() {
        let p = CubicParams {
            beta: 1.0,
            ..Default::default()
        };
        assert!(p.validate().unwrap_err().path == "beta");
        let p = CubicParams {
            c: 0.0,
            ..Default::default()
        };
        assert!(p.validate().unwrap_err().path == "c");
    }
}
