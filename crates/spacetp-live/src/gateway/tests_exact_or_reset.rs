//! Exact or reset: a gateway that dies mid-transfer never lets an end host read a truncated
//! stream as complete. The harness's CRASH drops the gateway without a word, as a panic's
//! unwinding does (the kernel's close of a killed process's sockets is the same close; the
//! SIGKILL and SIGABRT runs are in tests/test_gateway_kill.py).
use super::*;
use crate::selftest::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

const LINK: &str = r#""rate": "20 Mb/s", "delay": "5 ms""#;
const SIZE: usize = 20_000_000;
/// What the receiving end host must have before the gateway dies: mid-transfer.
const BEFORE_CRASH: usize = 300_000;

/// Read `s` to its end: the bytes and how it ended (None: a clean end-of-stream).
fn read_until_end(s: &mut TcpStream, got: &AtomicUsize) -> Option<ErrorKind> {
    let mut b = vec![0u8; 65_536];
    loop {
        match s.read(&mut b) {
            Ok(0) => return None,
            Ok(n) => {
                got.fetch_add(n, Ordering::Relaxed);
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Some(e.kind()),
        }
    }
}

#[test]
fn a_crashed_receiving_side_gateway_resets_the_server_never_a_clean_end() {
    // Upload: client -> A -> B -> server; B dies once the server has 300 kB of 20 MB.
    let (run, server, aport) = pair(LINK, |_| {});
    let got = Arc::new(AtomicUsize::new(0));
    let g = got.clone();
    let srv = std::thread::spawn(move || {
        let (mut s, _) = server.accept().unwrap();
        read_until_end(&mut s, &g)
    });
    let client = std::thread::spawn(move || {
        let mut c = connect(aport);
        let _ = c.write_all(&pattern(SIZE, 1)); // ends with a reset, sooner or later
    });
    assert!(wait_for(Duration::from_secs(20), || {
        got.load(Ordering::Relaxed) >= BEFORE_CRASH
    }));
    run.tell(1, CRASH);
    let end = srv.join().unwrap();
    let n = got.load(Ordering::Relaxed);
    run.finish();
    client.join().unwrap();
    assert!(
        n < SIZE,
        "the transfer completed before the crash: {n} bytes"
    );
    assert_eq!(
        end,
        Some(ErrorKind::ConnectionReset),
        "the server read {n} of {SIZE} bytes, then {end:?} (None: a clean end-of-stream)"
    );
}

#[test]
fn a_crashed_receiving_side_gateway_resets_the_client_never_a_clean_end() {
    // Download: the server sends 20 MB to the client through B and A; A dies once the
    // client has 300 kB.
    let (run, server, aport) = pair(LINK, |_| {});
    let srv = std::thread::spawn(move || {
        let (mut s, _) = server.accept().unwrap();
        let _ = s.write_all(&pattern(SIZE, 2)); // ends with a reset when B stops
    });
    let mut c = connect(aport);
    let got = AtomicUsize::new(0);
    let mut b = vec![0u8; 65_536];
    while got.load(Ordering::Relaxed) < BEFORE_CRASH {
        let n = c.read(&mut b).unwrap();
        assert!(n > 0, "the stream ended before the crash");
        got.fetch_add(n, Ordering::Relaxed);
    }
    run.tell(0, CRASH);
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let end = read_until_end(&mut c, &got);
    let n = got.load(Ordering::Relaxed);
    run.finish();
    srv.join().unwrap();
    assert!(
        n < SIZE,
        "the transfer completed before the crash: {n} bytes"
    );
    assert_eq!(
        end,
        Some(ErrorKind::ConnectionReset),
        "the client read {n} of {SIZE} bytes, then {end:?} (None: a clean end-of-stream)"
    );
}

#[test]
fn an_owed_reset_crosses_a_lossy_link_to_a_silent_peer() {
    // 5% PER, 20 ms each way. 60 connections each move 20 kB; then one end host resets
    // (the client of even ones, after the server's answer; the server of odd ones, after
    // the data), a second later: every segment is acknowledged by then, so the other
    // gateway has nothing to send and would never draw the answer to a lost RST. The RST is
    // repeated (its last repeat goes 15 smoothed RTTs after the first RST, 4.5 s here at most),
    // and every end host is told within 10 s of the reset (without the repeats, some wait for
    // the far gateway's keepalive: minutes).
    const FLOWS: usize = 60;
    const QUIET: Duration = Duration::from_secs(1);
    let link = r#""rate": "20 Mb/s", "delay": "20 ms", "errors": {"per": 0.05}"#;
    let (run, server, aport) = pair(link, |_| {});
    let told = |s: &mut TcpStream| {
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let t0 = std::time::Instant::now();
        let r = s.read(&mut [0u8; 1]);
        (r.map_err(|e| e.kind()), t0.elapsed())
    };
    let srv = std::thread::spawn(move || {
        let mut hs = Vec::new();
        for _ in 0..FLOWS {
            let (mut s, _) = server.accept().unwrap();
            hs.push(std::thread::spawn(move || {
                let mut got = vec![0u8; 20_000];
                s.read_exact(&mut got).unwrap();
                if got[0] % 2 == 1 {
                    std::thread::sleep(QUIET);
                    reset_on_close(&s);
                    return None;
                }
                s.write_all(b"k").unwrap();
                Some(told(&mut s))
            }));
        }
        hs.into_iter()
            .filter_map(|h| h.join().unwrap())
            .collect::<Vec<_>>()
    });
    let clients: Vec<_> = (0..FLOWS)
        .map(|i| {
            std::thread::spawn(move || {
                let mut c = connect(aport);
                c.write_all(&[i as u8; 20_000]).unwrap();
                if i % 2 == 1 {
                    return Some(told(&mut c));
                }
                c.read_exact(&mut [0u8; 1]).unwrap();
                std::thread::sleep(QUIET);
                reset_on_close(&c);
                None
            })
        })
        .collect();
    let mut ends: Vec<_> = clients
        .into_iter()
        .filter_map(|c| c.join().unwrap())
        .collect();
    ends.extend(srv.join().unwrap());
    let reps = run.finish();
    assert_eq!(ends.len(), FLOWS);
    for (r, took) in &ends {
        assert_eq!(*r, Err(ErrorKind::ConnectionReset), "after {took:?}");
        assert!(
            *took < QUIET + Duration::from_secs(10),
            "told after {took:?}"
        );
    }
    let worst = ends.iter().map(|e| e.1).max().unwrap() - QUIET;
    println!("{FLOWS} end hosts told of the far end's reset, the last after {worst:?}");
    assert_eq!(reps[0].reset + reps[1].reset, 2 * FLOWS as u64, "{reps:?}");
}
