//! Cancellation (RFC 5326 sections 6.7, 6.8, 6.15-6.22): limits exceeded, the receiver's
//! own cancel, miscolored and inconsistent segments, session limits, unknown clients.

mod common;

use common::*;
use spacetp_ltp::wire::{self, SegmentType, SessionId};
use spacetp_ltp::{CancelReason, CanceledBy, EngineConfig, Event, ImportLimitPolicy, Limit};
use spacetp_proto::SEC;

fn canceled(sim: &Sim, id: u64) -> Vec<(CancelReason, CanceledBy)> {
    sim.events_of(id)
        .iter()
        .filter_map(|e| match e {
            Event::ExportCanceled { reason, by, .. } | Event::ImportCanceled { reason, by, .. } => {
                Some((*reason, *by))
            }
            _ => None,
        })
        .collect()
}

/// The limit each cancel of engine `id` names (None: not a limit of its own).
fn limits(sim: &Sim, id: u64) -> Vec<Option<Limit>> {
    sim.events_of(id)
        .iter()
        .filter_map(|e| match e {
            Event::ExportCanceled { limit, .. } | Event::ImportCanceled { limit, .. } => {
                Some(*limit)
            }
            _ => None,
        })
        .collect()
}

#[test]
fn checkpoints_unanswered_past_the_limit_cancel_with_rlexc_and_the_cs_is_acknowledged() {
    let mut cfg = span(B, SEC, Some(8e6));
    cfg.max_retransmissions = Some(3);
    // B's reports would run out of retries too; give them more, so that A's limit is the
    // one this test sees.
    let mut b_cfg = span(A, SEC, Some(8e6));
    b_cfg.max_retransmissions = Some(10);
    let mut sim = Sim::with(cfg, b_cfg, 21);
    // Every report is lost.
    sim.drop = Box::new(|s, _| s.kind == SegmentType::Report);
    sim.send(A, 1, pattern(2_000, 1), 2_000);
    sim.run();
    // The checkpoint went out once and was resent 3 times, then the CS (RLEXC) went out.
    let cps = sim.sent(A).filter(|s| s.kind.is_checkpoint()).count();
    assert_eq!(cps, 1 + 3);
    let cs: Vec<_> = sim
        .sent(A)
        .filter(|s| s.kind == SegmentType::CancelFromSender)
        .collect();
    assert_eq!(cs.len(), 1);
    assert_eq!(
        cs[0].seg().content,
        wire::Content::Cancel {
            reason: CancelReason::RetransmissionLimit
        }
    );
    assert!(
        cs[0].t
            > sim
                .sent(A)
                .filter(|s| s.kind.is_checkpoint())
                .last()
                .unwrap()
                .t
    );
    assert!(sim.kinds(B).contains(&SegmentType::CancelAckToSender));
    assert_eq!(
        canceled(&sim, A),
        [(CancelReason::RetransmissionLimit, CanceledBy::Local)]
    );
    assert_eq!(
        canceled(&sim, B),
        [(CancelReason::RetransmissionLimit, CanceledBy::Peer)]
    );
    // The sender says which limit: its checkpoint's timeouts; the peer only knows the code.
    assert_eq!(limits(&sim, A), [Some(Limit::Timeouts { max: 3 })]);
    assert_eq!(limits(&sim, B), [None]);
    // The block had arrived whole at B before the cancel: it was delivered (a red-part
    // reception notice is final), and then the session was canceled.
    assert_eq!(sim.delivered().len(), 1);
    let sa = sim.a.span_stats(B).unwrap();
    assert_eq!(
        sa.export_canceled_locally
            .get(CancelReason::RetransmissionLimit),
        1
    );
    assert_eq!(sa.cancel_acks_received, 1);
    assert_eq!(sim.a.open_sessions(B), Some((0, 0)));
    assert_eq!(sim.b.open_sessions(A), Some((0, 0)));
}

#[test]
fn a_report_past_the_retransmission_cycle_limit_cancels_with_rlexc_as_ion_does() {
    // One cycle allowed: the first checkpoint. A negative report would need a second.
    let mut cfg = span(B, SEC, Some(8e6));
    cfg.max_retransmission_cycles = Some(1);
    let mut sim = Sim::new(cfg, 30);
    sim.drop = Box::new(|s, log| s.kind == SegmentType::RedData && !log.iter().any(|x| x.dropped));
    sim.send(A, 1, pattern(5_000, 1), 5_000);
    sim.run();
    // ION's handleRS cancels with RLEXC (RFC 5326 also has RXMTCYCEXC; ION does not use it).
    assert_eq!(
        canceled(&sim, A)[0],
        (CancelReason::RetransmissionLimit, CanceledBy::Local)
    );
    assert_eq!(limits(&sim, A)[0], Some(Limit::Cycles { max: 1 }));
    assert_eq!(sim.a.span_stats(B).unwrap().data_segments_retransmitted, 0);
}

#[test]
fn an_unacknowledged_cs_is_resent_on_its_timer_then_given_up() {
    let mut cfg = span(B, SEC, Some(8e6));
    cfg.max_retransmissions = Some(2);
    let mut sim = Sim::new(cfg, 22);
    // B hears nothing from A after the first data segment... and A nothing from B.
    sim.drop = Box::new(|s, log| s.from == B || log.iter().any(|x| x.from == A));
    sim.send(A, 1, pattern(2_000, 1), 2_000);
    sim.run();
    let cs = sim
        .sent(A)
        .filter(|s| s.kind == SegmentType::CancelFromSender)
        .count();
    assert_eq!(cs, 1 + 2);
    assert_eq!(
        sim.a.span_stats(B).unwrap().cancel_segments_retransmitted,
        2
    );
    assert_eq!(sim.a.open_sessions(B), Some((0, 0)));
    assert_eq!(sim.a.poll_timeout(), None, "nothing left to wait for");
}

#[test]
fn reports_unacknowledged_past_the_limit_cancel_the_import_with_rlexc() {
    let mut cfg = span(B, SEC, Some(8e6));
    cfg.max_retransmissions = Some(2);
    let mut sim = Sim::new(cfg, 23);
    // Every RA is lost, and so is every late-report RA: B never hears its report acked.
    sim.drop = Box::new(|s, _| s.kind == SegmentType::ReportAck);
    sim.send(A, 1, pattern(2_000, 1), 2_000);
    sim.run();
    assert_eq!(sim.reports().len(), 1 + 2);
    let cr: Vec<_> = sim
        .sent(B)
        .filter(|s| s.kind == SegmentType::CancelFromReceiver)
        .collect();
    assert_eq!(cr.len(), 1);
    assert_eq!(
        cr[0].seg().content,
        wire::Content::Cancel {
            reason: CancelReason::RetransmissionLimit
        }
    );
    // A had closed its session; its memory of it acknowledges the CR with a CAR.
    assert!(sim.kinds(A).contains(&SegmentType::CancelAckToReceiver));
    assert_eq!(
        canceled(&sim, B),
        [(CancelReason::RetransmissionLimit, CanceledBy::Local)]
    );
    assert_eq!(limits(&sim, B), [Some(Limit::Timeouts { max: 2 })]);
    assert_eq!(sim.b.open_sessions(A), Some((0, 0)));
}

#[test]
fn the_receiver_cancels_and_the_sender_acknowledges_with_a_car() {
    let mut sim = Sim::new(span(B, SEC, Some(8e5)), 24);
    sim.send(A, 1, pattern(60_000, 1), 60_000);
    // B has some of the block after 1.2 s (1 s of light time).
    sim.run_until(1_200 * spacetp_proto::MS);
    let session = sim
        .events_of(A)
        .iter()
        .find_map(|e| match e {
            Event::ExportStarted { session, .. } => Some(*session),
            _ => None,
        })
        .unwrap();
    let now = sim.now;
    assert!(sim.b.open_sessions(A).unwrap().1 == 1);
    assert!(sim.b.cancel_import(now, A, session));
    sim.run();
    let cr = sim
        .sent(B)
        .find(|s| s.kind == SegmentType::CancelFromReceiver)
        .unwrap();
    assert_eq!(
        cr.seg().session,
        SessionId {
            originator: A,
            number: session
        }
    );
    assert!(sim.kinds(A).contains(&SegmentType::CancelAckToReceiver));
    assert_eq!(
        canceled(&sim, A),
        [(CancelReason::UserCanceled, CanceledBy::Peer)]
    );
    assert_eq!(
        canceled(&sim, B),
        [(CancelReason::UserCanceled, CanceledBy::Local)]
    );
    assert!(sim.delivered().is_empty());
    // A stopped sending the block's data once it heard the CR.
    let car_t = sim
        .sent(A)
        .find(|s| s.kind == SegmentType::CancelAckToReceiver)
        .unwrap()
        .t;
    assert!(!sim.sent(A).any(|s| s.t > car_t && s.kind.is_data()));
    assert_eq!(sim.a.open_sessions(B), Some((0, 0)));
    assert_eq!(sim.b.open_sessions(A), Some((0, 0)));
}

/// A data segment of session 77 from A, written by hand.
fn data_seg(kind: SegmentType, offset: u64, data: &[u8], cp: Option<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    wire::write_header(
        kind,
        SessionId {
            originator: A,
            number: 77,
        },
        &wire::Extensions::default(),
        0,
        &mut out,
    )
    .unwrap();
    let serials = cp.map(|c| wire::Serials {
        checkpoint: c,
        report: 0,
    });
    wire::write_data_fields(1, offset, data.len() as u64, serials, &mut out);
    out.extend_from_slice(data);
    out
}

fn cr_reasons(sim: &mut Sim) -> Vec<CancelReason> {
    let mut buf = Vec::new();
    let mut v = Vec::new();
    while sim.b.poll_transmit(sim.now, &mut buf).is_some() {
        if let wire::Content::Cancel { reason } = wire::decode(&buf).unwrap().content {
            v.push(reason);
        }
    }
    v
}

#[test]
fn red_data_after_green_data_of_the_same_block_is_miscolored() {
    let mut sim = Sim::new(span(B, SEC, None), 25);
    sim.b
        .on_segment(0, &data_seg(SegmentType::RedData, 0, b"red", None))
        .unwrap();
    sim.b
        .on_segment(0, &data_seg(SegmentType::GreenData, 10, b"green", None))
        .unwrap();
    // Red data at offset 12, beyond the start of green (RFC 5326 section 6.21 (a)).
    sim.b
        .on_segment(0, &data_seg(SegmentType::RedData, 12, b"late red", None))
        .unwrap();
    assert_eq!(cr_reasons(&mut sim), [CancelReason::Miscolored]);
    let mut sim = Sim::new(span(B, SEC, None), 25);
    // Green data below red data already received (section 6.21 (b)).
    sim.b
        .on_segment(0, &data_seg(SegmentType::RedData, 0, b"redredred", None))
        .unwrap();
    sim.b
        .on_segment(0, &data_seg(SegmentType::GreenData, 4, b"green", None))
        .unwrap();
    assert_eq!(cr_reasons(&mut sim), [CancelReason::Miscolored]);
}

#[test]
fn red_data_beyond_the_end_of_the_red_part_cancels_the_session() {
    let mut sim = Sim::new(span(B, SEC, None), 26);
    sim.b
        .on_segment(
            0,
            &data_seg(SegmentType::RedCheckpointEorpEob, 4, b"tail", Some(5)),
        )
        .unwrap();
    sim.b
        .on_segment(0, &data_seg(SegmentType::RedData, 6, b"beyond", None))
        .unwrap();
    let reasons = cr_reasons(&mut sim);
    assert_eq!(reasons, [CancelReason::SystemCanceled]);
    assert!(matches!(
        sim.b.poll_event(),
        Some(Event::ImportCanceled {
            reason: CancelReason::SystemCanceled,
            by: CanceledBy::Local,
            ..
        })
    ));
}

#[test]
fn a_red_segment_for_an_unregistered_client_service_is_refused_with_unreach() {
    let mut sim = Sim::engines(
        EngineConfig::default(),
        EngineConfig {
            client_services: vec![2],
            ..EngineConfig::default()
        },
        span(B, SEC, None),
        span(A, SEC, None),
        27,
    );
    sim.b
        .on_segment(
            0,
            &data_seg(SegmentType::RedCheckpointEorpEob, 0, b"x", Some(9)),
        )
        .unwrap();
    assert_eq!(cr_reasons(&mut sim), [CancelReason::Unreachable]);
    assert_eq!(sim.b.open_sessions(A), Some((0, 0)));
}

#[test]
fn beyond_the_import_session_limit_a_session_is_canceled_when_so_configured() {
    let mut b_cfg = span(A, SEC, Some(8e6));
    b_cfg.max_import_sessions = 1;
    b_cfg.on_import_limit = ImportLimitPolicy::Cancel;
    let mut sim = Sim::with(span(B, SEC, Some(8e6)), b_cfg, 28);
    sim.send(A, 1, pattern(3_000, 1), 3_000);
    sim.send(A, 1, pattern(3_000, 2), 3_000);
    sim.run();
    assert_eq!(sim.delivered(), [pattern(3_000, 1)]);
    assert_eq!(
        canceled(&sim, A),
        [(CancelReason::SystemCanceled, CanceledBy::Peer)]
    );
    let sb = sim.b.span_stats(A).unwrap();
    assert!(sb.segments_refused_session_limit >= 1);
}

#[test]
fn beyond_the_import_session_limit_segments_are_discarded_and_the_checkpoint_timer_retries() {
    let mut b_cfg = span(A, SEC, Some(8e6));
    b_cfg.max_import_sessions = 1;
    let mut sim = Sim::with(span(B, SEC, Some(8e6)), b_cfg, 29);
    sim.send(A, 1, pattern(3_000, 1), 3_000);
    sim.send(A, 1, pattern(3_000, 2), 3_000);
    sim.run();
    // ION's way: the second block's segments are dropped at B; its checkpoint, resent on
    // its timer once the first session has closed, opens the session and B reports the
    // gap; the block arrives.
    assert_eq!(sim.delivered(), [pattern(3_000, 1), pattern(3_000, 2)]);
    assert!(canceled(&sim, A).is_empty() && canceled(&sim, B).is_empty());
    assert!(sim.b.span_stats(A).unwrap().segments_refused_session_limit >= 1);
    assert!(sim.a.span_stats(B).unwrap().checkpoints_retransmitted >= 1);
}
