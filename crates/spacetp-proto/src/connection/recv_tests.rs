//! The receive side's reassembly and ACK policy, tested alone.

use super::*;

fn rx() -> Receiver {
    let mut r = Receiver::new(&TcpConfig::default());
    r.on_syn(1000);
    r
}

#[test]
fn in_order_data_is_acked_every_second_segment() {
    let mut r = rx();
    let mut st = ConnStats::default();
    r.on_data(0, 1, 100, false, &mut st);
    assert!(!r.ack_now);
    assert_eq!(r.delack_deadline, Some(200_000_000));
    r.on_data(0, 101, 100, false, &mut st);
    assert!(r.ack_now);
    assert_eq!(r.delivered(), 200);
}

#[test]
fn holes_are_filled_and_acked_at_once() {
    let mut r = rx();
    let mut st = ConnStats::default();
    r.on_data(0, 201, 100, false, &mut st);
    r.on_data(0, 401, 100, false, &mut st);
    assert!(r.ack_now);
    assert_eq!(r.delivered(), 0);
    assert_eq!(r.ooo, [(201, 301), (401, 501)]);
    r.on_ack_sent();
    r.on_data(0, 1, 200, false, &mut st);
    assert!(r.ack_now, "filling a hole must be acked at once");
    assert_eq!(r.delivered(), 300);
    r.on_data(0, 301, 100, false, &mut st);
    assert_eq!(r.delivered(), 500);
    assert!(r.ooo.is_empty());
}

#[test]
fn overlapping_ranges_merge() {
    let mut r = rx();
    let mut st = ConnStats::default();
    r.on_data(0, 101, 100, false, &mut st);
    r.on_data(0, 301, 100, false, &mut st);
    r.on_data(0, 150, 200, false, &mut st);
    assert_eq!(r.ooo, [(101, 401)]);
}

#[test]
fn early_fin_waits_for_the_data() {
    let mut r = rx();
    let mut st = ConnStats::default();
    assert!(!r.on_data(0, 101, 100, true, &mut st).0);
    assert!(r.on_data(0, 1, 100, false, &mut st).0);
    assert_eq!(r.delivered(), 200);
}
