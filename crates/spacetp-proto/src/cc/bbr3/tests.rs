//! BBRv3's behaviours, each checked against draft-ietf-ccwg-bbr-06's text (section in the
//! comment), by driving the controller with ACKs built here (`Drive`); ProbeBW's in
//! `tests_probe_bw.rs`.

use super::*;
use crate::cc::{AckEvent, ControlInput, ControllerFactory, RateSample, Window};
use crate::time::{MS, SEC};

pub(super) const MSS: u64 = 1000;
/// 1 MB/s x 100 ms: a BDP of 100 segments.
pub(super) const BW: f64 = 1e6;
pub(super) const RTT: Time = 100 * MS;
pub(super) const BDP: u64 = 100_000;

/// One ACK as the connection would hand it on.
#[derive(Clone, Copy)]
pub(super) struct Ack {
    pub acked: u64,
    pub in_flight: u64,
    pub losses: u64,
    /// Bytes lost since the delivered segment left (`RS.lost`), and what was in flight then.
    pub lost_since_send: u64,
    pub tx_in_flight: u64,
    pub rate: f64,
    pub delivered_in_sample: u64,
    /// The sample starts a round (its segment left after the round began).
    pub new_round: bool,
    pub state: LossState,
    pub ce: u64,
    pub rtt: Time,
}

impl Default for Ack {
    fn default() -> Self {
        Ack {
            acked: MSS,
            in_flight: BDP,
            losses: 0,
            lost_since_send: 0,
            tx_in_flight: BDP,
            rate: BW,
            delivered_in_sample: BDP,
            new_round: false,
            state: LossState::Open,
            ce: 0,
            rtt: RTT,
        }
    }
}

pub(super) struct Drive {
    pub b: Bbr3,
    pub w: Window,
    pub now: Time,
    pub delivered: u64,
    pub lost: u64,
    pub ce: u64,
}

impl Drive {
    pub fn new() -> Self {
        let mut b = Bbr3::new(&Bbr3Params::default());
        b.mss = MSS;
        b.init_cwnd = 10 * MSS;
        Drive {
            b,
            w: Window {
                cwnd: BDP,
                ssthresh: u64::MAX,
                mss: MSS,
            },
            now: SEC,
            delivered: 10 * BDP,
            lost: 0,
            ce: 0,
        }
    }

    /// A model already built: bw, min_rtt, the pipe once filled, pacing set from them.
    pub fn filled() -> Self {
        let mut d = Drive::new();
        let b = &mut d.b;
        b.min_rtt = Some(RTT);
        b.min_rtt_stamp = d.now;
        b.probe_rtt.min_delay = Some(RTT);
        b.probe_rtt.min_stamp = d.now;
        b.max_bw_filter.update(1, 0, BW);
        b.max_bw = BW;
        b.bw = BW;
        b.full_bw_reached = true;
        b.cwnd = BDP;
        b.now = d.now;
        b.set_pacing_rate(&AckEvent {
            srtt: Some(RTT),
            ..Default::default()
        });
        b.set_send_quantum();
        b.next_round_delivered = d.delivered;
        b.b.loss_round_delivered = d.delivered;
        d
    }

    pub fn ack(&mut self, a: Ack) -> ControlRequest {
        self.now += MS;
        self.delivered += a.acked;
        self.lost += a.losses;
        self.ce += a.ce;
        let prior_delivered = if a.new_round { self.delivered } else { 0 };
        let rs = RateSample {
            delivered: a.delivered_in_sample,
            interval: (a.delivered_in_sample as f64 / a.rate * 1e9) as Time,
            prior_delivered,
            is_app_limited: false,
            rtt: a.rtt,
            is_retrans: false,
            tx_in_flight: a.tx_in_flight,
            prior_lost: self.lost - a.lost_since_send,
        };
        let ev = AckEvent {
            now: self.now,
            acked: a.acked,
            rtt: Some(a.rtt),
            srtt: Some(RTT),
            rate: Some(rs),
            ..Default::default()
        };
        let c = ControlInput {
            state: a.state,
            in_flight: a.in_flight,
            acked_sacked: a.acked,
            delivered: self.delivered,
            lost: self.lost,
            losses: a.losses,
            ce_delivered: self.ce,
            has_selective_acks: true,
        };
        self.b.cong_control(&mut self.w, &ev, &c)
    }

    /// A round trip's ACKs: `bytes` in all, one segment each, the last one the first of the
    /// next round (it acknowledges data sent after the round began).
    pub fn round(&mut self, bytes: u64, a: Ack) {
        let n = bytes / MSS;
        for k in 0..n {
            self.ack(Ack {
                new_round: k + 1 == n,
                ..a
            });
        }
    }
}

#[test]
fn startup_exits_after_a_round_of_recovery_losing_over_2_percent_with_6_loss_events() {
    // 5.3.1.3: in fast recovery a full round, loss rate > BBR.LossThresh, >= 6 loss events.
    let run = |events: u64, lost: u64| {
        let mut d = Drive::new();
        d.b.min_rtt = Some(RTT);
        d.b.max_bw = BW;
        d.b.bw = BW;
        d.b.next_round_delivered = u64::MAX; // no plateau check in the way
        let rec = LossState::Recovery;
        for _ in 0..events {
            d.ack(Ack {
                losses: lost / events,
                state: rec,
                in_flight: 2 * BDP,
                ..Default::default()
            });
        }
        // The first ACK for data sent after the first loss ends the loss round.
        d.ack(Ack {
            new_round: true,
            state: rec,
            in_flight: 2 * BDP,
            tx_in_flight: 150_000,
            lost_since_send: lost,
            delivered_in_sample: 120_000,
            ..Default::default()
        });
        d
    };
    // 2% of the 150 kB in flight at send is 3 kB.
    let d = run(6, 6000);
    assert_eq!(d.b.state(), Bbr3State::Drain);
    assert!(d.b.full_bw_reached);
    // inflight_longterm = max(BBR.bdp, BBR.inflight_latest) = max(100 kB, 120 kB).
    assert_eq!(d.b.b.inflight_longterm, 120_000);
    assert_eq!(run(5, 6000).b.state(), Bbr3State::Startup, "5 loss events");
    assert_eq!(run(6, 3000).b.state(), Bbr3State::Startup, "exactly 2%");
    assert_eq!(run(6, 3000).b.b.inflight_longterm, INF);
}

#[test]
fn drain_paces_at_half_then_probe_bw_down_once_inflight_is_one_bdp() {
    // 5.3.2: DrainPacingGain 0.5, exit when C.inflight <= Inflight(1.0).
    let mut d = Drive::filled();
    d.b.state = Bbr3State::Startup;
    d.ack(Ack {
        in_flight: 2 * BDP,
        ..Default::default()
    });
    assert_eq!(d.b.state(), Bbr3State::Drain);
    assert_eq!(d.b.gains(), (0.5, 2.0));
    let rate = d.b.pacing_rate().unwrap();
    assert!((rate - 0.5 * BW * 0.99).abs() < 1.0, "{rate}");
    d.ack(Ack {
        in_flight: BDP,
        ..Default::default()
    });
    // EnterProbeBW starts in DOWN, which, inflight being at the BDP already, goes on to
    // CRUISE on the same ACK (UpdateProbeBWCyclePhase follows CheckDrainDone, 5.2.3).
    assert_eq!(d.b.state(), Bbr3State::ProbeBwCruise);
}

#[test]
fn loss_outside_probing_cuts_bw_shortterm_and_inflight_shortterm_by_beta_once_per_round() {
    // 5.5.10.3: at the end of a round with loss, bw_shortterm = max(bw_latest, 0.7 x
    // bw_shortterm) (from max_bw), inflight_shortterm = max(inflight_latest, 0.7 x itself)
    // (from cwnd); BBR.bw = min(max_bw, bw_shortterm).
    let mut d = Drive::filled();
    d.b.start_probe_bw_down();
    d.b.start_probe_bw_cruise();
    let small = Ack {
        rate: 0.3 * BW,
        delivered_in_sample: 30_000,
        ..Default::default()
    };
    d.ack(Ack {
        new_round: true,
        ..small
    });
    d.ack(Ack {
        losses: MSS,
        ..small
    });
    assert_eq!(
        d.b.b.bw_shortterm,
        f64::INFINITY,
        "not before the round ends"
    );
    let cwnd = d.b.cwnd;
    d.ack(Ack {
        new_round: true,
        ..small
    });
    assert!((d.b.b.bw_shortterm - 0.7 * BW).abs() < 1.0);
    assert_eq!(d.b.b.inflight_shortterm, (0.7 * cwnd as f64) as u64);
    assert!((d.b.bw - 0.7 * BW).abs() < 1.0);
    // Another round with loss: 0.49; a round without: unchanged.
    d.ack(Ack {
        losses: MSS,
        ..small
    });
    d.ack(Ack {
        new_round: true,
        ..small
    });
    assert!((d.b.b.bw_shortterm - 0.49 * BW).abs() < 1.0);
    d.ack(Ack {
        new_round: true,
        ..small
    });
    assert!((d.b.b.bw_shortterm - 0.49 * BW).abs() < 1.0);
    assert!(
        d.b.cwnd <= (0.49 * cwnd as f64) as u64 + 1,
        "cwnd is bounded by it"
    );
}

#[test]
fn loss_while_probing_leaves_the_short_term_model_alone() {
    // 5.5.10.3 AdaptLowerBoundsFromCongestion returns at once in Startup, REFILL and UP.
    let mut d = Drive::filled();
    d.b.start_probe_bw_refill();
    d.ack(Ack {
        losses: MSS,
        ..Default::default()
    });
    d.ack(Ack {
        new_round: true,
        ..Default::default()
    });
    assert_eq!(d.b.b.bw_shortterm, f64::INFINITY);
    assert_eq!(d.b.b.inflight_shortterm, INF);
}

#[test]
fn max_bw_is_the_max_of_the_current_and_previous_probe_bw_cycle() {
    // 2.11: BBR.MaxBwFilterLen = 2 cycles.
    let mut b = Bbr3::new(&Bbr3Params::default());
    let sample = |b: &mut Bbr3, rate: f64| {
        let rs = RateSample {
            delivered: 1000,
            interval: (1000.0 / rate * 1e9) as Time,
            prior_delivered: 0,
            is_app_limited: false,
            rtt: RTT,
            is_retrans: false,
            tx_in_flight: 0,
            prior_lost: 0,
        };
        b.update_max_bw(Some(&rs));
        b.max_bw
    };
    sample(&mut b, 2e6);
    b.cycle_count = 1;
    assert_eq!(sample(&mut b, 1e6), 2e6, "the previous cycle's peak holds");
    b.cycle_count = 2;
    assert_eq!(sample(&mut b, 1e6), 1e6, "two cycles on, it is gone");
}

#[test]
fn probe_rtt_comes_5_s_after_the_last_lower_rtt_and_caps_cwnd_at_half_the_bdp() {
    // 5.3.4.1: ProbeRTTInterval 5 s, cwnd = max(0.5 x BDP, 4 SMSS), held >= 200 ms and a
    // round, then (pipe filled) ProbeBW_CRUISE with the cwnd restored.
    let mut d = Drive::filled();
    d.b.start_probe_bw_down();
    d.b.start_probe_bw_cruise();
    d.b.probe.bw_probe_wait = 100 * SEC; // no bandwidth probe in the way
    d.b.probe.rounds_since_probe_up = 0;
    let since = d.now;
    while d.b.state() == Bbr3State::ProbeBwCruise {
        d.ack(Ack::default());
        d.b.probe.rounds_since_probe_up = 0;
    }
    assert_eq!(d.b.state(), Bbr3State::ProbeRtt);
    assert!(d.now > since + 5 * SEC && d.now <= since + 5 * SEC + 2 * MS);
    assert_eq!(d.b.cwnd, BDP / 2);
    // Inflight down to half the BDP: 200 ms and a round from there.
    let low = Ack {
        in_flight: BDP / 2,
        ..Default::default()
    };
    assert!(d.ack(low).mark_app_limited);
    let held = d.now;
    d.ack(Ack {
        new_round: true,
        ..low
    });
    while d.b.state() == Bbr3State::ProbeRtt {
        assert_eq!(d.b.cwnd, BDP / 2);
        d.ack(low);
    }
    assert!(
        d.now > held + 200 * MS && d.now <= held + 202 * MS,
        "{}",
        d.now - held
    );
    assert_eq!(d.b.state(), Bbr3State::ProbeBwCruise);
    assert!(d.b.cwnd >= BDP, "restored: {}", d.b.cwnd);
}

#[test]
fn ecn_alpha_is_an_ewma_of_the_round_ce_ratio_with_gain_one_sixteenth() {
    let mut e = ecn::Ecn::default();
    assert_eq!(e.alpha, 1.0);
    // No CE seen: the flow does not respond, alpha stays.
    e.on_ack(0);
    assert_eq!(e.on_round_start(10_000, 0), None);
    assert!(!e.eligible);
    // A round in which half the delivered bytes were CE-marked.
    e.on_ack(5_000);
    assert_eq!(e.on_round_start(20_000, 5_000), Some(0.5));
    assert!((e.alpha - (15.0 / 16.0 + 0.5 / 16.0)).abs() < 1e-12);
    // A round without CE: alpha x 15/16.
    let a = e.alpha;
    assert_eq!(e.on_round_start(30_000, 5_000), Some(0.0));
    assert!((e.alpha - a * 15.0 / 16.0).abs() < 1e-12);
    assert!((e.cut() - (1.0 - e.alpha / 3.0)).abs() < 1e-12);
}

#[test]
fn a_round_with_ce_outside_probing_cuts_inflight_shortterm_by_alpha_over_3() {
    let mut d = Drive::filled();
    d.b.start_probe_bw_down();
    d.b.start_probe_bw_cruise();
    d.ack(Ack {
        new_round: true,
        ..Default::default()
    });
    d.ack(Ack {
        ce: 200,
        ..Default::default()
    });
    let cwnd = d.b.cwnd;
    d.ack(Ack {
        new_round: true,
        ..Default::default()
    });
    let alpha = d.b.ecn.alpha;
    let want = (cwnd as f64 * (1.0 - alpha / 3.0)) as u64;
    assert_eq!(d.b.b.inflight_shortterm, want, "alpha {alpha}");
    assert_eq!(
        d.b.b.bw_shortterm,
        f64::INFINITY,
        "ECN does not cut bw_shortterm"
    );
    // A CE ratio over 1/2 in a probe counts as inflight too high.
    d.b.start_probe_bw_refill();
    d.ack(Ack {
        new_round: true,
        ce: 60_000,
        acked: 100_000,
        ..Default::default()
    });
    assert!(d.b.ecn.too_high());
}

#[test]
fn settings_out_of_range_name_the_field() {
    let bad = |f: fn(&mut Bbr3Params)| {
        let mut p = Bbr3Params::default();
        f(&mut p);
        p.validate().unwrap_err().to_string()
    };
    assert!(Bbr3Params::default().validate().is_ok());
    assert!(bad(|p| p.loss_thresh = 0.0).contains("loss_thresh"));
    assert!(bad(|p| p.beta = 1.0).contains("beta"));
    assert!(bad(|p| p.headroom = 1.0).contains("headroom"));
    assert!(bad(|p| p.startup_full_loss_count = 0).contains("startup_full_loss_count"));
    assert!(bad(|p| p.probe_rtt_interval.0 = 20 * SEC).contains("probe_rtt_interval"));
    assert!(bad(|p| p.probe_rtt_duration.0 = 6 * SEC).contains("probe_rtt_duration"));
    assert!(bad(|p| p.min_rtt_window.0 = 0).contains("min_rtt_window"));
}

#[test]
fn a_paced_departure_carries_one_send_quantum() {
    // 5.6.3: pacing_rate x 1 ms within [2 SMSS, 64 kB], in whole segments.
    let b = Bbr3::new(&Bbr3Params::default());
    assert_eq!(
        b.pacing_burst(6.1875e6, Some(40 * MS), 1448),
        4,
        "6 187 bytes"
    );
    assert_eq!(
        b.pacing_burst(125_000.0, Some(40 * MS), 1448),
        2,
        "at least 2 SMSS"
    );
    assert_eq!(
        b.pacing_burst(1e9, Some(40 * MS), 1448),
        45,
        "at most 64 kB"
    );
}
