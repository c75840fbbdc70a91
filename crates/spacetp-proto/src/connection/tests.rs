//! Connection tests over a minimal two-endpoint pipe: fixed one-way delay, optional rate,
//! scripted drops. Each test checks one behaviour the RFCs prescribe.

use super::*;
use crate::testing::Pipe;
use crate::time::{MS, SEC};
use spacetp_wire::{flags, Timestamps};

pub(super) fn cfg() -> TcpConfig {
    TcpConfig {
        initial_window: crate::config::InitialWindow::Segments(4),
        ..TcpConfig::default()
    }
}

#[test]
fn handshake_then_exact_delivery_and_close() {
    let mut p = Pipe::new(&cfg(), 1000, 100_000);
    p.run(100 * SEC);
    assert_eq!(p.b.delivered(), 100_000);
    assert_eq!(p.a.close_reason(), Some(CloseReason::Normal));
    assert_eq!(p.b.state(), State::Closed);
    assert_eq!(p.a.stats().retransmitted_segments, 0);
    // handshake RTT sample = 100 ms
    assert_eq!(p.a.rtt().min_rtt(), Some(100 * MS));
}

#[test]
fn syn_options_negotiate_mss_and_window_scale() {
    let mut c = Connection::connect(&cfg(), 1460, 1, 2, 0);
    let syn = c.poll_transmit(0).unwrap();
    assert!(syn.hdr.has(flags::SYN) && !syn.hdr.has(flags::ACK));
    assert_eq!(syn.hdr.options.mss, Some(1460));
    // 300 kB needs shift 3 (300000 >> 3 = 37500 <= 65535; >> 2 = 75000 does not fit)
    assert_eq!(syn.hdr.options.window_scale, Some(3));
    let mut s = Connection::listen(&cfg(), 536, 2, 1, 9);
    s.on_segment(0, &syn.hdr, 0);
    let synack = s.poll_transmit(0).unwrap();
    assert!(synack.hdr.has(flags::SYN) && synack.hdr.has(flags::ACK));
    assert_eq!(synack.hdr.ack, 1);
    c.on_segment(10, &synack.hdr, 0);
    assert_eq!(c.state(), State::Established);
    assert_eq!(
        c.segment_size(),
        536,
        "MSS is the smaller of the two offers"
    );
}

#[test]
fn single_loss_one_fast_retransmit_no_timeout() {
    let mut p = Pipe::new(&cfg(), 1000, 200_000);
    p.gap_ab = MS;
    // segment index 10 = SYN + 9 data segments earlier: data at position 1 + 9*1000
    p.drop_ab = vec![10];
    p.run(100 * SEC);
    assert_eq!(p.b.delivered(), 200_000);
    assert_eq!(p.retransmissions(), vec![9001]);
    assert_eq!(p.a.stats().fast_retransmits, 1);
    assert_eq!(p.a.stats().timeouts, 0);
}

#[test]
fn two_losses_in_a_window_recovered_by_partial_ack() {
    let mut p = Pipe::new(&cfg(), 1000, 200_000);
    p.gap_ab = MS;
    p.drop_ab = vec![20, 23];
    p.run(100 * SEC);
    assert_eq!(p.b.delivered(), 200_000);
    let lost: Vec<u64> = p.drop_ab.iter().map(|&i| p.log_ab[i as usize].1).collect();
    // RFC 6582: the first by fast retransmit, the second on the partial ACK; one recovery.
    assert_eq!(p.retransmissions(), lost);
    assert_eq!(p.a.stats().fast_retransmits, 1);
    assert_eq!(p.a.stats().timeouts, 0);
}

#[test]
fn lost_retransmission_needs_the_timer() {
    let mut p = Pipe::new(&cfg(), 1000, 100_000);
    p.gap_ab = MS;
    p.drop_ab = vec![10];
    p.run(100 * SEC);
    let first_rtx = p.log_ab.iter().position(|l| l.3 && l.2 > 0).unwrap() as u64;
    let mut q = Pipe::new(&cfg(), 1000, 100_000);
    q.gap_ab = MS;
    q.drop_ab = vec![10, first_rtx];
    q.run(100 * SEC);
    assert_eq!(q.b.delivered(), 100_000);
    assert_eq!(q.a.stats().timeouts, 1);
    let rtx = q.retransmissions();
    assert_eq!(
        &rtx[..2],
        &[9001, 9001],
        "fast retransmit, then the RTO resends the same hole"
    );
}

#[test]
fn syn_loss_backs_off_the_rto() {
    let mut p = Pipe::new(&cfg(), 1000, 10_000);
    p.drop_ab = vec![0, 1];
    p.run(100 * SEC);
    assert_eq!(p.b.delivered(), 10_000);
    let syn_times: Vec<Time> = p
        .log_ab
        .iter()
        .filter(|l| l.4 & flags::SYN != 0)
        .map(|l| l.0)
        .collect();
    // initial RTO 1 s, then doubled: SYNs at 0, 1 s, 3 s
    assert_eq!(syn_times, vec![0, SEC, 3 * SEC]);
}

#[test]
fn synack_loss_and_fin_loss_still_deliver_everything() {
    let mut p = Pipe::new(&cfg(), 1000, 50_000);
    p.drop_ba = vec![0]; // the SYN-ACK
    let n_data = 50;
    p.drop_ab = vec![n_data + 1]; // a's segment carrying the FIN (or the one after the data)
    p.run(200 * SEC);
    assert_eq!(p.b.delivered(), 50_000);
    assert!(p.a.is_finished() && p.b.is_finished());
}

#[test]
fn every_ack_lost_for_a_while_recovers_by_timeout() {
    let mut p = Pipe::new(&cfg(), 1000, 100_000);
    p.drop_ba = (3..15).collect();
    p.run(1000 * SEC);
    assert_eq!(p.b.delivered(), 100_000);
    assert!(p.a.stats().timeouts >= 1);
}

#[test]
fn transfer_across_sequence_wrap() {
    // ISN 0xFFFF_FFF0: the wire sequence wraps after 15 bytes.
    let mut p = Pipe::new(&cfg(), 1000, 3_000_000);
    p.gap_ab = 100_000;
    p.drop_ab = vec![50, 51, 500];
    p.run(1000 * SEC);
    assert_eq!(p.b.delivered(), 3_000_000);
    assert_eq!(p.a.close_reason(), Some(CloseReason::Normal));
}

#[test]
fn too_many_retries_abort_with_a_reason() {
    let c = TcpConfig {
        max_retries: 2,
        ..cfg()
    };
    let mut p = Pipe::new(&c, 1000, 100_000);
    p.drop_ab = (5..10_000).collect();
    p.run(1000 * SEC);
    assert_eq!(p.a.close_reason(), Some(CloseReason::RetransmissionTimeout));
    assert!(p.b.delivered() < 100_000);
}

#[test]
fn timestamps_give_rtt_samples_on_every_ack() {
    let c = TcpConfig {
        timestamps: true,
        ..cfg()
    };
    let mut p = Pipe::new(&c, 1000, 100_000);
    p.run(100 * SEC);
    assert_eq!(p.b.delivered(), 100_000);
    assert_eq!(
        p.a.segment_size(),
        988,
        "12 bytes of timestamps come out of each segment"
    );
    assert!(p.a.rtt().samples > 20, "{}", p.a.rtt().samples);
}

// ----- recovery algorithms (one behaviour each, with scripted drops) -----

use crate::config::RecoveryKind;

fn with(recovery: RecoveryKind, sack: bool) -> TcpConfig {
    TcpConfig {
        recovery,
        sack,
        ..cfg()
    }
}

/// Run 200 kB over a 1 ms/segment bottleneck dropping the given a->b segments; return the
/// pipe and the positions of the dropped segments.
pub(super) fn run_drops(c: &TcpConfig, drops: &[u64]) -> (Pipe, Vec<u64>) {
    let mut p = Pipe::new(c, 1000, 200_000);
    p.gap_ab = MS;
    p.drop_ab = drops.to_vec();
    p.run(200 * SEC);
    assert_eq!(p.b.delivered(), 200_000, "exact delivery");
    let lost = drops.iter().map(|&i| p.log_ab[i as usize].1).collect();
    (p, lost)
}

fn retx_times(p: &Pipe) -> Vec<(Time, u64)> {
    p.log_ab
        .iter()
        .filter(|l| l.3 && l.2 > 0)
        .map(|l| (l.0, l.1))
        .collect()
}

/// Data segments sent in `[t, t + dt)`.
fn sent_between(p: &Pipe, t: Time, dt: Time) -> usize {
    p.log_ab
        .iter()
        .filter(|l| l.2 > 0 && l.0 >= t && l.0 < t + dt)
        .count()
}

#[test]
fn tahoe_slow_starts_from_one_segment_after_fast_retransmit() {
    let (p, lost) = run_drops(&with(RecoveryKind::Tahoe, false), &[20, 23]);
    // Going back N from each hole: the first hole alone (cwnd 1); after the partial ACK,
    // slow start (cwnd 2) resends the second hole and the segment after it, which the
    // receiver already holds; then the cumulative ACK jumps past everything.
    let r = p.retransmissions();
    assert_eq!(&r[..2], &lost[..]);
    assert_eq!(&r[2..], &[lost[1] + 1000]);
    assert_eq!(p.a.stats().fast_retransmits, 1);
    assert_eq!(p.a.stats().timeouts, 0);
    // cwnd = 1 SMSS: nothing but the retransmission for one round trip (100 ms).
    let t0 = retx_times(&p)[0].0;
    assert_eq!(sent_between(&p, t0, 100 * MS), 1);
    // Reno keeps the ACK clock going with new data during fast recovery.
    let (reno, _) = run_drops(&with(RecoveryKind::Reno, false), &[20]);
    let t1 = retx_times(&reno)[0].0;
    assert!(sent_between(&reno, t1, 100 * MS) > 3);
}

#[test]
fn reno_single_loss_one_retransmission() {
    let (p, lost) = run_drops(&with(RecoveryKind::Reno, false), &[20]);
    assert_eq!(p.retransmissions(), lost);
    assert_eq!(p.a.stats().fast_retransmits, 1);
}

#[test]
fn reno_halves_twice_for_two_losses_newreno_once() {
    let (reno, lost) = run_drops(&with(RecoveryKind::Reno, false), &[20, 23]);
    assert_eq!(reno.retransmissions(), lost);
    // RFC 5681: the partial ACK ends Reno's recovery; the second hole needs a second fast
    // retransmit (a second halving).
    assert_eq!(reno.a.stats().fast_retransmits, 2);
    let (newreno, lost2) = run_drops(&with(RecoveryKind::Newreno, false), &[20, 23]);
    assert_eq!(newreno.retransmissions(), lost2);
    assert_eq!(newreno.a.stats().fast_retransmits, 1);
}

#[test]
fn sack_repairs_every_hole_in_one_round_trip() {
    let c = with(RecoveryKind::Sack, true);
    let (p, lost) = run_drops(&c, &[20, 23, 26]);
    assert!(p.a.sack_enabled());
    let r = retx_times(&p);
    assert_eq!(
        r.iter().map(|x| x.1).collect::<Vec<_>>(),
        lost,
        "each hole once, in order"
    );
    // All three are resent before the first of them could be acknowledged (one RTT = 100 ms).
    assert!(r[2].0 - r[0].0 < 100 * MS, "{r:?}");
    assert_eq!(p.a.stats().fast_retransmits, 1);
    assert_eq!(p.a.stats().timeouts, 0);
    // NewReno needs a round trip per hole for the same losses.
    let (nr, _) = run_drops(&with(RecoveryKind::Newreno, false), &[20, 23, 26]);
    let nt = retx_times(&nr);
    assert!(nt[2].0 - nt[0].0 >= 200 * MS, "{nt:?}");
}

#[test]
fn sack_fast_retransmit_goes_out_on_entering_recovery() {
    // RFC 6675 section 5 step (4.3): the first unacknowledged segment is retransmitted when
    // recovery starts, not once cwnd - pipe allows it. A receiver-limited sender (30 segments,
    // below the 100-segment BDP) enters recovery with pipe near twice the new cwnd; gated, the
    // retransmission would wait for about half a window of duplicate ACKs.
    for prr in [false, true] {
        let c = TcpConfig {
            receive_buffer: crate::units::Bytes(30_000),
            send_buffer: crate::units::Bytes(30_000),
            prr,
            ..with(RecoveryKind::Sack, true)
        };
        let (p, lost) = run_drops(&c, &[80]);
        let entry = p.trace[p.first_recovery()].t;
        let r = retx_times(&p);
        assert_eq!(r[0], (entry, lost[0]), "prr {prr}");
        assert_eq!(p.retransmissions(), lost, "prr {prr}");
        assert_eq!(p.a.stats().timeouts, 0, "prr {prr}");
    }
}

#[test]
fn fack_repairs_every_hole_below_the_forward_ack() {
    let (p, lost) = run_drops(&with(RecoveryKind::Fack, true), &[20, 23, 26]);
    let r = retx_times(&p);
    assert_eq!(r.iter().map(|x| x.1).collect::<Vec<_>>(), lost);
    assert!(r[2].0 - r[0].0 < 100 * MS, "{r:?}");
    assert_eq!(p.a.stats().timeouts, 0);
}

#[test]
fn sack_falls_back_to_newreno_when_the_peer_does_not_offer_it() {
    let mut p = Pipe::new(&with(RecoveryKind::Sack, true), 1000, 100_000);
    p.b = Connection::listen(&with(RecoveryKind::Newreno, false), 1000, 80, 1000, 77);
    p.gap_ab = MS;
    p.drop_ab = vec![20, 23];
    p.run(200 * SEC);
    assert_eq!(p.b.delivered(), 100_000);
    assert!(!p.a.sack_enabled());
    assert_eq!(p.a.stats().fast_retransmits, 1, "NewReno recovery");
}

/// Every recovery policy, with the SACK option it needs (without it the SACK-based ones
/// fall back to NewReno).
const EVERY_POLICY: [(RecoveryKind, bool); 7] = [
    (RecoveryKind::Tahoe, false),
    (RecoveryKind::Reno, false),
    (RecoveryKind::Newreno, false),
    (RecoveryKind::Sack, true),
    (RecoveryKind::Fack, true),
    (RecoveryKind::Rack, true),
    (RecoveryKind::Peach, false),
];

#[test]
fn every_recovery_survives_a_lost_retransmission_and_lost_acks() {
    // Not RACK: it finds a lost retransmission without the timer (`tests_rack.rs`,
    // `a_lost_retransmission_is_detected_by_time_not_by_the_rto`).
    for (kind, sack) in EVERY_POLICY
        .into_iter()
        .filter(|&(k, _)| k != RecoveryKind::Rack)
    {
        let c = with(kind, sack);
        let (first, _) = run_drops(&c, &[20]);
        let rtx = first.log_ab.iter().position(|l| l.3 && l.2 > 0).unwrap() as u64;
        let (p, lost) = run_drops(&c, &[20, rtx]);
        let r = p.retransmissions();
        assert_eq!(
            &r[..2],
            &[lost[0], lost[0]],
            "{kind:?}: the hole is sent a third time"
        );
        assert!(
            p.a.stats().timeouts >= 1,
            "{kind:?}: only the timer can find a lost retransmission"
        );
        let mut q = Pipe::new(&c, 1000, 200_000);
        q.drop_ba = (5..15).collect();
        q.run(1000 * SEC);
        assert_eq!(q.b.delivered(), 200_000, "{kind:?}");
    }
}

/// The output path asks the recovery policy only during a recovery, or when it may have a
/// retransmission (`recovery_flight`, `may_retransmit`): every policy, with and without
/// PRR, through losses of data, of retransmissions and of ACKs, keeps both promises after
/// every event (`Pipe::run` asserts it, this test adds the cases), and delivers everything.
#[test]
fn every_recovery_policy_keeps_the_output_paths_shortcuts() {
    for (kind, sack) in EVERY_POLICY {
        for prr in [false, true] {
            let c = TcpConfig {
                prr,
                ..with(kind, sack)
            };
            let (first, _) = run_drops(&c, &[20, 23, 26, 60]);
            let rtx = first.log_ab.iter().position(|l| l.3 && l.2 > 0).unwrap() as u64;
            run_drops(&c, &[20, 23, rtx, rtx + 5]);
            let mut q = Pipe::new(&c, 1000, 200_000);
            q.drop_ba = (5..15).chain(40..44).collect();
            q.drop_ab = vec![30, 31, 32];
            q.run(1000 * SEC);
            assert_eq!(q.b.delivered(), 200_000, "{kind:?} prr {prr}");
        }
    }
}

#[test]
fn receiver_sack_blocks_newest_first() {
    let c = with(RecoveryKind::Sack, true);
    let mut r = Connection::listen(&c, 1000, 80, 1000, 0);
    let mut a = Connection::connect(&c, 1000, 1000, 80, 100);
    let syn = a.poll_transmit(0).unwrap();
    r.on_segment(0, &syn.hdr, 0);
    let _ = r.poll_transmit(0);
    let seg = |pos: u64| TcpHeader {
        seq: 100u32.wrapping_add(pos as u32),
        flags: flags::ACK,
        ack: 1,
        window: 1000,
        ..Default::default()
    };
    r.on_segment(1, &seg(1), 1000); // in order
    r.on_segment(1, &seg(2001), 1000); // hole at 1001
    r.on_segment(1, &seg(4001), 1000); // hole at 3001
    r.on_segment(1, &seg(6001), 1000); // hole at 5001
    let ack = std::iter::from_fn(|| r.poll_transmit(2)).last().unwrap();
    let blocks: Vec<(u32, u32)> = ack.hdr.options.sack.as_slice().to_vec();
    let w = |p: u64| 100u32.wrapping_add(p as u32);
    assert_eq!(
        blocks,
        vec![(w(6001), w(7001)), (w(4001), w(5001)), (w(2001), w(3001))]
    );
}

// ----- flow control: zero window, persist timer, PAWS -----

#[test]
fn zero_window_is_probed_and_reopened() {
    let c = TcpConfig {
        receive_buffer: crate::units::Bytes(20_000),
        ..cfg()
    };
    let mut p = Pipe::new(&c, 1000, 100_000);
    p.b.set_manual_read();
    p.run(10 * SEC);
    // Nothing read: the receiver holds one buffer and the window is shut.
    assert_eq!(p.b.readable(), 20_000);
    assert_eq!(p.b.delivered(), 0);
    let probes = p.a.stats().persist_probes;
    // RTO-based interval with backoff over ~10 s: probes at about 1, 3 and 7 s after stalling
    assert!((2..=5).contains(&probes), "{probes} probes");
    assert_eq!(p.a.stats().timeouts, 0, "a shut window is not a loss");
    // The application reads; the window update restarts the transfer.
    for _ in 0..40 {
        p.b.read(u64::MAX);
        let t = p.now + 2 * SEC;
        p.run(t);
        if p.b.delivered() == 100_000 {
            break;
        }
    }
    p.b.read(u64::MAX);
    assert_eq!(p.b.delivered(), 100_000);
}

#[test]
fn paws_discards_an_old_duplicate() {
    let c = TcpConfig {
        timestamps: true,
        ..cfg()
    };
    let mut p = Pipe::new(&c, 1000, 5_000_000);
    p.run(SEC);
    assert_eq!(p.b.state(), State::Established);
    // A segment claiming new data but carrying a TSval from the distant past (as an old
    // duplicate after sequence wrap would).
    let mut h = TcpHeader {
        seq: crate::seq::to_wire(p.a.iss, p.a.snd_max() - 1),
        ack: 1,
        flags: flags::ACK,
        window: 1000,
        ..Default::default()
    };
    h.options.timestamps = Some(Timestamps {
        val: p.b.rx.ts_recent().wrapping_sub(5000),
        ecr: 0,
    });
    let before = p.b.delivered();
    p.b.on_segment(p.now, &h, 1000);
    assert_eq!(p.b.stats().paws_rejected, 1);
    assert_eq!(p.b.delivered(), before);
    let ack = p.b.poll_transmit(p.now).expect("PAWS answers with an ACK");
    assert!(ack.hdr.has(flags::ACK) && ack.len == 0);
}

#[test]
fn prr_spreads_the_reduction_and_ends_at_ssthresh() {
    // RFC 6937: during recovery the sender sends about ssthresh/RecoverFS (here ~1/2) of what
    // is delivered, never a burst; recovery ends with cwnd = ssthresh, no timeout.
    for (kind, sack) in [(RecoveryKind::Newreno, false), (RecoveryKind::Sack, true)] {
        let c = TcpConfig {
            prr: true,
            ..with(kind, sack)
        };
        let (p, lost) = run_drops(&c, &[30, 33, 36]);
        assert_eq!(p.a.stats().timeouts, 0, "{kind:?}");
        let r = p.retransmissions();
        assert_eq!(&r[..3], &lost[..], "{kind:?}: the holes, in order");
        // In the first half RTT of recovery (50 ms) the ACKs report the delivery of the ~20
        // segments that were in flight; PRR sends about half as many, spread over the ACKs.
        let t0 = retx_times(&p)[0].0;
        let sent = sent_between(&p, t0, 50 * MS);
        assert!(
            (3..=20).contains(&sent),
            "{kind:?}: {sent} segments in the first 50 ms"
        );
    }
}

#[test]
fn a_retransmission_chosen_on_an_earlier_ack_is_not_sent_once_acknowledged() {
    // A relay reads a burst of ACKs before it asks what to send: the third duplicate ACK
    // makes NewReno choose snd_una for a fast retransmission, and the next ACK of the same
    // burst acknowledges it. What goes out after must start at or above the new snd_una
    // (a gateway has released the bytes below it: resending them would corrupt the stream).
    for kind in [RecoveryKind::Newreno, RecoveryKind::Reno] {
        let mut p = Pipe::new(&with(kind, false), 1000, 5_000_000);
        p.run(SEC);
        while p.a.poll_transmit(p.now).is_some() {}
        let una = p.a.snd_una();
        assert!(p.a.bytes_in_flight() > 10_000);
        let ack = |p: &Pipe, pos: u64| TcpHeader {
            src_port: 80,
            dst_port: 1000,
            seq: crate::seq::to_wire(p.b.iss, p.b.snd_max()),
            ack: crate::seq::to_wire(p.a.iss, pos),
            flags: flags::ACK,
            // The window a already has: a changed window makes no duplicate (RFC 5681).
            window: (p.a.snd_wnd >> p.a.options.snd_wscale) as u16,
            ..Default::default()
        };
        for _ in 0..3 {
            let h = ack(&p, una);
            p.a.on_segment(p.now, &h, 0);
        }
        assert!(
            p.a.recovery.in_recovery(),
            "{kind:?}: three duplicates start recovery"
        );
        // Everything in flight, as a cumulative ACK after a reordering would.
        let all = p.a.snd_max();
        let h = ack(&p, all);
        p.a.on_segment(p.now, &h, 0);
        let now = p.now;
        while let Some(t) = p.a.poll_transmit(now) {
            assert!(
                t.len == 0 || t.pos >= all,
                "{kind:?}: sent {} bytes at {} below snd_una {all}",
                t.len,
                t.pos,
            );
        }
    }
}

#[test]
fn a_deadline_fires_what_is_due_unless_the_connection_closed_since() {
    // The SYN's retransmission timer (RFC 6298 5.5): at its deadline an open connection
    // times out and sends the SYN again; one reset before it fires nothing there.
    let syn_sent = || {
        let mut c = Connection::connect(&TcpConfig::default(), 1000, 1000, 80, 1);
        assert!(c
            .poll_transmit(0)
            .is_some_and(|t| t.hdr.flags & flags::SYN != 0));
        let deadline = c.poll_timeout().expect("the SYN's RTO is armed");
        (c, deadline)
    };
    let (mut open, deadline) = syn_sent();
    open.on_deadline(deadline - 1);
    assert_eq!(open.stats().timeouts, 0, "not due yet");
    open.on_deadline(deadline);
    assert_eq!(open.stats().timeouts, 1);
    assert!(open
        .poll_transmit(deadline)
        .is_some_and(|t| t.hdr.flags & flags::SYN != 0));

    // Refused: an RST acknowledging the SYN closes it (RFC 9293 3.10.7.3) with the SYN's
    // timer left in its table; the deadline the driver holds must not resend the SYN.
    let (mut refused, deadline) = syn_sent();
    let rst = TcpHeader {
        src_port: 80,
        dst_port: 1000,
        ack: 2, // ISS 1 + the SYN
        flags: flags::RST | flags::ACK,
        ..TcpHeader::default()
    };
    refused.on_segment(deadline / 2, &rst, 0);
    assert_eq!(refused.state(), State::Closed);
    assert_eq!(refused.poll_timeout(), None);
    refused.on_deadline(deadline);
    assert_eq!(refused.stats().timeouts, 0);
    assert!(refused.poll_transmit(deadline).is_none());
}
