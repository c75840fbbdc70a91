//! 32-bit sequence numbers wrap: transfers beyond 4 GiB are delivered exactly, with and
//! without timestamps (PAWS then guards against old duplicates across the wrap).

mod common;
use common::*;

fn big(timestamps: bool, errors: &str) -> String {
    let link = format!("queue = {{ packets = 2000 }}\n{errors}");
    hosts_a_b("seed = 3", "10 Gb/s", "5 ms", &link)
        + &flow_a_to_b(&format!(
            r#"bytes = "4.5 GB"
mtu = 9000
receive_buffer = "64 MB"
send_buffer = "64 MB"
protocol = "sack"
[flows.tcp]
timestamps = {timestamps}"#
        ))
}

#[test]
fn beyond_4_gib_without_timestamps() {
    let out = sim(&big(false, ""));
    assert_exact(&out);
    assert!(out.summary.flows[0].bytes_delivered > 1 << 32);
}

#[test]
fn beyond_4_gib_with_timestamps_and_losses() {
    let out = sim(&big(true, "errors = { per = 1e-5 }\nerrors_back = {}"));
    assert_exact(&out);
    let f = &out.summary.flows[0];
    assert!(
        f.retransmitted_segments > 0,
        "losses were repaired across the wrap"
    );
}
