//! TCP-Peach+: Jump Start, Quick Recovery, and the priority queue that drops NIL segments
//! first (Akyildiz, Zhang & Fang 2002; Akan et al. 2002 evaluate it on deep-space links).

mod common;
use common::*;

fn link(rtt_half: &str, extra: &str, proto: &str, bytes: &str, tcp: &str) -> String {
    let queue = "queue = { packets = 200, discipline = \"priority\" }";
    hosts_a_b("", "1 Mb/s", rtt_half, &format!("{queue}\n{extra}"))
        + &flow_a_to_b(&format!(
            "protocol = \"{proto}\"\nbytes = \"{bytes}\"\nreceive_buffer = \"64 kB\"\n{tcp}"
        ))
}

#[test]
fn jump_start_opens_the_window_in_one_round_trip() {
    // RTT 2 s, 64 kB window = 44 segments: slow start from one segment needs ~6 RTTs.
    let p = sim(&link("1 s", "", "peach+", "300 kB", ""));
    let n = sim(&link(
        "1 s",
        "",
        "newreno",
        "300 kB",
        "[flows.tcp]\ninitial_window = 1",
    ));
    assert_exact(&p);
    assert_exact(&n);
    let (tp, tn) = (
        p.summary.flows[0].completion_s.unwrap(),
        n.summary.flows[0].completion_s.unwrap(),
    );
    assert!(tcp(&p).nil_segments_sent >= 40);
    assert!(tp < 0.7 * tn, "peach+ {tp} s vs newreno {tn} s");
}

#[test]
fn quick_recovery_beats_newreno_under_link_errors() {
    let mut ratio = 0.0;
    for seed in 1..=5 {
        let e = "errors = { per = 0.005 }\nerrors_back = {}";
        let p = sim(&format!(
            "seed = {seed}\n{}",
            link("500 ms", e, "peach+", "1 MB", "")
        ));
        let n = sim(&format!(
            "seed = {seed}\n{}",
            link("500 ms", e, "newreno", "1 MB", "")
        ));
        assert_exact(&p);
        assert_exact(&n);
        ratio += p.summary.flows[0].goodput_bps / n.summary.flows[0].goodput_bps / 5.0;
    }
    assert!(ratio > 1.2, "peach+ / newreno goodput = {ratio}");
}

#[test]
fn congested_routers_drop_nil_segments_first() {
    // Two Peach+ flows into a 20-packet priority queue: the NIL segments lose.
    let out = sim(r#"
[topology]
kind = "dumbbell"
pairs = 2
access = { rate = "10 Mb/s", delay = "1 ms" }
core = { rate = "1 Mb/s", delay = "200 ms", queue = { packets = 20, discipline = "priority" } }
[[flows]]
from = "s0"
to = "r0"
protocol = "peach+"
bytes = "500 kB"
[[flows]]
from = "s1"
to = "r1"
protocol = "peach+"
bytes = "500 kB"
"#);
    assert_exact(&out);
    let core = &out.summary.links[0];
    assert!(core.low_priority_drops > 0);
    assert!(core.low_priority_drops * 2 > core.queue_drops, "{core:?}");
}

#[test]
fn jump_start_uses_the_scaled_receive_window() {
    // 256 kB window (175 segments) on a 2 Mb/s, 2 s RTT link: the SYN-ACK can only say
    // 64 kB; Jump Start must still open to the real window within the first round trip.
    let big = |w: &str| {
        sim(&link("1 s", "", "peach+", "2 MB", "")
            .replace("rate = \"1 Mb/s\"", "rate = \"2 Mb/s\"")
            .replace(
                "receive_buffer = \"64 kB\"",
                &format!("receive_buffer = \"{w}\""),
            ))
    };
    let (small, large) = (big("64 kB"), big("256 kB"));
    assert_exact(&small);
    assert_exact(&large);
    let (ns, nl) = (tcp(&small).nil_segments_sent, tcp(&large).nil_segments_sent);
    assert!(
        nl > 2 * ns,
        "NIL segments: {ns} with 64 kB, {nl} with 256 kB"
    );
    let (ts, tl) = (
        small.summary.flows[0].completion_s.unwrap(),
        large.summary.flows[0].completion_s.unwrap(),
    );
    assert!(tl < 0.8 * ts, "256 kB window {tl} s vs 64 kB {ts} s");
}
