//! QUIC flows (quinn-proto through the transport interface) in whole scenarios: real
//! encrypted packets on the links and in the pcaps, every byte delivered, losses repaired,
//! a run repeated exactly by its seed, quinn's reason when a connection dies, and errors
//! that name the field.

mod common;
use common::*;
use spacetp_sim::{run, scenario_from_toml, RunOptions};

fn geo(head: &str, link_extra: &str, flow_extra: &str) -> String {
    hosts_a_b(
        head,
        "10 Mb/s",
        "300 ms",
        &format!("rate_back = \"1 Mb/s\"\nqueue = {{ bdp = 1.0 }}\n{link_extra}"),
    ) + &flow_a_to_b(flow_extra)
}

#[test]
fn a_quic_transfer_over_geo_delivers_every_byte_in_packets_no_larger_than_the_mtu() {
    let out = sim(&geo("seed = 1", "", "protocol = \"quic\"\nbytes = 2000000"));
    assert_exact(&out);
    let f = &out.summary.flows[0];
    let q = f.quic.as_ref().expect("QUIC counters");
    // RFC 9001: the client completes the handshake after one round trip (600 ms here).
    let hs = q.handshake_s.unwrap();
    assert!((0.6..0.7).contains(&hs), "handshake {hs} s");
    // DPLPMTUD found the 1500-byte MTU's 1472-byte UDP payload.
    assert_eq!(q.mtu, 1472);
    let l = &out.summary.links[0];
    assert!(
        l.tx_bytes <= l.tx_packets * 1500,
        "{} B in {} packets",
        l.tx_bytes,
        l.tx_packets
    );
    // The link carried what quinn sent plus 28 B of IPv4 and UDP headers per datagram.
    assert_eq!(l.tx_bytes, q.udp_bytes_sent + 28 * l.tx_packets);
}

#[test]
fn a_page_of_twenty_streams_arrives_whole() {
    let out = sim(&geo(
        "seed = 2",
        "errors = { per = 0.005 }",
        "protocol = \"quic\"\nbytes = 2000000\nquic = { streams = 20 }",
    ));
    assert_exact(&out);
    let q = out.summary.flows[0].quic.as_ref().unwrap();
    assert_eq!(
        q.streams_completed, 20,
        "every stream of the page, each to its end"
    );
    let e = sim_err(&geo(
        "",
        "",
        "protocol = \"quic\"\nbytes = 1000\nquic = { streams = 0 }",
    ));
    assert!(e.contains("flows[0].quic.streams"), "{e}");
}

#[test]
fn losses_are_repaired_and_counted() {
    let out = sim(&geo(
        "seed = 3",
        "errors = { per = 0.01 }",
        "protocol = \"quic-newreno\"\nbytes = 1000000",
    ));
    assert_exact(&out);
    let f = &out.summary.flows[0];
    let q = f.quic.as_ref().unwrap();
    assert!(q.packets_lost > 0 && q.congestion_events > 0, "{q:?}");
    assert!(out.summary.links[0].error_drops > 0);
}

#[test]
fn a_seed_repeats_a_quic_run_exactly() {
    let toml = geo(
        "seed = 5",
        "errors = { per = 0.01 }",
        "protocol = \"quic-cubic\"\nbytes = 500000",
    );
    let a = serde_json::to_string(&sim(&toml).summary).unwrap();
    let b = serde_json::to_string(&sim(&toml).summary).unwrap();
    assert_eq!(a, b);
}

#[test]
fn an_outage_longer_than_the_idle_timeout_fails_the_flow_with_quinns_reason() {
    let out = sim(&geo(
        "seed = 1",
        "outages = [[\"2 s\", \"60 s\"]]",
        "protocol = \"quic\"\nbytes = 20000000\nquic = { max_idle_timeout = \"10 s\" }",
    ));
    let f = &out.summary.flows[0];
    assert!(!f.complete);
    let why = f.quic.as_ref().unwrap().failure.clone().expect("a failure");
    assert!(why.contains("timed out"), "{why}");
    assert!(f.state.starts_with("failed"), "{}", f.state);
}

#[test]
fn the_pcap_holds_the_real_quic_packets() {
    let dir = std::env::temp_dir().join(format!("spacetp-quic-pcap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("geo.pcap");
    let sc =
        scenario_from_toml(&geo("seed = 1", "", "protocol = \"quic\"\nbytes = 100000")).unwrap();
    let opts = RunOptions {
        pcap: vec![("0".into(), path.to_string_lossy().into())],
        keylog: None,
        qlog: None,
    };
    run(sc, &opts).unwrap();
    let d = std::fs::read(&path).unwrap();
    // The first record: the client's Initial, a QUIC v1 long header (RFC 9000 17.2) in a
    // UDP datagram padded to at least 1200 bytes (RFC 9000 14.1).
    let rec = &d[24 + 16..];
    assert_eq!(rec[9], 17, "IP protocol UDP");
    let udp_len = u16::from_be_bytes([rec[24], rec[25]]) as usize;
    assert!(udp_len - 8 >= 1200, "Initial of {} bytes", udp_len - 8);
    let quic = &rec[28..];
    assert_eq!(quic[0] & 0xf0, 0xc0, "long header, Initial");
    assert_eq!(&quic[1..5], &[0, 0, 0, 1], "QUIC version 1");
    // Encrypted, not zeros.
    assert!(quic[40..200].iter().any(|&b| b != 0));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn settings_that_do_not_fit_name_their_field() {
    let e = sim_err(&geo(
        "",
        "",
        "protocol = \"quic\"\nbytes = 1000\ntcp = { sack = true }",
    ));
    assert!(
        e.contains("flows[0].tcp") && e.contains("[flows.quic]"),
        "{e}"
    );
    let e = sim_err(&geo(
        "",
        "",
        "protocol = \"cubic\"\nbytes = 1000\nquic = { initial_rtt = \"1 s\" }",
    ));
    assert!(
        e.contains("flows[0].quic") && e.contains("QUIC protocol"),
        "{e}"
    );
    let e = sim_err(&geo(
        "",
        "",
        "protocol = \"quic\"\nbytes = 1000\nquic = { congestion_control = \"vegas\" }",
    ));
    assert!(e.contains("flows[0].quic.congestion_control"), "{e}");
    let e = sim_err(&geo(
        "",
        "",
        "protocol = \"quic\"\nbytes = 1000\nmtu = 1100",
    ));
    assert!(
        e.contains("flows[0].quic.initial_mtu") && e.contains("1072"),
        "{e}"
    );
}

#[test]
fn asking_the_peer_for_fewer_acks_unloads_an_ack_starved_return_link() {
    // 10 Mb/s forward, 16 kb/s back: ACKs every second packet fill the return link. With
    // the ACK frequency extension the sender asks for one ACK per ten packets.
    let run_with = |quic: &str| {
        let sc = hosts_a_b("seed = 1", "10 Mb/s", "300 ms", "rate_back = \"16 kb/s\"")
            + &flow_a_to_b(&format!("protocol = \"quic\"\nbytes = 3000000\n{quic}"));
        let out = sim(&sc);
        assert_exact(&out);
        let f = &out.summary.flows[0];
        (f.completion_s.unwrap(), out.summary.links[1].tx_packets)
    };
    let (t_default, acks_default) = run_with("");
    let (t_sparse, acks_sparse) =
        run_with("quic = { ack_frequency = { ack_eliciting_threshold = 9 } }");
    assert!(
        acks_sparse * 2 < acks_default,
        "{acks_sparse} packets back against {acks_default}"
    );
    assert!(t_sparse < t_default, "{t_sparse} s against {t_default} s");
    let e = sim_err(&(hosts_a_b("", "10 Mb/s", "300 ms", "")
        + &flow_a_to_b(
            "protocol = \"quic\"\nbytes = 1000\nquic = { ack_frequency = { max_ack_delay = \"0 s\" } }",
        )));
    assert!(
        e.contains("flows[0].quic.ack_frequency.max_ack_delay"),
        "{e}"
    );
}

#[test]
fn a_file_request_workload_runs_each_file_as_its_own_quic_connection() {
    let requests = r#"
[[workloads]]
kind = "file_requests"
clients = ["a"]
server = "b"
size = { exponential = "200 kB" }
interval = { exponential = "5 s" }
count = 4
protocol = "quic-bbr"
quic = { initial_rtt = "600 ms" }
"#;
    let out =
        sim(&(hosts_a_b("seed = 3", "10 Mb/s", "300 ms", "rate_back = \"1 Mb/s\"") + requests));
    assert_eq!(out.summary.flows.len(), 4);
    assert_exact(&out);
    for f in &out.summary.flows {
        assert_eq!(f.workload.as_deref(), Some("workload0"));
        let q = f.quic.as_ref().expect("each file is a QUIC connection");
        // Each connection's handshake costs its own round trip.
        assert!(q.handshake_s.unwrap() >= 0.6, "{}", f.name);
    }
    let bad = requests.replace("quic = {", "tcp = { sack = true }\nquic = {");
    let e = sim_err(&(hosts_a_b("", "10 Mb/s", "300 ms", "") + &bad));
    assert!(e.contains("workloads[0].tcp"), "{e}");
    let not_quic = requests.replace("quic-bbr", "newreno");
    let e = sim_err(&(hosts_a_b("", "10 Mb/s", "300 ms", "") + &not_quic));
    assert!(e.contains("workloads[0].quic"), "{e}");
}

#[test]
fn datagram_frames_are_never_resent_and_yield_to_congestion_control() {
    // A 1 Mb/s source of 1000-byte datagrams on a clean link, a lossy one, and one whose
    // 4 Mb/s cannot carry an 8 Mb/s source. UDP sends everything and the queue drops the
    // excess; QUIC sends DATAGRAM frames under its congestion control, so the excess is
    // dropped in quinn's send buffer instead of the link's queue.
    let run_with = |protocol: &str, rate: &str, link_rate: &str, errors: &str| {
        let source = format!(
            "[[traffic]]\nfrom = \"a\"\nto = \"b\"\nrate = \"{rate}\"\nsize = \"1000 B\"\nprotocol = \"{protocol}\"\n"
        );
        let hosts = hosts_a_b("seed = 4\nstop = \"20 s\"", link_rate, "100 ms", errors);
        sim(&(hosts + &source))
    };
    let clean = run_with("quic", "1 Mb/s", "10 Mb/s", "");
    let d = &clean.summary.datagrams[0];
    let q = d.quic.as_ref().expect("QUIC counters");
    assert_eq!(q.too_large, 0);
    // Everything but what the handshake held and the run's last round trip arrives.
    assert!(d.packets_received * 100 >= d.packets_sent * 97, "{d:?}");
    assert_eq!(d.bytes_received, d.packets_received * 1000);

    let lossy = run_with("quic", "1 Mb/s", "10 Mb/s", "errors = { per = 0.02 }");
    let d = &lossy.summary.datagrams[0];
    // Lost frames are never resent; and CUBIC, seeing 2% loss, holds the sender back, so
    // many more are dropped in quinn's send buffer than on the link.
    let lost = d.packets_sent - d.packets_received;
    assert!(lost * 100 >= 2 * d.packets_sent, "{d:?}");
    assert_eq!(lossy.summary.links[0].queue_drops, 0);

    let udp = run_with("udp", "8 Mb/s", "4 Mb/s", "");
    let quic = run_with("quic", "8 Mb/s", "4 Mb/s", "");
    let (u, q) = (&udp.summary.links[0], &quic.summary.links[0]);
    assert!(
        q.queue_drops * 10 < u.queue_drops,
        "QUIC {} against UDP {}",
        q.queue_drops,
        u.queue_drops
    );
    let got = quic.summary.datagrams[0].bytes_received as f64 * 8.0 / 20.0;
    assert!(got > 0.5 * 4e6, "QUIC still fills the link: {got} b/s");

    let e = sim_err(&(hosts_a_b("stop = \"1 s\"", "4 Mb/s", "100 ms", "")
        + "[[traffic]]\nfrom = \"a\"\nto = \"b\"\nrate = \"1 Mb/s\"\nsize = \"1000 B\"\nprotocol = \"sctp\"\n"));
    assert!(e.contains("traffic[0].protocol"), "{e}");
    let e = sim_err(&(hosts_a_b("stop = \"1 s\"", "4 Mb/s", "100 ms", "")
        + "[[traffic]]\nfrom = \"a\"\nto = \"b\"\nrate = \"1 Mb/s\"\nsize = \"1600 B\"\nprotocol = \"quic\"\n"));
    assert!(e.contains("traffic[0].size"), "{e}");
}

#[test]
fn zero_rtt_lets_later_files_of_a_workload_arrive_a_round_trip_sooner() {
    let requests = |zero_rtt: bool| {
        format!(
            r#"
[[workloads]]
kind = "file_requests"
clients = ["a"]
server = "b"
direction = "put"
size = {{ constant = "5 kB" }}
interval = {{ constant = "5 s" }}
count = 3
protocol = "quic-cubic"
quic = {{ initial_rtt = "600 ms", zero_rtt = {zero_rtt} }}
"#
        )
    };
    let hosts = hosts_a_b("seed = 3", "10 Mb/s", "300 ms", "rate_back = \"1 Mb/s\"");
    let with = sim(&(hosts.clone() + &requests(true)));
    let without = sim(&(hosts + &requests(false)));
    for f in &with.summary.flows {
        assert!(f.complete && f.bytes_delivered == 5_000, "{}", f.name);
        // No connection failed; the last one's sender may still await the server's close
        // (sent after the handshake) when the run ends with its last byte.
        assert!(
            f.state == "closed" || f.state == "open",
            "{}: {}",
            f.name,
            f.state
        );
    }
    let z: Vec<Option<bool>> = with
        .summary
        .flows
        .iter()
        .map(|f| f.quic.as_ref().unwrap().zero_rtt_accepted)
        .collect();
    // The first file has no session to resume; the next ones resume it.
    assert_eq!(z, vec![None, Some(true), Some(true)]);
    for (w, wo) in with
        .summary
        .flows
        .iter()
        .zip(&without.summary.flows)
        .skip(1)
    {
        let (a, b) = (w.completion_s.unwrap(), wo.completion_s.unwrap());
        assert!(b - a > 0.55, "{}: {a} s with 0-RTT, {b} s without", w.name);
    }
    assert!(without.summary.flows.iter().all(|f| f
        .quic
        .as_ref()
        .unwrap()
        .zero_rtt_accepted
        .is_none()));
}

#[test]
fn a_window_with_more_holes_than_quinn_keeps_fails_the_flow_and_says_why() {
    // 50 Mb/s down, 10 up, 280 ms each way, the default 100-packet queue: quic-bbr's
    // start-up overflows the queue, and with 12 MB windows the receiver's buffer holds more
    // than 1 024 separate pieces: quinn-proto (the receiver's own code) ends the connection.
    // 8 MB is the largest window that completes on this link (docs/quic.md). A failed flow
    // is a failure, named in `failure`, never a slow run.
    let flow = |w: &str| {
        let q = format!(
            "quic = {{ stream_receive_window = \"{w}\", receive_window = \"{w}\", send_window = \"{w}\" }}"
        );
        hosts_a_b("seed = 1", "50 Mb/s", "280 ms", "rate_back = \"10 Mb/s\"")
            + &flow_a_to_b(&format!("protocol = \"quic-bbr\"\nbytes = \"20 MB\"\n{q}"))
    };
    let out = sim(&flow("12 MB"));
    let f = &out.summary.flows[0];
    assert!(!f.complete);
    let why = f.failure.as_deref().expect("a failure");
    assert!(why.contains("too many gaps in stream buffer"), "{why}");
    assert!(why.contains("1 024 separate out-of-order pieces"), "{why}");
    let out = sim(&flow("8 MB"));
    assert_exact(&out);
    assert_eq!(out.summary.flows[0].failure, None);
}

/// `quic.max_pacing_rate` (quiche's, Linux's SO_MAX_PACING_RATE): BBR on a 10 Mb/s GEO link
/// capped at 2 Mb/s takes about five times the link's time for 1 MB, its bytes whole; an
/// unusable cap names the field.
#[test]
fn a_capped_quic_connection_sends_no_faster_than_its_cap() {
    let run = |cap: &str| {
        let out = sim(&geo(
            "seed = 1",
            "",
            &format!("protocol = \"quic-bbr\"\nbytes = 1000000\n{cap}"),
        ));
        assert_exact(&out);
        let f = &out.summary.flows[0];
        f.last_byte_s.unwrap()
    };
    let free = run("");
    let capped = run("quic = { max_pacing_rate = \"2 Mb/s\" }");
    // 1 MB at 2 Mb/s, headers included: at least 4 s of sending after the handshake.
    assert!(capped >= 4.0, "capped transfer took {capped} s");
    assert!(free < capped / 2.0, "uncapped {free} s, capped {capped} s");
    let e = sim_err(&geo(
        "",
        "",
        "protocol = \"quic\"\nbytes = 1000\nquic = { max_pacing_rate = \"1 kb/s\" }",
    ));
    assert!(
        e.contains("flows[0].quic.max_pacing_rate") && e.contains("8 kb/s"),
        "{e}"
    );
}
