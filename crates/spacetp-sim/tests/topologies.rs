//! Builders (chain, dumbbell, ground stations), routing through routers, workloads and
//! background datagram traffic.

mod common;
use common::*;

/// A `[topology]` of this kind and size whose hosts hang off 100 Mb/s, 1 ms access links.
fn with_access_links(kind: &str, size: &str, core: &str) -> String {
    format!(
        r#"
[topology]
kind = "{kind}"
{size}
access = {{ rate = "100 Mb/s", delay = "1 ms" }}
core = {core}
"#
    )
}

#[test]
fn chain_routes_through_every_router() {
    let out = sim(r#"
[topology]
kind = "chain"
nodes = 5
core = { rate = "10 Mb/s", delay = "5 ms" }
[[flows]]
from = "n0"
to = "n4"
bytes = "500 kB"
"#);
    assert_exact(&out);
    // 4 hops each way: 8 ms x 2 x 5 ms = 40 ms plus serialisation
    let rtt = out.summary.flows[0].min_rtt_s.unwrap();
    assert!((0.040..0.041).contains(&rtt), "{rtt}");
    assert!(out.summary.links.iter().all(|l| l.tx_packets > 0));
}

#[test]
fn dumbbell_pairs_share_the_bottleneck() {
    let core = r#"{ rate = "3 Mb/s", delay = "50 ms", queue = { packets = 20 } }"#;
    let flows = r#"
[[flows]]
from = "s0"
to = "r0"
bytes = "1 MB"
[[flows]]
from = "s1"
to = "r1"
bytes = "1 MB"
[[flows]]
from = "s2"
to = "r2"
bytes = "1 MB"
"#;
    let out = sim(&(with_access_links("dumbbell", "pairs = 3", core) + flows));
    assert_exact(&out);
    let bottleneck = &out.summary.links[0];
    assert_eq!(bottleneck.name, "left->right");
    assert!(
        bottleneck.queue_drops > 0,
        "three flows must congest a 20-packet queue"
    );
}

#[test]
fn file_requests_behind_ground_stations() {
    let core = r#"{ rate = "680 kb/s", delay = "350 ms" }"#;
    let requests = r#"
[[workloads]]
kind = "file_requests"
clients = ["h0", "h1", "h2", "h3"]
server = "srv0"
size = { exponential = "40 kB" }
interval = { exponential = "20 s" }
count = 3
"#;
    let out = sim(&(with_access_links("ground_stations", "hosts = 4", core) + requests));
    assert_eq!(out.summary.flows.len(), 12);
    assert_exact(&out);
    assert!(out
        .summary
        .flows
        .iter()
        .all(|f| f.from == "srv0" && f.workload.is_some()));
}

#[test]
fn datagram_sources_send_at_their_rate() {
    // Two sources of 1000 B datagrams at 1 Mb/s, the second one on and off.
    let source = r#"[[traffic]]
from = "a"
to = "b"
rate = "1 Mb/s"
size = "1000 B"
"#;
    let on_off = "pattern = \"onoff\"\non = \"1 s\"\noff = \"1 s\"\n";
    let hosts = hosts_a_b(r#"stop = "10 s""#, "10 Mb/s", "10 ms", "");
    let out = sim(&(hosts + source + source + on_off));
    let cbr = &out.summary.datagrams[0];
    assert_eq!(cbr.packets_sent, 1250); // 1 Mb/s / 8000 bits over 10 s
    assert!(cbr.packets_received >= 1248);
    let onoff = out.summary.datagrams[1].packets_sent as f64;
    assert!(onoff > 250.0 && onoff < 1000.0, "{onoff}");
}
