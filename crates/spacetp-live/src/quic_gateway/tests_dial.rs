//! When a gateway dials its peer: the tunnel of two gateways on a socket pair, driven on a
//! clock the test sets (quinn is sans-IO), so a backoff of seconds takes no time and no
//! assertion depends on how fast the machine is.

use super::tunnel::Tunnel;
use super::*;
use crate::carrier::{any_config_from_json, AnyConfig};
use std::os::unix::net::UnixDatagram;

fn config(local: &str, peer: &str) -> QuicGatewayConfig {
    // One certificate and key for both gateways of a pair, as `--make-cert` gives them.
    static FILES: std::sync::OnceLock<(String, String)> = std::sync::OnceLock::new();
    let (cp, kp) = FILES.get_or_init(|| {
        let (c, k) = spacetp_quic::tls::make_pem_pair(spacetp_quic::tls::GATEWAY_NAME);
        let dir = std::env::temp_dir().join(format!("spacetp-dial-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (cp, kp) = (dir.join("cert.pem"), dir.join("key.pem"));
        std::fs::write(&cp, c).unwrap();
        std::fs::write(&kp, k).unwrap();
        (cp.display().to_string(), kp.display().to_string())
    });
    let j = serde_json::json!({
        "protocol": "quic-cubic", "quic": {"max_idle_timeout": "1 s"},
        "local": local, "peer": peer,
        // Both dial: each takes connections from applications (and relays the other's).
        "listen": [["127.0.0.1:0", 7000]], "forward": [[7000, "127.0.0.1:9"]],
        "tls_cert": cp, "tls_key": kp});
    match any_config_from_json(&j.to_string()).unwrap() {
        AnyConfig::Quic(q) => q,
        AnyConfig::Scps(_) => unreachable!("a quic protocol"),
    }
}

fn tunnel(cfg: &QuicGatewayConfig, fd: &UnixDatagram) -> Tunnel {
    Tunnel::new(cfg, Link::packets(fd.as_raw_fd(), cfg.local).unwrap())
}

/// One step of `t` at `now`: read, timers, handshakes (as the gateway's loop), send, reap.
fn step(t: &mut Tunnel, now: Instant) {
    t.read(now).unwrap();
    t.drive(now);
    let up: Vec<ConnectionHandle> = t
        .conns
        .iter_mut()
        .filter_map(|(&ch, c)| {
            let mut up = false;
            while let Some(ev) = c.conn.poll() {
                up |= matches!(ev, Event::Connected);
            }
            up.then_some(ch)
        })
        .collect();
    for ch in up {
        t.established(ch, now);
    }
    t.transmit(now);
    t.reap(now);
}

/// Gateway A alone (its peer absent) for `secs` seconds of the test's clock: its dials fail
/// one after another and the backoff grows.
fn fail_dials(a: &mut Tunnel, b_end: &UnixDatagram, t0: Instant, secs: u64) -> (Instant, u32) {
    let mut dials = 0;
    let mut now = t0;
    let mut buf = [0u8; 2048];
    while now < t0 + Duration::from_secs(secs) {
        dials += a.dial(now) as u32;
        step(a, now);
        while b_end.recv(&mut buf).is_ok() {} // nobody is there
        now += Duration::from_millis(50);
    }
    (now, dials)
}

#[test]
fn an_application_arriving_during_a_long_backoff_dials_at_once() {
    let (fa, fb) = UnixDatagram::pair().unwrap();
    fb.set_nonblocking(true).unwrap();
    let mut a = tunnel(&config("10.77.0.1", "10.77.0.2"), &fa);
    let t0 = Instant::now();
    let (now, dials) = fail_dials(&mut a, &fb, t0, 20);
    assert!(dials >= 3, "{dials} dials in 20 s of a peer that is down");
    let next = a
        .next_dial()
        .expect("a dialing gateway with no connection dials again");
    assert!(
        next > now + Duration::from_secs(1),
        "the backoff has grown: {next:?} {now:?}"
    );
    assert!(!a.dial(now), "the backoff holds the next dial");
    a.dial_soon(now);
    assert!(a.dial(now), "an arrival dials at once");
    a.dial_soon(now);
    assert_eq!(a.next_dial(), None, "one dial at a time, whatever arrives");
}

#[test]
fn the_peers_connection_coming_up_dials_ours_at_once() {
    let (fa, fb) = UnixDatagram::pair().unwrap();
    fb.set_nonblocking(true).unwrap();
    let cfg_b = config("10.77.0.2", "10.77.0.1");
    let mut a = tunnel(&config("10.77.0.1", "10.77.0.2"), &fa);
    let t0 = Instant::now();
    let (mut now, _) = fail_dials(&mut a, &fb, t0, 20);
    let long_wait = a.next_dial().unwrap();
    // B comes up and dials A: A learns the peer is back from B's handshake.
    let mut b = tunnel(&cfg_b, &fb);
    let mut a_dialed_at = None;
    while now < long_wait && a_dialed_at.is_none() {
        b.dial(now);
        if a.dial(now) {
            a_dialed_at = Some(now);
        }
        step(&mut b, now);
        step(&mut a, now);
        now += Duration::from_millis(10);
    }
    let at = a_dialed_at.expect("A dialed before its backoff ended");
    assert!(at < long_wait);
    assert!(
        a.conns.values().any(|t| !t.dialed && t.established),
        "it was B's connection coming up that made A dial"
    );
}
