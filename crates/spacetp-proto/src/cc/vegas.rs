//! TCP Vegas: Brakmo, O'Malley & Peterson, "TCP Vegas: New Techniques for Congestion Detection
//! and Avoidance", SIGCOMM 1994 (sections 3.2 and 3.3); the controller SCPS-TP uses for
//! congestion losses (CCSDS 714.0-B-2; Nguyen & Sterbenz 2017, section 2.2).
//!
//! Once per round trip (a round ends when the ACK reaches the `snd_nxt` recorded when it
//! began), with BaseRTT the smallest RTT ever seen and RTT the smallest sample of the round:
//! `diff = (expected - actual) x BaseRTT = cwnd x (RTT - BaseRTT) / RTT` segments queued.
//! - Congestion avoidance: diff < alpha: +1 segment; diff > beta: -1 segment; else hold.
//! - Slow start grows by one segment per ACK, but only every other round (Brakmo: the window
//!   stays fixed in between so the rates can be compared), and ends when diff > gamma: cwnd
//!   drops to what the actual rate needs, `cwnd x BaseRTT / RTT + 1` segment (as Linux and ns-3).
//!
//! After each decision `ssthresh = max(ssthresh, 3/4 cwnd)` (Linux `tcp_current_ssthresh`,
//! ns-3), cwnd >= 2 segments. A round with fewer than `min_rtt_samples` RTT samples gives no
//! decision and the next round grows as Reno: Linux and ns-3 fall back on Reno then too, but
//! apply a single Reno step at the round end, which in avoidance freezes the window. After a
//! loss or timeout Vegas waits one full round of fresh samples (Linux `vegas_enable`).

use super::frac::{cwnd_segments, slow_start};
use super::{reno_ssthresh, AckEvent, CongestionControl, ControllerFactory, NewReno, Window};
use crate::error::FieldError;
use crate::time::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a loss does to ssthresh (the two reference implementations differ).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum VegasLossResponse {
    /// RFC 5681: ssthresh = max(FlightSize / 2, 2 MSS), as Linux `tcp_vegas` (Reno's ssthresh).
    Reno,
    /// ns-3 `TcpVegas::GetSsThresh`: ssthresh = max(min(ssthresh, cwnd - 1 MSS), 2 MSS), a much
    /// milder cut (ssthresh stays near 3/4 cwnd or more in avoidance).
    Ns3,
    /// Brakmo, O'Malley & Peterson 1994 (section 3.2), and the SCPS-TP model of Liu & Liu:
    /// a loss cuts the window by one quarter, ssthresh = max(3/4 cwnd, 2 MSS).
    Quarter,
}

/// Which RTT Vegas compares with BaseRTT.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum VegasRttSample {
    /// The RTT each ACK measures for its newest segment, the smallest of a round: Brakmo et
    /// al. 1994 (a fine-grained timestamp on every segment) and Linux `tcp_vegas.c`
    /// (`vegas_pkts_acked`, `sample->rtt_us`).
    Newest,
    /// The connection's smoothed RTT (RFC 6298 SRTT) at each new ACK: ns-3, whose
    /// `TcpVegas::PktsAcked` receives `tcb->m_lastRtt`, its RttEstimator's estimate. On
    /// 1 Mb/s with PER 1e-3 at RTT 1 s the two give 536 and 281 kb/s (the smoothed value
    /// lags the queue Vegas tries to measure); at 0.1-0.3 s they agree within 3%.
    Smoothed,
}

/// Vegas settings (`[flows.tcp.vegas]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct VegasParams {
    /// Segments queued below which avoidance adds one segment per round trip. 2 as in Linux and
    /// ns-3; Brakmo et al. 1994 used 1 (with beta 3). >= 0 and <= beta.
    pub alpha: f64,
    /// Segments queued above which avoidance removes one segment per round trip. 4 as in Linux
    /// and ns-3; Brakmo et al. 1994 used 3. >= alpha.
    pub beta: f64,
    /// Segments queued above which slow start ends. 1 (Linux, ns-3, Brakmo). >= 0.
    pub gamma: f64,
    /// RTT samples a round needs for a Vegas decision; with fewer the next round grows as
    /// Reno. Linux and ns-3 need 3 ("more than 2": one or two samples per round are likely
    /// delayed ACKs). The connection gives the controller a sample per ACK (from its record
    /// of send times, or from timestamps). >= 1.
    pub min_rtt_samples: u32,
    /// Slow start grows only every other round trip (Brakmo; SCPS-TP). false: every round
    /// trip, as Linux and ns-3.
    pub slow_start_every_other_rtt: bool,
    /// ssthresh after a loss or timeout: `reno` (Linux) or `ns3`.
    pub loss_response: VegasLossResponse,
    /// The RTT compared with BaseRTT: `newest` (Brakmo, Linux) or `smoothed` (ns-3).
    pub rtt_sample: VegasRttSample,
    /// Whole segments, as ns-3: target = floor(cwnd x BaseRTT / RTT), diff = cwnd - target,
    /// with cwnd in whole segments. false: diff = cwnd x (RTT - BaseRTT) / RTT as a fraction
    /// (Brakmo's (Expected - Actual) x BaseRTT).
    pub integer_diff: bool,
}

impl Default for VegasParams {
    fn default() -> Self {
        VegasParams {
            alpha: 2.0,
            beta: 4.0,
            gamma: 1.0,
            min_rtt_samples: 3,
            slow_start_every_other_rtt: true,
            loss_response: VegasLossResponse::Reno,
            rtt_sample: VegasRttSample::Newest,
            integer_diff: false,
        }
    }
}

impl ControllerFactory for VegasParams {
    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(Vegas::new(self))
    }

    /// Errors name the field, e.g. `alpha: must be >= 0 and <= beta`.
    fn validate(&self) -> Result<(), FieldError> {
        let (a, b, g) = (self.alpha, self.beta, self.gamma);
        if !(a.is_finite() && a >= 0.0 && a <= b) {
            return Err(FieldError::new(
                "alpha",
                format!("{a} must be >= 0 and <= beta ({b})"),
            ));
        }
        if !b.is_finite() {
            return Err(FieldError::new(
                "beta",
                format!("{b} must be a finite number >= alpha"),
            ));
        }
        if !(g.is_finite() && g >= 0.0) {
            return Err(FieldError::new("gamma", format!("{g} must be >= 0")));
        }
        if self.min_rtt_samples == 0 {
            return Err(FieldError::new("min_rtt_samples", "must be at least 1"));
        }
        Ok(())
    }
}

#[derive(Debug)]
pub struct Vegas {
    p: VegasParams,
    base_rtt: Option<Time>,
    /// Smallest RTT sample and sample count of the current round.
    round_min: Option<Time>,
    round_samples: u32,
    /// The round ends when the cumulative ACK reaches this position.
    round_end: u64,
    /// A round is under way (false at the start and after a loss or timeout).
    active: bool,
    /// Slow start grows during this round.
    grow: bool,
    /// The last round had too few samples: this round follows Reno.
    reno: bool,
}

impl Vegas {
    pub fn new(p: &VegasParams) -> Self {
        Vegas {
            p: p.clone(),
            base_rtt: None,
            round_min: None,
            round_samples: 0,
            round_end: 0,
            active: false,
            grow: true,
            reno: false,
        }
    }

    /// One RTT sample: BaseRTT is the smallest ever, RTT the smallest of the round.
    fn record(&mut self, rtt: Time) {
        if rtt == 0 {
            return;
        }
        self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
        self.round_min = Some(self.round_min.map_or(rtt, |m| m.min(rtt)));
        self.round_samples += 1;
    }

    fn begin_round(&mut self, snd_nxt: u64) {
        self.round_end = snd_nxt;
        self.round_min = None;
        self.round_samples = 0;
    }

    fn loss_ssthresh(&self, w: &Window, flight: u64) -> u64 {
        match self.p.loss_response {
            VegasLossResponse::Reno => reno_ssthresh(w, flight),
            VegasLossResponse::Ns3 => w.ssthresh.min(w.cwnd.saturating_sub(w.mss)).max(2 * w.mss),
            VegasLossResponse::Quarter => (w.cwnd / 4 * 3).max(2 * w.mss),
        }
    }

    /// The once-per-round Vegas decision; returns whether slow start grows this ACK.
    fn decide(&mut self, w: &mut Window, base: Time, rtt: Time) -> bool {
        let mss = w.mss;
        let diff = if self.p.integer_diff {
            let segs = (w.cwnd / mss) as f64;
            segs - (segs * base as f64 / rtt as f64).floor()
        } else {
            cwnd_segments(w) * (rtt - base) as f64 / rtt as f64
        };
        let mut grow_now = false;
        if w.in_slow_start() {
            if diff > self.p.gamma {
                // Going too fast: match the actual rate and leave slow start.
                let target = (w.cwnd as f64 * base as f64 / rtt as f64) as u64 + mss;
                w.cwnd = w.cwnd.min(target);
                w.ssthresh = w.ssthresh.min(w.cwnd.max(2 * mss));
            } else {
                self.grow = !self.p.slow_start_every_other_rtt || !self.grow;
                grow_now = self.grow;
            }
        } else if diff > self.p.beta {
            w.cwnd = w.cwnd.saturating_sub(mss);
            w.ssthresh = w.ssthresh.min(w.cwnd.max(2 * mss));
        } else if diff < self.p.alpha {
            w.cwnd += mss;
        }
        w.cwnd = w.cwnd.max(2 * mss);
        w.ssthresh = w.ssthresh.max(w.cwnd / 4 * 3);
        grow_now
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    fn on_rtt_sample(&mut self, rtt: Time, _now: Time) {
        if self.p.rtt_sample == VegasRttSample::Newest {
            self.record(rtt);
        }
    }

    fn on_any_ack(&mut self, ev: &AckEvent, duplicate: bool) {
        if let (VegasRttSample::Smoothed, false, Some(srtt)) =
            (self.p.rtt_sample, duplicate, ev.srtt)
        {
            self.record(srtt);
        }
    }

    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        if !self.active {
            // (Re)start: measure one full round before deciding; slow start meanwhile.
            self.active = true;
            self.grow = true;
            self.reno = false;
            self.begin_round(ev.snd_nxt);
            if w.in_slow_start() {
                slow_start(w, ev);
            }
            return;
        }
        if ev.ack < self.round_end {
            if self.reno {
                NewReno.on_ack(w, ev);
            } else if w.in_slow_start() && self.grow {
                slow_start(w, ev);
            }
            return;
        }
        let (samples, rtt) = (self.round_samples, self.round_min);
        self.begin_round(ev.snd_nxt);
        match (self.base_rtt, rtt) {
            (Some(base), Some(rtt)) if samples >= self.p.min_rtt_samples => {
                self.reno = false;
                if self.decide(w, base, rtt) {
                    slow_start(w, ev);
                }
            }
            _ => {
                self.reno = true;
                NewReno.on_ack(w, ev);
            }
        }
    }

    fn ssthresh_after_loss(&mut self, w: &Window, flight: u64, _now: Time) -> u64 {
        self.active = false;
        self.loss_ssthresh(w, flight)
    }

    fn on_recovery_exit(&mut self, _w: &mut Window, _now: Time) {
        self.active = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_util::window;
    use crate::time::MS;

    const MSS: u64 = 1000;

    fn win(cwnd_segs: u64, ssthresh: u64) -> Window {
        window(cwnd_segs * MSS, ssthresh, MSS)
    }

    /// One ACK of one segment at cumulative point `ack`, with `snd_nxt` sent so far.
    fn ack(ack: u64, snd_nxt: u64) -> AckEvent {
        AckEvent {
            acked: MSS,
            ack,
            snd_nxt,
            ..Default::default()
        }
    }

    /// Ends the current round (ACK at its end) after `samples` RTT samples of `rtt` ms; the
    /// next round ends at `next_end`.
    fn end_round(v: &mut Vegas, w: &mut Window, rtt_ms: u64, samples: u32, next_end: u64) {
        for _ in 0..samples {
            v.on_rtt_sample(rtt_ms * MS, 0);
        }
        let end = v.round_end;
        v.on_ack(w, &ack(end, next_end));
    }

    /// Vegas with BaseRTT 100 ms and a round under way that ends at position 1000.
    fn started(p: VegasParams, w: &mut Window) -> Vegas {
        let mut v = Vegas::new(&p);
        v.on_rtt_sample(100 * MS, 0);
        v.on_ack(w, &ack(0, 1000)); // starts a round ending at 1000
        v
    }

    #[test]
    fn slow_start_grows_every_other_round_until_diff_exceeds_gamma() {
        let mut w = win(4, u64::MAX);
        let mut v = started(VegasParams::default(), &mut w);
        assert_eq!(
            w.cwnd, 5000,
            "the first ACK of a (re)start grows as slow start"
        );
        // Round 1 ends with diff 0 (RTT = BaseRTT): the next round holds (grow toggles off).
        end_round(&mut v, &mut w, 100, 3, 2000);
        assert_eq!(w.cwnd, 5000);
        v.on_ack(&mut w, &ack(1500, 2000));
        assert_eq!(w.cwnd, 5000, "held round: no slow-start growth");
        // Round 2 ends, diff 0 again: this round grows, including its first ACK.
        end_round(&mut v, &mut w, 100, 3, 3000);
        assert_eq!(w.cwnd, 6000);
        v.on_ack(&mut w, &ack(2500, 3000));
        assert_eq!(w.cwnd, 7000);
        // Round 3 ends with RTT 125 ms: diff = 7 x (125 - 100) / 125 = 1.4 > gamma = 1.
        // cwnd = min(7000, 7000 x 100/125 + 1 MSS = 6600) and ssthresh = cwnd: avoidance.
        end_round(&mut v, &mut w, 125, 3, 4000);
        assert_eq!((w.cwnd, w.ssthresh), (6600, 6600));
        assert!(!w.in_slow_start());
    }

    #[test]
    fn slow_start_every_round_when_configured() {
        let p = VegasParams {
            slow_start_every_other_rtt: false,
            ..Default::default()
        };
        let mut w = win(4, u64::MAX);
        let mut v = started(p, &mut w);
        end_round(&mut v, &mut w, 100, 3, 2000);
        assert_eq!(w.cwnd, 6000, "grows on the round-end ACK too");
        v.on_ack(&mut w, &ack(1500, 2000));
        assert_eq!(w.cwnd, 7000);
    }

    #[test]
    fn avoidance_moves_one_segment_per_round_by_diff() {
        let mut w = win(20, 10 * MSS);
        let mut v = started(VegasParams::default(), &mut w);
        // RTT 105: diff = 20 x 5/105 = 0.95 < alpha = 2 -> 21 segments.
        end_round(&mut v, &mut w, 105, 3, 2000);
        assert_eq!(w.cwnd, 21 * MSS);
        // ssthresh = max(10 000, 3/4 x 21 000 = 15 750)
        assert_eq!(w.ssthresh, 15_750);
        // Within a round nothing moves.
        v.on_ack(&mut w, &ack(1500, 2000));
        assert_eq!(w.cwnd, 21 * MSS);
        // RTT 115: diff = 21 x 15/115 = 2.74, between alpha and beta -> hold.
        end_round(&mut v, &mut w, 115, 3, 3000);
        assert_eq!(w.cwnd, 21 * MSS);
        // RTT 130: diff = 21 x 30/130 = 4.85 > beta = 4 -> 20 segments;
        // ssthresh = min(ssthresh, cwnd) = 15 750 (then max with 3/4 x 20 000 = 15 000).
        end_round(&mut v, &mut w, 130, 3, 4000);
        assert_eq!((w.cwnd, w.ssthresh), (20 * MSS, 15_750));
    }

    #[test]
    fn brakmo_thresholds() {
        let p = VegasParams {
            alpha: 1.0,
            beta: 3.0,
            ..Default::default()
        };
        let mut w = win(20, 10 * MSS);
        let mut v = started(p, &mut w);
        // RTT 110: diff = 20 x 10/110 = 1.82: inside [1, 3] -> hold (the default alpha 2 grows).
        end_round(&mut v, &mut w, 110, 3, 2000);
        assert_eq!(w.cwnd, 20 * MSS);
        // RTT 120: diff = 20 x 20/120 = 3.33 > 3 -> 19 segments.
        end_round(&mut v, &mut w, 120, 3, 3000);
        assert_eq!(w.cwnd, 19 * MSS);
    }

    #[test]
    fn too_few_samples_fall_back_to_reno_for_the_next_round() {
        let mut w = win(20, 10 * MSS);
        let mut v = started(VegasParams::default(), &mut w);
        // Two samples only (Linux/ns-3 need more than 2): Reno step, no Vegas decision.
        end_round(&mut v, &mut w, 200, 2, 2000);
        assert_eq!(w.cwnd, 20 * MSS + MSS * MSS / (20 * MSS), "RFC 5681 eq. 3");
        let c = w.cwnd;
        v.on_ack(&mut w, &ack(1500, 2000));
        assert_eq!(
            w.cwnd,
            c + MSS * MSS / c,
            "the whole next round grows as Reno"
        );
        // min_rtt_samples = 1 (no timestamps): one sample suffices.
        let p = VegasParams {
            min_rtt_samples: 1,
            ..Default::default()
        };
        let mut w = win(20, 10 * MSS);
        let mut v = started(p, &mut w);
        end_round(&mut v, &mut w, 105, 1, 2000);
        assert_eq!(w.cwnd, 21 * MSS);
    }

    #[test]
    fn loss_and_timeout() {
        let w = win(20, 18 * MSS);
        let mut v = Vegas::new(&VegasParams::default());
        // Linux: Reno's max(FlightSize/2, 2 MSS).
        assert_eq!(v.ssthresh_after_loss(&w, 20 * MSS, 0), 10 * MSS);
        assert_eq!(v.ssthresh_after_loss(&w, 3 * MSS, 0), 2 * MSS);
        // ns-3: max(min(ssthresh, cwnd - 1 MSS), 2 MSS).
        let mut v = Vegas::new(&VegasParams {
            loss_response: VegasLossResponse::Ns3,
            ..Default::default()
        });
        assert_eq!(v.ssthresh_after_loss(&w, 20 * MSS, 0), 18 * MSS);
        assert_eq!(v.ssthresh_after_loss(&win(20, u64::MAX), 0, 0), 19 * MSS);
        assert_eq!(v.ssthresh_after_loss(&win(2, u64::MAX), 0, 0), 2 * MSS);
        let mut w2 = w;
        v.on_timeout(&mut w2, 20 * MSS, 0);
        assert_eq!((w2.cwnd, w2.ssthresh), (MSS, 18 * MSS));
        // Brakmo et al. / Liu & Liu: three quarters of cwnd.
        let mut v = Vegas::new(&VegasParams {
            loss_response: VegasLossResponse::Quarter,
            ..Default::default()
        });
        assert_eq!(v.ssthresh_after_loss(&w, 20 * MSS, 0), 15 * MSS);
        assert_eq!(v.ssthresh_after_loss(&win(2, u64::MAX), 0, 0), 2 * MSS);
    }

    #[test]
    fn after_a_loss_vegas_waits_one_fresh_round() {
        let mut w = win(20, 10 * MSS);
        let mut v = started(VegasParams::default(), &mut w);
        v.ssthresh_after_loss(&w, 20 * MSS, 0);
        // Samples from before the restart do not count; the first ACK after recovery opens a
        // round ending at its snd_nxt (5000) and changes nothing in avoidance.
        v.on_rtt_sample(150 * MS, 0);
        v.on_ack(&mut w, &ack(4000, 5000));
        assert_eq!((w.cwnd, v.round_end, v.round_samples), (20 * MSS, 5000, 0));
        end_round(&mut v, &mut w, 101, 3, 6000);
        assert_eq!(w.cwnd, 21 * MSS, "diff = 20 x 1/101 < alpha");
    }

    #[test]
    fn validation_names_the_field() {
        let p = VegasParams {
            alpha: 5.0,
            ..Default::default()
        };
        assert!(p.validate().unwrap_err().path == "alpha");
        let p = VegasParams {
            gamma: -1.0,
            ..Default::default()
        };
        assert!(p.validate().unwrap_err().path == "gamma");
        assert!(VegasParams::default().validate().is_ok());
    }

    #[test]
    fn the_rtt_vegas_compares_is_the_newest_sample_or_the_smoothed_estimate() {
        // Round 1 sets BaseRTT = 100 ms both ways. In round 2 every ACK measures 100 ms (no
        // queue) but the smoothed RTT still says 200 ms: `newest` sees no queue and adds a
        // segment, `smoothed` (ns-3) sees cwnd/2 segments queued and removes one.
        let run = |rtt_sample| {
            let mut v = Vegas::new(&VegasParams {
                rtt_sample,
                ..Default::default()
            });
            let mss = 1000;
            let mut w = window(20 * mss, 10 * mss, mss);
            let mut ack = 0;
            for (srtt, round) in [
                (100 * MS, 0u64),
                (100 * MS, 1),
                (200 * MS, 2),
                (200 * MS, 3),
            ] {
                for _ in 0..5 {
                    ack += mss;
                    let ev = AckEvent {
                        acked: mss,
                        ack,
                        snd_nxt: (round + 1) * 5 * mss,
                        srtt: Some(srtt),
                        rtt: Some(100 * MS),
                        ..Default::default()
                    };
                    v.on_rtt_sample(100 * MS, 0);
                    v.on_any_ack(&ev, false);
                    v.on_ack(&mut w, &ev);
                }
            }
            w.cwnd / mss
        };
        let (newest, smoothed) = (run(VegasRttSample::Newest), run(VegasRttSample::Smoothed));
        // Four decisions: newest adds a segment at each; smoothed adds one at each of the two
        // rounds with a 100 ms SRTT and removes one at each of the two with 200 ms.
        assert_eq!(
            (newest, smoothed),
            (24, 20),
            "newest {newest}, smoothed {smoothed}"
        );
    }

    #[test]
    fn an_integer_diff_holds_where_the_fractional_one_grows() {
        // cwnd 10 segments, BaseRTT 100 ms, RTT 118 ms: Brakmo's diff = 10 x 18/118 = 1.53 <
        // alpha 2, so +1; ns-3's target = floor(10 x 100/118) = 8, diff = 2: hold.
        for (integer, want) in [(false, 11), (true, 10)] {
            let mut v = Vegas::new(&VegasParams {
                integer_diff: integer,
                ..Default::default()
            });
            let mut w = window(10_000, 5_000, 1000);
            v.decide(&mut w, 100 * MS, 118 * MS);
            assert_eq!(w.cwnd / 1000, want, "integer_diff = {integer}");
        }
    }
}
