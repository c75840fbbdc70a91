//! Idle connections, half-closed exchanges and outages: what the gateway reaps, what it
//! keeps, and what persists across a link outage.
use super::*;
use crate::selftest::*;

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
