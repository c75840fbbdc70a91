//! ProbeBW's sub-states (draft-ietf-ccwg-bbr-06 5.3.3), driven as `tests.rs` drives the
//! rest.

use super::tests::{Ack, Drive, BDP, BW, MSS};
use super::*;
use crate::time::{MS, SEC};

#[test]
fn probe_bw_down_keeps_gain_0_90_until_inflight_is_below_the_headroom_target_and_bdp() {
    // 5.3.3.1: pacing_gain 0.90; exit to CRUISE only when inflight <= (1 - 0.15) x
    // inflight_longterm and inflight <= BDP.
    let mut d = Drive::filled();
    d.b.b.inflight_longterm = 200_000;
    d.b.start_probe_bw_down();
    let at = |d: &mut Drive, in_flight| {
        d.ack(Ack {
            in_flight,
            ..Default::default()
        });
        d.b.state()
    };
    assert_eq!(at(&mut d, 180_000), Bbr3State::ProbeBwDown);
    assert_eq!(d.b.gains().0, 0.90);
    let rate = d.b.pacing_rate().unwrap();
    assert!((rate - 0.90 * BW * 0.99).abs() < 1.0, "{rate}");
    // Below the headroom target (170 kB) but above the BDP.
    assert_eq!(at(&mut d, 160_000), Bbr3State::ProbeBwDown);
    assert_eq!(at(&mut d, BDP - MSS), Bbr3State::ProbeBwCruise);
    assert_eq!(d.b.gains(), (1.0, 2.0));
}

#[test]
fn cruise_probes_again_after_2_to_3_s_of_wall_clock_then_refill_lasts_one_round_at_gain_1() {
    // 5.3.3.8.3: bw_probe_wait = 2 + U(0, 1) s (the Reno count, 63 rounds here, is later);
    // 5.3.3.3: REFILL resets the short-term model, gain 1 for one round, then UP.
    let mut d = Drive::filled();
    d.b.start_probe_bw_down();
    d.b.start_probe_bw_cruise();
    d.b.b.bw_shortterm = 0.8 * BW;
    let wait = d.b.probe.bw_probe_wait;
    assert!((2 * SEC..3 * SEC).contains(&wait), "{wait}");
    let start = d.b.probe.cycle_stamp;
    while d.b.state() == Bbr3State::ProbeBwCruise {
        d.ack(Ack::default());
    }
    assert_eq!(d.b.state(), Bbr3State::ProbeBwRefill);
    assert!(d.now > start + wait && d.now <= start + wait + 2 * MS);
    assert_eq!(d.b.b.bw_shortterm, f64::INFINITY);
    assert_eq!(d.b.gains(), (1.0, 2.0));
    for _ in 0..50 {
        d.ack(Ack::default());
        assert_eq!(
            d.b.state(),
            Bbr3State::ProbeBwRefill,
            "a round has not ended"
        );
    }
    d.ack(Ack {
        new_round: true,
        ..Default::default()
    });
    assert_eq!(d.b.state(), Bbr3State::ProbeBwUp);
    assert_eq!(d.b.gains(), (1.25, 2.25));
    assert!(d.b.probe.is_bw_probe_sample);
}

#[test]
fn up_raises_inflight_longterm_by_1_2_4_8_segments_in_successive_rounds() {
    // 5.3.3.5 / 5.3.3.9: while cwnd-limited at inflight_longterm, it grows by 1, 2, 4, 8 ...
    // SMSS per round, spread over the round.
    let mut d = Drive::filled();
    d.b.b.inflight_longterm = BDP;
    d.b.start_probe_bw_refill();
    d.ack(Ack {
        new_round: true,
        ..Default::default()
    });
    assert_eq!(d.b.state(), Bbr3State::ProbeBwUp);
    let mut hi = vec![d.b.b.inflight_longterm];
    for _ in 0..4 {
        let cwnd = d.b.cwnd;
        d.round(
            cwnd,
            Ack {
                in_flight: cwnd,
                tx_in_flight: BDP / 2,
                ..Default::default()
            },
        );
        hi.push(d.b.b.inflight_longterm);
    }
    let steps: Vec<u64> = hi.windows(2).map(|w| (w[1] - w[0]) / MSS).collect();
    assert_eq!(steps, [1, 2, 4, 8], "{hi:?}");
    assert_eq!(
        d.b.state(),
        Bbr3State::ProbeBwUp,
        "limited by inflight_longterm"
    );
}

#[test]
fn a_loss_rate_over_2_percent_in_up_cuts_inflight_longterm_and_goes_down() {
    // 5.5.10.2: inflight_longterm = max(RS.tx_in_flight, BBR.Beta x TargetInflight()),
    // TargetInflight = min(BDP, cwnd); ProbeBW_UP then goes DOWN, prev_probe_too_high.
    let up = |tx_in_flight: u64, lost: u64| {
        let mut d = Drive::filled();
        d.b.start_probe_bw_refill();
        d.ack(Ack {
            new_round: true,
            ..Default::default()
        });
        d.ack(Ack {
            losses: lost,
            tx_in_flight,
            lost_since_send: lost,
            ..Default::default()
        });
        d
    };
    let d = up(120_000, 2_500);
    assert_eq!(d.b.b.inflight_longterm, 120_000, "RS.tx_in_flight");
    assert_eq!(d.b.state(), Bbr3State::ProbeBwDown);
    assert!(d.b.probe.prev_probe_too_high);
    let d = up(50_000, 1_100);
    assert_eq!(d.b.b.inflight_longterm, 70_000, "0.7 x min(BDP, cwnd)");
    // Exactly 2% is not over the threshold.
    let d = up(50_000, 1_000);
    assert_eq!(d.b.state(), Bbr3State::ProbeBwUp);
    assert_eq!(d.b.b.inflight_longterm, INF);
}

#[test]
fn after_a_probe_that_went_too_high_the_next_up_stops_at_inflight_longterm() {
    // 5.3.3.6 precautionary probing: deceleration once inflight reaches inflight_longterm.
    let mut d = Drive::filled();
    d.b.b.inflight_longterm = 120_000;
    d.b.probe.prev_probe_too_high = true;
    d.b.start_probe_bw_refill();
    d.ack(Ack {
        new_round: true,
        ..Default::default()
    });
    assert_eq!(d.b.state(), Bbr3State::ProbeBwUp);
    d.ack(Ack {
        in_flight: 119_000,
        tx_in_flight: BDP,
        ..Default::default()
    });
    assert_eq!(d.b.state(), Bbr3State::ProbeBwUp);
    d.ack(Ack {
        in_flight: 120_000,
        tx_in_flight: BDP,
        ..Default::default()
    });
    assert_eq!(d.b.state(), Bbr3State::ProbeBwDown);
    assert!(d.b.probe.prev_probe_precautionary);
    // A round of its feedback without excess loss: straight back to REFILL (acceleration).
    d.ack(Ack {
        new_round: true,
        in_flight: BDP,
        tx_in_flight: BDP,
        ..Default::default()
    });
    assert_eq!(d.b.state(), Bbr3State::ProbeBwRefill);
}
