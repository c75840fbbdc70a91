//! TCP Westwood+: Mascolo, Casetti, Gerla, Sanadidi & Wang, "TCP Westwood: Bandwidth
//! Estimation for Enhanced Transport over Wireless Links", MobiCom 2001, with the Westwood+
//! per-RTT sampling of Grieco & Mascolo, "Performance evaluation and comparison of Westwood+,
//! New Reno, and Vegas TCP congestion control", CCR 34(2), 2004.
//!
//! Bandwidth estimate: once per RTT interval (srtt, at least `min_interval`, as Linux), the
//! bytes delivered in the interval over its length give a sample b_k, filtered as
//! `BWE_k = gain x BWE_{k-1} + (1 - gain) x b_k` (the first sample seeds the filter). A
//! duplicate ACK counts as one segment delivered; the cumulative ACK that follows discounts
//! what the duplicates already counted (Linux `westwood_acked_count`).
//!
//! On a loss ssthresh = max(BWE x RTTmin, 2 MSS) and cwnd = min(cwnd, ssthresh) at the end of
//! recovery; on a timeout ssthresh = the same, cwnd = 1 MSS. Before the first estimate the
//! RFC 5681 values are used (Linux and ns-3 use 2 MSS then). Growth is NewReno's.

use super::{reno_ssthresh, AckEvent, CongestionControl, ControllerFactory, NewReno, Window};
use crate::error::FieldError;
use crate::time::{Time, MS, SEC};
use crate::units::Duration;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The low-pass filter on Westwood's bandwidth samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WestwoodFilter {
    /// BWE_k = gain x BWE_{k-1} + (1 - gain) x b_k, seeded with the first sample (Westwood+,
    /// Linux `tcp_westwood.c`'s 7/8 average).
    Exponential,
    /// Tustin (bilinear) discretisation of the original Westwood filter, as ns-3's
    /// `TcpWestwood` with FilterType TUSTIN: BWE_k = gain x BWE_{k-1} + (1 - gain) x
    /// (b_k + b_{k-1}) / 2, starting from BWE_0 = b_0 = 0 (ns-3 fixes the gain at 0.9).
    Tustin,
}

/// Westwood+ settings (`[flows.tcp.westwood]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct WestwoodParams {
    /// Gain of the low-pass filter on the per-RTT bandwidth samples:
    /// BWE = gain x BWE + (1 - gain) x sample. 0.9 (Westwood+). In [0, 1).
    pub filter_gain: f64,
    /// Shortest bandwidth-sampling interval: a sample covers one smoothed RTT, but never less
    /// than this (Linux: 50 ms). > 0.
    pub min_interval: Duration,
    /// The filter: `exponential` (Westwood+, Linux) or `tustin` (ns-3).
    pub filter: WestwoodFilter,
}

impl Default for WestwoodParams {
    fn default() -> Self {
        WestwoodParams {
            filter_gain: 0.9,
            min_interval: Duration(50 * MS),
            filter: WestwoodFilter::Exponential,
        }
    }
}

impl ControllerFactory for WestwoodParams {
    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(Westwood::new(self))
    }

    fn validate(&self) -> Result<(), FieldError> {
        let g = self.filter_gain;
        if !(0.0..1.0).contains(&g) {
            return Err(FieldError::new(
                "filter_gain",
                format!("{g} must be >= 0 and < 1"),
            ));
        }
        if self.min_interval.0 == 0 {
            return Err(FieldError::new("min_interval", "must be > 0"));
        }
        Ok(())
    }
}

#[derive(Debug)]
pub struct Westwood {
    p: WestwoodParams,
    /// Filtered bandwidth estimate, bytes per second.
    bwe: Option<f64>,
    /// The previous raw sample (the Tustin filter averages two).
    last_sample: f64,
    /// Bytes delivered in the current interval and when it began.
    bytes: u64,
    start: Option<Time>,
    /// Bytes already counted for duplicate ACKs.
    accounted: u64,
    /// Learnt from the window (0 until then: duplicate ACKs count nothing).
    mss: u64,
    rtt_min: Option<Time>,
}

impl Westwood {
    pub fn new(p: &WestwoodParams) -> Self {
        Westwood {
            p: p.clone(),
            bwe: None,
            last_sample: 0.0,
            bytes: 0,
            start: None,
            accounted: 0,
            mss: 0,
            rtt_min: None,
        }
    }

    /// The filtered bandwidth estimate in bytes per second, if any.
    pub fn bandwidth(&self) -> Option<f64> {
        self.bwe
    }

    fn close_interval(&mut self, now: Time, rtt: Option<Time>) {
        let Some(start) = self.start else {
            self.start = Some(now);
            return;
        };
        let Some(rtt) = rtt else { return };
        let delta = now - start;
        if delta > rtt.max(self.p.min_interval.0) {
            let sample = self.bytes as f64 * SEC as f64 / delta as f64;
            let g = self.p.filter_gain;
            self.bwe = Some(match self.p.filter {
                WestwoodFilter::Exponential => {
                    self.bwe.map_or(sample, |b| g * b + (1.0 - g) * sample)
                }
                WestwoodFilter::Tustin => {
                    let prev = self.bwe.unwrap_or(0.0);
                    g * prev + (1.0 - g) * (sample + self.last_sample) / 2.0
                }
            });
            self.last_sample = sample;
            self.bytes = 0;
            self.start = Some(now);
        }
    }

    fn delivered(&mut self, ev: &AckEvent, duplicate: bool) -> u64 {
        let mss = self.mss;
        if duplicate {
            self.accounted += mss;
            return mss;
        }
        let mut cumul = ev.acked;
        if cumul > mss {
            if self.accounted >= cumul {
                self.accounted -= cumul;
                cumul = mss;
            } else {
                cumul -= self.accounted;
                self.accounted = 0;
            }
        }
        cumul
    }

    /// BWE x RTTmin, at least 2 MSS; None before the first estimate.
    fn bw_rtt_min(&self, w: &Window) -> Option<u64> {
        let (bwe, rtt) = (self.bwe?, self.rtt_min?);
        Some(((bwe * rtt as f64 / SEC as f64) as u64).max(2 * w.mss))
    }
}

impl CongestionControl for Westwood {
    fn name(&self) -> &'static str {
        "westwood"
    }

    fn on_any_ack(&mut self, ev: &AckEvent, duplicate: bool) {
        if ev.min_rtt.is_some() {
            self.rtt_min = ev.min_rtt;
        }
        self.close_interval(ev.now, ev.srtt.or(ev.rtt));
        let d = self.delivered(ev, duplicate);
        self.bytes += d;
    }

    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        self.mss = w.mss;
        NewReno.on_ack(w, ev);
    }

    fn ssthresh_after_loss(&mut self, w: &Window, flight: u64, _now: Time) -> u64 {
        self.mss = w.mss;
        self.bw_rtt_min(w)
            .unwrap_or_else(|| reno_ssthresh(w, flight))
    }

    fn on_recovery_exit(&mut self, w: &mut Window, _now: Time) {
        w.cwnd = w.cwnd.min(w.ssthresh);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_util::window;

    const MSS: u64 = 1000;

    fn ev(now_ms: u64, acked: u64) -> AckEvent {
        AckEvent {
            now: now_ms * MS,
            acked,
            srtt: Some(100 * MS),
            min_rtt: Some(100 * MS),
            ..Default::default()
        }
    }

    fn with_mss() -> Westwood {
        let mut ww = Westwood::new(&WestwoodParams::default());
        let mut w = window(10 * MSS, u64::MAX, MSS);
        ww.on_ack(&mut w, &ev(0, 0)); // learns the MSS
        ww
    }

    #[test]
    fn per_rtt_samples_are_low_pass_filtered() {
        let mut ww = with_mss();
        // ACKs of 1000 B every 10 ms from t = 0: the first opens the interval.
        for t in (0..=100).step_by(10) {
            ww.on_any_ack(&ev(t, 1000), false);
        }
        assert_eq!(ww.bandwidth(), None, "100 ms is not more than one srtt");
        // t = 110: 110 ms > srtt; the 11 ACKs at 0..100 delivered 11 000 B:
        // b_1 = 11 000 / 0.110 = 100 000 B/s, which seeds the filter.
        ww.on_any_ack(&ev(110, 1000), false);
        assert_eq!(ww.bandwidth(), Some(100_000.0));
        // Next interval: 1000 B (at 110) + 10 x 2000 B (120..210) in 110 ms:
        // b_2 = 21 000 / 0.110 = 190 909.09; BWE = 0.9 x 100 000 + 0.1 x b_2 = 109 090.909
        for t in (120..=210).step_by(10) {
            ww.on_any_ack(&ev(t, 2000), false);
        }
        ww.on_any_ack(&ev(220, 2000), false);
        let bwe = ww.bandwidth().unwrap();
        assert!((bwe - 109_090.909_09).abs() < 1e-3, "{bwe}");
    }

    #[test]
    fn interval_is_at_least_min_interval() {
        let mut ww = with_mss();
        let short = |t: u64| AckEvent {
            srtt: Some(10 * MS),
            ..ev(t, 1000)
        };
        for t in (0..=50).step_by(5) {
            ww.on_any_ack(&short(t), false);
        }
        assert_eq!(
            ww.bandwidth(),
            None,
            "srtt 10 ms, but intervals last > 50 ms"
        );
        ww.on_any_ack(&short(55), false);
        // 11 ACKs (0..50) of 1000 B over 55 ms = 200 000 B/s
        assert_eq!(ww.bandwidth(), Some(200_000.0));
    }

    #[test]
    fn duplicate_acks_count_one_segment_each() {
        let mut ww = with_mss();
        ww.on_any_ack(&ev(0, 1000), false);
        for t in 1..=3 {
            ww.on_any_ack(&ev(t, 0), true);
        }
        assert_eq!((ww.bytes, ww.accounted), (4000, 3000));
        // The cumulative ACK of 5000 B: 3000 were counted by the dupacks, 2000 are new.
        ww.on_any_ack(&ev(4, 5000), false);
        assert_eq!((ww.bytes, ww.accounted), (6000, 0));
        // A 2000 B ACK after 3 dupacks counts one segment and keeps 1000 B in reserve.
        for t in 5..=7 {
            ww.on_any_ack(&ev(t, 0), true);
        }
        ww.on_any_ack(&ev(8, 2000), false);
        assert_eq!((ww.bytes, ww.accounted), (10_000, 1000));
    }

    /// A Westwood whose estimate is 1.25 MB/s (10 Mb/s) with RTTmin 100 ms.
    fn estimated() -> Westwood {
        let mut ww = with_mss();
        for t in (0..=110).step_by(1) {
            ww.on_any_ack(&ev(t, 1250), false);
        }
        // closed at t = 101 ms: 101 ACKs (0..100) of 1250 B over 101 ms = 1 250 000 B/s
        assert_eq!(ww.bandwidth(), Some(1_250_000.0));
        ww
    }

    #[test]
    fn loss_sets_ssthresh_to_bwe_times_rtt_min() {
        let mut ww = estimated();
        let w = window(200 * MSS, u64::MAX, MSS);
        // 1 250 000 B/s x 0.100 s = 125 000 B, whatever the flight
        assert_eq!(ww.ssthresh_after_loss(&w, 200 * MSS, 0), 125_000);
        let mut w2 = Window {
            cwnd: 140_000,
            ssthresh: 125_000,
            ..w
        };
        ww.on_recovery_exit(&mut w2, 0);
        assert_eq!(w2.cwnd, 125_000, "cwnd = min(cwnd, ssthresh)");
        let mut w3 = w;
        ww.on_timeout(&mut w3, 200 * MSS, 0);
        assert_eq!((w3.cwnd, w3.ssthresh), (MSS, 125_000));
        // Floor of 2 MSS: a tiny estimate.
        let mut tiny = with_mss();
        tiny.on_any_ack(&ev(0, 10), false);
        tiny.on_any_ack(&ev(200, 10), false);
        assert_eq!(tiny.ssthresh_after_loss(&w, 200 * MSS, 0), 2 * MSS);
    }

    #[test]
    fn reno_values_before_any_estimate_and_reno_growth() {
        let mut ww = with_mss();
        let w = window(20 * MSS, u64::MAX, MSS);
        assert_eq!(ww.ssthresh_after_loss(&w, 20 * MSS, 0), 10 * MSS);
        let mut a = Window {
            ssthresh: 5 * MSS,
            ..w
        };
        let mut b = a;
        ww.on_ack(&mut a, &ev(0, MSS));
        NewReno.on_ack(&mut b, &ev(0, MSS));
        assert_eq!(a, b);
    }

    #[test]
    fn validation_names_the_field() {
        let p = WestwoodParams {
            filter_gain: 1.0,
            ..Default::default()
        };
        assert!(p.validate().unwrap_err().path == "filter_gain");
    }

    #[test]
    fn the_tustin_filter_starts_from_zero_and_averages_two_samples_as_ns3() {
        let run = |filter| {
            let mut ww = Westwood::new(&WestwoodParams {
                filter,
                ..Default::default()
            });
            let mut out = Vec::new();
            // Two 150 ms intervals delivering 150 kB then 300 kB: samples 1 MB/s, 2 MB/s.
            ww.start = Some(0);
            for (t, bytes) in [(150, 150_000u64), (300, 300_000)] {
                ww.bytes = bytes;
                ww.close_interval(t * MS, Some(100 * MS));
                out.push(ww.bandwidth().unwrap());
            }
            out
        };
        let e = run(WestwoodFilter::Exponential);
        let t = run(WestwoodFilter::Tustin);
        // Exponential: seeded with 1e6, then 0.9 x 1e6 + 0.1 x 2e6.
        assert!(
            (e[0] - 1e6).abs() < 1.0 && (e[1] - 1.1e6).abs() < 1.0,
            "{e:?}"
        );
        // Tustin: 0.1 x (1e6 + 0) / 2, then 0.9 x 5e4 + 0.1 x (2e6 + 1e6) / 2.
        assert!(
            (t[0] - 5e4).abs() < 1.0 && (t[1] - 1.95e5).abs() < 1.0,
            "{t:?}"
        );
    }
}
