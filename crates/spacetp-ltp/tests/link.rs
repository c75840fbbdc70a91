//! Link-state cues (RFC 5326 section 6, "Suspend Timers" and "Resume Timers"; ION's
//! ltpSuspendTimers/ltpResumeTimers): nothing leaves while a span's link is down, timers
//! whose answer could not have left the peer are suspended and resume late by the outage;
//! and long light times with large blocks.

mod common;

use common::*;
use spacetp_ltp::wire::SegmentType;
use spacetp_ltp::Event;
use spacetp_proto::{MS, SEC};

#[test]
fn nothing_leaves_while_the_link_is_down_and_everything_does_once_it_is_up() {
    let mut sim = Sim::new(span(B, SEC, Some(8e6)), 41);
    sim.set_link(false);
    sim.send(A, 1, pattern(5_000, 1), 5_000);
    sim.run_until(100 * SEC);
    assert!(sim.log.is_empty());
    assert_eq!(
        sim.a.poll_timeout(),
        None,
        "a down link has no send deadline"
    );
    sim.set_link(true);
    sim.run();
    assert_eq!(sim.log[0].t, 100 * SEC);
    assert_eq!(sim.delivered(), [pattern(5_000, 1)]);
}

#[test]
fn an_outage_suspends_the_checkpoint_timer_so_it_does_not_fire_during_it() {
    let mut sim = Sim::new(span(B, SEC, Some(8e6)), 42);
    sim.send(A, 1, pattern(5_000, 2), 5_000);
    // The checkpoint leaves at ~5 ms and reaches B at ~1 s; the link goes down at 500 ms
    // for 60 s (the segments in flight still arrive). B's report cannot leave until the
    // link is back, and A's checkpoint timer must not fire meanwhile.
    sim.run_until(500 * MS);
    sim.set_link(false);
    sim.run_until(60 * SEC + 500 * MS);
    assert!(sim.kinds(B).is_empty(), "B sent during the outage");
    assert_eq!(
        sim.sent(A).filter(|s| s.kind.is_checkpoint()).count(),
        1,
        "the checkpoint was resent during the outage"
    );
    sim.set_link(true);
    sim.run();
    assert_eq!(sim.a.span_stats(B).unwrap().checkpoints_retransmitted, 0);
    assert_eq!(sim.reports()[0].t, 60 * SEC + 500 * MS);
    assert_eq!(sim.delivered().len(), 1);
    assert!(sim
        .events_of(A)
        .iter()
        .any(|e| matches!(e, Event::ExportCompleted { .. })));
}

#[test]
fn a_lost_checkpoint_is_resent_later_by_exactly_the_outage_that_held_its_answer() {
    let run = |outage: bool| {
        let mut sim = Sim::new(span(B, SEC, Some(8e6)), 43);
        sim.drop = Box::new(|s, log| {
            s.kind.is_checkpoint() && !log.iter().any(|x| x.kind.is_checkpoint())
        });
        sim.send(A, 1, pattern(2_000, 3), 2_000);
        if outage {
            // Down from 1 s to 31 s. The answer to the checkpoint could leave B from
            // arrival (~1.5 s: light time + half of A's 1 s turnaround) + B's 1 s
            // turnaround = ~2.5 s; it is held until 31 s.
            sim.run_until(SEC);
            sim.set_link(false);
            sim.run_until(31 * SEC);
            sim.set_link(true);
        }
        sim.run();
        let cps: Vec<_> = sim
            .sent(A)
            .filter(|s| s.kind.is_checkpoint())
            .map(|s| s.t)
            .collect();
        assert_eq!(sim.delivered().len(), 1);
        cps
    };
    let plain = run(false);
    let held = run(true);
    assert_eq!(plain.len(), 2);
    assert_eq!(held.len(), 2);
    assert_eq!(plain[0], held[0]);
    // The timer resumed with its deadline moved by the time the answer could not leave:
    // from its earliest departure (checkpoint arrival + B's turnaround) to the link's return.
    let cp_sent = plain[0];
    let airtime = plain[1] - cp_sent - 4 * SEC;
    let earliest_answer = cp_sent + airtime + SEC + SEC / 2 + SEC;
    assert_eq!(held[1], plain[1] + (31 * SEC - earliest_answer));
}

#[test]
fn forty_minutes_of_light_time_and_a_block_of_tens_of_megabytes() {
    // Mars at its farthest: 40 min each way, 10 Mb/s, a 24 MB block, 0.5% of segments lost
    // both ways.
    let owlt = 40 * 60 * SEC;
    let mut cfg = span(B, owlt, Some(10e6));
    cfg.max_retransmission_cycles = Some(20);
    let mut sim = Sim::new(cfg, 44);
    sim.loss = 0.005;
    let block = pattern(24_000_000, 9);
    sim.send(A, 1, block.clone(), block.len() as u64);
    sim.run();
    let got = sim.delivered();
    assert_eq!(got.len(), 1);
    assert!(got[0] == block, "the block arrived altered");
    let done = sim
        .events
        .iter()
        .find(|e| matches!(e.2, Event::ExportCompleted { .. }))
        .expect("completed")
        .0;
    // Sending takes ~19.5 s; each round of repair is a round trip of 80 min.
    assert!(
        done > 2 * owlt && done < 8 * owlt,
        "done at {} s",
        done / SEC
    );
    let sa = sim.a.span_stats(B).unwrap();
    assert!(sa.data_segments_retransmitted > 0);
    // A checkpoint timer is longer than the round trip: none fired for want of patience.
    let lost_cps = sim
        .sent(A)
        .filter(|s| s.kind.is_checkpoint() && s.dropped)
        .count() as u64;
    let lost_rs = sim
        .sent(B)
        .filter(|s| s.kind == SegmentType::Report && s.dropped)
        .count() as u64;
    assert!(sa.checkpoints_retransmitted <= lost_cps + lost_rs);
    assert_eq!(sim.a.open_sessions(B), Some((0, 0)));
    assert_eq!(sim.b.open_sessions(A), Some((0, 0)));
}
