//! `[[forwarding]]`: next hops that change over time, as a constellation's routing writes
//! them. Two paths from a to b, a long one through r1 and a short one through r2.

mod common;
use common::*;

/// a -(r1: 2 x 60 ms)- b and a -(r2: 2 x 10 ms)- b, 10 Mb/s everywhere; a's hop toward b
/// follows `schedule`, everything else the static routes (through r1, listed first).
fn diamond(schedule: &str, flow: &str) -> String {
    diamond_at("10 Mb/s", schedule, flow)
}

fn diamond_at(rate: &str, schedule: &str, flow: &str) -> String {
    format!(
        r#"
seed = 3
stop = "30 s"
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[nodes]]
name = "r1"
[[nodes]]
name = "r2"
[[links]]
between = ["a", "r1"]
rate = "{rate}"
delay = "60 ms"
[[links]]
between = ["r1", "b"]
rate = "{rate}"
delay = "60 ms"
[[links]]
between = ["a", "r2"]
rate = "{rate}"
delay = "10 ms"
[[links]]
between = ["r2", "b"]
rate = "{rate}"
delay = "10 ms"
[[forwarding]]
node = "a"
to = "b"
schedule = {schedule}
{flow}
"#
    )
}

fn link<'a>(out: &'a spacetp_sim::RunOutput, name: &str) -> &'a spacetp_sim::link::LinkStats {
    out.summary
        .links
        .iter()
        .find(|l| l.name == name)
        .unwrap_or_else(|| panic!("no link {name}"))
}

const FLOW: &str =
    "[[flows]]\nfrom = \"a\"\nto = \"b\"\nprotocol = \"linux-cubic\"\nbytes = \"20 MB\"";

#[test]
fn data_moves_to_the_new_hop_at_its_instant_and_arrives_exactly() {
    let out = sim(&diamond(r#"[["0 s", "r1"], ["4 s", "r2"]]"#, FLOW));
    assert_exact(&out);
    let (long, short) = (link(&out, "a->r1"), link(&out, "a->r2"));
    assert!(
        long.tx_packets > 500,
        "before 4 s through r1: {}",
        long.tx_packets
    );
    assert!(
        short.tx_packets > 5000,
        "after 4 s through r2: {}",
        short.tx_packets
    );
    // The ACKs keep the static route back (through r1): nothing from b goes through r2.
    assert_eq!(link(&out, "b->r2").tx_packets, 0);
    assert!(link(&out, "b->r1").tx_packets > 1000);
}

#[test]
fn a_shorter_path_under_a_flow_reorders_its_segments_and_a_longer_one_raises_its_rtt() {
    // Long to short: the first segments on the short path arrive before the last ones on
    // the long path, 100 ms earlier: the receiver sees them out of order (SACK blocks,
    // duplicate ACKs) though no link lost anything.
    // At 2 Mb/s a 100 kB window keeps the long path busy (its BDP is 60 kB) and no queue
    // overflows: segments are in flight on it at any instant.
    let windowed = FLOW.replace("linux-cubic", "sack").replace("20 MB", "2 MB")
        + "\nreceive_buffer = \"100 kB\"";
    let out = sim(&diamond_at(
        "2 Mb/s",
        r#"[["0 s", "r1"], ["3 s", "r2"]]"#,
        &windowed,
    ));
    assert_exact(&out);
    let f = &out.summary.flows[0];
    assert!(out
        .summary
        .links
        .iter()
        .all(|l| l.queue_drops + l.error_drops == 0));
    assert!(
        tcp(&out).fast_retransmits + f.retransmitted_segments > 0,
        "reordering is taken for loss by a sender without a reordering window to spare"
    );
    // Short to long: the RTT grows from 2 x 10 + 2 x 60 ms to 2 x 120 ms from 1 s on.
    let up = sim(&diamond(r#"[["0 s", "r2"], ["1 s", "r1"]]"#, FLOW));
    let short = sim(&diamond(r#"[["0 s", "r2"]]"#, FLOW));
    assert_exact(&up);
    let rtt = |o: &spacetp_sim::RunOutput| o.summary.flows[0].mean_rtt_s.unwrap();
    assert!(
        rtt(&up) > rtt(&short) + 0.05,
        "{} s vs {} s",
        rtt(&up),
        rtt(&short)
    );
}

#[test]
fn an_empty_hop_drops_packets_for_its_interval_and_the_transfer_resumes() {
    let out = sim(&diamond(
        r#"[["0 s", "r2"], ["2 s", ""], ["3 s", "r2"]]"#,
        FLOW,
    ));
    assert_exact(&out);
    assert!(
        out.summary.flows[0].timeouts >= 1,
        "a second without a route: a timeout"
    );
}

#[test]
fn bad_forwarding_is_refused_with_its_field_named() {
    for (schedule, want) in [
        (
            r#"[["0 s", "r9"]]"#,
            "forwarding[0].schedule[0]: unknown node \"r9\"",
        ),
        (
            r#"[["0 s", "b"]]"#,
            "forwarding[0].schedule[0]: \"b\" is not a neighbour of \"a\"",
        ),
        (
            r#"[["2 s", "r1"], ["1 s", "r2"]]"#,
            "forwarding[0].schedule[1]: times must increase strictly: 1 s after 2 s",
        ),
        ("[]", "forwarding[0].schedule: give at least one"),
    ] {
        let e = sim_err(&diamond(schedule, FLOW));
        assert!(e.contains(want), "{schedule}: {e}");
    }
    // r1 sends packets for b back to a from 5 s on, and a sends them to r1: a loop.
    let looped = diamond(r#"[["0 s", "r1"]]"#, FLOW)
        + "[[forwarding]]\nnode = \"r1\"\nto = \"b\"\nschedule = [[\"0 s\", \"b\"], [\"5 s\", \"a\"]]\n";
    let e = sim_err(&looped);
    assert!(
        e.contains("at 5 s the hops toward \"b\" go around a loop: r1 -> a"),
        "{e}"
    );
    let twice = diamond(r#"[["0 s", "r1"]]"#, FLOW)
        + "[[forwarding]]\nnode = \"a\"\nto = \"b\"\nschedule = [[\"0 s\", \"r2\"]]\n";
    assert!(sim_err(&twice).contains("forwarding[1]: a second entry for \"a\" toward \"b\""));
}

#[test]
fn the_core_refuses_a_constellation_the_python_front_has_not_expanded() {
    let sc = diamond(r#"[["0 s", "r1"]]"#, FLOW)
        + "[constellation]\ncities = [\"Paris\"]\n[[constellation.shells]]\ntle = \"\"\n";
    let e = sim_err(&sc);
    assert!(
        e.starts_with("constellation: a constellation is turned into nodes"),
        "{e}"
    );
}

#[test]
fn a_loop_through_a_static_route_is_refused() {
    // r1 sends packets for b back to a, whose static route to b is through r1.
    let looped = diamond(r#"[["0 s", "r1"]]"#, FLOW).replace(
        "[[forwarding]]\nnode = \"a\"\nto = \"b\"\nschedule = [[\"0 s\", \"r1\"]]",
        "[[forwarding]]\nnode = \"r1\"\nto = \"b\"\nschedule = [[\"0 s\", \"a\"]]",
    );
    let e = sim_err(&looped);
    assert!(
        e.contains("at 0 s the hops toward \"b\" go around a loop: r1 -> a"),
        "{e}"
    );
}

#[test]
fn a_path_that_is_missing_at_the_start_is_waited_for_not_refused() {
    // r1 drops packets for b for the first second (a's hop is r1): the flow's set-up checks
    // walk the static route, its SYN is lost, and it completes once the path is there.
    let gap = diamond(r#"[["0 s", "r1"]]"#, FLOW)
        + "[[forwarding]]\nnode = \"r1\"\nto = \"b\"\nschedule = [[\"0 s\", \"\"], [\"1 s\", \"b\"]]\n";
    let out = sim(&gap);
    assert_exact(&out);
    assert!(
        out.summary.flows[0].timeouts >= 1,
        "the first SYN was dropped"
    );
}

/// a -(r1, 5 Mb/s)- b and a -(r2, 20 Mb/s)- b, 10 ms a link; a's hop toward b moves from r1
/// to r2 at `switch`; a CUBIC flow that fills whichever path it has until 20 s.
fn slow_then_fast(switch: &str) -> String {
    let path = |r: &str, rate: &str| {
        format!(
            "[[links]]\nbetween = [\"a\", \"{r}\"]\nrate = \"{rate}\"\ndelay = \"10 ms\"\nqueue = {{ bdp = 1.0 }}\n\
             [[links]]\nbetween = [\"{r}\", \"b\"]\nrate = \"{rate}\"\ndelay = \"10 ms\"\nqueue = {{ bdp = 1.0 }}\n"
        )
    };
    format!(
        "seed = 3\nstop = \"20 s\"\n[[nodes]]\nname = \"a\"\n[[nodes]]\nname = \"b\"\n\
         [[nodes]]\nname = \"r1\"\n[[nodes]]\nname = \"r2\"\n{}{}\
         [[forwarding]]\nnode = \"a\"\nto = \"b\"\nschedule = [[\"0 s\", \"r1\"], [\"{switch}\", \"r2\"]]\n\
         [[flows]]\nfrom = \"a\"\nto = \"b\"\nprotocol = \"linux-cubic\"\n\
         receive_buffer = \"64 MB\"\nsend_buffer = \"64 MB\"\n",
        path("r1", "5 Mb/s"),
        path("r2", "20 Mb/s")
    )
}

#[test]
fn the_limit_analysis_follows_the_path_to_its_new_bottleneck() {
    // From 2 s the flow fills the 20 Mb/s path: the analysis must see that link busy and
    // name it. Reading the first path's facts all run, it saw a 5 Mb/s link sit idle and
    // gave the time to the window.
    let out = sim(&slow_then_fast("2 s"));
    let fast = link(&out, "a->r2");
    assert!(
        fast.tx_bytes as f64 * 8.0 > 0.8 * 20e6 * 18.0,
        "the new path is full: {} B",
        fast.tx_bytes
    );
    let top = &out.summary.flows[0].limits[0];
    assert_eq!(top.state, "link", "{:?}", out.summary.flows[0].limits);
    assert!(top.share > 0.8, "{:?}", out.summary.flows[0].limits);
    assert_eq!(top.setting.as_deref(), Some("links[2].rate"));
    assert_eq!(top.value.as_deref(), Some("20 Mb/s"));
    assert_eq!(top.fact.as_deref(), Some("link 20 Mb/s"));
}
