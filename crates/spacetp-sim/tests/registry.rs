//! The transport registry as a scenario meets it: a flow's `protocol` picks one transport,
//! whose settings table and flow fields are taken; every other transport's settings are
//! refused, naming the field, once and the same way for every transport.

use spacetp_sim::{run, scenario_from_toml, RunOptions};

/// A 10 kB flow of `protocol` across one 1 Mb/s link, with `extra` lines in the flow.
fn flow(protocol: &str, extra: &str) -> String {
    format!(
        r#"
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[links]]
between = ["a", "b"]
rate = "1 Mb/s"
delay = "10 ms"
[[flows]]
from = "a"
to = "b"
protocol = "{protocol}"
bytes = "10 kB"
{extra}
"#
    )
}

fn outcome(toml: &str) -> Result<(), String> {
    scenario_from_toml(toml)
        .and_then(|sc| run(sc, &RunOptions::default()).map(|_| ()))
        .map_err(|e| e.to_string())
}

#[test]
fn another_transports_settings_table_is_refused_naming_both_transports() {
    let cases = [
        (
            "newreno",
            "[flows.ltp]\nmax_ber = 1e-6",
            "flows[0].ltp",
            "LTP settings do not apply to TCP",
        ),
        (
            "quic-bbr",
            "[flows.tcp]\nsack = true",
            "flows[0].tcp",
            "TCP settings do not apply to QUIC",
        ),
        (
            "ltp",
            "[flows.quic]\ninitial_rtt = \"1 s\"",
            "flows[0].quic",
            "QUIC settings do not apply to LTP",
        ),
        (
            "bp",
            "[flows.ltp]\nmax_ber = 1e-6",
            "flows[0].ltp",
            "LTP settings do not apply to BP",
        ),
        (
            "scps-tp",
            "[flows.bp]\nbundle_size = \"1 kB\"",
            "flows[0].bp",
            "BP settings do not apply to TCP",
        ),
    ];
    for (protocol, extra, path, says) in cases {
        let err = outcome(&flow(protocol, extra)).unwrap_err();
        assert!(
            err.starts_with(path) && err.contains(says),
            "{protocol}: {err}"
        );
    }
}

#[test]
fn a_flow_field_a_transport_does_not_take_is_refused_with_its_reason() {
    let cases = [
        (
            "quic",
            "receive_buffer = \"1 MB\"",
            "flows[0].receive_buffer",
            "quic.stream_receive_window",
        ),
        (
            "ltp",
            "peer_protocol = \"ltp\"",
            "flows[0].peer_protocol",
            "both ends of a LTP flow",
        ),
        (
            "bp",
            "write_rate = \"1 Mb/s\"",
            "flows[0].write_rate",
            "has no writer",
        ),
        (
            "quic-cubic",
            "record_size = \"1 kB\"",
            "flows[0].record_size",
            "no record boundaries",
        ),
    ];
    for (protocol, extra, path, says) in cases {
        let err = outcome(&flow(protocol, extra)).unwrap_err();
        assert!(
            err.starts_with(path) && err.contains(says),
            "{protocol}: {err}"
        );
    }
}

#[test]
fn the_fields_a_transport_takes_are_taken() {
    for (protocol, extra) in [
        (
            "newreno",
            "write_rate = \"500 kb/s\"\nreceive_buffer = \"64 kB\"\n[flows.tcp]\nsack = true",
        ),
        (
            "quic",
            "write_rate = \"500 kb/s\"\n[flows.quic]\ninitial_rtt = \"100 ms\"",
        ),
        (
            "ltp",
            "write_rate = \"500 kb/s\"\n[flows.ltp]\nmax_ber = 1e-6",
        ),
    ] {
        outcome(&flow(protocol, extra)).unwrap_or_else(|e| panic!("{protocol}: {e}"));
    }
}

#[test]
fn an_unknown_protocol_lists_every_transports_protocols() {
    let err = outcome(&flow("tcp-x", "")).unwrap_err();
    assert!(
        err.starts_with("flows[0].protocol: unknown protocol \"tcp-x\""),
        "{err}"
    );
    let known = err.split("known: ").nth(1).unwrap();
    for p in ["newreno", "linux-bbr", "scps-tp", "quic-bbr", "ltp", "bp"] {
        assert!(known.split(", ").any(|k| k == p), "{p} in {known}");
    }
}
