//! Link timing, queues, delay schedules and the scenario checks.

mod common;
use common::*;

#[test]
fn handshake_rtt_is_propagation_plus_serialisation() {
    // SYN and SYN-ACK are 48 bytes (20 IP + 20 TCP + MSS 4 + WS 3 + pad 1) at 1 Mb/s:
    // 0.384 ms each way on top of 2 x 100 ms.
    let toml = two_nodes("", r#"bytes = "10 kB""#)
        .replace("2 Mb/s", "1 Mb/s")
        .replace("40 ms", "100 ms");
    let out = sim(&toml);
    assert_eq!(out.summary.flows[0].min_rtt_s, Some(0.200768));
}

#[test]
fn bulk_transfer_fills_the_bottleneck() {
    // 4 MB over 2 Mb/s: at least 16 s; with a BDP queue NewReno should get close to it.
    let out = sim(&two_nodes("queue = { bdp = 1.0 }", r#"bytes = "4 MB""#));
    assert_exact(&out);
    let f = &out.summary.flows[0];
    let min = 4e6 * 8.0 / 2e6 * (1000.0 + 0.0) / 960.0; // headers: 40 of every 1000 bytes
    let t = f.completion_s.unwrap();
    assert!(
        t > min && t < 1.25 * min,
        "completion {t} vs line rate {min}"
    );
}

#[test]
fn drop_tail_queue_limits_are_enforced() {
    let out = sim(&two_nodes("queue = { packets = 5 }", r#"bytes = "1 MB""#));
    assert_exact(&out);
    assert!(out.summary.links[0].queue_drops > 0);
    assert!(out.summary.links[0].max_queue_packets <= 5);
    let out = sim(&two_nodes(
        "queue = { bytes = \"3 kB\" }",
        r#"bytes = "1 MB""#,
    ));
    assert!(out.summary.links[0].max_queue_bytes <= 3000);
}

#[test]
fn delay_schedule_changes_the_rtt() {
    // Forward delay ramps 10 ms -> 210 ms over 20 s; back delay 1 ms. Short flows started
    // at 0, 10 and 25 s see handshake RTTs of 11, 111 and 211 ms (plus 48-byte SYNs at
    // 2 Mb/s: 0.192 ms each way).
    let mut toml = two_nodes("", r#"bytes = "10 kB""#).replace(
        "delay = \"40 ms\"",
        "delay_back = \"1 ms\"\n[links.delay]\nschedule = [[\"0 s\", \"10 ms\"], [\"20 s\", \"210 ms\"]]",
    );
    for start in ["10 s", "25 s"] {
        toml += &format!(
            "[[flows]]\nfrom = \"a\"\nto = \"b\"\nbytes = \"10 kB\"\nstart = \"{start}\"\n"
        );
    }
    let out = sim(&toml);
    let rtts: Vec<f64> = out
        .summary
        .flows
        .iter()
        .map(|f| f.min_rtt_s.unwrap())
        .collect();
    let want = [0.011384, 0.111384, 0.211384];
    for (got, want) in rtts.iter().zip(want) {
        assert!((got - want).abs() < 2e-6, "{rtts:?}");
    }
}

#[test]
fn deterministic_and_seed_dependent() {
    let toml = two_nodes("errors = { per = 0.01 }", r#"bytes = "1 MB""#);
    let a = serde_json::to_string(&sim(&toml).summary).unwrap();
    let b = serde_json::to_string(&sim(&toml).summary).unwrap();
    assert_eq!(a, b);
    let c = serde_json::to_string(&sim(&toml.replace("seed = 7", "seed = 8")).summary).unwrap();
    assert_ne!(a, c);
}

#[test]
fn bad_scenarios_name_the_field() {
    let cases = [
        (
            two_nodes("ratee = \"1 Mb/s\"", ""),
            "links[0].ratee: unknown field `ratee`, expected one of `between`, `rate`",
        ),
        (
            two_nodes("rate_back = \"5 kbit\"", ""),
            "links[0].rate_back: \"5 kbit\" is not a rate; use e.g. \"5 kb/s\"",
        ),
        (
            two_nodes("rate_back = \"-5 kb/s\"", ""),
            "links[0].rate_back: \"-5 kb/s\": a rate must be finite and > 0",
        ),
        (
            two_nodes("errors = { ber = 1.0 }", r#"bytes = "1 kB""#),
            "links[0].errors.ber: 1 must be in [0, 1)",
        ),
        (
            two_nodes("", r#"bytes = "1 kB""#)
                .replace("between = [\"a\", \"b\"]", "between = [\"a\", \"c\"]"),
            "links[0].between[1]: unknown node \"c\"; nodes are: a, b",
        ),
        (
            two_nodes("", r#"bytes = "1 kB""#).replace("protocol", "x"),
            "",
        ),
        (
            two_nodes(
                "",
                r#"protocol = "tcp-foo"
bytes = "1 kB""#,
            ),
            "flows[0].protocol: unknown protocol \"tcp-foo\"",
        ),
        (two_nodes("", ""), "flows[0]: give bytes, or a stop time"),
        (
            two_nodes(
                "",
                r#"bytes = "1 kB"
[flows.tcp]
initial_windw = 3"#,
            ),
            "flows[0].tcp.initial_windw: unknown field",
        ),
        (String::new(), "the scenario is empty"),
        (
            two_nodes("", r#"bytes = "1 kB""#).replace("rate = \"2 Mb/s\"", ""),
            "links[0].rate: required",
        ),
        (
            two_nodes("", r#"bytes = "1 kB""#).replace("\"40 ms\"", "\"40\""),
            "links[0].delay: \"40\" is not a duration; use e.g. \"50 ms\"",
        ),
        (
            two_nodes(
                "",
                r#"bytes = "1 kB"
receive_buffer = "2 GB""#,
            ),
            "flows[0].tcp.receive_buffer: 2000000000 B is above the largest window",
        ),
    ];
    for (toml, want) in cases {
        if want.is_empty() {
            continue;
        }
        let e = sim_err(&toml);
        assert!(e.contains(want), "got: {e}\nwant: {want}");
    }
    let unroutable = r#"
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[nodes]]
name = "c"
[[links]]
between = ["a", "b"]
rate = "1 Mb/s"
delay = "1 ms"
[[flows]]
from = "a"
to = "c"
bytes = "1 kB"
"#;
    assert_eq!(
        sim_err(unroutable),
        "flows[0]: no route from \"a\" to \"c\"; connect them with [[links]]"
    );
}

#[test]
fn topology_errors_name_the_template() {
    let e = sim_err(
        r#"
[topology]
kind = "dumbbell"
pairs = 1
access = { rate = "10 Mb/s", delay = "1 ms", errors = { per = 2.0 } }
core = { rate = "1 Mb/s", delay = "10 ms" }
[[flows]]
from = "s0"
to = "r0"
bytes = "1 kB"
"#,
    );
    assert!(
        e.starts_with("topology.access.errors.per: 2 is not a probability"),
        "{e}"
    );
    let e = sim_err(
        r#"
[topology]
kind = "ground_stations"
hosts = 1
servers = 0
access = { rate = "10 Mb/s", delay = "1 ms" }
core = { rate = "1 Mb/s", delay = "10 ms" }
"#,
    );
    assert_eq!(e, "topology.servers: must be at least 1");
}

#[test]
fn a_stopped_flow_stops_sending() {
    // An unlimited flow stopped at 5 s beside a 20 MB flow: no segment of it after 5 s.
    let toml = two_nodes("", r#"stop = "5 s""#).replace("2 Mb/s", "10 Mb/s")
        + "[[flows]]\nfrom = \"a\"\nto = \"b\"\nbytes = \"20 MB\"\nmtu = 1000\n"
        + "[trace]\nsegments = true\n";
    let out = sim(&toml);
    let f = &out.summary.flows;
    assert!(f[0].last_byte_s.unwrap() <= 5.0);
    assert!(f[1].complete);
    let seg = out.segments.unwrap();
    let col = |n: &str| &seg.columns.iter().find(|c| c.0 == n).unwrap().1;
    let (t, flow) = (col("time_s"), col("flow"));
    let last0 = (0..t.len())
        .filter(|&i| flow[i] == 0.0)
        .map(|i| t[i])
        .fold(0.0, f64::max);
    assert!(
        last0 > 4.9 && last0 <= 5.0,
        "last segment of the stopped flow at {last0} s"
    );
    assert!(t.iter().zip(flow).any(|(&t, &f)| f == 1.0 && t > 10.0));
    // a finite flow with its own stop is abandoned incomplete
    let toml = two_nodes("", "bytes = \"20 MB\"\nstop = \"3 s\"");
    let out = sim(&toml);
    assert!(!out.summary.flows[0].complete);
    assert!(out.summary.flows[0].bytes_undelivered.unwrap() > 0);
}

#[test]
fn a_slow_reader_paces_the_transfer() {
    // 2 Mb/s link, the receiving application reads 200 kb/s from a 30 kB buffer.
    let out = sim(&two_nodes(
        "",
        "bytes = \"1 MB\"\nread_rate = \"200 kb/s\"\nreceive_buffer = \"30 kB\"",
    ));
    assert_exact(&out);
    let g = out.summary.flows[0].goodput_bps;
    assert!(
        g > 190e3 && g <= 201e3,
        "goodput {g} should be the read rate"
    );
}

#[test]
fn goodput_over_a_window_counts_only_the_bytes_delivered_in_it() {
    // 2 Mb/s, 40 ms, 4 MB with a BDP queue. To the last byte the goodput includes slow
    // start; over [5 s, 10 s], in steady state, it is the link's payload rate (960 of every
    // 1000 bytes), and a window after the last byte delivered nothing.
    let run = |window: &str| {
        let out = sim(&two_nodes(
            "queue = { bdp = 1.0 }",
            &format!("bytes = \"4 MB\"\ngoodput_window = {window}"),
        ));
        out.summary.flows[0].clone()
    };
    let f = run(r#"["5 s", "10 s"]"#);
    let steady = f.goodput_window_bps.unwrap();
    assert!(f.goodput_bps < steady, "{} vs {steady}", f.goodput_bps);
    assert!((steady / (2e6 * 0.96) - 1.0).abs() < 0.02, "{steady}");
    let after = run(r#"["100 s", "200 s"]"#).goodput_window_bps.unwrap();
    assert_eq!(after, 0.0);
    // The whole transfer as the window: the same bytes over a longer interval.
    let whole = run(r#"["0 s", "100 s"]"#).goodput_window_bps.unwrap();
    assert!((whole - 4e6 * 8.0 / 100.0).abs() < 1.0, "{whole}");
    let e = sim_err(&two_nodes(
        "",
        "bytes = \"1 MB\"\ngoodput_window = [\"5 s\", \"5 s\"]",
    ));
    assert!(e.starts_with("flows[0].goodput_window:"), "{e}");
}
