//! Blocks crossing a loss-free link: the exchange RFC 5326 section 6 prescribes (data, one
//! checkpoint, one report, one report acknowledgment), red, green and mixed blocks.

mod common;

use common::*;
use spacetp_ltp::wire::{Claim, SegmentType};
use spacetp_ltp::{CanceledBy, Event};
use spacetp_proto::SEC;

#[test]
fn a_red_block_crosses_with_one_checkpoint_one_report_and_one_acknowledgment() {
    let mut sim = Sim::new(span(B, SEC, Some(8e6)), 1);
    let block = pattern(10_000, 7);
    sim.send(A, 1, block.clone(), block.len() as u64);
    sim.run();

    // A -> B: red data, the last one a checkpoint with EORP and EOB (no green part), then
    // the RA. B -> A: one report.
    let a = sim.kinds(A);
    let n = a.len();
    assert!(
        a[..n - 2].iter().all(|&k| k == SegmentType::RedData),
        "{a:?}"
    );
    assert_eq!(a[n - 2], SegmentType::RedCheckpointEorpEob);
    assert_eq!(a[n - 1], SegmentType::ReportAck);
    assert_eq!(sim.kinds(B), [SegmentType::Report]);

    // The checkpoint's serial is cited by the report; the report claims the whole red part
    // from lower bound 0 to the checkpoint's upper bound; the RA names the report.
    let cp = sim.sent(A).nth(n - 2).unwrap().data().unwrap();
    let serials = cp.2.unwrap();
    assert_eq!(serials.report, 0, "a first checkpoint answers no report");
    let (rs_serial, rs_cp, lower, upper, claims) = sim.reports()[0].report().unwrap();
    assert_eq!(rs_cp, serials.checkpoint);
    assert_eq!((lower, upper), (0, 10_000));
    assert_eq!(
        claims,
        [Claim {
            offset: 0,
            length: 10_000
        }]
    );
    assert_eq!(sim.sent(A).last().unwrap().ra_serial(), Some(rs_serial));

    // Data segments tile the block exactly, each within the segment size.
    let mut at = 0;
    for s in sim.sent(A).filter(|s| s.kind.is_data()) {
        let (off, len, _) = s.data().unwrap();
        assert_eq!(off, at);
        at += len;
        assert!(s.bytes.len() <= 1400, "{} bytes", s.bytes.len());
    }
    assert_eq!(at, 10_000);

    assert_eq!(sim.delivered(), [block]);
    assert!(sim
        .events_of(A)
        .iter()
        .any(|e| matches!(e, Event::ExportCompleted { peer: B, .. })));
    assert_eq!(sim.a.open_sessions(B), Some((0, 0)));
    assert_eq!(sim.b.open_sessions(A), Some((0, 0)));
    let (sa, sb) = (sim.a.span_stats(B).unwrap(), sim.b.span_stats(A).unwrap());
    assert_eq!(sa.export_sessions_completed, 1);
    assert_eq!(sb.import_sessions_completed, 1);
    assert_eq!(
        (sa.checkpoints_sent, sa.data_segments_retransmitted),
        (1, 0)
    );
    assert_eq!((sb.reports_sent, sb.report_acks_received), (1, 1));
    assert_eq!(sb.red_bytes_delivered, 10_000);
}

#[test]
fn the_exchange_takes_one_round_trip_after_the_last_byte_leaves() {
    // 1 s each way, 1 MB/s: the report leaves B 1 s after the checkpoint's last bit and
    // B's turnaround adds nothing (a sans-IO engine answers at once).
    let mut sim = Sim::new(span(B, SEC, Some(8e6)), 2);
    sim.send(A, 1, pattern(5_000, 1), 5_000);
    sim.run();
    let cp = sim
        .sent(A)
        .find(|s| s.kind == SegmentType::RedCheckpointEorpEob)
        .unwrap();
    let airtime = (cp.bytes.len() as f64 * 1e9 / 1e6).ceil() as u64;
    let rs = sim.reports()[0];
    assert_eq!(rs.t, cp.t + airtime + SEC);
    let done = sim
        .events
        .iter()
        .find(|e| matches!(e.2, Event::ExportCompleted { .. }))
        .unwrap()
        .0;
    let rs_airtime = (rs.bytes.len() as f64 * 1e9 / 1e6).ceil() as u64;
    assert_eq!(done, rs.t + rs_airtime + SEC);
}

#[test]
fn a_green_block_is_sent_once_with_no_report_and_completes_when_its_eob_leaves() {
    let mut sim = Sim::new(span(B, SEC, Some(8e6)), 3);
    let block = pattern(4_000, 3);
    sim.send(A, 1, block.clone(), 0);
    sim.run();
    let kinds = sim.kinds(A);
    assert!(kinds[..kinds.len() - 1]
        .iter()
        .all(|&k| k == SegmentType::GreenData));
    assert_eq!(*kinds.last().unwrap(), SegmentType::GreenEob);
    assert!(sim.kinds(B).is_empty(), "green data is never reported");
    let mut got = vec![0u8; 4_000];
    let mut eob = 0;
    for e in sim.events_of(B) {
        if let Event::GreenSegment {
            offset,
            data,
            end_of_block,
            ..
        } = e
        {
            got[*offset as usize..*offset as usize + data.len()].copy_from_slice(data);
            eob += *end_of_block as u32;
        }
    }
    assert_eq!((got, eob), (block, 1));
    assert!(sim
        .events_of(A)
        .iter()
        .any(|e| matches!(e, Event::ExportCompleted { .. })));
    assert_eq!(sim.a.span_stats(B).unwrap().green_bytes_sent, 4_000);
}

#[test]
fn a_mixed_block_delivers_its_red_part_whole_and_its_green_part_as_it_comes() {
    let mut sim = Sim::new(span(B, SEC, Some(8e6)), 4);
    let block = pattern(6_000, 5);
    sim.send(A, 9, block.clone(), 2_500);
    sim.run();
    let kinds = sim.kinds(A);
    // Red part: checkpoint with EORP but not EOB; then green ending in green EOB.
    let eorp = kinds
        .iter()
        .position(|&k| k == SegmentType::RedCheckpointEorp)
        .unwrap();
    assert!(kinds[..eorp].iter().all(|&k| k == SegmentType::RedData));
    let green: Vec<_> = kinds[eorp + 1..]
        .iter()
        .filter(|k| k.is_data())
        .copied()
        .collect();
    assert_eq!(*green.last().unwrap(), SegmentType::GreenEob);
    assert!(green[..green.len() - 1]
        .iter()
        .all(|&k| k == SegmentType::GreenData));
    let (_, _, lower, upper, claims) = sim.reports()[0].report().unwrap();
    assert_eq!(
        (lower, upper, claims.len()),
        (0, 2_500, 1),
        "reports cover the red part only"
    );
    assert_eq!(sim.delivered(), [block[..2_500].to_vec()]);
    let red_event_eob = sim.events_of(B).iter().find_map(|e| match e {
        Event::RedPartReceived {
            end_of_block,
            client_service_id,
            ..
        } => Some((*end_of_block, *client_service_id)),
        _ => None,
    });
    assert_eq!(red_event_eob, Some((false, 9)));
    let green_bytes: usize = sim
        .events_of(B)
        .iter()
        .map(|e| match e {
            Event::GreenSegment { data, offset, .. } => {
                assert!(*offset >= 2_500);
                data.len()
            }
            _ => 0,
        })
        .sum();
    assert_eq!(green_bytes, 3_500);
    assert!(sim
        .events_of(A)
        .iter()
        .any(|e| matches!(e, Event::ExportCompleted { .. })));
}

#[test]
fn both_engines_send_blocks_to_each_other_at_once() {
    let mut sim = Sim::new(span(B, 300 * spacetp_proto::MS, Some(8e6)), 5);
    sim.send(A, 1, pattern(20_000, 1), 20_000);
    sim.send(B, 1, pattern(30_000, 2), 30_000);
    sim.run();
    assert_eq!(sim.delivered(), [pattern(20_000, 1)]);
    let to_a: Vec<_> = sim
        .events_of(A)
        .into_iter()
        .filter_map(|e| match e {
            Event::RedPartReceived { data, .. } => Some(data.to_vec()),
            _ => None,
        })
        .collect();
    assert_eq!(to_a, [pattern(30_000, 2)]);
    assert_eq!(sim.a.stats().spans.export_sessions_completed, 1);
    assert_eq!(sim.b.stats().spans.export_sessions_completed, 1);
}

#[test]
fn the_client_can_cancel_an_export_and_gets_its_sdu_back() {
    let mut sim = Sim::new(span(B, SEC, Some(8e5)), 6);
    let sdu = pattern(50_000, 9);
    sim.send(A, 1, sdu.clone(), 50_000);
    sim.run_until(SEC / 4);
    let session = sim
        .events_of(A)
        .iter()
        .find_map(|e| match e {
            Event::ExportStarted { session, .. } => Some(*session),
            _ => None,
        })
        .unwrap();
    let now = sim.now;
    assert!(sim.a.cancel_export(now, session));
    sim.run();
    let back = sim.events_of(A).iter().find_map(|e| match e {
        Event::ExportCanceled {
            reason, by, sdus, ..
        } => Some((*reason, *by, sdus.concat())),
        _ => None,
    });
    assert_eq!(
        back,
        Some((
            spacetp_ltp::CancelReason::UserCanceled,
            CanceledBy::Local,
            sdu
        ))
    );
    assert!(sim.kinds(A).contains(&SegmentType::CancelFromSender));
    assert!(sim.kinds(B).contains(&SegmentType::CancelAckToSender));
    assert!(sim.events_of(B).iter().any(|e| matches!(
        e,
        Event::ImportCanceled {
            by: CanceledBy::Peer,
            ..
        }
    )));
    assert!(sim.delivered().is_empty());
    assert_eq!(sim.a.open_sessions(B), Some((0, 0)));
    assert_eq!(sim.b.open_sessions(A), Some((0, 0)));
}
