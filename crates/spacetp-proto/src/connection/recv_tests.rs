//! The receive side's reassembly and ACK policy, tested alone.

use super::*;
use crate::connection::timer::{Timer, TimerTable};
use crate::time::MS;

fn rx() -> Receiver {
    let mut r = Receiver::new(&TcpConfig::default());
    r.on_syn(1000);
    r
}

#[test]
fn in_order_data_is_acked_every_second_segment() {
    let mut r = rx();
    let mut st = ConnStats::default();
    let mut tt = TimerTable::default();
    r.on_data(0, 1, 100, false, &mut st, &mut tt);
    assert!(!r.ack_now);
    assert_eq!(tt.get(Timer::DelayedAck), Some(200_000_000));
    r.on_data(0, 101, 100, false, &mut st, &mut tt);
    assert!(r.ack_now);
    assert_eq!(r.delivered(), 200);
}

#[test]
fn holes_are_filled_and_acked_at_once() {
    let mut r = rx();
    let mut st = ConnStats::default();
    let mut tt = TimerTable::default();
    r.on_data(0, 201, 100, false, &mut st, &mut tt);
    r.on_data(0, 401, 100, false, &mut st, &mut tt);
    assert!(r.ack_now);
    assert_eq!(r.delivered(), 0);
    assert_eq!(r.ooo, [(201, 301), (401, 501)]);
    r.on_ack_sent(&mut tt);
    r.on_data(0, 1, 200, false, &mut st, &mut tt);
    assert!(r.ack_now, "filling a hole must be acked at once");
    assert_eq!(r.delivered(), 300);
    r.on_data(0, 301, 100, false, &mut st, &mut tt);
    assert_eq!(r.delivered(), 500);
    assert!(r.ooo.is_empty());
}

#[test]
fn overlapping_ranges_merge() {
    let mut r = rx();
    let mut st = ConnStats::default();
    let mut tt = TimerTable::default();
    r.on_data(0, 101, 100, false, &mut st, &mut tt);
    r.on_data(0, 301, 100, false, &mut st, &mut tt);
    r.on_data(0, 150, 200, false, &mut st, &mut tt);
    assert_eq!(r.ooo, [(101, 401)]);
}

#[test]
fn early_fin_waits_for_the_data() {
    let mut r = rx();
    let mut st = ConnStats::default();
    let mut tt = TimerTable::default();
    assert!(!r.on_data(0, 101, 100, true, &mut st, &mut tt).0);
    assert!(r.on_data(0, 1, 100, false, &mut st, &mut tt).0);
    assert_eq!(r.delivered(), 200);
}

/// A Linux receiver without receive autotuning (whose growing window ACKs at once too), its
/// RTO 1 s and SRTT 600 ms.
fn linux_rx(adaptive: bool) -> Receiver {
    let mut cfg = crate::profiles::profile("linux-cubic").unwrap();
    cfg.receive_autotuning = false;
    cfg.adaptive_ack_delay = adaptive;
    let mut r = Receiver::new(&cfg);
    r.on_syn(1000);
    r.set_mss(1448);
    r.note_rtt(1000 * MS, Some(600 * MS));
    r
}

/// Feeds `n` full segments from position `*pos`, `gap` apart from `*now`; returns how many
/// were ACKed at once.
fn feed(
    r: &mut Receiver,
    tt: &mut TimerTable,
    pos: &mut u64,
    now: &mut Time,
    n: u32,
    gap: Time,
) -> u32 {
    let mut st = ConnStats::default();
    let mut at_once = 0;
    for _ in 0..n {
        *now += gap;
        r.on_data(*now, *pos, 1448, false, &mut st, tt);
        *pos += 1448;
        if r.ack_now {
            at_once += 1;
            r.on_ack_sent(tt);
        }
    }
    at_once
}

#[test]
fn a_linux_receiver_quick_acks_again_after_the_sender_paused_longer_than_the_rto() {
    for adaptive in [true, false] {
        let mut r = linux_rx(adaptive);
        let (mut pos, mut now) = (1, 0);
        let mut tt = TimerTable::default();
        assert_eq!(
            feed(&mut r, &mut tt, &mut pos, &mut now, 16, MS),
            16,
            "quick-ACK mode at the start"
        );
        assert_eq!(
            feed(&mut r, &mut tt, &mut pos, &mut now, 20, MS),
            10,
            "then every second segment"
        );
        let resumed = feed(&mut r, &mut tt, &mut pos, &mut now, 1, 2000 * MS)
            + feed(&mut r, &mut tt, &mut pos, &mut now, 19, MS);
        // tcp_incr_quickack after the idle gap: min(16, window / (2 MSS)) quick ACKs, then
        // every second segment.
        let want = if adaptive { 16 + 2 } else { 10 };
        assert_eq!(resumed, want, "adaptive_ack_delay = {adaptive}");
    }
}

#[test]
fn a_linux_receivers_delayed_ack_waits_longer_after_its_timer_fired() {
    let mut r = linux_rx(true);
    let (mut pos, mut now) = (1, 0);
    let mut tt = TimerTable::default();
    feed(&mut r, &mut tt, &mut pos, &mut now, 16, MS);
    feed(&mut r, &mut tt, &mut pos, &mut now, 1, MS);
    assert_eq!(
        tt.get(Timer::DelayedAck),
        Some(now + 40 * MS),
        "TCP_ATO_MIN"
    );
    now += 40 * MS;
    tt.stop(Timer::DelayedAck);
    r.on_delayed_ack_timer();
    r.on_ack_sent(&mut tt);
    // The timer fired: ato doubles to 80 ms, and a segment 100 ms later (more than ato,
    // less than the RTO) leaves it there.
    feed(&mut r, &mut tt, &mut pos, &mut now, 1, 100 * MS);
    assert_eq!(tt.get(Timer::DelayedAck), Some(now + 80 * MS));
    // SRTT caps the wait once ato is above its floor.
    r.note_rtt(1000 * MS, Some(50 * MS));
    tt.stop(Timer::DelayedAck);
    r.on_delayed_ack_timer();
    r.on_ack_sent(&mut tt);
    feed(&mut r, &mut tt, &mut pos, &mut now, 1, 300 * MS);
    assert_eq!(tt.get(Timer::DelayedAck), Some(now + 50 * MS));
}

#[test]
fn an_old_duplicate_does_not_replace_the_timestamp_our_acks_echo() {
    // RFC 7323 5.3: R2 (outside the window: reject) comes before R3 (record TS.Recent). A
    // retransmission of data already received, whose ACK was lost, is answered echoing the
    // TSval of the data that last advanced the window, as Linux does.
    let ts = |val| TcpOptions {
        timestamps: Some(spacetp_wire::Timestamps { val, ecr: 0 }),
        ..Default::default()
    };
    let mut r = rx();
    let mut st = ConnStats::default();
    let mut tt = TimerTable::default();
    r.ts_recent_from(&ts(100), 1, 101);
    r.on_data(0, 1, 100, false, &mut st, &mut tt);
    r.on_ack_sent(&mut tt);
    r.ts_recent_from(&ts(200), 101, 201);
    r.on_data(0, 101, 100, false, &mut st, &mut tt);
    r.on_ack_sent(&mut tt);
    assert_eq!(r.ts_recent(), 200);
    r.ts_recent_from(&ts(900), 1, 101);
    assert_eq!(r.ts_recent(), 200, "a duplicate wholly below the ACK point");
    r.ts_recent_from(&ts(950), 101, 301);
    assert_eq!(r.ts_recent(), 950, "a segment that covers the ACK point");
    r.ts_recent_from(&ts(960), 201, 201);
    assert_eq!(r.ts_recent(), 960, "a pure ACK at the ACK point");
}
