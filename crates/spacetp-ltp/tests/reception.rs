//! The receiver on its own, fed by hand: segments out of order, duplicated and overlapping
//! (RFC 5326 section 6.11's reports, ION's asynchronous report when the red part completes
//! without a checkpoint).

use bytes::Bytes;
use spacetp_ltp::wire::{self, Claim, Content, SegmentType, SessionId};
use spacetp_ltp::{Engine, EngineConfig, Event, SpanConfig};
use spacetp_proto::SEC;

fn pair() -> (Engine, Engine) {
    let mut a = Engine::new(1, EngineConfig::default()).unwrap();
    let mut b = Engine::new(2, EngineConfig::default()).unwrap();
    let mut s = SpanConfig::new(2, SEC);
    s.aggregation_size_limit = spacetp_proto::units::Bytes(1);
    a.add_span(s.clone()).unwrap();
    s.peer_engine_id = 1;
    b.add_span(s).unwrap();
    (a, b)
}

fn drain(e: &mut Engine) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut buf = Vec::new();
    while e.poll_transmit(0, &mut buf).is_some() {
        out.push(buf.clone());
    }
    out
}

fn reports(segs: &[Vec<u8>]) -> Vec<(u64, u64, u64, Vec<Claim>)> {
    segs.iter()
        .filter_map(|b| match wire::decode(b).unwrap().content {
            Content::Report(r) => Some((
                r.checkpoint_serial,
                r.lower_bound,
                r.upper_bound,
                r.claims.iter().collect(),
            )),
            _ => None,
        })
        .collect()
}

#[test]
fn reversed_duplicated_and_overlapping_segments_deliver_the_block_once() {
    let (mut a, mut b) = pair();
    let block: Vec<u8> = (0..6_000u32).map(|i| (i * 7 % 251) as u8).collect();
    a.send(0, 2, 1, Bytes::from(block.clone()), 6_000).unwrap();
    let segs = drain(&mut a);
    assert!(segs.len() >= 5);
    // The checkpoint first: the report claims only what the checkpoint carried.
    let cp = segs.last().unwrap();
    b.on_segment(0, cp).unwrap();
    let first = reports(&drain(&mut b));
    let cp_data = match wire::decode(cp).unwrap().content {
        Content::Data(d) => (d.offset, d.data.len() as u64, d.serials.unwrap().checkpoint),
        _ => panic!(),
    };
    assert_eq!(
        first,
        [(
            cp_data.2,
            0,
            6_000,
            vec![Claim {
                offset: cp_data.0,
                length: cp_data.1
            }]
        )]
    );
    // Then the rest backwards, each twice, and a forged overlap of the first two segments
    // carrying the block's own bytes.
    for s in segs[..segs.len() - 1].iter().rev() {
        b.on_segment(0, s).unwrap();
        b.on_segment(0, s).unwrap();
    }
    let mut overlap = Vec::new();
    wire::write_header(
        SegmentType::RedData,
        wire::decode(cp).unwrap().session,
        &wire::Extensions::default(),
        0,
        &mut overlap,
    )
    .unwrap();
    wire::write_data_fields(1, 100, 2_000, None, &mut overlap);
    overlap.extend_from_slice(&block[100..2_100]);
    b.on_segment(0, &overlap).unwrap();
    // Completing the red part without a checkpoint draws an asynchronous final report
    // (checkpoint serial 0, ION's handleDataSegment) claiming all of it.
    let second = reports(&drain(&mut b));
    assert_eq!(
        second,
        [(
            0,
            0,
            6_000,
            vec![Claim {
                offset: 0,
                length: 6_000
            }]
        )]
    );
    let mut delivered = Vec::new();
    while let Some(e) = b.poll_event() {
        if let Event::RedPartReceived { data, session, .. } = e {
            assert_eq!(
                SessionId {
                    originator: 1,
                    number: session
                },
                wire::decode(cp).unwrap().session
            );
            delivered.push(data);
        }
    }
    assert_eq!(delivered, [Bytes::from(block)]);
    let s = b.span_stats(1).unwrap();
    assert_eq!(s.blocks_delivered, 1);
    assert!(s.redundant_segments_received >= (segs.len() - 1) as u64);
}

#[test]
fn a_segment_that_does_not_decode_is_counted_and_reported_by_field() {
    let (_, mut b) = pair();
    let e = b
        .on_segment(0, &[0x08, 0x01, 0x01, 0x00, 0x01])
        .unwrap_err();
    assert_eq!(e.field, wire::Field::ReportCheckpointSerial);
    assert_eq!(b.stats().malformed_segments, 1);
    // From an engine with no span: counted, nothing else.
    let mut seg = Vec::new();
    wire::write_header(
        SegmentType::CancelFromSender,
        SessionId {
            originator: 99,
            number: 1,
        },
        &wire::Extensions::default(),
        0,
        &mut seg,
    )
    .unwrap();
    wire::write_cancel(wire::CancelReason::UserCanceled, &mut seg);
    b.on_segment(0, &seg).unwrap();
    assert_eq!(b.stats().unknown_engine_segments, 1);
    assert!(drain(&mut b).is_empty());
}

#[test]
fn one_engine_serves_several_spans_in_turn_and_each_block_reaches_its_peer() {
    let mut a = Engine::new(1, EngineConfig::default()).unwrap();
    let mut peers: Vec<Engine> = (2..=3)
        .map(|id| {
            let mut e = Engine::new(id, EngineConfig::default()).unwrap();
            e.add_span(SpanConfig::new(1, SEC)).unwrap();
            a.add_span(SpanConfig::new(id, SEC)).unwrap();
            e
        })
        .collect();
    a.send(0, 2, 1, Bytes::from(vec![2u8; 20_000]), 20_000)
        .unwrap();
    a.send(0, 3, 1, Bytes::from(vec![3u8; 20_000]), 20_000)
        .unwrap();
    // Both blocks close at once (64 kB size limit not reached: the 1 s time limit).
    a.on_timeout(SEC);
    let mut order = Vec::new();
    let mut buf = Vec::new();
    let mut now = SEC;
    for _ in 0..1000 {
        while let Some(to) = a.poll_transmit(now, &mut buf) {
            order.push(to);
            peers[(to - 2) as usize].on_segment(now, &buf).unwrap();
        }
        for p in &mut peers {
            while p.poll_transmit(now, &mut buf).is_some() {
                a.on_segment(now, &buf).unwrap();
            }
        }
        let next = [
            a.poll_timeout(),
            peers[0].poll_timeout(),
            peers[1].poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min();
        match next {
            Some(t) if a.open_sessions(2) != Some((0, 0)) || a.open_sessions(3) != Some((0, 0)) => {
                now = now.max(t);
                a.on_timeout(now);
                peers.iter_mut().for_each(|p| p.on_timeout(now));
            }
            _ => break,
        }
    }
    // Spans take turns while both have segments queued.
    assert_eq!(&order[..4], [2, 3, 2, 3]);
    for (i, p) in peers.iter_mut().enumerate() {
        let got = std::iter::from_fn(|| p.poll_event())
            .find_map(|e| match e {
                Event::RedPartReceived { data, .. } => Some(data),
                _ => None,
            })
            .unwrap();
        assert_eq!(got, vec![i as u8 + 2; 20_000]);
    }
    assert_eq!(a.stats().spans.export_sessions_completed, 2);
}
