//! CFDP over the Bundle Protocol, live: two entities, each on its own DTN node (LTP over
//! loopback UDP, as ION's bputa over ltpcli), each in its own thread on the real clock.
//! A file crosses whole (SHA-256 equal) through a relay that drops LTP segments and reports:
//! class 1 arrives because LTP's red blocks repair the losses under it, without a CFDP NAK;
//! class 2 gets its Finished PDU back the same way.

use spacetp_live::cfdp::{config_from_json, CfdpOverBp, CfdpReport};
use spacetp_live::turns::Turns;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

mod common;
use common::{free_port, random_file, relay, sha256};

/// Contacts both ways for an hour at 10 Mb/s, one second of light time (ION's ranges are
/// whole seconds).
const PLAN: &str = "a contact +0 +3600 1 2 1250000\na contact +0 +3600 2 1 1250000\n\
                    a range +0 +3600 1 2 1\n";

fn run(settings: serde_json::Value) -> std::thread::JoinHandle<CfdpReport> {
    let cfg = config_from_json(&settings.to_string()).expect("settings");
    let mut e = CfdpOverBp::new(cfg, 1_800_000_000_000).expect("entity");
    std::thread::spawn(move || {
        while e.run_for(100_000_000) {}
        e.report()
    })
}

struct Outcome {
    tx: CfdpReport,
    rx: CfdpReport,
    src: PathBuf,
    out: PathBuf,
    dropped: u64,
}

/// Entity 1 sends a random file of `size` bytes to entity 2 over BP with `settings`,
/// through a relay that loses every `nth` datagram either way (0: none).
fn transfer(name: &str, size: usize, settings: serde_json::Value, nth: u64) -> Outcome {
    let dir = std::env::temp_dir().join(format!("spacetp-cfdp-bp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = dir.join("in");
    std::fs::create_dir_all(&out).unwrap();
    let src = dir.join("image.raw");
    random_file(&src, size);
    let (p1, p2, via_1, via_2) = (free_port(), free_port(), free_port(), free_port());
    let stop = Arc::new(AtomicBool::new(false));
    let (a, b) = (
        format!("127.0.0.1:{p1}").parse().unwrap(),
        format!("127.0.0.1:{p2}").parse().unwrap(),
    );
    let lose = move |n: u64, _: Duration, _: &[u8]| nth > 0 && n.is_multiple_of(nth);
    let r = relay(via_1, a, via_2, b, lose, stop.clone());
    let node = |n: u64, bind: String, peer: u64, via: u16| {
        // LTP planned for the relay's loss (1 segment in 13 or 17): with the default
        // max_ber (1e-6, 1.1% of 1400-byte segments) sessions run out of checkpoints, and
        // a block canceled after the peer had stopped (its last report lost) was forwarded
        // again until --duration (a class 2 run took 60 s instead of 8).
        serde_json::json!({"node": n, "bind": bind, "contact_plan": PLAN,
                           "peers": [[peer, format!("127.0.0.1:{via}")]],
                           "linger_s": 2.0, "ltp": {"max_ber": 1e-5}})
    };
    let rx = run(serde_json::json!({
        "entity": 2, "out_dir": out, "until_received": 1, "linger_s": 1.0, "duration_s": 60.0,
        "settings": settings, "bp": node(2, b.to_string(), 1, via_1),
    }));
    let tx = run(serde_json::json!({
        "entity": 1, "send": [[src, 2, ""]], "until_sent": true, "linger_s": 1.0,
        "duration_s": 60.0, "settings": settings, "bp": node(1, a.to_string(), 2, via_2),
    }));
    let (tx, rx) = (tx.join().unwrap(), rx.join().unwrap());
    stop.store(true, Ordering::Relaxed);
    let (_, dropped) = r.join().unwrap();
    Outcome {
        tx,
        rx,
        src,
        out,
        dropped,
    }
}

/// Both entities and their nodes stopped on their own, well before the runs' 60 s duration:
/// the sender once its last bundles left, the receiver once its peer was answered. (A
/// Finished PDU sent again, still held for a sender that had stopped, held the receiver's
/// node until the duration in half the class 2 runs.)
fn assert_both_stopped_on_their_own(o: &Outcome) {
    let (txb, rxb) = (o.tx.bp.as_ref().unwrap(), o.rx.bp.as_ref().unwrap());
    assert_eq!(
        (o.tx.stopped.as_str(), txb.stopped.as_str()),
        ("sent", "sent")
    );
    assert_eq!(
        (o.rx.stopped.as_str(), rxb.stopped.as_str()),
        ("received", "answered")
    );
    assert!(
        txb.elapsed_s < 30.0 && rxb.elapsed_s < 30.0,
        "{txb:?} {rxb:?}"
    );
}

#[test]
fn class_1_over_bp_arrives_whole_through_losses_ltp_repairs() {
    let s = serde_json::json!({"class": 1, "carrier": "bp", "rate": "8 Mb/s"});
    let o = transfer("class1", 300_000, s, 13);
    let [t] = &o.tx.sent[..] else {
        panic!("{:?}", o.tx)
    };
    let [got] = &o.rx.received[..] else {
        panic!("{:?}", o.rx)
    };
    assert!(t.succeeded() && got.succeeded(), "{t:?} {got:?}");
    assert_eq!(got.sha256.as_deref(), Some(sha256(&o.src).as_str()));
    assert!(o.out.join("image.raw").exists());
    assert!(o.dropped > 10, "the relay lost {}", o.dropped);
    // Each PDU a bundle: the metadata, 215 file data PDUs, the EOF, all delivered to 2.
    assert_eq!(t.pdus.file_data, 215);
    let (txb, rxb) = (o.tx.bp.as_ref().unwrap(), o.rx.bp.as_ref().unwrap());
    assert_eq!(rxb.agent.bundles_delivered, 217, "{rxb:?}");
    assert_eq!(o.rx.datagrams_in, 217);
    let resent: u64 = txb
        .spans
        .iter()
        .map(|s| s.data_segments_retransmitted)
        .sum();
    assert!(resent > 0, "LTP repaired the losses: {txb:?}");
    assert_eq!(got.pdus.nak, 0, "class 1 asks for nothing");
    assert_both_stopped_on_their_own(&o);
    std::fs::remove_dir_all(o.out.parent().unwrap()).ok();
}

#[test]
fn class_2_over_bp_gets_its_finished_pdu_back() {
    let s = serde_json::json!({"class": 2, "carrier": "bp", "rate": "8 Mb/s",
                               "positive_ack_timer": "10 s", "nak_timer": "10 s"});
    let o = transfer("class2", 200_000, s, 17);
    let [t] = &o.tx.sent[..] else {
        panic!("{:?}", o.tx)
    };
    let [got] = &o.rx.received[..] else {
        panic!("{:?}", o.rx)
    };
    assert!(t.succeeded() && got.succeeded(), "{t:?} {got:?}");
    assert_eq!(t.condition.as_deref(), Some("NoError"));
    assert_eq!(got.sha256.as_deref(), Some(sha256(&o.src).as_str()));
    // The Finished PDU acknowledged; sent again if LTP was still repairing its ACK's block
    // when the positive ACK timer (10 s) ran out.
    assert!(got.pdus.finished >= 1, "{got:?}");
    assert!(t.pdus.ack >= 1, "the Finished PDU acknowledged: {t:?}");
    assert_both_stopped_on_their_own(&o);
    std::fs::remove_dir_all(o.out.parent().unwrap()).ok();
}

#[test]
fn bad_bp_settings_name_the_field() {
    let bad = |v: serde_json::Value| config_from_json(&v.to_string()).unwrap_err();
    let node = serde_json::json!({"node": 3, "bind": "127.0.0.1:1113", "contact_plan": PLAN,
                                  "peers": [[2, "127.0.0.1:1114"]]});
    let e = bad(serde_json::json!({"entity": 1, "settings": {"carrier": "bp"}, "bp": node}));
    assert_eq!(e.path, "cfdp.bp.node", "{e}");
    let e = bad(serde_json::json!({"entity": 1, "settings": {"carrier": "bp"}}));
    assert_eq!(e.path, "cfdp.bp", "{e}");
    let mut n1 = node.clone();
    n1["node"] = 1.into();
    n1["contact_plan"] = "a contact +0 +10 1 2 1000\n".into();
    let e = bad(serde_json::json!({"entity": 1, "settings": {"carrier": "bp"}, "bp": n1}));
    assert!(e.path.starts_with("cfdp.bp."), "{e}");
    let e = bad(serde_json::json!({"entity": 1, "bind": "127.0.0.1:4556",
                                   "settings": {"carrier": "ltp"}}));
    assert_eq!(e.path, "cfdp.settings.carrier", "{e}");
    let e = bad(serde_json::json!({"entity": 1, "settings": {}}));
    assert_eq!(e.path, "cfdp.bind", "{e}");
}

#[test]
fn duration_stops_the_node_too_when_its_last_bundles_cannot_leave() {
    // No peer answers: class 1's transaction ends once its EOF is handed over, but its
    // bundles never leave; the entity's duration must still stop the whole process.
    let dir = std::env::temp_dir().join(format!("spacetp-cfdp-bp-dur-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("image.raw");
    random_file(&src, 50_000);
    let (p1, nobody) = (free_port(), free_port());
    let cfg = config_from_json(
        &serde_json::json!({
            "entity": 1, "send": [[src, 2, ""]], "until_sent": true, "duration_s": 3.0,
            "settings": {"class": 1, "carrier": "bp", "rate": "8 Mb/s"},
            "bp": {"node": 1, "bind": format!("127.0.0.1:{p1}"), "contact_plan": PLAN,
                   "peers": [[2, format!("127.0.0.1:{nobody}")]]},
        })
        .to_string(),
    )
    .unwrap();
    let mut e = CfdpOverBp::new(cfg, 1_800_000_000_000).unwrap();
    let t0 = std::time::Instant::now();
    while e.run_for(100_000_000) {
        assert!(t0.elapsed() < Duration::from_secs(20), "still running");
    }
    assert!(t0.elapsed() < Duration::from_secs(6), "{:?}", t0.elapsed());
    assert_eq!(e.report().bp.unwrap().stopped, "duration");
    std::fs::remove_dir_all(&dir).ok();
}
