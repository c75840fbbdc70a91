//! The limit analysis against a catalogue of constructed cases, one per state: each scenario
//! is built so that one thing holds the flow back, worked out from the scenario itself (a
//! 64 kB window on a 750 kB pipe carries a twelfth of the link), and the analysis must name
//! that state first, with the share the construction implies, and the setting that lifts
//! it. The shares of every flow add up to 1. `cargo test -p spacetp-sim --test limits --
//! --nocapture` prints the table the closing note quotes.

mod common;
use common::*;
use spacetp_sim::limits::LimitShare;

/// One case: (name, scenario, the state it is built for, the least share it must have,
/// the setting path that must be named, if any).
struct Case {
    name: &'static str,
    toml: String,
    state: &'static str,
    at_least: f64,
    setting: Option<&'static str>,
}

fn flow(rate: &str, delay: &str, link: &str, flow: &str) -> String {
    hosts_a_b("seed = 3", rate, delay, link) + &flow_a_to_b(flow)
}

fn cases() -> Vec<Case> {
    let big = "receive_buffer = \"64 MB\"\nsend_buffer = \"64 MB\"";
    vec![
        Case {
            // 10 Mb/s, 10 ms, a BDP queue, buffers far above the 25 kB pipe, 20 MB: the link
            // is busy from the end of slow start to the end.
            name: "a clean link, buffers over the BDP",
            toml: flow("10 Mb/s", "10 ms", "queue = { bdp = 2.0 }", &format!("protocol = \"cubic\"\nbytes = \"20 MB\"\n{big}")),
            state: "link",
            at_least: 0.9,
            setting: Some("links[0].rate"),
        },
        Case {
            // 1 kB over 300 ms each way: one round trip to open, half of one to deliver.
            name: "a tiny file on a long link",
            toml: flow("10 Mb/s", "300 ms", "", "protocol = \"newreno\"\nbytes = 1000"),
            state: "handshake",
            at_least: 0.6,
            setting: None,
        },
        Case {
            // A 64 kB receive buffer on 10 Mb/s x 600 ms (750 kB): the window carries 64 kB
            // per round trip, under a tenth of the link.
            name: "a tiny receive buffer",
            toml: flow("10 Mb/s", "300 ms", "", "protocol = \"newreno\"\nbytes = \"5 MB\"\nreceive_buffer = \"64 kB\""),
            state: "receive_window",
            at_least: 0.8,
            setting: Some("flows[0].receive_buffer"),
        },
        Case {
            // The same with the send buffer: what is unacknowledged fills it.
            name: "a tiny send buffer",
            toml: flow("10 Mb/s", "300 ms", "", "protocol = \"newreno\"\nbytes = \"5 MB\"\nsend_buffer = \"64 kB\"\nreceive_buffer = \"64 MB\""),
            state: "send_buffer",
            at_least: 0.8,
            setting: Some("flows[0].send_buffer"),
        },
        Case {
            // A receiver reading 1 Mb/s behind a 10 Mb/s link and a 200 kB buffer.
            name: "a slow reader",
            toml: flow("10 Mb/s", "20 ms", "", "protocol = \"newreno\"\nbytes = \"2 MB\"\nreceive_buffer = \"200 kB\"\nread_rate = \"1 Mb/s\""),
            state: "slow_reader",
            at_least: 0.6,
            setting: Some("flows[0].read_rate"),
        },
        Case {
            // An application producing 1 Mb/s for a 10 Mb/s link: the link idles 90%.
            name: "a slow writer",
            toml: flow("10 Mb/s", "20 ms", "", &format!("protocol = \"newreno\"\nbytes = \"2 MB\"\nwrite_rate = \"1 Mb/s\"\n{big}")),
            state: "application",
            at_least: 0.75,
            setting: Some("flows[0].write_rate"),
        },
        Case {
            // SCPS-TP's rate control at 1 Mb/s, ten times below the link.
            name: "SCPS-TP rate ten times below the link",
            toml: flow("10 Mb/s", "50 ms", "", &format!("protocol = \"scps-tp\"\nbytes = \"2 MB\"\ntcp = {{ scps = {{ rate = \"1 Mb/s\" }} }}\n{big}")),
            state: "rate_control",
            at_least: 0.8,
            setting: Some("flows[0].tcp.scps.rate"),
        },
        Case {
            // Pacing capped at 1 Mb/s (SO_MAX_PACING_RATE) on a 10 Mb/s link.
            name: "pacing capped ten times below the link",
            toml: flow("10 Mb/s", "20 ms", "", &format!("protocol = \"linux-cubic\"\nbytes = \"2 MB\"\ntcp = {{ max_pacing_rate = \"1 Mb/s\" }}\n{big}")),
            state: "pacing",
            at_least: 0.8,
            setting: Some("flows[0].tcp.max_pacing_rate"),
        },
        Case {
            // Slow start on 100 Mb/s x 600 ms (7.5 MB) with a 2-segment initial window and
            // no loss: 8 MB is sent while the window is still opening.
            name: "slow start on a long fat pipe",
            toml: flow("100 Mb/s", "300 ms", "queue = { bdp = 1.0 }", &format!("protocol = \"newreno\"\nbytes = \"8 MB\"\ntcp = {{ initial_window = 2 }}\n{big}")),
            state: "congestion_window",
            at_least: 0.6,
            setting: Some("flows[0].tcp.initial_window"),
        },
        Case {
            // A 5 kb/s return link: 10 Mb/s of data asks for about 17 kb/s of ACKs; with a
            // window far above the BDP, the ACKs that open it come back too slowly.
            name: "a 5 kb/s return link",
            toml: flow("10 Mb/s", "50 ms", "rate_back = \"5 kb/s\"", &format!("protocol = \"newreno\"\nbytes = \"2 MB\"\n{big}")),
            state: "return_path",
            at_least: 0.5,
            setting: Some("links[0].rate_back"),
        },
        Case {
            // 10% of packets lost, Tahoe: every loss a timeout or a slow start from one
            // segment.
            name: "10% loss with Tahoe",
            toml: flow("10 Mb/s", "50 ms", "errors = { per = 0.1 }", &format!("protocol = \"tahoe\"\nbytes = \"1 MB\"\n{big}")),
            state: "recovery",
            at_least: 0.4,
            setting: Some("flows[0].tcp.recovery"),
        },
        Case {
            // A 10 s outage in a 1 MB transfer at 1 Mb/s (8 s of data).
            name: "a 10 s outage",
            toml: flow("1 Mb/s", "20 ms", "outages = [[\"2 s\", \"12 s\"]]", &format!("protocol = \"scps-tp\"\nbytes = \"1 MB\"\n{big}")),
            state: "link_down",
            at_least: 0.45,
            setting: Some("links[0].outages"),
        },
        Case {
            // LTP at 10 s round trip with one export session of 100 kB blocks: one block per
            // round trip on a 10 Mb/s link (12.5 MB pipe).
            name: "LTP with one session at a 10 s round trip",
            toml: flow("10 Mb/s", "5 s", "", "protocol = \"ltp\"\nbytes = \"2 MB\"\nltp = { max_export_sessions = 1, block_size = \"100 kB\" }"),
            state: "ltp_sessions",
            at_least: 0.8,
            setting: Some("flows[0].ltp.max_export_sessions"),
        },
        Case {
            // LTP sends at once (no handshake, no window): a 100 kB block at 10 Mb/s takes
            // 80 ms, then 20 s of light time.
            name: "a short LTP block over 20 s of light time",
            toml: flow("10 Mb/s", "20 s", "", "protocol = \"ltp\"\nbytes = \"100 kB\""),
            state: "propagation",
            at_least: 0.95,
            setting: None,
        },
        Case {
            // BP over LTP through a relay whose onward link is down for the first 100 s: the
            // 5 MB crosses the first hop in 4 s and waits at the relay.
            name: "bundles waiting at a relay for a contact",
            toml: r#"
seed = 3
stop = "10 min"
[[nodes]]
name = "a"
[[nodes]]
name = "relay"
[[nodes]]
name = "b"
[[links]]
between = ["a", "relay"]
rate = "10 Mb/s"
delay = "5 ms"
[[links]]
between = ["relay", "b"]
rate = "10 Mb/s"
delay = "5 ms"
outages = [["0 s", "100 s"]]
[[flows]]
from = "a"
to = "b"
protocol = "bp"
bytes = "5 MB"
bp = { bundle_size = "1 MB" }
"#
            .into(),
            state: "bundle_storage",
            at_least: 0.85,
            setting: None,
        },
        Case {
            // QUIC with a 64 kB stream window on 10 Mb/s x 600 ms.
            name: "QUIC with a 64 kB stream window",
            toml: flow("10 Mb/s", "300 ms", "", "protocol = \"quic\"\nbytes = \"3 MB\"\nquic = { stream_receive_window = \"64 kB\" }"),
            state: "receive_window",
            at_least: 0.8,
            setting: Some("flows[0].quic.stream_receive_window"),
        },
        Case {
            // QUIC's sending rate capped at 1 Mb/s (quic.max_pacing_rate) on a 10 Mb/s link,
            // windows far above the 25 kB pipe.
            name: "QUIC capped ten times below the link",
            toml: flow("10 Mb/s", "20 ms", "", "protocol = \"quic-bbr\"\nbytes = \"2 MB\"\nquic = { max_pacing_rate = \"1 Mb/s\", stream_receive_window = \"4 MB\" }"),
            state: "pacing",
            at_least: 0.8,
            setting: Some("flows[0].quic.max_pacing_rate"),
        },
    ]
}

fn shares(l: &[LimitShare]) -> String {
    l.iter()
        .map(|s| format!("{} {:.0}%", s.state, s.share * 100.0))
        .collect::<Vec<_>>()
        .join(", ")
}

#[test]
fn every_constructed_case_names_its_limit_with_its_share() {
    let mut failures = Vec::new();
    println!("| scenario | expected state | named state | share | setting |");
    println!("|---|---|---|---|---|");
    for c in cases() {
        let out = sim(&c.toml);
        let f = &out.summary.flows[0];
        let l = &f.limits;
        let total: f64 = l.iter().map(|s| s.share).sum();
        assert!(
            (total - 1.0).abs() < 1e-9,
            "{}: the shares add to {total}",
            c.name
        );
        let top = &l[0];
        let mine = l.iter().find(|s| s.state == c.state);
        println!(
            "| {} | {} | {} | {:.0}% | {} |",
            c.name,
            c.state,
            top.state,
            mine.map_or(0.0, |s| s.share) * 100.0,
            mine.and_then(|s| s.setting.clone()).unwrap_or_default()
        );
        if top.state != c.state || mine.is_none_or(|s| s.share < c.at_least) {
            failures.push(format!(
                "{}: expected {} >= {:.0}%, got {}",
                c.name,
                c.state,
                c.at_least * 100.0,
                shares(l)
            ));
            continue;
        }
        let named = mine.and_then(|s| s.setting.as_deref());
        if named != c.setting {
            failures.push(format!(
                "{}: setting {named:?}, expected {:?}",
                c.name, c.setting
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_cases_users_reported_name_what_held_them() {
    // 250 Mb/s down, 3 Mb/s up, 300 ms each way, a BDP queue, 100 MB (an 18.75 MB pipe):
    // Linux stops at 3.93 MB in flight (tcp_rmem's 6 MB buffer), QUIC at its 1.25 MB stream
    // window.
    let geo = |proto: &str| {
        flow(
            "250 Mb/s",
            "300 ms",
            "rate_back = \"3 Mb/s\"\nqueue = { bdp = 1.0 }",
            &format!("protocol = \"{proto}\"\nbytes = \"100 MB\""),
        )
    };
    let out = sim(&geo("linux-cubic"));
    let l = &out.summary.flows[0].limits[0];
    assert_eq!(
        l.state,
        "receive_window",
        "{}",
        shares(&out.summary.flows[0].limits)
    );
    assert!(l.share > 0.5, "{}", l.text);
    let mean = l.mean_bytes.unwrap();
    assert!((3.8e6..4.0e6).contains(&mean), "{}", l.text);
    assert_eq!(l.setting.as_deref(), Some("flows[0].receive_buffer"));
    assert!(l.text.contains("BDP 18.8 MB"), "{}", l.text);
    let out = sim(&geo("quic"));
    let l = &out.summary.flows[0].limits[0];
    assert_eq!(
        l.state,
        "receive_window",
        "{}",
        shares(&out.summary.flows[0].limits)
    );
    assert!(
        l.share > 0.9 && l.mean_bytes == Some(1_250_000.0),
        "{}",
        l.text
    );
    assert_eq!(
        l.setting.as_deref(),
        Some("flows[0].quic.stream_receive_window")
    );
    // Akan's deep-space link, 1 Mb/s and 20 minutes of light time each way, LTP at ION's
    // defaults: it waits for an export session nearly all the time.
    let deep = hosts_a_b("seed = 1\nstop = \"20000 s\"", "1 Mb/s", "600 s", "")
        + &flow_a_to_b("protocol = \"ltp\"\nbytes = \"100 MB\"");
    let out = sim(&deep);
    let l = &out.summary.flows[0].limits[0];
    assert_eq!(
        l.state,
        "ltp_sessions",
        "{}",
        shares(&out.summary.flows[0].limits)
    );
    assert!(l.share > 0.95, "{}", l.text);
    assert_eq!(
        l.setting.as_deref(),
        Some("flows[0].ltp.max_export_sessions")
    );
}
