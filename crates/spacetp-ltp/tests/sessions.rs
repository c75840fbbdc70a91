//! The export window and aggregation (ION's max_export_sessions, aggregation size and time
//! limits), and reports split when their claims do not fit one segment.

mod common;

use common::*;
use spacetp_ltp::wire::SegmentType;
use spacetp_ltp::{Event, MAX_CLAIMS_PER_REPORT};
use spacetp_proto::units::{Bytes, Duration};
use spacetp_proto::{Time, MS, SEC};

fn started(sim: &Sim) -> Vec<(Time, u64, u64)> {
    sim.events
        .iter()
        .filter_map(|(t, id, e)| match e {
            Event::ExportStarted { length, waited, .. } if *id == A => Some((*t, *length, *waited)),
            _ => None,
        })
        .collect()
}

fn completed(sim: &Sim) -> Vec<Time> {
    sim.events
        .iter()
        .filter_map(|(t, id, e)| {
            matches!(e, Event::ExportCompleted { .. } if *id == A).then_some(*t)
        })
        .collect()
}

#[test]
fn with_n_export_sessions_and_a_long_delay_n_blocks_complete_per_round_trip() {
    let mut cfg = span(B, SEC, Some(8e7));
    cfg.max_export_sessions = 2;
    let mut sim = Sim::new(cfg, 31);
    for i in 0..6 {
        sim.send(A, 1, pattern(1_000, i), 1_000);
    }
    assert_eq!(sim.a.blocks_waiting(B), Some(4));
    sim.run();
    let done = completed(&sim);
    assert_eq!(done.len(), 6);
    // A round trip is 2 s of light time plus airtime: completions come in pairs, one pair
    // per round trip.
    let rtt = |t: Time| t / (2 * SEC);
    let per_rtt: Vec<usize> = (1..=3)
        .map(|k| done.iter().filter(|&&t| rtt(t) == k).count())
        .collect();
    assert_eq!(per_rtt, [2, 2, 2], "{done:?}");
    // Each new pair starts when a pair completes: never more than 2 open.
    let starts = started(&sim);
    for (i, &(t, _, _)) in starts.iter().enumerate() {
        let open = i + 1 - done.iter().filter(|&&d| d <= t).count();
        assert!(open <= 2, "{open} sessions open at {t}");
    }
    assert_eq!(starts[2].0, done[0]);
    let s = sim.a.span_stats(B).unwrap();
    assert_eq!(s.blocks_waited_for_session, 4);
    let waits: Time = starts.iter().map(|w| w.2).sum();
    assert_eq!(s.session_wait_total, waits);
    assert!(s.session_wait_max > 4 * SEC && s.session_wait_max < 5 * SEC);
    assert_eq!(sim.delivered().len(), 6);
}

#[test]
fn sdus_aggregate_into_blocks_up_to_the_size_limit() {
    let mut cfg = span(B, SEC, Some(8e7));
    cfg.aggregation_size_limit = Bytes(10_000);
    cfg.aggregation_time_limit = Duration(5 * SEC);
    let mut sim = Sim::new(cfg, 32);
    let sdus: Vec<Vec<u8>> = (0..25).map(|i| pattern(1_000, i)).collect();
    for s in &sdus {
        sim.send(A, 1, s.clone(), 1_000);
    }
    sim.run();
    let starts = started(&sim);
    // Two full blocks at once; the remaining 5 SDUs wait for the time limit.
    assert_eq!(
        starts.iter().map(|s| (s.0, s.1)).collect::<Vec<_>>(),
        [(0, 10_000), (0, 10_000), (5 * SEC, 5_000)]
    );
    // LTP delivers blocks; the SDUs are the client's to split, in order.
    assert_eq!(sim.delivered().concat(), sdus.concat());
    assert_eq!(sim.a.span_stats(B).unwrap().sdus_sent, 25);
}

#[test]
fn a_lone_sdu_waits_for_the_aggregation_time_limit_then_leaves() {
    let mut cfg = span(B, SEC, Some(8e7));
    cfg.aggregation_size_limit = Bytes(100_000);
    cfg.aggregation_time_limit = Duration(2_500 * MS);
    let mut sim = Sim::new(cfg, 33);
    sim.run_until(SEC);
    sim.send(A, 1, pattern(100, 1), 100);
    sim.run();
    assert_eq!(started(&sim), [(SEC + 2_500 * MS, 100, 0)]);
    assert_eq!(sim.log[0].t, SEC + 2_500 * MS);
}

#[test]
fn an_sdu_with_green_data_or_for_another_client_closes_the_block() {
    let mut cfg = span(B, SEC, Some(8e7));
    cfg.aggregation_size_limit = Bytes(100_000);
    let mut sim = Sim::new(cfg, 34);
    sim.send(A, 1, pattern(100, 1), 100);
    sim.send(A, 2, pattern(200, 2), 200);
    sim.send(A, 2, pattern(300, 3), 150);
    sim.run();
    let lens: Vec<(u64, u64)> = sim
        .events_of(A)
        .iter()
        .filter_map(|e| match e {
            Event::ExportStarted {
                length, red_length, ..
            } => Some((*length, *red_length)),
            _ => None,
        })
        .collect();
    assert_eq!(lens, [(100, 100), (500, 350)]);
}

#[test]
fn a_report_with_more_than_twenty_gaps_is_split_into_segments_acknowledged_one_by_one() {
    // Half the segments lost is far beyond what ION's cycle limit expects at a BER of 1e-6
    // (2 checkpoints for this block, and every report segment draws one): raise it.
    let mut cfg = span(B, SEC, Some(8e7));
    cfg.max_retransmission_cycles = Some(10);
    let mut sim = Sim::new(cfg, 35);
    // Every other data segment of the first transmission is lost.
    sim.drop = Box::new(|s, log| {
        let n = log
            .iter()
            .filter(|x| x.from == A && x.kind.is_data())
            .count();
        s.from == A && s.kind == SegmentType::RedData && s.t < SEC && n % 2 == 1
    });
    let block = pattern(60 * 1_300, 8);
    sim.send(A, 1, block.clone(), block.len() as u64);
    sim.run();
    let reports = sim.reports();
    let first: Vec<_> = reports
        .iter()
        .map(|r| r.report().unwrap())
        .take_while(|r| r.1 == reports[0].report().unwrap().1)
        .collect();
    assert!(first.len() >= 2, "{} report segments", first.len());
    // RFC 5326 section 6.11: the first starts at the report's lower bound, each ends where
    // the next starts, the last ends at the report's upper bound; ION: one serial each.
    assert_eq!(first[0].2, 0);
    for w in first.windows(2) {
        assert_eq!(w[0].3, w[1].2);
        assert_eq!(w[1].0, w[0].0 + 1);
    }
    assert_eq!(first.last().unwrap().3, block.len() as u64);
    assert!(first.iter().all(|r| r.4.len() <= MAX_CLAIMS_PER_REPORT));
    // Segments 1, 3, 5, ... were lost and the first and last arrived: one claim more than
    // the losses, over 20 of them.
    let lost = sim.sent(A).filter(|s| s.dropped).count();
    assert!(lost > MAX_CLAIMS_PER_REPORT, "{lost}");
    assert_eq!(first.iter().map(|r| r.4.len()).sum::<usize>(), lost + 1);
    for r in &first {
        assert!(sim.sent(A).any(|s| s.ra_serial() == Some(r.0)));
        // Each report drew a retransmission ending in a checkpoint that cites it.
        assert!(sim
            .sent(A)
            .any(|s| s.kind.is_checkpoint() && s.data().unwrap().2.unwrap().report == r.0));
    }
    assert_eq!(sim.delivered(), [block]);
}
