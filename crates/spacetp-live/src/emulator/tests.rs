//! The emulator over datagram socket pairs: timing, rates, losses, outages, notices.

use super::*;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixDatagram;

pub(crate) use super::scenario_json as scenario;

/// Run the emulator between two socket pairs in a thread; `f` gets the outer ends.
fn with_link(link: &str, dur_ms: u64, f: impl FnOnce(&UnixDatagram, &UnixDatagram)) -> Report {
    let (a_out, a_in) = UnixDatagram::pair().unwrap();
    let (b_out, b_in) = UnixDatagram::pair().unwrap();
    let sc = scenario(1, link);
    let (fa, fb) = (a_in.as_raw_fd(), b_in.as_raw_fd());
    let h = std::thread::spawn(move || {
        let opts = Options {
            duration: Some(dur_ms * 1_000_000),
            ..Default::default()
        };
        let mut em = Emulator::new(&sc, fa, fb, &opts).unwrap();
        while em.run_for(50_000_000) {}
        drop((a_in, b_in));
        em.report()
    });
    f(&a_out, &b_out);
    h.join().unwrap()
}

#[test]
fn outages_are_announced_when_they_start_and_end() {
    let (a_in, a_out) = UnixDatagram::pair().unwrap();
    let (b_in, _b_out) = UnixDatagram::pair().unwrap();
    let (n_em, n_gw) = UnixDatagram::pair().unwrap();
    let sc = scenario(
        1,
        r#""rate": "1 Mb/s", "delay": "1 ms", "outages": [["0.1 s", "0.2 s"], ["0.3 s", "0.35 s"]]"#,
    );
    let opts = Options {
        duration: Some(500 * 1_000_000),
        notify: vec![n_em.as_raw_fd()],
        notify_udp: Some((4999, [10, 77, 0, 1], [10, 77, 0, 2])),
        ..Default::default()
    };
    // Taken before the emulator's own clock starts, so a notice is never early against it.
    let t0 = std::time::Instant::now();
    let mut em = Emulator::new(&sc, a_in.as_raw_fd(), b_in.as_raw_fd(), &opts).unwrap();
    let h = std::thread::spawn(move || {
        let mut got = vec![];
        let mut b = [0u8; 64];
        for _ in 0..4 {
            let n = n_gw.recv(&mut b).unwrap();
            got.push((b[..n].to_vec(), t0.elapsed().as_secs_f64()));
        }
        got
    });
    while em.run_for(50_000_000) {}
    let got = h.join().unwrap();
    let msgs: Vec<&[u8]> = got.iter().map(|g| g.0.as_slice()).collect();
    assert_eq!(msgs, [LINK_DOWN, LINK_UP, LINK_DOWN, LINK_UP]);
    // Never early.
    for ((_, t), want) in got.iter().zip([0.1, 0.2, 0.3, 0.35]) {
        assert!(*t >= want, "{got:?}");
    }
    assert_eq!(em.report().link_notices, 12);
    // On the link: end a got four IPv4/UDP packets from b's address to its own, port 4999.
    let mut b = [0u8; 128];
    let mut got = vec![];
    while let Ok(n) = a_out.recv(&mut b) {
        let d = spacetp_wire::decode_ipv4_udp(&b[..n]).unwrap();
        assert_eq!((d.ip.src, d.ip.dst), ([10, 77, 0, 2], [10, 77, 0, 1]));
        assert_eq!((d.src_port, d.dst_port), (4999, 4999));
        got.push(b[d.payload_offset..d.payload_offset + d.payload_len].to_vec());
        if got.len() == 4 {
            break;
        }
    }
    assert_eq!(got, [LINK_DOWN, LINK_UP, LINK_DOWN, LINK_UP]);
}

#[test]
fn bad_link_names_the_field() {
    let e = link_from_json(&scenario(
        1,
        r#""rate": "1 Mb/s", "delay": "1 ms", "errors": {"per": 2}"#,
    ))
    .err()
    .unwrap();
    assert_eq!(e.path, "links[0].errors.per");
    assert_eq!(
        e.to_string(),
        "links[0].errors.per: 2 is not a probability; must be in [0, 1]"
    );
}

#[test]
fn delays_and_serialises_packets() {
    // 8 Mb/s: a 1000-byte packet takes 1 ms; 20 ms propagation.
    let rep = with_link(r#""rate": "8 Mb/s", "delay": "20 ms""#, 300, |a, b| {
        let t = monotonic_ns();
        for _ in 0..5 {
            a.send(&[7u8; 1000]).unwrap();
        }
        let mut buf = [0u8; 2000];
        for i in 0..5u64 {
            let n = b.recv(&mut buf).unwrap();
            assert_eq!(n, 1000);
            let dt = monotonic_ns() - t;
            let want = 20_000_000 + (i + 1) * 1_000_000;
            // Never early; the upper bound is loose because this test runs without
            // SCHED_FIFO on a possibly loaded machine (the 1 ms accuracy is measured by
            // tests/test_emulate.py under SCHED_FIFO, and by benches/emulate_scaling.py).
            assert!(
                dt >= want && dt < want + 50_000_000,
                "packet {i}: {dt} ns, want {want}"
            );
        }
    });
    let f = &rep.directions[0];
    assert_eq!(f.rx_packets, 5);
    assert_eq!(f.written_packets, 5);
    assert_eq!(rep.stopped, "duration");
}

#[test]
fn scripted_drops_and_queue_limit() {
    let rep = with_link(
        r#""rate": "8 Mb/s", "delay": "1 ms", "queue": {"packets": 2}, "errors": {"drop": [0]}"#,
        200,
        |a, _b| {
            for _ in 0..6 {
                a.send(&[1u8; 1000]).unwrap();
            }
        },
    );
    let f = &rep.directions[0];
    // One on the wire, two queued, three refused; the first transmitted is dropped.
    assert_eq!(f.rx_packets, 6);
    assert_eq!(f.link.queue_drops, 3);
    assert_eq!(f.link.error_drops, 1);
    assert_eq!(f.written_packets, 2);
}

#[test]
fn corrupted_deliver_flips_a_bit() {
    let rep = with_link(
        r#""rate": "8 Mb/s", "delay": "1 ms", "corrupted": "deliver", "errors": {"per": 1}"#,
        100,
        |a, b| {
            a.send(&[0u8; 100]).unwrap();
            let mut buf = [9u8; 200];
            let n = b.recv(&mut buf).unwrap();
            assert_eq!(n, 100);
            assert_eq!(buf[99], 1);
            assert!(buf[..99].iter().all(|&x| x == 0));
        },
    );
    assert_eq!(rep.directions[0].link.corrupted, 1);
}

#[test]
fn schedules_play_out_in_real_time() {
    // The forward direction is down for its first 100 ms, then up at 8 Mb/s until 150 ms and
    // 0.8 Mb/s after (a 1000-byte packet then takes 10 ms): the simulator's schedules, read
    // by the same LinkDir.
    let link = r#""rate": {"schedule": [["0 s", "8 Mb/s"], ["0.15 s", "0.8 Mb/s"]]},
        "delay": {"schedule": [["0 s", "1 ms"], ["1 s", "1 ms"]]},
        "up": {"schedule": [["0 s", false], ["0.1 s", true]]}, "up_back": true"#;
    let rep = with_link(link, 400, |a, b| {
        a.send(&[1u8; 1000]).unwrap(); // lost: the direction is down
        std::thread::sleep(std::time::Duration::from_millis(200));
        let t = monotonic_ns();
        for _ in 0..3 {
            a.send(&[2u8; 1000]).unwrap();
        }
        let mut buf = [0u8; 2000];
        for i in 0..3u64 {
            b.recv(&mut buf).unwrap();
            let dt = monotonic_ns() - t;
            let want = 1_000_000 + (i + 1) * 10_000_000;
            assert!(
                dt >= want && dt < want + 50_000_000,
                "packet {i}: {dt} ns, want {want}"
            );
        }
    });
    let f = &rep.directions[0];
    assert_eq!(f.link.outage_drops, 1);
    assert_eq!(f.written_packets, 3);
}

#[test]
fn the_description_names_each_directions_queue_and_the_key_that_set_it() {
    let dirs = |link: &str| -> Vec<(String, String)> {
        let d: serde_json::Value =
            serde_json::from_str(&describe(&scenario(1, link)).unwrap()).unwrap();
        d["directions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                (
                    d["queue"].as_str().unwrap().to_string(),
                    d["queue_set_by"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let base = r#""rate": "2 Mb/s", "delay": "10 ms""#;
    // `queue` is the forward queue only: the back one stays at the default 100 packets.
    assert_eq!(
        dirs(&format!(r#"{base}, "queue": {{"packets": 2000}}"#)),
        [
            ("2000 packets".into(), "queue".into()),
            ("100 packets".into(), "default".into())
        ]
    );
    assert_eq!(
        dirs(&format!(r#"{base}, "queue_back": {{"bytes": "64 kB"}}"#)),
        [
            ("100 packets".into(), "default".into()),
            ("64 kB".into(), "queue_back".into())
        ]
    );
}

#[test]
fn the_description_gives_each_directions_error_model_and_rate_in_words() {
    let dirs = |link: &str| -> Vec<(String, String)> {
        let d: serde_json::Value =
            serde_json::from_str(&describe(&scenario(1, link)).unwrap()).unwrap();
        d["directions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                (
                    d["rate"].as_str().unwrap().to_string(),
                    d["errors"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let base = r#""rate": "2 Mb/s", "rate_back": "64 kb/s", "delay": "10 ms""#;
    assert_eq!(
        dirs(base),
        [
            ("2 Mb/s".into(), "none".into()),
            ("64 kb/s".into(), "none".into())
        ]
    );
    // `errors` covers both directions unless `errors_back` is given
    assert_eq!(
        dirs(&format!(r#"{base}, "errors": {{"ber": 1e-7}}"#)),
        [
            ("2 Mb/s".into(), "BER 1e-7".into()),
            ("64 kb/s".into(), "BER 1e-7".into())
        ]
    );
    let ge =
        r#"{"gilbert_elliott": {"p_good_to_bad": 1e-4, "p_bad_to_good": 0.1, "loss_bad": 0.5}}"#;
    let d = dirs(&format!(
        r#"{base}, "errors": {{"per": 0.001}}, "errors_back": {ge}"#
    ));
    assert_eq!(d[0].1, "PER 0.001");
    assert_eq!(
        d[1].1,
        "Gilbert-Elliott per packet: good->bad 1e-4, bad->good 0.1, loss good 0, bad 0.5 \
         (mean loss 0.050%)"
    );
    let slots = r#"{"markov_slot": {"slot": "120 ms", "transition": [[0.9, 0.1], [0.5, 0.5]], "loss": [0, 0.5]}}"#;
    assert_eq!(
        dirs(&format!(r#"{base}, "errors": {slots}"#))[0].1,
        "Markov slots of 120 ms: 2 states, loss 0, 0.5"
    );
    let sched = r#"{"per": {"schedule": [["0 s", 0.01], ["10 s", 0.1]]}}"#;
    assert_eq!(
        dirs(&format!(r#"{base}, "errors": {sched}"#))[0].1,
        "PER a schedule of 2 points"
    );
}
