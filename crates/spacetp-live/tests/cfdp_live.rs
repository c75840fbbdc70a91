//! Two live CFDP entities on loopback UDP sockets, each in its own thread on the real
//! clock: a file crosses whole (SHA-256 equal), also through a relay that drops datagrams
//! (class 2 repairs them with NAKs) and a relay that cuts the path for a while; class 1
//! through the lossy relay fails and says so, never writing a short file under the name.

use spacetp_live::cfdp::report::Transaction;
use spacetp_live::cfdp::{config_from_json, CfdpEntity, CfdpReport};
use spacetp_live::turns::Turns;

mod common;
use common::{free_port, random_file, relay, sha256};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn run(settings: serde_json::Value) -> std::thread::JoinHandle<CfdpReport> {
    let cfg = config_from_json(&settings.to_string()).expect("settings");
    let mut e = CfdpEntity::new(cfg).expect("entity");
    std::thread::spawn(move || {
        while e.run_for(100_000_000) {}
        e.report()
    })
}

struct Pair {
    dir: std::path::PathBuf,
    src: std::path::PathBuf,
    out: std::path::PathBuf,
}

fn pair(name: &str, size: usize) -> Pair {
    let dir = std::env::temp_dir().join(format!("spacetp-cfdp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = dir.join("in");
    std::fs::create_dir_all(&out).unwrap();
    let src = dir.join("image.raw");
    random_file(&src, size);
    Pair { dir, src, out }
}

/// How one transfer went: both reports, and the datagrams the relay saw and dropped.
struct Outcome {
    tx: CfdpReport,
    rx: CfdpReport,
    seen: u64,
    dropped: u64,
}

impl Outcome {
    fn sent(&self) -> &Transaction {
        let [t] = &self.tx.sent[..] else {
            panic!("{:?}", self.tx)
        };
        t
    }

    fn received(&self) -> &Transaction {
        let [r] = &self.rx.received[..] else {
            panic!("{:?}", self.rx)
        };
        r
    }
}

/// Entity 1 sends `p`'s file to entity 2 as `name` ("": its own) with `settings`, through a
/// relay losing what `drop` says (none: straight); each lingers as given, for at most
/// `duration` seconds.
fn transfer(
    p: &Pair,
    name: &str,
    settings: serde_json::Value,
    drop: impl FnMut(u64, Duration, &[u8]) -> bool + Send + 'static,
    linger: (f64, f64),
    duration: f64,
) -> Outcome {
    let (p1, p2, via_1, via_2) = (free_port(), free_port(), free_port(), free_port());
    let stop = Arc::new(AtomicBool::new(false));
    let a: SocketAddr = format!("127.0.0.1:{p1}").parse().unwrap();
    let b: SocketAddr = format!("127.0.0.1:{p2}").parse().unwrap();
    let r = relay(via_1, a, via_2, b, drop, stop.clone());
    let rx = run(serde_json::json!({
        "entity": 2, "bind": b, "peers": [[1, format!("127.0.0.1:{via_1}")]],
        "out_dir": p.out, "until_received": 1, "linger_s": linger.1, "duration_s": duration,
        "settings": settings,
    }));
    let tx = run(serde_json::json!({
        "entity": 1, "bind": a, "peers": [[2, format!("127.0.0.1:{via_2}")]],
        "send": [[p.src, 2, name]], "until_sent": true, "linger_s": linger.0,
        "duration_s": duration, "settings": settings,
    }));
    let (tx, rx) = (tx.join().unwrap(), rx.join().unwrap());
    stop.store(true, Ordering::Relaxed);
    let (seen, dropped) = r.join().unwrap();
    Outcome {
        tx,
        rx,
        seen,
        dropped,
    }
}

fn keep_all(_: u64, _: Duration, _: &[u8]) -> bool {
    false
}

#[test]
fn a_file_crosses_loopback_whole_with_its_sha256() {
    let p = pair("plain", 300_000);
    let s = serde_json::json!({"class": 2, "rate": "50 Mb/s"});
    let o = transfer(&p, "landed.raw", s, keep_all, (0.2, 0.5), 60.0);
    assert_eq!(
        (o.tx.stopped.as_str(), o.rx.stopped.as_str()),
        ("sent", "received")
    );
    let (t, r) = (o.sent(), o.received());
    assert!(t.succeeded() && r.succeeded(), "{t:?} {r:?}");
    let landed = p.out.join("landed.raw");
    assert_eq!(r.file.as_deref(), Some(landed.to_str().unwrap()));
    assert_eq!(r.sha256.as_deref(), Some(sha256(&p.src).as_str()));
    assert_eq!(t.sha256, r.sha256);
    assert_eq!((t.bytes, r.bytes), (300_000, 300_000));
    assert!(!p.out.join("landed.raw.part").exists());
    // 215 segments of 1400 B, metadata, EOF; the paced pass takes about 50 ms.
    assert_eq!(t.pdus.file_data, 215);
    assert_eq!(t.pdus.nak + r.pdus.nak, 0);
    std::fs::remove_dir_all(&p.dir).ok();
}

#[test]
fn class_2_repairs_what_a_lossy_relay_drops() {
    let p = pair("lossy", 400_000);
    let s = serde_json::json!({"class": 2, "rate": "40 Mb/s", "nak_timer": "0.3 s",
                               "positive_ack_timer": "0.3 s", "nak_limit": 20,
                               "positive_ack_limit": 20});
    // Every 13th datagram either way is lost: file data, metadata, EOF, NAKs, ACKs alike.
    let o = transfer(&p, "", s, |n, _, _| n % 13 == 0, (1.0, 1.0), 60.0);
    let (t, got) = (o.sent(), o.received());
    assert!(t.succeeded() && got.succeeded(), "{t:?} {got:?}");
    assert_eq!(got.sha256.as_deref(), Some(sha256(&p.src).as_str()));
    assert!(
        p.out.join("image.raw").exists(),
        "named as the source, no name given"
    );
    assert!(
        o.dropped >= o.seen / 13 && o.dropped > 20,
        "{} {}",
        o.seen,
        o.dropped
    );
    assert!(
        got.pdus.nak > 0,
        "the receiver asked for what it missed: {got:?}"
    );
    assert!(
        t.pdus.file_data > 286,
        "repairs beyond the 286 segments: {t:?}"
    );
    std::fs::remove_dir_all(&p.dir).ok();
}

#[test]
fn class_1_through_a_lossy_relay_fails_and_leaves_no_file_under_its_name() {
    let p = pair("class1", 200_000);
    let s = serde_json::json!({"class": 1, "rate": "40 Mb/s", "check_timer": "0.2 s",
                               "check_limit": 2});
    // The 50th datagram (file data) is lost; nothing asks for it again in class 1.
    let o = transfer(&p, "x.raw", s, |n, _, _| n == 50, (0.1, 0.1), 30.0);
    let got = o.received();
    assert!(!got.succeeded(), "{got:?}");
    assert_eq!(
        got.condition.as_deref(),
        Some("CheckLimitReached"),
        "{got:?}"
    );
    assert!(got.sha256.is_none());
    assert!(
        !p.out.join("x.raw").exists(),
        "a short file never takes the name"
    );
    std::fs::remove_dir_all(&p.dir).ok();
}

#[test]
fn class_2_waits_out_a_path_cut_and_completes() {
    let p = pair("cut", 300_000);
    let s = serde_json::json!({"class": 2, "rate": "20 Mb/s", "nak_timer": "0.5 s",
                               "positive_ack_timer": "0.5 s", "nak_limit": 10,
                               "positive_ack_limit": 10, "inactivity_timeout": "5 s"});
    // Everything is lost from 20 ms to 1.5 s: mid-pass, EOF and NAKs too.
    let (from, to) = (Duration::from_millis(20), Duration::from_millis(1500));
    let o = transfer(
        &p,
        "cut.raw",
        s,
        move |_, t, _| t > from && t < to,
        (0.2, 1.0),
        60.0,
    );
    let (t, got) = (o.sent(), o.received());
    assert!(t.succeeded() && got.succeeded(), "{t:?} {got:?}");
    assert_eq!(got.sha256.as_deref(), Some(sha256(&p.src).as_str()));
    assert!(
        o.dropped > 50,
        "the cut took most of the pass: {}",
        o.dropped
    );
    assert!(
        got.ended_s.unwrap() > 1.4,
        "not before the path came back: {got:?}"
    );
    std::fs::remove_dir_all(&p.dir).ok();
}

/// A CFDP ACK PDU acknowledging a Finished PDU: directive 6, acked directive code 5 in the
/// high nibble (727.0-B-5 5.2.4), after a header of 4 + 2 + 2 + 2 bytes.
fn is_ack_of_finished(d: &[u8]) -> bool {
    d.len() > 11 && d[10] == 6 && d[11] >> 4 == 5
}

#[test]
fn a_lost_ack_of_finished_is_sent_again_and_the_receiver_closes_without_a_fault() {
    let p = pair("finack", 100_000);
    let s = serde_json::json!({"class": 2, "rate": "40 Mb/s", "positive_ack_timer": "0.3 s",
                               "positive_ack_limit": 3});
    // The sender's first ACK of the Finished PDU is lost.
    let mut lost = 0;
    let drop_first = move |_, _, d: &[u8]| {
        let hit = lost == 0 && is_ack_of_finished(d);
        lost += hit as u32;
        hit
    };
    let o = transfer(&p, "", s, drop_first, (1.0, 0.1), 20.0);
    let (t, got) = (o.sent(), o.received());
    assert_eq!(o.dropped, 1);
    assert!(t.succeeded() && got.succeeded(), "{t:?} {got:?}");
    assert_eq!(
        got.pdus.finished, 2,
        "the Finished PDU went again once: {got:?}"
    );
    assert_eq!(t.pdus.ack, 2, "the Finished PDU acknowledged twice: {t:?}");
    assert!(
        got.faults.is_empty(),
        "no positive-ACK limit reached: {got:?}"
    );
    assert!(
        o.rx.elapsed_s < 5.0,
        "the receiver closed at once: {:?}",
        o.rx
    );
    std::fs::remove_dir_all(&p.dir).ok();
}

#[test]
fn bad_settings_name_the_field() {
    let e = config_from_json(
        r#"{"entity": 1, "bind": "127.0.0.1:0", "send": [["/nonexistent", 2, ""]]}"#,
    )
    .unwrap_err();
    assert_eq!(e.path, "cfdp.send[0]");
    assert!(e.to_string().contains("entity 2 has no address"), "{e}");
    let e = config_from_json(r#"{"entity": 1, "bind": "127.0.0.1:0", "settings": {"class": 3}}"#)
        .unwrap_err();
    assert_eq!(e.path, "cfdp.settings.class");
    let e =
        config_from_json(r#"{"entity": 1, "bind": "127.0.0.1:0", "peers": [[1, "127.0.0.1:9"]]}"#)
            .unwrap_err();
    assert_eq!(e.path, "cfdp.peers[0]");
    let e = config_from_json(r#"{"entity": 1, "bind": "nowhere"}"#).unwrap_err();
    assert_eq!(e.path, "cfdp.bind");
    let e = config_from_json(r#"{"entity": 1, "bind": "127.0.0.1:0", "until_received": 1}"#)
        .unwrap_err();
    assert_eq!(e.path, "cfdp.out_dir");
}
