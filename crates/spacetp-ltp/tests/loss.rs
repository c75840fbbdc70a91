//! Recovery from losses, each by the mechanism RFC 5326 gives it: lost data by the report's
//! gaps (section 6.13), a lost checkpoint by its timer (6.7), a lost report by its timer
//! (6.8), a lost report acknowledgment by the report's timer and the sender's memory of the
//! closed session; random loss both ways delivers every block exactly once.

mod common;

use common::*;
use spacetp_ltp::wire::{Claim, SegmentType};
use spacetp_ltp::Event;
use spacetp_proto::SEC;

/// The n-th (from 0) segment of `kind` sent by `from` is dropped.
fn drop_nth(from: u64, kind: fn(SegmentType) -> bool, n: usize) -> DropRule {
    Box::new(move |s, log| {
        s.from == from
            && kind(s.kind)
            && log
                .iter()
                .filter(|x| x.from == from && kind(x.kind))
                .count()
                == n
    })
}

#[test]
fn the_report_names_exactly_the_lost_data_and_only_that_is_resent() {
    let mut sim = Sim::new(span(B, SEC, Some(8e6)), 11);
    // Data segments 3 and 7 of the first transmission are lost.
    sim.drop = Box::new(|s, log| {
        let n = log
            .iter()
            .filter(|x| x.from == A && x.kind.is_data())
            .count();
        s.from == A && s.kind.is_data() && (n == 3 || n == 7)
    });
    let block = pattern(20_000, 4);
    sim.send(A, 1, block.clone(), 20_000);
    sim.run();
    let lost: Vec<(u64, u64)> = sim
        .sent(A)
        .filter(|s| s.dropped)
        .map(|s| {
            let (o, l, _) = s.data().unwrap();
            (o, o + l)
        })
        .collect();
    assert_eq!(lost.len(), 2);

    // First report: from 0 to the end of the red part, claims everything but the two
    // lost ranges (offsets in the report are relative to the lower bound on the wire;
    // decoded they are absolute).
    let reports = sim.reports();
    let (rs1, cp1, lower, upper, claims) = reports[0].report().unwrap();
    assert_eq!((lower, upper), (0, 20_000));
    let expect = vec![
        Claim {
            offset: 0,
            length: lost[0].0,
        },
        Claim {
            offset: lost[0].1,
            length: lost[1].0 - lost[0].1,
        },
        Claim {
            offset: lost[1].1,
            length: 20_000 - lost[1].1,
        },
    ];
    assert_eq!(claims, expect);

    // What A sends after that report: an RA for it, then exactly the two lost ranges, the
    // last segment a checkpoint (not EORP) citing the report, with the next serial number.
    // A lost segment was full: sent again with a checkpoint's serial numbers it no longer
    // fits, so it goes as two segments, the checkpoint keeping at least one byte (ION's
    // constructDataSegment).
    let first_cp = sim
        .sent(A)
        .find(|s| s.kind.is_checkpoint())
        .unwrap()
        .data()
        .unwrap()
        .2
        .unwrap();
    assert_eq!(cp1, first_cp.checkpoint);
    let after: Vec<_> = sim
        .sent(A)
        .filter(|s| s.t >= reports[0].t)
        .filter(|s| s.kind.is_data())
        .collect();
    let mut resent: Vec<(u64, u64)> = Vec::new();
    for s in &after {
        let (o, l, _) = s.data().unwrap();
        match resent.last_mut() {
            Some(r) if r.1 == o => r.1 = o + l,
            _ => resent.push((o, o + l)),
        }
    }
    assert_eq!(resent, lost);
    let (last, rest) = after.split_last().unwrap();
    assert!(rest.iter().all(|s| s.kind == SegmentType::RedData));
    assert_eq!(last.kind, SegmentType::RedCheckpoint);
    assert!(last.bytes.len() <= 1400 && rest.iter().all(|s| s.bytes.len() <= 1400));
    let cp2 = last.data().unwrap().2.unwrap();
    assert_eq!((cp2.checkpoint, cp2.report), (first_cp.checkpoint + 1, rs1));
    assert!(sim.sent(A).any(|s| s.ra_serial() == Some(rs1)));

    // The report answering that checkpoint: the red part is now whole, so it is the final
    // report, one claim over all of it (ION's sendFinalRpt), citing the new checkpoint.
    let (rs2, cp_cited, lower2, upper2, claims2) = reports[1].report().unwrap();
    assert_eq!(rs2, rs1 + 1);
    assert_eq!(cp_cited, cp2.checkpoint);
    assert_eq!((lower2, upper2), (0, 20_000));
    assert_eq!(
        claims2,
        [Claim {
            offset: 0,
            length: 20_000
        }]
    );
    assert_eq!(reports.len(), 2);
    assert_eq!(sim.delivered(), [block]);
    let sa = sim.a.span_stats(B).unwrap();
    assert_eq!(sa.data_segments_retransmitted, after.len() as u64);
    assert_eq!(
        sa.data_bytes_retransmitted,
        lost.iter().map(|(s, e)| e - s).sum::<u64>()
    );
    // The report to the first checkpoint measures the loss of the first transmission; the
    // final report (to the second checkpoint) is not counted.
    assert_eq!(sa.first_report_scope_bytes, 20_000);
    assert_eq!(
        sa.first_report_claimed_bytes,
        20_000 - lost.iter().map(|(s, e)| e - s).sum::<u64>()
    );
}

#[test]
fn a_lost_checkpoint_is_resent_when_its_timer_runs_out_and_not_before() {
    let mut sim = Sim::new(span(B, SEC, Some(8e6)), 12);
    sim.drop = drop_nth(A, SegmentType::is_checkpoint, 0);
    sim.send(A, 1, pattern(3_000, 2), 3_000);
    sim.run();
    let cps: Vec<_> = sim.sent(A).filter(|s| s.kind.is_checkpoint()).collect();
    assert_eq!(cps.len(), 2);
    assert!(cps[0].dropped && !cps[1].dropped);
    assert_eq!(
        cps[0].bytes, cps[1].bytes,
        "a checkpoint is resent as it was"
    );
    // Deadline (ION's setTimer; RFC 5326 section 6.2): last bit out + light time out and
    // back + both engines' queuing latency (1 s each by default).
    let airtime = (cps[0].bytes.len() as f64 * 1e9 / 1e6).ceil() as u64;
    assert_eq!(cps[1].t, cps[0].t + airtime + SEC + SEC + SEC + SEC);
    assert_eq!(sim.delivered(), [pattern(3_000, 2)]);
    assert_eq!(sim.a.span_stats(B).unwrap().checkpoints_retransmitted, 1);
}

#[test]
fn a_lost_report_is_resent_on_its_timer_with_its_serial_number() {
    let mut sim = Sim::new(span(B, SEC, Some(8e6)), 13);
    sim.drop = drop_nth(B, |k| k == SegmentType::Report, 0);
    sim.send(A, 1, pattern(3_000, 3), 3_000);
    sim.run();
    let rs: Vec<_> = sim.reports();
    assert_eq!(rs.len(), 2);
    assert_eq!(rs[0].bytes, rs[1].bytes);
    let airtime = (rs[0].bytes.len() as f64 * 1e9 / 1e6).ceil() as u64;
    // The checkpoint's timer (started earlier) may have fired too: A resends the
    // checkpoint, B answers it with nothing new (the final report is already out).
    assert_eq!(rs[1].t, rs[0].t + airtime + 4 * SEC);
    let sb = sim.b.span_stats(A).unwrap();
    assert_eq!((sb.reports_sent, sb.reports_retransmitted), (1, 1));
    assert_eq!(sim.delivered().len(), 1);
    assert_eq!(sim.b.open_sessions(A), Some((0, 0)));
}

#[test]
fn a_lost_report_acknowledgment_is_recovered_and_nobody_cancels() {
    let mut sim = Sim::new(span(B, SEC, Some(8e6)), 14);
    sim.drop = drop_nth(A, |k| k == SegmentType::ReportAck, 0);
    sim.send(A, 1, pattern(3_000, 4), 3_000);
    sim.run();
    // A closed its session on the report; the resent report finds it closed and is
    // acknowledged all the same (ION's acknowledgeLateReport), so B closes too.
    let ras: Vec<_> = sim
        .sent(A)
        .filter(|s| s.kind == SegmentType::ReportAck)
        .collect();
    assert_eq!(ras.len(), 2);
    assert_eq!(ras[0].ra_serial(), ras[1].ra_serial());
    assert_eq!(sim.reports().len(), 2);
    assert!(!sim.events.iter().any(|e| matches!(
        e.2,
        Event::ImportCanceled { .. } | Event::ExportCanceled { .. }
    )));
    assert_eq!(sim.b.open_sessions(A), Some((0, 0)));
    assert_eq!(sim.b.span_stats(A).unwrap().import_sessions_completed, 1);
}

#[test]
fn late_duplicates_of_a_closed_session_do_not_reopen_it() {
    let mut sim = Sim::new(span(B, SEC, Some(8e6)), 15);
    sim.send(A, 1, pattern(3_000, 5), 3_000);
    sim.run();
    let first = sim
        .sent(A)
        .find(|s| s.kind.is_data())
        .unwrap()
        .bytes
        .clone();
    let cp = sim
        .sent(A)
        .find(|s| s.kind.is_checkpoint())
        .unwrap()
        .bytes
        .clone();
    let now = sim.now;
    sim.b.on_segment(now, &first).unwrap();
    sim.b.on_segment(now, &cp).unwrap();
    sim.run();
    assert_eq!(sim.delivered().len(), 1);
    assert_eq!(sim.b.open_sessions(A), Some((0, 0)));
    assert_eq!(sim.reports().len(), 1, "no report for a closed session");
    assert_eq!(sim.b.span_stats(A).unwrap().redundant_segments_received, 2);
}

#[test]
fn random_loss_both_ways_delivers_every_block_once_and_intact() {
    for seed in [1u64, 2, 3, 4, 5, 6] {
        println!("seed {seed}");
        let mut cfg = span(B, 500 * spacetp_proto::MS, Some(8e6));
        cfg.max_retransmissions = Some(20);
        cfg.max_retransmission_cycles = Some(50);
        let mut sim = Sim::new(cfg, seed);
        sim.loss = 0.1;
        let blocks: Vec<Vec<u8>> = (0..8)
            .map(|i| pattern(5_000 + i * 3_001, i as u8))
            .collect();
        for b in &blocks {
            sim.send(A, 1, b.clone(), b.len() as u64);
        }
        sim.run();
        let mut got = sim.delivered();
        got.sort();
        let mut want = blocks.clone();
        want.sort();
        assert_eq!(got, want, "seed {seed}");
        let done = sim
            .events_of(A)
            .iter()
            .filter(|e| matches!(e, Event::ExportCompleted { .. }))
            .count();
        assert_eq!(done, 8, "seed {seed}");
        assert_eq!(sim.a.open_sessions(B), Some((0, 0)), "seed {seed}");
        assert_eq!(sim.b.open_sessions(A), Some((0, 0)), "seed {seed}");
    }
}
