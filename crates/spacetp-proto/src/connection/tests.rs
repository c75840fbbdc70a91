//! Connection tests over a minimal two-endpoint pipe: fixed one-way delay, optional rate,
//! scripted drops. Each test checks one behaviour the RFCs prescribe.

use super::*;
use crate::testing::Pipe;
use crate::time::{MS, SEC};
use spacetp_wire::{flags, Timestamps};

fn cfg() -> TcpConfig {
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
fn run_drops(c: &TcpConfig, drops: &[u64]) -> (Pipe, Vec<u64>) {
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

#[test]
fn every_recovery_survives_a_lost_retransmission_and_lost_acks() {
    for (kind, sack) in [
        (RecoveryKind::Tahoe, false),
        (RecoveryKind::Reno, false),
        (RecoveryKind::Newreno, false),
        (RecoveryKind::Sack, true),
        (RecoveryKind::Fack, true),
    ] {
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

// ----- SCPS-TP -----

use crate::config::{CongestionControlKind, LossSource, ScpsConfig};
use crate::units::Duration as Dur;

fn scps(snack: bool, ack_period: Option<Time>) -> TcpConfig {
    TcpConfig {
        scps: ScpsConfig {
            enabled: true,
            snack,
            ack_period: ack_period.map(Dur),
            ..ScpsConfig::default()
        },
        ..cfg()
    }
}

fn has_scps_options(h: &TcpHeader) -> bool {
    let o = &h.options;
    o.scps_capabilities.is_some() || !o.snacks.is_empty() || o.corruption_experienced
}

#[test]
fn scps_capabilities_are_negotiated_on_syn_and_synack() {
    let mut p = Pipe::new(&scps(true, None), 1000, 100_000);
    p.gap_ab = MS;
    p.drop_ab = vec![30];
    p.run(100 * SEC);
    assert_eq!(p.b.delivered(), 100_000);
    let caps: Vec<bool> = p
        .headers
        .iter()
        .filter(|h| h.2.has(flags::SYN))
        .map(|h| h.0)
        .collect();
    assert_eq!(caps, vec![true, false], "SYN then SYN-ACK");
    for (dir, _, h) in p.headers.iter().filter(|h| h.2.has(flags::SYN)) {
        let c = h
            .options
            .scps_capabilities
            .expect("kind 20 on SYN and SYN-ACK");
        assert_eq!(c.vector & 0x40, 0x40, "SNACK1 offered ({dir})");
    }
    assert!(
        p.headers.iter().any(|h| !h.2.options.snacks.is_empty()),
        "SNACK in use"
    );
}

#[test]
fn scps_falls_back_to_plain_tcp_with_a_plain_peer_either_way() {
    for scps_client in [true, false] {
        let (ca, cb) = if scps_client {
            (scps(true, None), cfg())
        } else {
            (cfg(), scps(true, None))
        };
        let mut p = Pipe::new(&ca, 1000, 100_000);
        p.b = Connection::listen(&cb, 1000, 80, 1000, 77);
        p.gap_ab = MS;
        p.drop_ab = vec![30, 33];
        p.run(100 * SEC);
        assert_eq!(p.b.delivered(), 100_000, "client scps = {scps_client}");
        // Only the SCPS end's SYN (if it is the client) carries kind 20; nothing after it.
        let after_syn = p.headers.iter().filter(|h| !h.2.has(flags::SYN));
        assert!(
            after_syn.clone().all(|h| !has_scps_options(&h.2)),
            "no SCPS option after the handshake"
        );
        let synack = p
            .headers
            .iter()
            .find(|h| h.2.has(flags::SYN) && h.2.has(flags::ACK))
            .unwrap();
        assert!(synack.2.options.scps_capabilities.is_none());
        assert_eq!(p.a.stats().fast_retransmits, 1, "plain NewReno recovery");
    }
}

#[test]
fn snack_names_the_true_holes_and_the_sender_resends_at_once() {
    let c = scps(true, Some(100 * MS));
    let mut p = Pipe::new(&c, 1000, 200_000);
    p.gap_ab = MS;
    p.drop_ab = vec![30, 33, 34];
    p.run(100 * SEC);
    assert_eq!(p.b.delivered(), 200_000);
    let lost: Vec<u64> = p.drop_ab.iter().map(|&i| p.log_ab[i as usize].1).collect();
    let seg = p.b.segment_size() as u64;
    // The first ACK with SNACKs: hole starts = ACK + offset x segment size.
    let (_, _, h) = p
        .headers
        .iter()
        .find(|h| !h.0 && !h.2.options.snacks.is_empty())
        .unwrap();
    let ack = crate::seq::from_wire(p.a.iss, h.ack, 1);
    let mut named = vec![];
    super::scps::snacked_positions(&h.options.snacks, ack, seg, seg, |pos| named.push(pos));
    assert_eq!(named, lost, "the SNACK names exactly the lost segments");
    // Each hole is resent once, on the SNACK, without waiting for duplicate ACKs (there is
    // one ACK per 100 ms).
    assert_eq!(p.retransmissions(), lost);
    assert!(p.a.stats().snack_retransmits >= 3);
    assert_eq!(p.a.stats().timeouts, 0);
}

#[test]
fn snack_units_are_the_data_senders_offered_mss_when_the_offers_differ() {
    // As in the SCPS Reference Implementation: offsets and sizes count the MSS the data
    // sender offered (less the timestamp option), not the smaller segment actually sent.
    let c = scps(true, Some(100 * MS));
    let mut p = Pipe::new(&c, 1200, 200_000);
    p.b = Connection::listen(&c, 1000, 80, 1000, 77);
    p.gap_ab = MS;
    p.drop_ab = vec![30, 33, 34];
    p.run(100 * SEC);
    assert_eq!(p.b.delivered(), 200_000);
    // Segments are the smaller MSS less the timestamp option, if negotiated.
    let seg = p.a.segment_size() as u64;
    let ts = 1000 - seg;
    assert!(ts == 0 || ts == 12, "{seg}");
    let unit = 1200 - ts;
    // An ACK reporting both holes (segment 30, and segments 33-34).
    let (_, _, h) = p
        .headers
        .iter()
        .find(|h| !h.0 && h.2.options.snacks.as_slice().len() == 2)
        .unwrap();
    let ack = crate::seq::from_wire(p.a.iss, h.ack, 1);
    let sns = h.options.snacks.as_slice();
    assert_eq!(ack, p.log_ab[30].1);
    assert_eq!(sns[1].offset as u64, (p.log_ab[33].1 - ack) / unit);
    assert_ne!(unit, seg);
    let sn = sns[0];
    // The sender resends from the start of the named range, in its own segments, at once.
    let start = ack + sn.offset as u64 * unit;
    assert!(
        p.retransmissions().contains(&start),
        "{:?}",
        p.retransmissions()
    );
    assert_eq!(p.a.stats().timeouts, 0);
}

#[test]
fn fixed_ack_frequency_spaces_the_acks() {
    let c = scps(true, Some(100 * MS));
    let mut p = Pipe::new(&c, 1000, 500_000);
    p.gap_ab = MS;
    p.drop_ab = vec![50];
    p.run(100 * SEC);
    assert_eq!(p.b.delivered(), 500_000);
    let acks: Vec<Time> = p
        .headers
        .iter()
        .filter(|h| !h.0 && !h.2.has(flags::SYN) && !h.2.has(flags::FIN))
        .map(|h| h.1)
        .collect();
    let close = acks.windows(2).filter(|w| w[1] - w[0] < 100 * MS).count();
    assert!(
        close <= 1,
        "ACKs closer than the period: {close} of {}",
        acks.len()
    );
    // at most one ACK per period of the transfer (plus the handshake's), not one per two
    // segments (500 segments would give ~250)
    let periods = (p.done() / (100 * MS)) as usize;
    assert!(
        acks.len() <= periods + 2,
        "{} ACKs in {periods} periods",
        acks.len()
    );
}

#[test]
fn rate_control_clocks_the_sender() {
    let mut c = scps(false, None);
    c.congestion_control = CongestionControlKind::None;
    c.scps.rate = Some(crate::units::Rate(1e6)); // 1 Mb/s on a pipe without bottleneck
    let mut p = Pipe::new(&c, 1000, 500_000);
    p.run(100 * SEC);
    assert_eq!(p.b.delivered(), 500_000);
    // 500 segments of ~1052 charged bytes at 125 kB/s: ~4.2 s, plus the handshake
    let t = p.done() as f64 / 1e9;
    assert!((4.1..4.6).contains(&t), "{t} s");
}

#[test]
fn corruption_policy_keeps_the_window() {
    let mut corr = scps(true, None);
    corr.scps.loss_source = LossSource::Corruption;
    let (p, _) = run_drops(&corr, &[30, 60, 90, 120]);
    let (q, _) = run_drops(&scps(true, None), &[30, 60, 90, 120]);
    // Congestion policy: ssthresh comes down; corruption policy: it never does.
    assert_eq!(p.a.window().ssthresh, u64::MAX);
    assert!(q.a.window().ssthresh < u64::MAX);
    assert!(p.done() < q.done(), "corruption handling finishes sooner");
}

fn with_bets(mut c: TcpConfig, wait: Option<Time>) -> TcpConfig {
    c.scps.bets = wait.map(Dur);
    c
}

#[test]
fn bets_gives_up_a_hole_that_waited_past_its_deadline() {
    // Segment 30 never gets through. With BETS at both ends the receiver moves past it after
    // 2 s; its 1000 bytes are reported lost and the transfer ends.
    let c = with_bets(scps(true, Some(100 * MS)), Some(2 * SEC));
    let mut p = Pipe::new(&c, 1000, 100_000);
    p.gap_ab = MS;
    p.drop_pos_ab = vec![1 + 30 * 1000];
    p.run(100 * SEC);
    assert!(p.a.is_finished() && p.b.is_finished());
    assert_eq!(p.b.stats().bets_holes, 1);
    assert_eq!(p.b.bets_bytes_lost(), 1000);
    assert_eq!(p.b.delivered(), 99_000);
    // The ACK that jumps the hole leaves 2 s after the first segment beyond it arrived.
    let first_beyond = p.log_ab.iter().find(|l| l.1 == 1 + 31 * 1000).unwrap().0 + 50 * MS;
    let jump = p
        .headers
        .iter()
        .find(|h| !h.0 && h.2.ack.wrapping_sub(0xFFFF_FFF0) > 1 + 30 * 1000)
        .expect("an ACK past the hole");
    assert!(jump.1 >= first_beyond + 2 * SEC, "gave up at {} ns", jump.1);
    assert!(
        jump.1 <= first_beyond + 2 * SEC + 200 * MS,
        "gave up at {} ns",
        jump.1
    );

    // With records of 2500 bytes, the one that lost bytes to the hole is not delivered whole.
    let mut p = Pipe::new(&c, 1000, 100_000);
    p.record_size = Some(2500);
    p.gap_ab = MS;
    p.drop_pos_ab = vec![1 + 30 * 1000];
    p.run(100 * SEC);
    assert_eq!(p.b.bets_bytes_lost(), 1000);
    assert_eq!(p.b.records_delivered(), 39);

    // Offered by one end only, BETS is off: the receiver keeps waiting for the hole.
    let mut p = Pipe::new(&c, 1000, 100_000);
    p.b = Connection::listen(&scps(true, Some(100 * MS)), 1000, 80, 1000, 77);
    p.gap_ab = MS;
    p.drop_pos_ab = vec![1 + 30 * 1000];
    p.run(100 * SEC);
    assert_eq!(p.b.bets_bytes_lost(), 0);
    assert_eq!(p.b.delivered(), 30_000);
}

#[test]
fn record_boundaries_end_segments_and_count_whole_records() {
    let mut p = Pipe::new(&scps(true, None), 1000, 20_000);
    p.record_size = Some(2500);
    p.gap_ab = MS;
    p.drop_ab = vec![4, 9];
    p.run(100 * SEC);
    assert_eq!(p.b.delivered(), 20_000);
    assert_eq!(p.b.records_delivered(), 8);
    for &(dir, _, ref h) in &p.headers {
        let Some(l) = p.log_ab.iter().find(|l| dir && to_wire_seq(l.1) == h.seq) else {
            continue;
        };
        let (start, end) = (l.1 - 1, l.1 - 1 + l.2 as u64);
        if l.2 == 0 {
            continue;
        }
        assert_eq!(
            start / 2500,
            (end - 1) / 2500,
            "segment {start}..{end} crosses a record"
        );
        assert_eq!(
            h.options.record_boundary,
            end % 2500 == 0,
            "segment {start}..{end}"
        );
    }

    // A plain TCP peer: no option, full segments.
    let mut p = Pipe::new(&scps(true, None), 1000, 20_000);
    p.b = Connection::listen(&cfg(), 1000, 80, 1000, 77);
    p.record_size = Some(2500);
    p.run(100 * SEC);
    assert_eq!(p.b.delivered(), 20_000);
    assert!(p.headers.iter().all(|h| !h.2.options.record_boundary));
    assert_eq!(p.log_ab.iter().filter(|l| l.2 == 1000).count(), 20);
    assert!(
        p.a.record_ends.len() <= 1,
        "acknowledged record ends are forgotten"
    );
}

/// The wire sequence number of a's absolute position `pos` (a's ISS is 0xFFFF_FFF0).
fn to_wire_seq(pos: u64) -> u32 {
    0xFFFF_FFF0u32.wrapping_add(pos as u32)
}

#[test]
fn snack_and_duplicate_acks_reduce_the_window_once_per_loss() {
    // Congestion policy, ACK every other segment: the SNACK names the hole and the duplicate
    // ACKs that follow reach the fast-retransmit threshold; together one reduction.
    let c = TcpConfig {
        initial_window: crate::config::InitialWindow::Segments(40),
        ..scps(true, None)
    };
    let mut p = Pipe::new(&c, 1000, 200_000);
    p.gap_ab = MS;
    p.drop_ab = vec![30];
    p.run(100 * SEC);
    assert_eq!(p.b.delivered(), 200_000);
    assert_eq!(p.a.stats().fast_retransmits, 1);
    let before = p.trace.iter().find(|s| s.t >= p.log_ab[30].0).unwrap().cwnd;
    let lowest = p.trace.iter().map(|s| s.ssthresh).min().unwrap();
    assert!(
        lowest * 10 >= before * 4,
        "ssthresh fell to {lowest} from cwnd {before}: reduced more than once"
    );
}
