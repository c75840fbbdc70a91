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
