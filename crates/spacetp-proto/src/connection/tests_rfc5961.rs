//! RFC 5961 (blind in-window attacks) and RFC 9293's acceptability test, each against the
//! sentence of the RFC it checks. A Pipe transfer from a to b is stopped mid-stream and b
//! (or a) is handed forged segments directly.

use super::*;
use crate::seq::to_wire;
use crate::testing::Pipe;
use crate::time::{MS, SEC};
use spacetp_wire::flags;

/// a is sending 5 MB to b; after 1 s both are established with data in flight.
fn mid_stream() -> Pipe {
    let mut p = Pipe::new(&TcpConfig::default(), 1000, 5_000_000);
    p.run(SEC);
    assert_eq!(p.b.state(), State::Established);
    assert!(p.a.bytes_in_flight() > 0);
    while p.b.poll_transmit(p.now).is_some() {}
    p
}

/// A segment from a to b whose sequence number is b's receive position `pos`, with a
/// valid ACK of b's data.
fn to_b(p: &Pipe, fl: u8, pos: u64) -> TcpHeader {
    TcpHeader {
        src_port: 1000,
        dst_port: 80,
        seq: to_wire(p.a.iss, pos),
        ack: to_wire(p.b.iss, p.b.snd_max()),
        flags: fl,
        window: 65535,
        ..Default::default()
    }
}

/// A segment from b to a, at a's receive position `pos`, acknowledging a's position `ack`.
fn to_a(p: &Pipe, fl: u8, pos: u64, ack: u64) -> TcpHeader {
    TcpHeader {
        src_port: 80,
        dst_port: 1000,
        seq: to_wire(p.b.iss, pos),
        ack: to_wire(p.a.iss, ack),
        flags: fl,
        window: 65535,
        ..Default::default()
    }
}

/// Every segment b sends now.
fn b_sends(p: &mut Pipe) -> Vec<Transmit> {
    let now = p.now;
    std::iter::from_fn(|| p.b.poll_transmit(now)).collect()
}

#[test]
fn rfc5961_rst_outside_the_window_is_dropped_silently() {
    // 3.2: "If the RST bit is set and the sequence number is outside the current receive
    // window, silently drop the segment."
    let mut p = mid_stream();
    let next = p.b.rx.next_expected();
    for pos in [next + 5_000_000, next - 1, next.saturating_sub(100_000)] {
        let h = to_b(&p, flags::RST | flags::ACK, pos);
        p.b.on_segment(p.now, &h, 0);
        assert_eq!(p.b.state(), State::Established);
        assert!(b_sends(&mut p).is_empty(), "no answer to an RST at {pos}");
    }
    assert_eq!(p.b.stats().rst_rejected, 3);
}

#[test]
fn rfc5961_rst_inside_the_window_draws_a_challenge_ack() {
    // 3.2: "If the RST bit is set and the sequence number does not exactly match the next
    // expected sequence value, yet is within the current receive window, TCP MUST send an
    // acknowledgment (challenge ACK)."
    let mut p = mid_stream();
    let next = p.b.rx.next_expected();
    let h = to_b(&p, flags::RST, next + 1000);
    p.b.on_segment(p.now, &h, 0);
    assert_eq!(p.b.state(), State::Established);
    let sent = b_sends(&mut p);
    assert_eq!(sent.len(), 1);
    let ack = sent[0].hdr;
    assert!(ack.has(flags::ACK) && !ack.has(flags::RST) && sent[0].len == 0);
    assert_eq!(ack.ack, to_wire(p.a.iss, next), "the ACK names RCV.NXT");
    assert_eq!(p.b.stats().challenge_acks, 1);
    // The transfer goes on to the last byte.
    p.run(200 * SEC);
    assert_eq!(p.b.delivered(), 5_000_000);
}

#[test]
fn rfc5961_rst_at_exactly_the_next_sequence_number_resets() {
    // 3.2: "If the RST bit is set and the sequence number exactly matches the next expected
    // sequence number (RCV.NXT), then TCP MUST reset the connection."
    let mut p = mid_stream();
    let h = to_b(&p, flags::RST, p.b.rx.next_expected());
    p.b.on_segment(p.now, &h, 0);
    assert_eq!(p.b.state(), State::Closed);
    assert_eq!(p.b.close_reason(), Some(CloseReason::Reset));
}

#[test]
fn rfc5961_challenge_acks_are_rate_limited() {
    // Section 7: implementations limit the challenge ACKs they send (Linux: one per
    // tcp_invalid_ratelimit, 500 ms, per connection).
    let mut p = mid_stream();
    let next = p.b.rx.next_expected();
    let mut acks = 0;
    for i in 0..100 {
        let h = to_b(&p, flags::RST, next + 1 + i);
        p.b.on_segment(p.now, &h, 0);
        acks += b_sends(&mut p).len();
    }
    assert_eq!(acks, 1);
    assert_eq!(p.b.stats().challenge_acks_suppressed, 99);
    p.now += validation::INVALID_ACK_INTERVAL;
    let h = to_b(&p, flags::RST, next + 7);
    p.b.on_segment(p.now, &h, 0);
    assert_eq!(
        b_sends(&mut p).len(),
        1,
        "the limit lets one through per interval"
    );
}

#[test]
fn rfc5961_syn_on_a_synchronized_connection_draws_a_challenge_ack_and_changes_nothing() {
    // 4.2: "If the SYN bit is set, irrespective of the sequence number, TCP MUST send an ACK
    // (also referred to as challenge ACK) to the remote peer." A SYN or SYN-ACK with a
    // mid-stream sequence number must not move where the receiver puts data.
    for fl in [flags::SYN, flags::SYN | flags::ACK] {
        let mut p = mid_stream();
        let next = p.b.rx.next_expected();
        let h = to_b(&p, fl, next + 200_000);
        assert_eq!(p.b.on_segment(p.now, &h, 0), None);
        assert_eq!(p.b.state(), State::Established);
        assert_eq!(p.b.rx.next_expected(), next);
        let sent = b_sends(&mut p);
        assert!(sent.len() == 1 && !sent[0].hdr.has(flags::SYN));
        assert_eq!(p.b.stats().syn_rejected, 1);
        p.run(200 * SEC);
        assert_eq!(p.b.delivered(), 5_000_000, "flags {fl:#x}");
    }
}

#[test]
fn rfc5961_copy_of_the_peers_syn_in_syn_received_repeats_the_syn_ack_and_nothing_else() {
    let c = TcpConfig::default();
    let mut client = Connection::connect(&c, 1000, 1000, 80, 500);
    let mut server = Connection::listen(&c, 1000, 80, 1000, 9);
    let syn = client.poll_transmit(0).unwrap().hdr;
    server.on_segment(0, &syn, 0);
    assert!(server.poll_transmit(0).unwrap().hdr.has(flags::SYN));
    // The same SYN again: our SYN-ACK was lost.
    server.on_segment(MS, &syn, 0);
    assert!(server
        .poll_transmit(MS)
        .unwrap()
        .hdr
        .has(flags::SYN | flags::ACK));
    // A SYN with another sequence number is not the peer's: no SYN-ACK, no state change.
    let forged = TcpHeader {
        seq: syn.seq.wrapping_add(70_000),
        ..syn
    };
    server.on_segment(2 * MS, &forged, 0);
    assert_eq!(server.state(), State::SynReceived);
    assert!(std::iter::from_fn(|| server.poll_transmit(2 * MS)).all(|t| !t.hdr.has(flags::SYN)));
    assert_eq!(server.stats().syn_rejected, 1);
}

#[test]
fn rfc5961_ack_for_data_never_sent_drops_the_segment_and_its_data() {
    // 5.2: the acceptable ACK range is (SND.UNA - MAX.SND.WND) <= SEG.ACK <= SND.NXT; "All
    // incoming segments whose ACK value doesn't satisfy the above condition MUST be
    // discarded and an ACK sent back."
    let mut p = mid_stream();
    let next = p.b.rx.next_expected();
    let mut h = to_b(&p, flags::ACK, next);
    h.ack = to_wire(p.b.iss, p.b.snd_max() + 1000);
    assert_eq!(p.b.on_segment(p.now, &h, 1000), None);
    assert_eq!(p.b.rx.next_expected(), next, "the data was not taken");
    assert_eq!(p.b.stats().ack_rejected, 1);
    assert_eq!(b_sends(&mut p).len(), 1);
}

#[test]
fn rfc5961_ack_older_than_the_largest_window_drops_the_segment_and_its_data() {
    let mut p = mid_stream();
    p.run(2 * SEC);
    assert_eq!(p.a.state(), State::Established);
    let una = p.a.snd_una();
    let max_wnd = p.a.max_snd_wnd.max(p.a.snd_wnd);
    assert!(
        una > max_wnd + 10_000,
        "the test needs snd_una beyond one window"
    );
    // Data from b to a at a's next position: with an ACK older than SND.UNA - MAX.SND.WND it
    // is dropped; with an old but acceptable ACK it is taken.
    let next = p.a.rx.next_expected();
    let stale = to_a(&p, flags::ACK, next, una - max_wnd - 1);
    assert_eq!(p.a.on_segment(p.now, &stale, 100), None);
    assert_eq!(p.a.stats().ack_rejected, 1);
    let old = to_a(&p, flags::ACK, next, una - max_wnd);
    let got = p.a.on_segment(p.now, &old, 100);
    assert_eq!(
        got,
        Some(Accepted {
            pos: next,
            skip: 0,
            len: 100
        })
    );
}

#[test]
fn data_beyond_the_right_edge_of_the_window_is_dropped_and_acked() {
    // RFC 9293 3.10.7.4: a segment is acceptable if it starts or ends inside the window;
    // "If a segment's contents straddle the boundary between old and new, only the new parts
    // are processed."
    let mut p = mid_stream();
    let next = p.b.rx.next_expected();
    let wnd = p.b.rx.window();
    let h = to_b(&p, flags::ACK, next + wnd);
    assert_eq!(p.b.on_segment(p.now, &h, 1000), None);
    assert_eq!(p.b.stats().out_of_window_segments, 1);
    assert_eq!(b_sends(&mut p).len(), 1);
    // Straddling the left edge: only the new part is taken, and said to be.
    let h = to_b(&p, flags::ACK, next - 500);
    assert_eq!(
        p.b.on_segment(p.now, &h, 1000),
        Some(Accepted {
            pos: next,
            skip: 500,
            len: 500
        })
    );
    // Straddling the right edge: the part inside the window.
    let (next, wnd) = (p.b.rx.next_expected(), p.b.rx.window());
    let h = to_b(&p, flags::ACK, next + wnd - 300);
    assert_eq!(
        p.b.on_segment(p.now, &h, 1000),
        Some(Accepted {
            pos: next + wnd - 300,
            skip: 0,
            len: 300
        })
    );
}

#[test]
fn an_aborting_peer_answers_the_challenge_ack_with_an_exact_rst() {
    // a aborts with data in flight: its RST (at SND.NXT) is beyond b's RCV.NXT, so b sends a
    // challenge ACK; a, closed, answers it with an RST at the number it acknowledges
    // (RFC 9293 3.10.7.1), which b accepts.
    let mut p = mid_stream();
    p.a.reset();
    let rst = p.a.poll_transmit(p.now).unwrap();
    assert!(rst.hdr.has(flags::RST));
    p.b.on_segment(p.now, &rst.hdr, 0);
    assert_eq!(p.b.state(), State::Established, "not exact: challenged");
    let challenge = b_sends(&mut p);
    assert_eq!(challenge.len(), 1);
    p.a.on_segment(p.now, &challenge[0].hdr, 0);
    let exact =
        p.a.poll_transmit(p.now)
            .expect("the aborted end answers with an RST");
    assert!(exact.hdr.has(flags::RST));
    assert_eq!(exact.hdr.seq, challenge[0].hdr.ack);
    p.b.on_segment(p.now, &exact.hdr, 0);
    assert_eq!(p.b.close_reason(), Some(CloseReason::Reset));
}

#[test]
fn a_connection_reset_by_its_peer_answers_later_segments_with_a_reset() {
    // RFC 9293 3.10.7.1 (CLOSED): the data sender, not told, keeps sending; each segment it
    // sends draws an RST at the number it acknowledges, which it accepts as exact.
    let mut p = mid_stream();
    let h = to_b(&p, flags::RST, p.b.rx.next_expected());
    p.b.on_segment(p.now, &h, 0);
    assert_eq!(p.b.close_reason(), Some(CloseReason::Reset));
    let seg = p.a.poll_transmit(p.now).or_else(|| {
        p.a.on_timeout(p.now + 10 * SEC);
        p.a.poll_transmit(p.now + 10 * SEC)
    });
    let seg = seg.expect("the sender sends something");
    p.b.on_segment(p.now, &seg.hdr, seg.len);
    let rst = b_sends(&mut p);
    assert!(
        rst.len() == 1 && rst[0].hdr.has(flags::RST),
        "one RST in answer"
    );
    p.a.on_segment(p.now, &rst[0].hdr, 0);
    assert_eq!(p.a.close_reason(), Some(CloseReason::Reset));
}

#[test]
fn rfc9293_a_fin_below_rcv_nxt_is_old_dropped_and_acknowledged() {
    // 3.10.7.4, first check: a segment is unacceptable when no part of it (its FIN
    // included: SEG.LEN counts the FIN) lies at or beyond RCV.NXT; "If an incoming segment
    // is not acceptable, an acknowledgment should be sent in reply ... After sending the
    // acknowledgment, drop the unacceptable segment." The case captured on a live gateway
    // pair: a FIN+ACK with a valid ACK and a sequence number 14 kB below what b had received
    // (and 1.4 MB below, and with old data on it). Before, b kept the FIN, discarded every
    // later data segment and the connection died.
    let mut p = mid_stream();
    let next = p.b.rx.next_expected();
    for (back, len) in [
        (14_000u64, 0u32),
        (1_400_000.min(next - 1), 0),
        (14_000, 1000),
    ] {
        let h = to_b(&p, flags::FIN | flags::ACK, next - back);
        p.b.on_segment(p.now, &h, len);
        assert_eq!(
            p.b.state(),
            State::Established,
            "a FIN {back} B below RCV.NXT"
        );
        let sent = b_sends(&mut p);
        assert!(
            sent.iter().any(|t| t.hdr.ack == to_wire(p.a.iss, next)),
            "the old FIN is acknowledged with RCV.NXT"
        );
    }
    assert_eq!(p.b.stats().old_fins, 3);
    // The transfer goes on to the last byte, and the real FIN ends it.
    p.run(200 * SEC);
    assert_eq!(p.b.delivered(), 5_000_000);
    assert_eq!(p.b.close_reason(), Some(CloseReason::Normal));
}

#[test]
fn rfc9293_a_fin_at_or_beyond_rcv_nxt_still_ends_the_stream() {
    // The other side of the same check: a FIN at RCV.NXT is the stream's end, and an
    // out-of-order FIN (data missing before it) is kept until the data comes.
    let mut p = Pipe::new(&TcpConfig::default(), 1000, 0);
    p.run(SEC);
    let next = p.b.rx.next_expected();
    let h = to_b(&p, flags::FIN | flags::ACK, next + 500);
    p.b.on_segment(p.now, &h, 0);
    assert_eq!(
        p.b.state(),
        State::Established,
        "the FIN waits for 500 bytes"
    );
    let data = to_b(&p, flags::ACK, next);
    p.b.on_segment(p.now, &data, 500);
    assert_eq!(p.b.state(), State::CloseWait);
    assert_eq!(p.b.stats().old_fins, 0);
}
