//! Exact relaying under attack, aborts, stopping, vanished peers (issue 14): forged
//! segments, resets from either end, a stopping gateway, a peer gone silent.
use super::*;
use crate::selftest::*;

#[test]
fn forged_syn_rst_ack_and_data_segments_change_no_relayed_byte() {
    // The attacks a user injected on the space link (2% PER): a SYN and a SYN-ACK with a
    // mid-stream sequence number (these made the receiving gateway skip 197 kB and relay
    // zero-filled holes), RSTs 5 MB beyond the window and inside it, data acknowledging
    // bytes never sent, data far beyond the window, in both directions. The transfer must
    // arrive byte for byte and no flow may be reset.
    let size = 4_000_000;
    let (run, server, aport) = pair(
        r#""rate": "50 Mb/s", "delay": "10 ms", "errors": {"per": 0.02}"#,
        |_| {},
    );
    let srv = serve_one(server);
    let client = std::thread::spawn(move || {
        let mut s = connect(aport);
        s.write_all(&pattern(size, 3)).unwrap();
        s.shutdown(Shutdown::Write).unwrap();
        let mut rest = Vec::new();
        s.read_to_end(&mut rest).map(|_| rest.len())
    });
    let tap = run.tap.clone();
    assert!(wait_for(std::time::Duration::from_secs(20), || {
        tap.seen(1).1.is_some() && tap.seen(0).0.is_some()
    }));
    for round in 0..5u32 {
        let (Some(to_b), Some(to_a)) = (tap.seen(1).1, tap.seen(0).0) else {
            break;
        };
        let (seq, ack, next) = (
            to_b.hdr.seq,
            to_b.hdr.ack,
            to_b.hdr.seq.wrapping_add(to_b.len),
        );
        let garbage = vec![0xEE; 1000];
        let attacks_on_b = [
            forged(
                &to_b,
                |h| {
                    h.flags = flags::SYN;
                    h.seq = seq.wrapping_add(200_000)
                },
                &[],
            ),
            forged(
                &to_b,
                |h| {
                    h.flags = flags::SYN | flags::ACK;
                    h.seq = seq.wrapping_add(200_000)
                },
                &[],
            ),
            forged(
                &to_b,
                |h| {
                    h.flags = flags::RST;
                    h.seq = seq.wrapping_add(5_000_000)
                },
                &[],
            ),
            forged(
                &to_b,
                |h| {
                    h.flags = flags::RST | flags::ACK;
                    h.seq = next.wrapping_add(1000 + round)
                },
                &[],
            ),
            forged(
                &to_b,
                |h| {
                    h.flags = flags::ACK;
                    h.seq = next;
                    h.ack = ack.wrapping_add(10_000_000)
                },
                &garbage,
            ),
            forged(
                &to_b,
                |h| {
                    h.flags = flags::ACK;
                    h.seq = seq.wrapping_add(50_000_000)
                },
                &garbage,
            ),
        ];
        let aseq = to_a.hdr.seq;
        let attacks_on_a = [
            forged(
                &to_a,
                |h| {
                    h.flags = flags::SYN;
                    h.seq = aseq.wrapping_add(100_000)
                },
                &[],
            ),
            forged(
                &to_a,
                |h| {
                    h.flags = flags::RST;
                    h.seq = aseq.wrapping_add(5_000_000)
                },
                &[],
            ),
            forged(
                &to_a,
                |h| {
                    h.flags = flags::RST;
                    h.seq = aseq.wrapping_add(1000)
                },
                &[],
            ),
        ];
        for p in attacks_on_b {
            tap.inject(1, p);
        }
        for p in attacks_on_a {
            tap.inject(0, p);
        }
        std::thread::sleep(std::time::Duration::from_millis(150));
    }
    let (got, err) = srv.join().unwrap();
    assert_eq!(err, None, "the server saw an error");
    assert_eq!(
        got.len(),
        size,
        "the server got {} of {size} bytes",
        got.len()
    );
    assert!(got == pattern(size, 3), "received bytes differ");
    client.join().unwrap().expect("the client saw an error");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let reps = run.finish();
    let (a, b) = (&reps[0], &reps[1]);
    assert_eq!(a.reset + b.reset, 0, "{a:?} {b:?}");
    assert_eq!(a.integrity_resets + b.integrity_resets, 0);
    assert!(b.syn_rejected >= 2 && b.rst_rejected >= 2, "{b:?}");
    assert!(b.ack_rejected >= 1 && b.out_of_window >= 1, "{b:?}");
    assert!(a.syn_rejected >= 1 && a.rst_rejected >= 2, "{a:?}");
}

#[test]
fn a_reset_from_the_client_reaches_the_server_at_once_and_discards_what_was_buffered() {
    // The client aborts mid-transfer on a slow link with megabytes still in its socket and
    // in gateway A: the server must get a reset within a round trip or so, not after A has
    // forwarded what it held (3.6 s and 667 kB later, before).
    let (run, server, aport) = pair(
        r#""rate": "2 Mb/s", "delay": "10 ms", "queue": {"packets": 20}"#,
        |c| c.tcp.scps.rate = Some(spacetp_proto::units::Rate(2e6)),
    );
    let srv = serve_one(server);
    let mut s = connect(aport);
    s.set_nonblocking(true).unwrap();
    let data = pattern(8_000_000, 1);
    let mut sent = 0;
    let t0 = std::time::Instant::now();
    while t0.elapsed() < std::time::Duration::from_millis(1500) {
        match s.write(&data[sent..]) {
            Ok(n) => sent += n,
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(5)),
        }
    }
    reset_on_close(&s);
    let aborted = std::time::Instant::now();
    drop(s);
    let (got, err) = srv.join().unwrap();
    let took = aborted.elapsed();
    let reps = run.finish();
    assert_eq!(
        err,
        Some(ErrorKind::ConnectionReset),
        "got {} bytes",
        got.len()
    );
    assert!(
        got[..] == data[..got.len()],
        "the bytes before the reset differ"
    );
    assert!(
        took < std::time::Duration::from_millis(800),
        "the server learned of the abort {took:?} after it (client wrote {sent}, server got {})",
        got.len()
    );
    assert!(
        got.len() + 300_000 < sent,
        "A forwarded what the client had written after the abort ({} of {sent})",
        got.len()
    );
    assert_eq!((reps[0].reset, reps[1].reset), (1, 1));
}

#[test]
fn stopping_a_gateway_resets_both_ends_and_a_drain_lets_transfers_finish() {
    for drain in [None, Some(30 * SEC)] {
        let size = 3_000_000;
        let (run, server, aport) = pair(r#""rate": "10 Mb/s", "delay": "10 ms""#, |c| {
            c.tcp.scps.rate = Some(spacetp_proto::units::Rate(10e6));
            c.drain = drain;
        });
        let srv = serve_one(server);
        let client = std::thread::spawn(move || {
            let mut s = connect(aport);
            let w = s
                .write_all(&pattern(size, 2))
                .and_then(|_| s.shutdown(Shutdown::Write));
            let mut rest = Vec::new();
            w.and_then(|_| s.read_to_end(&mut rest).map(|_| ()))
        });
        std::thread::sleep(std::time::Duration::from_millis(800));
        run.tell(0, STOP);
        let (got, err) = srv.join().unwrap();
        let client = client.join().unwrap();
        let reps = run.finish();
        match drain {
            None => {
                assert_eq!(
                    err,
                    Some(ErrorKind::ConnectionReset),
                    "server: {} bytes",
                    got.len()
                );
                assert!(got.len() < size);
                let e = client.expect_err("the client must see the reset");
                assert!(
                    matches!(e.kind(), ErrorKind::ConnectionReset | ErrorKind::BrokenPipe),
                    "{e:?}"
                );
                assert_eq!(reps[0].reset_on_stop, 1);
                assert_eq!(reps[1].reset, 1, "B was told: {:?}", reps[1]);
            }
            Some(_) => {
                assert_eq!(err, None);
                assert!(got == pattern(size, 2), "drained transfer differs");
                client.expect("the drained client ends cleanly");
                assert_eq!((reps[0].reset_on_stop, reps[0].closed), (0, 1));
                assert!(reps[0].stopped.contains("test"), "{}", reps[0].stopped);
            }
        }
    }
}

#[test]
fn a_stopping_gateway_still_acks_a_retransmitted_fin_while_its_closed_flow_lingers() {
    // Our ACK of the peer's FIN may be lost; the peer then retransmits the FIN and waits for
    // that ACK. A drained stop must not end before the finished flow's TIME-WAIT lingering.
    let (run, server, aport) = pair(r#""rate": "10 Mb/s", "delay": "5 ms""#, |c| {
        c.drain = Some(30 * SEC);
    });
    let srv = serve_one(server);
    let mut c = connect(aport);
    c.write_all(b"hello").unwrap();
    c.shutdown(Shutdown::Write).unwrap();
    let mut rest = Vec::new();
    c.read_to_end(&mut rest).unwrap();
    assert_eq!(srv.join().unwrap(), (b"hello".to_vec(), None));
    let tap = run.tap.clone();
    let is_fin = |s: &Option<Seen>| s.is_some_and(|s| s.hdr.has(flags::FIN));
    assert!(wait_for(std::time::Duration::from_secs(2), || is_fin(
        &tap.seen(0).0
    )));
    let fin = tap.seen(0).0.unwrap();
    std::thread::sleep(std::time::Duration::from_millis(100));
    run.tell(0, STOP);
    std::thread::sleep(std::time::Duration::from_millis(100));
    tap.forget(1);
    tap.inject(0, forged(&fin, |_| {}, b""));
    let acked = wait_for(std::time::Duration::from_secs(1), || {
        tap.seen(1)
            .0
            .is_some_and(|s| s.hdr.has(flags::ACK) && s.hdr.ack == fin.hdr.seq.wrapping_add(1))
    });
    let reps = run.finish();
    assert!(
        acked,
        "the retransmitted FIN got no ACK from the stopping gateway"
    );
    assert_eq!((reps[0].closed, reps[0].reset_on_stop), (1, 0));
}

#[test]
fn a_vanished_peer_gateway_is_noticed_by_keepalive_and_the_client_reset() {
    let (run, server, aport) = pair(r#""rate": "10 Mb/s", "delay": "5 ms""#, |c| {
        c.keepalive = Keepalive {
            idle: SEC,
            interval: 200 * MS,
            probes: 2,
        };
    });
    let srv = std::thread::spawn(move || {
        let (mut s, _) = server.accept().unwrap();
        let mut b = [0u8; 5];
        s.read_exact(&mut b).unwrap();
        s // held open: the server application is fine, its gateway is not
    });
    let mut c = connect(aport);
    c.write_all(b"hello").unwrap();
    let _server_socket = srv.join().unwrap();
    run.tell(1, CRASH);
    let t0 = std::time::Instant::now();
    c.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let mut b = [0u8; 1];
    let r = c.read(&mut b);
    let took = t0.elapsed();
    let reps = run.finish();
    assert!(
        matches!(&r, Err(e) if e.kind() == ErrorKind::ConnectionReset),
        "{r:?}"
    );
    // idle 1 s + 2 probes 200 ms apart + the last probe's wait.
    assert!(took < std::time::Duration::from_secs(3), "{took:?}");
    assert_eq!(reps[0].reaped, 1);
    assert!(reps[0].keepalive_probes >= 2);
}

#[test]
fn a_segment_for_no_flow_is_answered_with_a_reset() {
    // After a restart the surviving gateway's flows get resets at once (RFC 9293).
    let (run, _server, _aport) = pair(r#""rate": "10 Mb/s", "delay": "5 ms""#, |_| {});
    let stray = Seen {
        src: [10, 77, 0, 1],
        dst: [10, 77, 0, 2],
        hdr: TcpHeader {
            src_port: 50000,
            dst_port: 7000,
            seq: 1234,
            ack: 99_999,
            flags: flags::ACK,
            window: 1000,
            ..Default::default()
        },
        len: 0,
    };
    run.tap.inject(1, forged(&stray, |_| {}, b"data"));
    let tap = run.tap.clone();
    let answered = wait_for(std::time::Duration::from_secs(2), || {
        tap.seen(0)
            .0
            .is_some_and(|s| s.hdr.has(flags::RST) && s.hdr.seq == 99_999)
    });
    let reps = run.finish();
    assert!(answered, "no RST at the segment's ACK number reached A");
    assert_eq!((reps[1].foreign, reps[1].rst_replies), (1, 1));
}

#[test]
fn every_attack_class_of_the_selftest_has_its_expected_effect() {
    let rows = crate::selftest::selftest(
        r#""rate": "50 Mb/s", "delay": "10 ms", "errors": {"per": 0.02}"#,
        1_000_000,
        3,
    );
    for r in &rows {
        println!(
            "{:<75} {:>4}  {:<28} {}",
            r.class, r.sent, r.transfer, r.reaction
        );
    }
    assert!(rows.len() >= 10);
    for r in &rows {
        assert!(r.expected, "{r:?}");
        assert!(r.sent > 0, "{r:?}");
    }
}

#[test]
fn a_flood_of_blind_acks_with_snacks_changes_no_relayed_byte() {
    // What spacetp.live.flood's snack_outside class sends, 10 000 a second: ACK segments
    // on a real flow's addresses and ports with random sequence and acknowledgment numbers
    // and a SNACK naming a hole 10 MB away. The receiving gateway answers each with an ACK
    // (RFC 9293), so the sender sees a storm of duplicate ACKs; nothing may be lost.
    let size = 4_000_000;
    let (run, server, aport) = pair(r#""rate": "20 Mb/s", "delay": "20 ms""#, |c| {
        c.tcp.scps.rate = Some(spacetp_proto::units::Rate(8e6));
    });
    let srv = serve_one(server);
    let client = std::thread::spawn(move || {
        let mut s = connect(aport);
        s.write_all(&pattern(size, 5)).unwrap();
        s.shutdown(Shutdown::Write).unwrap();
        let mut rest = Vec::new();
        s.read_to_end(&mut rest).map(|_| rest.len())
    });
    let tap = run.tap.clone();
    assert!(wait_for(std::time::Duration::from_secs(20), || tap
        .seen(1)
        .1
        .is_some()));
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x as u32
    };
    let t0 = std::time::Instant::now();
    while t0.elapsed() < std::time::Duration::from_secs(2) {
        let Some(to_b) = tap.seen(1).1 else { break };
        for _ in 0..100 {
            let (seq, ack) = (rnd(), rnd());
            tap.inject(
                1,
                forged(
                    &to_b,
                    |h| {
                        h.flags = flags::ACK;
                        h.seq = seq;
                        h.ack = ack;
                        h.options.snacks.len = 1;
                        h.options.snacks.items[0].offset = 7142;
                        h.options.snacks.items[0].size = 40;
                    },
                    &[],
                ),
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let (got, err) = srv.join().unwrap();
    let c = client.join().unwrap();
    let reps = run.finish();
    assert_eq!(err, None, "the server saw an error; {reps:?}");
    assert!(
        got == pattern(size, 5),
        "received {} bytes, not the same",
        got.len()
    );
    assert!(c.is_ok(), "{c:?}");
    assert_eq!(reps[0].integrity_resets + reps[1].integrity_resets, 0);
}
