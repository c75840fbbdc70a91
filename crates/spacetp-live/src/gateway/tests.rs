//! Gateway tests: two gateways and the emulator in threads, joined by datagram socket pairs,
//! with kernel-TCP ends on loopback.
use super::*;
use crate::selftest::*;

/// Emulator between two gateways (datagram socket pairs), all in threads; a kernel-TCP
/// client on loopback sends through gateway A, a loopback server behind gateway B echoes
/// what it got back after the client's FIN. With `original`, gateway B has no rule for
/// the port and relays to the destination address the SCPS-TP segments carry.
fn through_gateways(
    link: &str,
    profile: &str,
    flows: usize,
    size: usize,
    original: bool,
) -> Vec<GatewayReport> {
    let server = TcpListener::bind("127.0.0.1:0").unwrap();
    let sport = server.local_addr().unwrap().port();
    let aport = free_port();
    let local = |port| SocketAddr::from(([127, 0, 0, 1], port));
    // With `original`, gateway A addresses the server itself (127.0.0.1:sport), not B.
    let peer_of_a = if original {
        [127, 0, 0, 1]
    } else {
        [10, 77, 0, 2]
    };
    let mut a = config(profile, [10, 77, 0, 1], peer_of_a);
    let mut b = config(profile, [10, 77, 0, 2], [10, 77, 0, 1]);
    if original {
        a.listen = vec![(local(aport), sport)];
        b.forward_original = true;
    } else {
        a.listen = vec![(local(aport), 7000)];
        b.forward = vec![(7000, local(sport))];
    }
    let running = Running::start(link, a, b);
    let srv = std::thread::spawn(move || {
        let mut hs = Vec::new();
        for _ in 0..flows {
            let (mut s, _) = server.accept().unwrap();
            hs.push(std::thread::spawn(move || {
                let mut got = Vec::new();
                s.read_to_end(&mut got).unwrap();
                s.write_all(&got[..1000.min(got.len())]).unwrap();
                got
            }));
        }
        hs.into_iter()
            .map(|h| h.join().unwrap())
            .collect::<Vec<_>>()
    });
    let clients: Vec<_> = (0..flows)
        .map(|i| {
            std::thread::spawn(move || {
                let data = pattern(size, i as u8);
                let mut s = connect(aport);
                s.write_all(&data).unwrap();
                s.shutdown(Shutdown::Write).unwrap();
                let mut back = Vec::new();
                s.read_to_end(&mut back).unwrap();
                assert_eq!(back, data[..1000.min(size)]);
            })
        })
        .collect();
    for c in clients {
        c.join().unwrap();
    }
    let mut got = srv.join().unwrap();
    got.sort_by_key(|g| g[0]);
    let mut want: Vec<_> = (0..flows).map(|i| pattern(size, i as u8)).collect();
    want.sort_by_key(|g| g[0]);
    for (g, w) in got.iter().zip(&want) {
        assert!(g == w, "received bytes differ");
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let reps = running.finish();
    assert_eq!(reps[0].accepted, flows as u64);
    assert_eq!(reps[1].admitted, flows as u64);
    assert_eq!(reps[1].bytes_down, (flows * size) as u64);
    reps
}

#[test]
fn compresses_headers_when_both_offer_comp() {
    // scps-2a offers COMP: after the SYNs, both directions travel as IP protocol 105,
    // under loss (a header whose omitted fields went with a lost packet must still decode
    // right, or the bytes would differ), with three connections sharing the address pair.
    let reps = through_gateways(
        r#""rate": "50 Mb/s", "delay": "5 ms", "errors": {"per": 0.02}"#,
        "scps-2a",
        3,
        300_000,
        false,
    );
    for r in &reps {
        assert!(r.compressed_out > 100 && r.compressed_in > 10, "{r:?}");
        assert_eq!(r.compressed_bad, 0, "{r:?}");
    }
    // Without COMP nothing is compressed.
    let reps = through_gateways(
        r#""rate": "50 Mb/s", "delay": "5 ms""#,
        "scps-tp",
        1,
        100_000,
        false,
    );
    assert!(reps
        .iter()
        .all(|r| r.compressed_out == 0 && r.compressed_in == 0));
}

#[test]
fn relays_exact_bytes() {
    through_gateways(
        r#""rate": "50 Mb/s", "delay": "5 ms""#,
        "scps-tp",
        1,
        1_000_000,
        false,
    );
}

#[test]
fn relays_to_the_destination_the_segments_carry() {
    through_gateways(
        r#""rate": "50 Mb/s", "delay": "5 ms", "errors": {"per": 0.01}"#,
        "scps-tp",
        3,
        200_000,
        true,
    );
}

#[test]
fn connections_share_the_link_rate() {
    // The gateways' rate is 20 Mb/s: four connections of 1 MB each (over 4 MB of packets)
    // need at least 1.6 s through one shared bucket; each paced at the rate on its own they
    // would send 80 Mb/s and be done in a quarter of that.
    let t0 = std::time::Instant::now();
    through_gateways(
        r#""rate": "100 Mb/s", "delay": "5 ms""#,
        "scps-nucc",
        4,
        1_000_000,
        false,
    );
    let took = t0.elapsed().as_secs_f64();
    assert!(took > 4e6 * 8.0 / 20e6, "4 x 1 MB in {took:.2} s");
}

#[test]
fn relays_under_loss_and_in_parallel() {
    through_gateways(
        r#""rate": "50 Mb/s", "delay": "5 ms", "errors": {"per": 0.02}"#,
        "scps-tp",
        5,
        300_000,
        false,
    );
}

#[test]
fn configuration_errors_name_the_setting() {
    let err = |j: &str| config_from_json(j).unwrap_err().to_string();
    assert!(err(r#"{"intercept": "0.0.0.0:99999"}"#).starts_with("gateway.intercept:"));
    assert!(err(r#"{"forward_original": "yes"}"#).starts_with("gateway.forward_original:"));
    assert!(err(r#"{"local": "10.0.0.1"}"#).contains("nothing to do"));
    assert!(err(r#"{"listen": [["1.2.3.4:5", 6]]}"#).starts_with("gateway.local:"));
    assert!(
        err(r#"{"forward": [[0, "1.2.3.4:5"]], "local": "1.1.1.1", "peer": "1.1.1.2"}"#)
            .starts_with("gateway.forward[0]:")
    );
    assert!(err(r#"{"intercept": "0.0.0.0:1", "mtu": 20}"#).starts_with("gateway.mtu:"));
    assert!(err(r#"{"intercepts": 1}"#).starts_with("gateway.intercepts: unknown"));
    let t = r#""intercept": "0.0.0.0:1""#;
    assert!(err(&format!(r#"{{{t}, "drain_s": -1}}"#)).starts_with("gateway.drain_s: -1 "));
    assert!(err(&format!(r#"{{{t}, "keepalive_probes": 0}}"#))
        .starts_with("gateway.keepalive_probes: 0 "));
    assert!(err(&format!(r#"{{{t}, "listen": [["1.2.3.4:5", "x"]]}}"#))
        .starts_with("gateway.listen[0]"));
    assert!(
        err(&format!(r#"{{{t}, "tcp": {{"scps": {{"bets": "1 s"}}}}}}"#))
            .starts_with("gateway.tcp.scps.bets: BETS gives up missing bytes")
    );
    assert!(err(&format!(r#"{{{t}, "protocol": "tcp-x"}}"#))
        .starts_with("gateway.protocol: unknown protocol"));
    // Transparent relaying alone needs no addresses of the gateways.
    let c = config_from_json(r#"{"intercept": "0.0.0.0:5999", "forward_original": true}"#).unwrap();
    assert_eq!(c.intercept, Some("0.0.0.0:5999".parse().unwrap()));
    assert!(c.forward_original && c.local_ip.is_unspecified());
}

#[test]
fn refused_port_resets_the_client() {
    let aport = free_port();
    let mut a = config("scps-tp", [10, 77, 0, 1], [10, 77, 0, 2]);
    a.listen = vec![(SocketAddr::from(([127, 0, 0, 1], aport)), 7001)];
    let b = config("scps-tp", [10, 77, 0, 2], [10, 77, 0, 1]);
    let running = Running::start(r#""rate": "10 Mb/s", "delay": "2 ms""#, a, b);
    let mut s = connect(aport);
    s.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    let mut b = [0u8; 10];
    let r = s.read(&mut b);
    assert!(
        matches!(&r, Err(e) if e.kind() == ErrorKind::ConnectionReset),
        "{r:?}"
    );
    let reps = running.finish();
    assert_eq!(reps[1].refused, 1);
    assert_eq!(reps[0].reset, 1);
}

// ----- exact relaying under attack, aborts, stopping, vanished peers (issue 14) -----

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
fn the_schema_names_every_setting() {
    let schema: serde_json::Value = serde_json::from_str(&schema()).unwrap();
    let props = schema["properties"].as_object().unwrap();
    for key in [
        "protocol",
        "tcp",
        "mtu",
        "local",
        "peer",
        "listen",
        "forward",
        "intercept",
        "forward_original",
        "duration_s",
        "drain_s",
        "keepalive_s",
        "keepalive_interval_s",
        "keepalive_probes",
    ] {
        assert!(props.contains_key(key), "{key} missing from the schema");
    }
    assert_eq!(schema["additionalProperties"], serde_json::json!(false));
}

#[test]
fn an_idle_connection_is_reaped_after_the_idle_timeout_and_logged() {
    let (run, server, aport) = pair(r#""rate": "10 Mb/s", "delay": "5 ms""#, |c| {
        c.idle_timeout = Some(SEC);
    });
    let srv = std::thread::spawn(move || {
        let (mut s, _) = server.accept().unwrap();
        let mut b = [0u8; 5];
        s.read_exact(&mut b).unwrap();
        s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
            .unwrap();
        s.read(&mut b).map(|n| n as i64)
    });
    let mut c = connect(aport);
    c.write_all(b"hello").unwrap();
    let t0 = std::time::Instant::now();
    c.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let mut b = [0u8; 1];
    let r = c.read(&mut b);
    let took = t0.elapsed();
    let at_server = srv.join().unwrap();
    let events = run.events.clone();
    let reps = run.finish();
    // Both ends reset, after the idle second (keepalives answered all along).
    assert!(
        matches!(&r, Err(e) if e.kind() == ErrorKind::ConnectionReset),
        "{r:?}"
    );
    assert!(
        matches!(&at_server, Err(e) if e.kind() == ErrorKind::ConnectionReset),
        "{at_server:?}"
    );
    assert!(took >= std::time::Duration::from_millis(900), "{took:?}");
    assert!(took < std::time::Duration::from_secs(5), "{took:?}");
    // Both gateways have the timeout; whichever reaps first resets the other's half.
    let reaped: u64 = reps.iter().map(|r| r.idle_reaped).sum();
    assert!((1..=2).contains(&reaped), "{reaped}");
    // The log: each side opened connection 1 and ended it; the reaping side says why.
    for (side, log) in events.iter().enumerate() {
        let log = log.lock().unwrap();
        assert_eq!(log[0]["event"], "open", "{log:?}");
        assert_eq!(log[0]["conn"], 1);
        let close = log.iter().find(|e| e["event"] == "close").unwrap();
        assert_eq!(
            (close["conn"].as_u64(), close["how"].as_str()),
            (Some(1), Some("reset"))
        );
        assert_eq!(
            close["bytes_up"].as_u64().unwrap() + close["bytes_down"].as_u64().unwrap(),
            5,
            "side {side}"
        );
    }
    let causes: Vec<_> = events
        .iter()
        .map(|l| {
            l.lock()
                .unwrap()
                .iter()
                .find(|e| e["event"] == "close")
                .unwrap()["cause"]
                .clone()
        })
        .collect();
    assert!(causes.contains(&serde_json::json!("idle")), "{causes:?}");
}

#[test]
fn a_handshake_slower_than_the_idle_timeout_is_not_reaped_as_idle() {
    // 800 ms one way: the handshake alone outlasts the 1 s idle timeout. Idle time counts
    // from the handshake's end, so the bytes still arrive; the reset comes a second later.
    let (run, server, aport) = pair(r#""rate": "10 Mb/s", "delay": "800 ms""#, |c| {
        c.idle_timeout = Some(SEC);
    });
    let srv = std::thread::spawn(move || {
        // Polled, so that a connection that never comes fails the test instead of hanging it.
        server.set_nonblocking(true).unwrap();
        let t0 = std::time::Instant::now();
        let mut s = loop {
            match server.accept() {
                Ok((s, _)) => break s,
                Err(_) if t0.elapsed() < std::time::Duration::from_secs(10) => {
                    std::thread::sleep(std::time::Duration::from_millis(10))
                }
                Err(e) => return Err(e),
            }
        };
        s.set_nonblocking(false)?;
        let mut b = [0u8; 5];
        s.read_exact(&mut b).map(|_| b)
    });
    let mut c = connect(aport);
    c.write_all(b"hello").unwrap();
    c.set_read_timeout(Some(std::time::Duration::from_secs(15)))
        .unwrap();
    let mut b = [0u8; 1];
    let r = c.read(&mut b);
    let at_server = srv.join().unwrap();
    let reps = run.finish();
    assert!(
        matches!(&at_server, Ok(b) if b == b"hello"),
        "{at_server:?}"
    );
    assert!(
        matches!(&r, Err(e) if e.kind() == ErrorKind::ConnectionReset),
        "{r:?}"
    );
    assert!(reps.iter().map(|r| r.idle_reaped).sum::<u64>() >= 1);
}

/// A client sends 1000 bytes and closes its side; the server reads them to the end,
/// answers "ok" and closes: a half-closed exchange, checked at both ends.
fn request_and_answer(server: TcpListener, aport: u16) {
    let srv = std::thread::spawn(move || {
        let (mut s, _) = server.accept().unwrap();
        let mut got = Vec::new();
        s.read_to_end(&mut got).unwrap();
        s.write_all(b"ok").unwrap();
        got.len()
    });
    let mut c = connect(aport);
    c.write_all(&[7u8; 1000]).unwrap();
    c.shutdown(Shutdown::Write).unwrap();
    let mut back = Vec::new();
    c.read_to_end(&mut back).unwrap();
    assert_eq!((srv.join().unwrap(), back.as_slice()), (1000, &b"ok"[..]));
}

#[test]
fn a_socket_shut_both_ways_does_not_make_the_loop_spin() {
    // The server answers and closes while gateway B's FIN still crosses a 1 s round trip:
    // B's kernel socket is then shut both ways, and poll reports POLLHUP on it at once,
    // every time it is asked. The loop must stop asking, not wake thousands of times a second.
    let (run, server, aport) = pair(r#""rate": "10 Mb/s", "delay": "500 ms""#, |_| {});
    let t0 = std::time::Instant::now();
    request_and_answer(server, aport);
    std::thread::sleep(std::time::Duration::from_secs(2)); // B's FIN exchange ends meanwhile
    let secs = t0.elapsed().as_secs_f64();
    let reps = run.finish();
    assert_eq!((reps[0].closed, reps[1].closed), (1, 1));
    for r in &reps {
        // At rest the loop wakes every 50 ms; a few segments add a few wake-ups each.
        assert!(
            (r.wakeups as f64) < 60.0 * secs,
            "{} wake-ups in {secs:.1} s",
            r.wakeups
        );
    }
}

#[test]
fn a_handshake_that_ends_during_an_outage_enters_persist_mode_too() {
    // The link-down notice reaches A while its SYN-ACK is still crossing (500 ms one way):
    // the connection is established in the outage and must hold its data like those open
    // when the notice came, not send it and time out (the soak's resets: "data timed out").
    // The notice alone marks the outage here; the link itself stays up.
    let (run, server, aport) = pair(r#""rate": "10 Mb/s", "delay": "500 ms""#, |_| {});
    let srv = serve_one(server);
    let mut c = connect(aport);
    std::thread::sleep(std::time::Duration::from_millis(200)); // A's SYN is on its way
    run.notify(0, crate::LINK_DOWN);
    c.write_all(&[5u8; 20_000]).unwrap();
    std::thread::sleep(std::time::Duration::from_secs(3));
    let held = run.tap.seen(1).1.is_none();
    run.notify(0, crate::LINK_UP);
    c.shutdown(Shutdown::Write).unwrap();
    let (got, err) = srv.join().unwrap();
    let reps = run.finish();
    assert!(held, "A sent data during the outage it was told of");
    assert_eq!((got.len(), err), (20_000, None));
    assert_eq!((reps[0].link_down_notices, reps[0].reset), (1, 0));
}

#[test]
fn a_finished_flow_outlives_an_outage_that_ate_its_last_ack() {
    // B's FIN reaches A, and an outage begins before A's ACK of it reaches B: B (LAST-ACK)
    // resends its FIN when the link is back. A's finished flow must still be there to
    // acknowledge it (a TIME-WAIT does not run out while the peer cannot speak), not answer
    // with a reset that ends a connection whose every byte was delivered (the soak's resets).
    let (run, server, aport) = pair(r#""rate": "10 Mb/s", "delay": "20 ms""#, |_| {});
    run.tap
        .cut_after_fin_to
        .store(1, std::sync::atomic::Ordering::Relaxed);
    request_and_answer(server, aport);
    assert!(
        run.tap.cut.load(std::sync::atomic::Ordering::Relaxed),
        "the outage did not begin"
    );
    run.notify(0, crate::LINK_DOWN);
    run.notify(1, crate::LINK_DOWN);
    std::thread::sleep(std::time::Duration::from_secs(4)); // twice A's lingering
    run.tap
        .cut
        .store(false, std::sync::atomic::Ordering::Relaxed);
    run.notify(0, crate::LINK_UP);
    run.notify(1, crate::LINK_UP);
    std::thread::sleep(std::time::Duration::from_secs(2));
    let events = run.events.clone();
    let reps = run.finish();
    let ends: Vec<_> = events
        .iter()
        .map(|l| {
            let l = l.lock().unwrap();
            let e = l.iter().find(|e| e["event"] == "close").cloned();
            e.map(|e| (e["how"].clone(), e["cause"].clone()))
        })
        .collect();
    assert_eq!((reps[0].rst_replies, reps[1].reset), (0, 0), "{ends:?}");
    assert_eq!((reps[0].closed, reps[1].closed), (1, 1), "{ends:?}");
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

#[test]
fn relays_exact_bytes_over_an_ipv6_link_between_ipv6_ends() {
    // IPv6 end to end: the client connects to gateway A on [::1], the SCPS-TP segments
    // cross the link as IPv6 packets between fd00::1 and fd00::2 (under loss), gateway B
    // connects to the server on [::1]. Every packet the tap saw was IPv6 with a good
    // checksum.
    let server = TcpListener::bind("[::1]:0").unwrap();
    let sport = server.local_addr().unwrap().port();
    let aport = {
        let probe = TcpListener::bind("[::1]:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let v6 = |s: &str| s.parse::<std::net::IpAddr>().unwrap();
    let mut a = config("scps-tp", [0; 4], [0; 4]);
    let mut b = config("scps-tp", [0; 4], [0; 4]);
    (a.local_ip, a.peer_ip) = (v6("fd00::1"), v6("fd00::2"));
    (b.local_ip, b.peer_ip) = (v6("fd00::2"), v6("fd00::1"));
    a.listen = vec![(SocketAddr::new(v6("::1"), aport), 7000)];
    b.forward = vec![(7000, SocketAddr::new(v6("::1"), sport))];
    let run = Running::start(
        r#""rate": "50 Mb/s", "delay": "5 ms", "errors": {"per": 0.01}"#,
        a,
        b,
    );
    let srv = serve_one(server);
    let size = 1_000_000;
    // Gateway A listens once its thread has started.
    let mut c = (0..100)
        .find_map(|_| {
            TcpStream::connect(("::1", aport))
                .map_err(|_| std::thread::sleep(std::time::Duration::from_millis(50)))
                .ok()
        })
        .expect("gateway A listens on [::1]");
    c.write_all(&pattern(size, 9)).unwrap();
    c.shutdown(Shutdown::Write).unwrap();
    let (got, err) = srv.join().unwrap();
    let reps = run.finish();
    assert_eq!(err, None);
    assert!(
        got == pattern(size, 9),
        "received {} bytes, not the same",
        got.len()
    );
    assert_eq!(
        (reps[0].accepted, reps[1].admitted, reps[1].bytes_down),
        (1, 1, size as u64)
    );
    assert!(reps[0].retransmitted_segments > 0, "the loss was repaired");
    for r in &reps {
        assert_eq!(
            (r.undecodable, r.bad_checksum, r.integrity_resets),
            (0, 0, 0),
            "{r:?}"
        );
        assert_eq!(r.peers.len(), 1);
        assert!(r.peers[0].peer.starts_with("fd00::"), "{:?}", r.peers);
    }
}
