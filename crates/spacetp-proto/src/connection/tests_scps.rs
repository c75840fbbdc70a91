//! SCPS-TP on the connection: capabilities negotiation and fallback, SNACK, fixed ACK
//! frequency, rate control, the corruption policy, link outages, records and BETS.

use super::tests::{cfg, run_drops};
use super::*;
use crate::testing::Pipe;
use crate::time::{MS, SEC};
use spacetp_wire::flags;

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
