//! RACK-TLP (RFC 8985) with scripted drops and delays, against RFC 6675's DupThresh rule on
//! the same pipe: the tail loss probe fires after 2 SRTT and repairs a tail loss without a
//! timeout; a segment reordered within the reordering window is not a loss; a lost
//! retransmission is found by time instead of by the RTO; a lost segment whose
//! retransmission waits for its pacing departure time is resent once.

use super::*;
use crate::config::RecoveryKind;
use crate::testing::Pipe;
use crate::time::{MS, SEC};
use crate::units::Bytes;

const SEG: u32 = 1000;
/// Payload per segment: the MSS less the 12-byte timestamps option.
const PAYLOAD: u64 = 988;

fn cfg(recovery: RecoveryKind) -> TcpConfig {
    TcpConfig {
        recovery,
        sack: true,
        dsack: true,
        timestamps: true,
        receive_buffer: Bytes(1_000_000),
        send_buffer: Bytes(1_000_000),
        min_rto: crate::units::Duration(200 * MS),
        ..TcpConfig::default()
    }
}

/// 1000-byte segments, one per ms through the bottleneck, 50 ms each way.
fn pipe(recovery: RecoveryKind, bytes: u64) -> Pipe {
    let mut p = Pipe::new(&cfg(recovery), SEG, bytes);
    p.gap_ab = MS;
    p
}

/// Index in a's log of the first transmission of the data segment at `pos`.
fn first_send(p: &Pipe, pos: u64) -> (Time, usize) {
    let i = p
        .log_ab
        .iter()
        .position(|l| l.1 == pos && l.2 > 0)
        .expect("sent");
    (p.log_ab[i].0, i)
}

#[test]
fn a_tail_loss_probe_fires_after_two_srtt_and_repairs_the_tail_without_a_timeout() {
    // 30 full segments; the last two are lost.
    let bytes = 30 * PAYLOAD;
    let tail = [1 + 28 * PAYLOAD, 1 + 29 * PAYLOAD];
    let run = |recovery| {
        let mut p = pipe(recovery, bytes);
        p.drop_pos_times_ab = tail.iter().map(|&pos| (pos, 1)).collect();
        p.run(60 * SEC);
        assert!(p.done_at.is_some(), "{recovery:?} completes");
        p
    };
    let rack = run(RecoveryKind::Rack);
    assert_eq!(rack.a.stats().timeouts, 0, "no RTO with TLP");
    assert_eq!(rack.a.stats().loss_probes, 1);
    // The probe resends the last segment PTO after the last ACK arrived: 2 SRTT (SRTT ~102
    // ms), or sooner if the RTO would expire first (RFC 8985 7.2; here RFC 6298's RTO is
    // its 200 ms minimum).
    let (last_sent, _) = first_send(&rack, tail[1]);
    let probe = rack
        .log_ab
        .iter()
        .find(|l| l.3 && l.0 > last_sent)
        .expect("a probe");
    assert_eq!(probe.1, tail[1], "the last segment");
    let last_ack = rack
        .headers
        .iter()
        .filter(|h| !h.0 && h.1 + rack.delay < probe.0)
        .map(|h| h.1 + rack.delay)
        .max()
        .expect("an ACK");
    let wait = probe.0 - last_ack;
    assert!(
        (199 * MS..206 * MS).contains(&wait),
        "probe {} us after",
        wait / 1000
    );
    // RACK then finds the other tail segment lost once the probe's SACK arrives.
    assert!(rack.retransmissions().contains(&tail[0]));
    assert_eq!(
        rack.a.stats().loss_probe_recoveries,
        1,
        "the probe repaired a loss"
    );
    // RFC 6675 alone waits for the retransmission timeout.
    let sack = run(RecoveryKind::Sack);
    assert!(sack.a.stats().timeouts >= 1);
    assert!(
        rack.done() + 100 * MS < sack.done(),
        "{} vs {}",
        rack.done(),
        sack.done()
    );
}

#[test]
fn a_segment_reordered_within_the_reordering_window_is_not_a_loss() {
    // Segment 20 is one ms late (reordering seen, below DupThresh for both); segment 100
    // is 10 ms late: 10 later segments are SACKed before it arrives, which RFC 6675's
    // DupThresh of 3 calls a loss, and RACK, having seen reordering, waits min_RTT/4 = 25 ms.
    let run = |recovery| {
        let mut p = pipe(recovery, 300 * SEG as u64);
        p.run(2 * SEC); // handshake and the first flights: indices are data segments
        p
    };
    let delays = |p: &Pipe| {
        let first = p.log_ab.iter().position(|l| l.2 > 0).unwrap() as u64;
        vec![(first + 20, 1_500_000), (first + 100, 10 * MS)]
    };
    for (recovery, spurious) in [(RecoveryKind::Sack, true), (RecoveryKind::Rack, false)] {
        let probe = run(recovery);
        let mut p = pipe(recovery, 300 * SEG as u64);
        p.extra_delay_ab = delays(&probe);
        p.run(60 * SEC);
        assert!(p.done_at.is_some());
        let rtx = p.retransmissions().len();
        assert_eq!(rtx > 0, spurious, "{recovery:?}: {rtx} retransmissions");
    }
}

#[test]
fn a_lost_retransmission_is_detected_by_time_not_by_the_rto() {
    // Segment 50 is lost, and so is its first retransmission.
    let pos = 1 + 50 * PAYLOAD;
    let run = |recovery| {
        let mut p = pipe(recovery, 400 * SEG as u64);
        p.drop_pos_times_ab = vec![(pos, 2)];
        p.run(60 * SEC);
        assert!(p.done_at.is_some());
        p
    };
    let rack = run(RecoveryKind::Rack);
    assert_eq!(
        rack.a.stats().timeouts,
        0,
        "RACK resends the lost retransmission"
    );
    assert_eq!(
        rack.retransmissions().iter().filter(|&&r| r == pos).count(),
        2
    );
    let sack = run(RecoveryKind::Sack);
    assert!(sack.a.stats().timeouts >= 1, "RFC 6675 needs the RTO");
    assert!(rack.done() < sack.done());
}

#[test]
fn rack_needs_sack_and_dsack_needs_sack() {
    let c = TcpConfig {
        recovery: RecoveryKind::Rack,
        ..TcpConfig::default()
    };
    assert_eq!(c.validate().unwrap_err().path, "recovery");
    let c = TcpConfig {
        dsack: true,
        ..TcpConfig::default()
    };
    assert_eq!(c.validate().unwrap_err().path, "dsack");
}

#[test]
fn rack_against_a_peer_without_sack_keeps_nothing() {
    // RACK needs SACK: against a peer that does not permit it the connection recovers as
    // NewReno and RACK stays idle. It used to record every segment sent all the same, and
    // nothing removed them: memory growing with the transfer.
    let mut p = pipe(RecoveryKind::Rack, 2_000 * PAYLOAD);
    let no_sack = TcpConfig {
        sack: false,
        dsack: false,
        recovery: RecoveryKind::Newreno,
        ..cfg(RecoveryKind::Rack)
    };
    p.b = Connection::listen(&no_sack, SEG, 80, 1000, 77);
    p.drop_pos_times_ab = vec![(1 + 500 * PAYLOAD, 1)];
    p.run(60 * SEC);
    assert!(p.done_at.is_some(), "the transfer completes");
    assert!(!p.a.options.sack);
    assert_eq!(p.a.rack.as_ref().map(|r| r.held()), Some(0));
}

/// A controller that holds cwnd at a fixed size through losses and paces at a fixed rate
/// (bytes per second), as BBR does while the window is not what limits it.
struct PacedFixedWindow {
    cwnd: u64,
    rate: f64,
}

impl crate::cc::CongestionControl for PacedFixedWindow {
    fn name(&self) -> &'static str {
        "paced-fixed-window"
    }
    fn pacing_rate(&self) -> Option<f64> {
        Some(self.rate)
    }
    fn on_ack(&mut self, w: &mut crate::cc::Window, _ev: &crate::cc::AckEvent) {
        w.cwnd = self.cwnd;
    }
    fn ssthresh_after_loss(&mut self, _w: &crate::cc::Window, _flight: u64, _now: Time) -> u64 {
        self.cwnd
    }
    fn controls_window(&self) -> bool {
        true
    }
    fn cong_control(
        &mut self,
        w: &mut crate::cc::Window,
        _ev: &crate::cc::AckEvent,
        _c: &crate::cc::ControlInput,
    ) -> crate::cc::ControlRequest {
        w.cwnd = self.cwnd;
        crate::cc::ControlRequest::default()
    }
}

#[test]
fn a_lost_segment_held_by_pacing_is_resent_once_however_many_acks_arrive_while_it_waits() {
    // Paced at one segment (and its 52 header bytes) per 1.2 ms behind a bottleneck of one
    // a millisecond, with a window that never limits: every retransmission RACK asks for
    // waits for its departure time, and an ACK arrives meanwhile. Ten segments are lost
    // once each on a FIFO pipe, so exactly ten retransmissions repair them.
    let lost: Vec<u64> = (0..10).map(|k| 1 + (300 + 7 * k) * PAYLOAD).collect();
    let mut p = pipe(RecoveryKind::Rack, 2000 * PAYLOAD);
    p.a.set_controller(Box::new(PacedFixedWindow {
        cwnd: 150 * SEG as u64,
        rate: (SEG + 52) as f64 / 1.2e-3,
    }));
    p.drop_pos_times_ab = lost.iter().map(|&pos| (pos, 1)).collect();
    p.run(120 * SEC);
    assert!(p.done_at.is_some(), "the transfer completes");
    assert_eq!(p.a.stats().timeouts, 0);
    let mut rtx = p.retransmissions();
    rtx.sort_unstable();
    assert_eq!(rtx, lost, "each lost segment resent once, nothing else");
    assert_eq!(
        p.a.stats().snack_retransmits,
        0,
        "held by pacing, not named by a SNACK"
    );
}

#[test]
fn a_loss_among_segments_sent_during_recovery_is_a_second_congestion_event() {
    // RFC 6675 section 5 / Linux tcp_fastretrans_alert: a loss in data sent after recovery
    // began is not repaired inside that recovery's single halving. When the cumulative ACK
    // passes the recovery point, the state returns to Open, and the loss RACK marks beyond it
    // enters Recovery again: one halving per window of data that lost something.
    let first = 1 + 300 * PAYLOAD;
    let mut p = pipe(RecoveryKind::Rack, 3000 * SEG as u64);
    p.drop_pos_times_ab = vec![(first, 1)];
    p.run(60 * SEC);
    let entered = p.trace[p.first_recovery()].t;
    // A new segment sent after the recovery started lies beyond its recovery point.
    let later = p
        .log_ab
        .iter()
        .find(|l| l.0 > entered && !l.3 && l.2 > 0)
        .map(|l| l.1 + 10 * PAYLOAD)
        .unwrap();
    let mut p = pipe(RecoveryKind::Rack, 3000 * SEG as u64);
    p.drop_pos_times_ab = vec![(first, 1), (later, 1)];
    p.run(60 * SEC);
    let halvings: Vec<_> = p
        .trace
        .windows(2)
        .filter(|w| w[1].ssthresh < w[0].ssthresh)
        .map(|w| (w[1].t, w[0].ssthresh, w[1].ssthresh))
        .collect();
    assert_eq!(halvings.len(), 2, "{halvings:?}");
    let end = p.trace[p.recovery_end(p.first_recovery())].t;
    assert!(
        halvings[1].0 >= end,
        "the second starts after the first ends: {halvings:?}"
    );
    let (_, before, after) = halvings[1];
    assert!(
        after * 10 <= before * 6,
        "the second halves again: {halvings:?}"
    );
}

#[test]
fn a_timeout_whose_originals_arrived_is_undone_by_the_timestamp_echo() {
    // The return path is down for 1.5 s while a window is in flight: every segment arrives,
    // no ACK does, and the RTO fires. The answer to the retransmission echoes the timestamp
    // of the original data, older than the retransmission: Linux (tcp_try_undo_loss) puts
    // the window and ssthresh back; without the undo the sender slow-starts from one segment
    // with ssthresh halved.
    let run = |undo: bool| {
        let mut c = cfg(RecoveryKind::Rack);
        c.rto_undo = undo;
        let mut p = Pipe::new(&c, SEG, 400 * SEG as u64);
        p.gap_ab = MS;
        p.drop_ba_during = Some((300 * MS, 1800 * MS));
        p.run(60 * SEC);
        assert!(p.done_at.is_some());
        assert!(p.a.stats().timeouts >= 1, "the RTO fired");
        p
    };
    let (on, off) = (run(true), run(false));
    assert_eq!(on.a.stats().spurious_timeouts, 1);
    assert_eq!(off.a.stats().spurious_timeouts, 0);
    // One resend per timeout (each backoff resends the first segment), nothing more.
    assert_eq!(on.retransmissions().len() as u64, on.a.stats().timeouts);
    let before = |p: &Pipe| {
        p.trace
            .iter()
            .filter(|s| s.t < 300 * MS)
            .map(|s| s.cwnd)
            .max()
            .unwrap()
    };
    // The window when the first ACK after the timeouts has been processed.
    let after = |p: &Pipe| {
        let s = p.trace.iter().find(|s| s.t > 1800 * MS && s.cwnd > PAYLOAD);
        s.unwrap().cwnd
    };
    assert!(
        after(&on) >= before(&on),
        "{} < {}",
        after(&on),
        before(&on)
    );
    assert!(
        after(&off) * 2 < before(&off),
        "{} vs {}",
        after(&off),
        before(&off)
    );
    assert!(on.done() < off.done());
}
