//! RACK-TLP's behaviours, each against RFC 8985's text or Linux's.

use super::*;

use super::super::sack_scan::story::{block, Rnd};

const SEG: u64 = 1000;

/// Everything but the scanned blocks.
fn state(r: &Rack) -> String {
    format!(
        "{:?} {} {} {} {} {} {} {} {:?}",
        r.segs,
        r.xmit_ts,
        r.end_seq,
        r.rtt,
        r.retransmitted,
        r.fack,
        r.reordering_seen,
        r.lost_bytes,
        r.delivered
    )
}

#[test]
fn sack_blocks_that_repeat_and_grow_mark_as_a_full_scan_does() {
    // Two RACKs fed the same pseudo-random story (new segments, retransmissions of whole
    // segments and of their second halves, ACKs with up to 4 SACK blocks growing and
    // moving, RTO marking); one forgets its scanned blocks before every ACK (a full
    // scan each time). Their state stays the same.
    let (mut fast, mut full) = (Rack::new(), Rack::new());
    let mut rnd = Rnd(5);
    let (mut next, mut una, mut now) = (0u64, 0u64, 1);
    let mut last: Option<(u64, u64)> = None;
    for _ in 0..4000 {
        now += MS;
        match rnd.below(10) {
            0..=3 => {
                for r in [&mut fast, &mut full] {
                    r.on_sent(next * SEG, (next + 1) * SEG, now, false);
                }
                next += 1;
            }
            4 if next > una => {
                let k = una + rnd.below(next - una);
                let start = k * SEG + if rnd.below(2) == 0 { 0 } else { SEG / 2 };
                for r in [&mut fast, &mut full] {
                    r.on_sent(start, (k + 1) * SEG, now, true);
                }
            }
            5 => {
                for r in [&mut fast, &mut full] {
                    r.on_timeout();
                }
            }
            _ if next > una + 2 => {
                let mut blocks = Vec::new();
                for _ in 0..1 + rnd.below(4) {
                    let (l, r) = block(&mut rnd, &mut last, (una, next, SEG), false);
                    blocks.push((l, r));
                }
                if rnd.below(3) == 0 {
                    una += 1 + rnd.below((next - una).min(5));
                }
                full.scan.forget();
                for r in [&mut fast, &mut full] {
                    r.on_ack(una * SEG, &blocks, now, Some(10 * MS));
                }
            }
            _ => {}
        }
        assert_eq!(state(&fast), state(&full));
    }
    assert!(fast.fack > 100 * SEG);
}

#[test]
fn loss_detection_in_send_order_marks_what_a_walk_of_every_segment_marks() {
    // Two RACKs fed the same pseudo-random story (new segments; retransmissions of whole
    // segments, of their first and of their second halves; ACKs with SACK blocks; RTOs and
    // their undoing; loss detection at any time with any reordering window): one detects
    // losses in send order, stopping at the RACK segment's time, the other walks every
    // segment as RFC 8985 writes it. They mark the same segments and arm the same timer.
    let (mut fast, mut walk) = (Rack::new(), Rack::new());
    let mut rnd = Rnd(11);
    let (mut next, mut una, mut now) = (0u64, 0u64, 1);
    let mut last: Option<(u64, u64)> = None;
    let mut marked = 0;
    for _ in 0..20000 {
        now += rnd.below(3) * MS;
        match rnd.below(12) {
            0..=3 => {
                for r in [&mut fast, &mut walk] {
                    r.on_sent(next * SEG, (next + 1) * SEG, now, false);
                }
                next += 1;
            }
            4 | 5 if next > una => {
                let k = una + rnd.below(next - una);
                let (start, end) = match rnd.below(4) {
                    0 => (k * SEG, (k + 1) * SEG),
                    1 => (k * SEG + SEG / 2, (k + 1) * SEG),
                    2 => (k * SEG, k * SEG + SEG / 2),
                    _ => (k * SEG + SEG / 4, k * SEG + 3 * SEG / 4), // a head and a tail left
                };
                for r in [&mut fast, &mut walk] {
                    r.on_sent(start, end, now, true);
                }
            }
            6 if rnd.below(8) == 0 => {
                for r in [&mut fast, &mut walk] {
                    r.on_timeout();
                }
            }
            7 if rnd.below(8) == 0 => {
                for r in [&mut fast, &mut walk] {
                    r.on_timeout_undone();
                }
            }
            8 | 9 => {
                let reo = [0, 2 * MS, 25 * MS][rnd.below(3) as usize];
                let before = fast.lost_bytes;
                let t = fast.detect_loss(now, reo);
                assert_eq!(t, walk.detect_loss_by_walk(now, reo), "timer at {now}");
                marked += (fast.lost_bytes > before) as u32;
            }
            _ if next > una + 2 => {
                let mut blocks = Vec::new();
                for _ in 0..rnd.below(4) {
                    blocks.push(block(&mut rnd, &mut last, (una, next, SEG), false));
                }
                if rnd.below(3) == 0 {
                    una += 1 + rnd.below((next - una).min(5));
                }
                for r in [&mut fast, &mut walk] {
                    r.on_ack(una * SEG, &blocks, now, Some(10 * MS));
                }
            }
            _ => {}
        }
        assert_eq!(state(&fast), state(&walk));
        // Every segment that may yet be deemed lost has its entry in the send order.
        let entries = fast.order.entries();
        for s in fast.segs.iter().filter(|s| !s.sacked && !s.lost) {
            assert!(entries.contains(&(s.xmit_ts, s.start)), "{s:?} missing");
        }
        assert!(
            entries.windows(2).all(|w| w[0] <= w[1]),
            "out of order: {entries:?}"
        );
    }
    assert!(marked > 100, "the story marked losses {marked} times");
}

/// Ten segments sent 1 ms apart from t = 0.
fn ten() -> Rack {
    let mut r = Rack::new();
    for k in 0..10 {
        r.on_sent(1 + k * SEG, 1 + (k + 1) * SEG, k * MS, false);
    }
    r
}

#[test]
fn a_segment_is_lost_once_a_later_one_is_delivered_and_rtt_plus_reo_wnd_passed() {
    let mut r = ten();
    // Segment 0 missing; segment 1 (sent at 1 ms) SACKed at 101 ms: RACK.rtt 100 ms.
    r.on_ack(1, &[(1 + SEG, 1 + 2 * SEG)], 101 * MS, Some(100 * MS));
    let reo = 25 * MS;
    let wait = r.detect_loss(101 * MS, reo);
    assert_eq!(r.first_lost(1), None, "within the reordering window");
    assert_eq!(wait, 24 * MS, "sent at 0: lost at 0 + 100 + 25 ms");
    r.detect_loss(125 * MS, reo);
    assert_eq!(r.first_lost(1), Some(1));
    assert_eq!(r.lost_bytes(), SEG);
}

#[test]
fn a_reordered_segment_delivered_within_the_window_is_not_lost() {
    let mut r = ten();
    r.on_ack(1, &[(1 + SEG, 1 + 2 * SEG)], 101 * MS, Some(100 * MS));
    r.detect_loss(101 * MS, 25 * MS);
    // Segment 0 arrives late, 10 ms after its successor: reordering, not loss.
    r.on_ack(1 + 2 * SEG, &[], 111 * MS, Some(100 * MS));
    assert!(r.reordering_seen);
    assert_eq!(r.detect_loss(200 * MS, 25 * MS), 0);
    assert_eq!(r.first_lost(1), None);
}

#[test]
fn a_lost_retransmission_is_detected_by_time() {
    let mut r = ten();
    r.on_ack(1, &[(1 + SEG, 1 + 10 * SEG)], 110 * MS, Some(100 * MS));
    r.detect_loss(130 * MS, 0);
    assert_eq!(r.first_lost(1), Some(1));
    // Resent at 130 ms, and lost again; new data sent at 131 ms is SACKed at 231 ms.
    r.on_sent(1, 1 + SEG, 130 * MS, true);
    assert_eq!(r.first_lost(1), None, "retransmitted, in flight again");
    r.on_sent(1 + 10 * SEG, 1 + 11 * SEG, 131 * MS, false);
    r.on_ack(1, &[(1 + SEG, 1 + 11 * SEG)], 231 * MS, Some(100 * MS));
    r.detect_loss(231 * MS, 0);
    assert_eq!(r.first_lost(1), Some(1), "the retransmission is lost");
}

#[test]
fn the_window_is_zero_in_recovery_until_reordering_is_seen_and_then_a_quarter_min_rtt() {
    let mut r = ten();
    assert_eq!(r.reo_wnd(false, 1, 1, true, 0, 3, 100 * MS, 80 * MS), 0);
    assert_eq!(
        r.reo_wnd(false, 1, 1, false, 3, 3, 100 * MS, 80 * MS),
        0,
        "DupThresh segments SACKed"
    );
    assert_eq!(
        r.reo_wnd(false, 1, 1, false, 1, 3, 100 * MS, 80 * MS),
        20 * MS
    );
    r.reordering_seen = true;
    assert_eq!(
        r.reo_wnd(false, 1, 1, true, 5, 3, 100 * MS, 80 * MS),
        20 * MS
    );
    // A DSACK widens it by a quarter min_RTT per round, up to SRTT.
    assert_eq!(
        r.reo_wnd(true, 1, 5000, true, 5, 3, 100 * MS, 80 * MS),
        40 * MS
    );
    r.reo_wnd_mult = 9;
    assert_eq!(
        r.reo_wnd(false, 1, 5000, true, 5, 3, 100 * MS, 80 * MS),
        100 * MS
    );
}

#[test]
fn pto_is_two_srtt_plus_the_delayed_ack_for_a_single_segment_and_before_the_rto() {
    assert_eq!(Rack::pto(Some(100 * MS), 5000, 1000, 0, None), 200 * MS);
    assert_eq!(Rack::pto(Some(100 * MS), 1000, 1000, 0, None), 400 * MS);
    assert_eq!(Rack::pto(None, 5000, 1000, 0, None), 1000 * MS);
    assert_eq!(
        Rack::pto(Some(100 * MS), 5000, 1000, 0, Some(150 * MS)),
        150 * MS
    );
}

#[test]
fn a_probe_that_resent_data_acked_beyond_itself_repaired_a_loss_unless_dsacked() {
    let mut r = Rack::new();
    r.set_probe(Probe {
        end_seq: 100,
        is_retrans: true,
    });
    assert_eq!(r.on_probe_ack(90, None, false), ProbeOutcome::Pending);
    assert_eq!(r.on_probe_ack(100, None, false), ProbeOutcome::Pending);
    assert_eq!(r.on_probe_ack(150, None, false), ProbeOutcome::RepairedLoss);
    r.set_probe(Probe {
        end_seq: 100,
        is_retrans: true,
    });
    assert_eq!(r.on_probe_ack(100, Some(100), false), ProbeOutcome::NoLoss);
    r.set_probe(Probe {
        end_seq: 100,
        is_retrans: false,
    });
    assert_eq!(r.on_probe_ack(100, None, false), ProbeOutcome::NoLoss);
}

#[test]
fn a_tail_segment_beyond_a_delivered_retransmission_is_lost_once_its_time_is_up() {
    // Segments 3 and 9 lost; 3 resent at 200 ms and delivered: 9, sent at 9 ms, before
    // the retransmission, is lost although it lies beyond it in sequence.
    let mut r = ten();
    r.on_ack(
        1,
        &[(1, 1 + 3 * SEG), (1 + 4 * SEG, 1 + 9 * SEG)],
        110 * MS,
        Some(100 * MS),
    );
    r.on_sent(1 + 3 * SEG, 1 + 4 * SEG, 200 * MS, true);
    r.on_ack(1 + 9 * SEG, &[], 300 * MS, Some(100 * MS));
    r.detect_loss(300 * MS, 0);
    assert_eq!(r.first_lost(1), Some(1 + 9 * SEG));
}

#[test]
fn a_retransmission_of_part_of_a_segment_splits_it() {
    let mut r = ten();
    r.on_ack(1, &[(1 + 5 * SEG, 1 + 10 * SEG)], 110 * MS, None);
    r.detect_loss(200 * MS, 0);
    assert_eq!(r.lost_bytes(), 5 * SEG);
    r.on_sent(1 + 500, 1 + 1500, 200 * MS, true);
    assert_eq!(r.lost_bytes(), 4 * SEG, "half of two segments resent");
    assert_eq!(r.first_lost(1), Some(1));
    assert_eq!(r.first_lost(501), Some(1 + 1500));
}
