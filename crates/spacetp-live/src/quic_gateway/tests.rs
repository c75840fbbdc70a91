//! A QUIC gateway pair in threads of this process over the emulator (no root): kernel-TCP
//! ends on loopback, the tunnel's IPv4/UDP packets on datagram socket pairs.

use super::*;
use crate::carrier::{any_config_from_json, AnyConfig};
use crate::selftest::{free_port, pattern, wait_for};
use crate::{Emulator, Options};
use spacetp_proto::MS;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpStream};
use std::os::unix::net::UnixDatagram;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// The certificate and key files the pair shares, made once per test process.
fn tls_files() -> (String, String) {
    static FILES: std::sync::OnceLock<(String, String)> = std::sync::OnceLock::new();
    FILES
        .get_or_init(|| {
            let dir = std::env::temp_dir().join(format!("spacetp-qgw-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let (c, k) = spacetp_quic::tls::make_pem_pair(spacetp_quic::tls::GATEWAY_NAME);
            let (cp, kp) = (dir.join("cert.pem"), dir.join("key.pem"));
            std::fs::write(&cp, c).unwrap();
            std::fs::write(&kp, k).unwrap();
            (cp.display().to_string(), kp.display().to_string())
        })
        .clone()
}

fn config(json: serde_json::Value) -> QuicGatewayConfig {
    let (c, k) = tls_files();
    let mut j = json;
    j["tls_cert"] = c.into();
    j["tls_key"] = k.into();
    match any_config_from_json(&j.to_string()).unwrap() {
        AnyConfig::Quic(q) => q,
        AnyConfig::Scps(_) => panic!("a quic protocol makes a QUIC gateway"),
    }
}

const STOP: u8 = 1;
/// Vanish without a word: the gateway is dropped, as a panic's unwinding drops it.
const CRASH: u8 = 2;

struct Pair {
    stop: Arc<AtomicBool>,
    ctl: [Arc<AtomicU8>; 2],
    em: JoinHandle<()>,
    gws: Vec<JoinHandle<QuicGatewayReport>>,
}

impl Pair {
    /// Gateways A (listening on the returned port, rule 7000) and B (7000 -> `dst`) over
    /// `link`; `b_runs` false leaves B out (an unreachable peer).
    fn start(link: &str, quic: serde_json::Value, dst: u16, b_runs: bool) -> (Pair, u16) {
        let aport = free_port();
        let a = config(serde_json::json!({
            "protocol": "quic-cubic", "quic": quic.clone(), "local": "10.77.0.1", "peer": "10.77.0.2",
            "listen": [[format!("127.0.0.1:{aport}"), 7000]]}));
        let b = config(serde_json::json!({
            "protocol": "quic-cubic", "quic": quic, "local": "10.77.0.2", "peer": "10.77.0.1",
            "forward": [[7000, format!("127.0.0.1:{dst}")]]}));
        let (ga, ea) = UnixDatagram::pair().unwrap();
        let (gb, eb) = UnixDatagram::pair().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let sc = crate::scenario_json(7, link);
        let st = stop.clone();
        let em = std::thread::spawn(move || {
            let mut e =
                Emulator::new(&sc, ea.as_raw_fd(), eb.as_raw_fd(), &Options::default()).unwrap();
            while !st.load(Ordering::Relaxed) && e.run_for(20 * MS) {}
        });
        let ctl: [Arc<AtomicU8>; 2] = Default::default();
        let mut gws = Vec::new();
        for (i, (cfg, fd)) in [(a, ga), (b, gb)].into_iter().enumerate() {
            if i == 1 && !b_runs {
                std::mem::forget(fd);
                continue;
            }
            let (st, ctl) = (stop.clone(), ctl[i].clone());
            gws.push(std::thread::spawn(move || {
                let link = Link::packets(fd.as_raw_fd(), cfg.local).unwrap();
                let mut g = QuicGateway::new(cfg, link).unwrap();
                let mut stopping = false;
                while !st.load(Ordering::Relaxed) {
                    if ctl.load(Ordering::Relaxed) == CRASH {
                        return g.report();
                    }
                    if ctl.load(Ordering::Relaxed) == STOP && !stopping {
                        g.begin_stop("test");
                        stopping = true;
                    }
                    if !g.run_for(20_000_000) {
                        break;
                    }
                }
                drop(fd);
                g.report()
            }));
        }
        (Pair { stop, ctl, em, gws }, aport)
    }

    fn finish(self) -> Vec<QuicGatewayReport> {
        self.stop.store(true, Ordering::Relaxed);
        let reps = self.gws.into_iter().map(|g| g.join().unwrap()).collect();
        self.em.join().unwrap();
        reps
    }
}

fn connect(port: u16) -> TcpStream {
    for _ in 0..200 {
        if let Ok(s) = TcpStream::connect((Ipv4Addr::LOCALHOST, port)) {
            return s;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("nothing listens on port {port}");
}

/// Read to EOF: the bytes, and the error that ended the read instead (None: a clean EOF).
fn read_all(s: &mut TcpStream) -> (Vec<u8>, Option<std::io::ErrorKind>) {
    let mut got = Vec::new();
    let mut b = vec![0u8; 65_536];
    loop {
        match s.read(&mut b) {
            Ok(0) => return (got, None),
            Ok(n) => got.extend_from_slice(&b[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return (got, Some(e.kind())),
        }
    }
}

/// A server that reads each connection to its end, then answers `back` bytes and closes.
fn echo_server(n: usize, back: usize) -> (u16, JoinHandle<Vec<Vec<u8>>>) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let h = std::thread::spawn(move || {
        let mut conns = Vec::new();
        for _ in 0..n {
            let (s, _) = l.accept().unwrap();
            conns.push(std::thread::spawn(move || {
                let mut s = s;
                let (got, err) = read_all(&mut s);
                assert_eq!(err, None, "the server's read ended in an error");
                s.write_all(&pattern(back, 9)).unwrap();
                got
            }));
        }
        conns.into_iter().map(|c| c.join().unwrap()).collect()
    });
    (port, h)
}

const LOSSY: &str = r#""rate": "40 Mb/s", "delay": "20 ms", "errors": {"per": 0.01}"#;

#[test]
fn a_transfer_crosses_a_lossy_link_exactly_both_ways_through_one_stream() {
    let (sport, server) = echo_server(1, 300_000);
    let (pair, aport) = Pair::start(LOSSY, serde_json::json!({}), sport, true);
    let mut c = connect(aport);
    let data = pattern(2_000_000, 3);
    c.write_all(&data).unwrap();
    c.shutdown(std::net::Shutdown::Write).unwrap();
    let (back, err) = read_all(&mut c);
    assert_eq!(err, None);
    assert!(
        back == pattern(300_000, 9),
        "the answer arrived exactly ({} B)",
        back.len()
    );
    let got = server.join().unwrap();
    assert!(
        got[0] == data,
        "the upload arrived exactly ({} B)",
        got[0].len()
    );
    assert!(wait_for(std::time::Duration::from_secs(5), || true));
    std::thread::sleep(std::time::Duration::from_millis(300));
    let reps = pair.finish();
    let (a, b) = (&reps[0], &reps[1]);
    assert_eq!((a.accepted, b.admitted), (1, 1));
    assert_eq!(
        (a.closed, b.closed, a.reset, b.reset),
        (1, 1, 0, 0),
        "{a:?}\n{b:?}"
    );
    assert_eq!((a.bytes_up, b.bytes_down), (2_000_000, 2_000_000));
    assert_eq!((b.bytes_up, a.bytes_down), (300_000, 300_000));
    assert!(
        a.quic.packets_lost > 0,
        "PER 1% loses packets that QUIC repaired: {a:?}"
    );
    assert_eq!(a.handshakes, 1);
}

/// `quic.max_pacing_rate` holds the tunnel's datagrams to the cap: 250 kB at 1 Mb/s
/// (headers included) takes at least 2 s of wall time on a 40 Mb/s link that would carry it
/// in a tenth of that. (Only a lower bound: a loaded machine makes it slower, never faster.)
#[test]
fn a_capped_tunnel_sends_no_faster_than_its_cap() {
    let (sport, server) = echo_server(1, 0);
    let quic = serde_json::json!({"max_pacing_rate": "1 Mb/s"});
    let (pair, aport) = Pair::start(r#""rate": "40 Mb/s", "delay": "5 ms""#, quic, sport, true);
    let mut c = connect(aport);
    let data = pattern(250_000, 5);
    let t0 = std::time::Instant::now();
    c.write_all(&data).unwrap();
    c.shutdown(std::net::Shutdown::Write).unwrap();
    let (_, err) = read_all(&mut c);
    let took = t0.elapsed().as_secs_f64();
    assert_eq!(err, None);
    assert!(
        server.join().unwrap()[0] == data,
        "the upload arrived exactly"
    );
    assert!(took >= 2.0, "250 kB crossed a 1 Mb/s cap in {took:.2} s");
    pair.finish();
}

#[test]
fn twenty_connections_at_once_are_streams_of_one_tunnel_connection() {
    let (sport, server) = echo_server(20, 10_000);
    let (pair, aport) = Pair::start(LOSSY, serde_json::json!({}), sport, true);
    let clients: Vec<_> = (0..20)
        .map(|i| {
            std::thread::spawn(move || {
                let mut c = connect(aport);
                c.write_all(&pattern(100_000, i)).unwrap();
                c.shutdown(std::net::Shutdown::Write).unwrap();
                read_all(&mut c)
            })
        })
        .collect();
    for c in clients {
        let (back, err) = c.join().unwrap();
        assert_eq!(err, None);
        assert!(back == pattern(10_000, 9));
    }
    let mut got = server.join().unwrap();
    got.sort();
    let mut want: Vec<Vec<u8>> = (0..20).map(|i| pattern(100_000, i)).collect();
    want.sort();
    assert!(got == want, "every upload arrived exactly");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let reps = pair.finish();
    assert_eq!(
        reps[0].handshakes, 1,
        "one tunnel connection carries them all"
    );
    assert_eq!((reps[0].closed, reps[1].closed), (20, 20));
}

#[test]
fn a_destination_that_refuses_resets_the_client() {
    let closed = free_port();
    let (pair, aport) = Pair::start(LOSSY, serde_json::json!({}), closed, true);
    let mut c = connect(aport);
    c.write_all(b"hello").unwrap();
    let (_, err) = read_all(&mut c);
    assert_eq!(err, Some(std::io::ErrorKind::ConnectionReset));
    let reps = pair.finish();
    assert_eq!(reps[1].refused, 1);
}

#[test]
fn an_end_host_reset_resets_the_far_end() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let sport = l.local_addr().unwrap().port();
    let (pair, aport) = Pair::start(LOSSY, serde_json::json!({}), sport, true);
    let c = connect(aport);
    (&c).write_all(&pattern(50_000, 1)).unwrap();
    let (mut s, _) = l.accept().unwrap();
    let mut b = vec![0u8; 50_000];
    s.read_exact(&mut b).unwrap();
    crate::gateway::reset_on_close(&c);
    drop(c);
    let (_, err) = read_all(&mut s);
    assert_eq!(err, Some(std::io::ErrorKind::ConnectionReset));
    let reps = pair.finish();
    assert_eq!((reps[0].reset, reps[1].reset), (1, 1));
}

#[test]
fn an_unreachable_peer_resets_the_waiting_clients_when_the_handshake_times_out() {
    let (pair, aport) = Pair::start(
        LOSSY,
        serde_json::json!({"max_idle_timeout": "1 s"}),
        9,
        false,
    );
    let mut c = connect(aport);
    let t0 = std::time::Instant::now();
    let (_, err) = read_all(&mut c);
    assert_eq!(err, Some(std::io::ErrorKind::ConnectionReset));
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        t0.elapsed()
    );
    let reps = pair.finish();
    assert_eq!(reps[0].handshakes, 0);
    assert!(!reps[0].tunnel_failures.is_empty());
}

#[test]
fn a_stopping_gateway_resets_open_relays_on_both_sides() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let sport = l.local_addr().unwrap().port();
    let (pair, aport) = Pair::start(LOSSY, serde_json::json!({}), sport, true);
    let mut c = connect(aport);
    c.write_all(b"open").unwrap();
    let (mut s, _) = l.accept().unwrap();
    let mut b = [0u8; 4];
    s.read_exact(&mut b).unwrap();
    pair.ctl[0].store(STOP, Ordering::Relaxed);
    let (_, err_c) = read_all(&mut c);
    let (_, err_s) = read_all(&mut s);
    assert_eq!(err_c, Some(std::io::ErrorKind::ConnectionReset));
    assert_eq!(err_s, Some(std::io::ErrorKind::ConnectionReset));
    let reps = pair.finish();
    assert_eq!(reps[0].reset_on_stop, 1);
    assert!(reps[0].stopped.contains("test"), "{}", reps[0].stopped);
}

#[test]
fn bad_settings_name_their_key() {
    let (c, k) = tls_files();
    let err = |j: serde_json::Value| {
        any_config_from_json(&j.to_string())
            .err()
            .unwrap()
            .to_string()
    };
    let base = serde_json::json!({"protocol": "quic", "local": "10.0.0.1", "peer": "10.0.0.2",
        "listen": [["127.0.0.1:1", 7]], "tls_cert": c, "tls_key": k});
    let with = |k: &str, v: serde_json::Value| {
        let mut j = base.clone();
        j[k] = v;
        j
    };
    assert!(err(with("tcp", serde_json::json!({"sack": true})))
        .starts_with("gateway.tcp: is not a setting of a QUIC gateway"));
    assert!(err(with("quic", serde_json::json!({"initial_rtt": "0 s"})))
        .starts_with("gateway.quic.initial_rtt:"));
    // A live peer reads real packets: the simulator's sizes-only mode is refused.
    let sizes = err(with("quic", serde_json::json!({"crypto": "sizes"})));
    assert!(sizes.starts_with("gateway.quic.crypto:") && sizes.contains("real packets"));
    assert!(err(with("mtu", 1000.into())).starts_with("gateway.mtu:"));
    assert!(err(with("quic_port", 0.into())).starts_with("gateway.quic_port:"));
    let mut j = base.clone();
    j.as_object_mut().unwrap().remove("tls_cert");
    assert!(err(j).starts_with("gateway.tls_cert: a QUIC gateway pair shares"));
    let mut j = base.clone();
    j.as_object_mut().unwrap().remove("peer");
    assert!(err(j).starts_with("gateway.peer:"));
    let scps = serde_json::json!({"protocol": "scps-tp", "local": "10.0.0.1", "peer": "10.0.0.2",
        "listen": [["127.0.0.1:1", 7]], "quic_port": 4433});
    assert!(err(scps).starts_with("gateway.quic_port: is not a setting of an SCPS-TP"));
}

/// Exact or reset: the end host behind a gateway that dies mid-transfer reads a reset,
/// never a clean end of a truncated stream. `upload`: the client sends and B dies;
/// otherwise the server sends and A dies.
fn a_crash_resets_the_receiving_end_host(upload: bool) {
    const SIZE: usize = 20_000_000;
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let sport = l.local_addr().unwrap().port();
    let (pair, aport) = Pair::start(
        r#""rate": "20 Mb/s", "delay": "5 ms""#,
        serde_json::json!({}),
        sport,
        true,
    );
    let sender = move |mut s: TcpStream| {
        let _ = s.write_all(&pattern(SIZE, 4)); // ends with a reset, sooner or later
    };
    let mut receiver = if upload {
        let c = connect(aport);
        std::thread::spawn(move || sender(c));
        l.accept().unwrap().0
    } else {
        std::thread::spawn(move || sender(l.accept().unwrap().0));
        connect(aport)
    };
    let mut got = 0;
    let mut b = vec![0u8; 65_536];
    while got < 300_000 {
        let n = receiver.read(&mut b).unwrap();
        assert!(n > 0, "the stream ended before the crash");
        got += n;
    }
    pair.ctl[if upload { 1 } else { 0 }].store(CRASH, Ordering::Relaxed);
    receiver
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let (rest, end) = read_all(&mut receiver);
    pair.finish();
    let n = got + rest.len();
    assert!(n < SIZE, "the transfer completed before the crash");
    assert_eq!(
        end,
        Some(std::io::ErrorKind::ConnectionReset),
        "read {n} of {SIZE} bytes, then {end:?} (None: a clean end-of-stream)"
    );
}

#[test]
fn a_crashed_gateway_resets_the_server_of_an_upload_never_a_clean_end() {
    a_crash_resets_the_receiving_end_host(true);
}

#[test]
fn a_crashed_gateway_resets_the_client_of_a_download_never_a_clean_end() {
    a_crash_resets_the_receiving_end_host(false);
}
