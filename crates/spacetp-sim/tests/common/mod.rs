#![allow(dead_code)]
use spacetp_sim::{run, scenario_from_toml, RunOptions, RunOutput};

pub fn sim(toml: &str) -> RunOutput {
    let sc = scenario_from_toml(toml).unwrap_or_else(|e| panic!("scenario: {e}"));
    run(sc, &RunOptions::default()).unwrap_or_else(|e| panic!("run: {e}"))
}

pub fn sim_err(toml: &str) -> String {
    match scenario_from_toml(toml) {
        Err(e) => e.to_string(),
        Ok(sc) => match run(sc, &RunOptions::default()) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("expected an error"),
        },
    }
}

/// Hosts a and b joined by one link: `head` holds top-level keys (they must come before the
/// tables), `link_extra` more lines of the link. Flows or traffic go after it.
pub fn hosts_a_b(head: &str, rate: &str, delay: &str, link_extra: &str) -> String {
    format!(
        r#"
{head}
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[links]]
between = ["a", "b"]
rate = "{rate}"
delay = "{delay}"
{link_extra}
"#
    )
}

/// A flow from a to b, to append to `hosts_a_b`; `flow_extra` are its further lines.
pub fn flow_a_to_b(flow_extra: &str) -> String {
    format!("[[flows]]\nfrom = \"a\"\nto = \"b\"\n{flow_extra}\n")
}

/// Two hosts joined by one link; `link_extra` and `flow_extra` are appended TOML lines.
pub fn two_nodes(link_extra: &str, flow_extra: &str) -> String {
    hosts_a_b("seed = 7", "2 Mb/s", "40 ms", link_extra)
        + &flow_a_to_b(&format!("mtu = 1000\n{flow_extra}"))
}

/// Every finite flow delivered every byte once, in order, and closed normally.
pub fn assert_exact(out: &RunOutput) {
    for f in &out.summary.flows {
        let total = f.bytes_requested.expect("finite flow");
        assert!(
            f.complete,
            "{}: incomplete ({} of {total}) state {}",
            f.name, f.bytes_delivered, f.state
        );
        assert_eq!(f.bytes_delivered, total, "{}", f.name);
        assert_eq!(f.bytes_undelivered, Some(0), "{}", f.name);
        assert_eq!(f.state, "closed", "{}: sender state", f.name);
    }
}

/// A TCP flow's own counters (its `tcp` block; every TCP flow has one).
pub fn tcp_block(f: &spacetp_sim::result::FlowSummary) -> &spacetp_sim::result::TcpSummary {
    f.tcp.as_ref().expect("a TCP flow has a tcp block")
}

/// The first flow's TCP counters.
pub fn tcp(out: &RunOutput) -> &spacetp_sim::result::TcpSummary {
    tcp_block(&out.summary.flows[0])
}
