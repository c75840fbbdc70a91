//! Exact accounting: the receiving application gets every byte once, in order, under every
//! channel model, including losses of SYN, SYN-ACK, FIN and of retransmissions.

mod common;
use common::*;

const FLOW: &str = r#"bytes = "300 kB""#;

#[test]
fn clean_channel() {
    let out = sim(&two_nodes("", FLOW));
    assert_exact(&out);
    assert_eq!(out.summary.flows[0].retransmitted_segments, 0);
}

#[test]
fn every_random_channel_model() {
    let models = [
        "errors = { ber = 2e-6 }",
        "errors = { per = 0.02 }",
        "errors = { gilbert_elliott = { p_good_to_bad = 0.01, p_bad_to_good = 0.3 } }",
        "errors = { markov_slot = { slot = \"80 ms\", transition = [[0.9, 0.1], [0.5, 0.5]], loss = [0.0, 1.0] } }",
        "errors = { markov_slot = { slot = \"80 ms\", transition = [[0.9, 0.1], [0.5, 0.5]], loss = [0.0, 0.2], mode = \"per_packet\" } }",
        "errors = { per = 0.02 }\ncorrupted = \"deliver\"",
    ];
    for m in models {
        for seed in 1..4 {
            let toml = two_nodes(m, FLOW).replace("seed = 7", &format!("seed = {seed}"));
            let out = sim(&toml);
            assert_exact(&out);
            let lost: u64 = out
                .summary
                .links
                .iter()
                .map(|l| l.error_drops + l.corrupted)
                .sum();
            assert!(lost > 0, "{m}: the channel never hit a packet");
        }
    }
}

#[test]
fn lost_syn_and_synack() {
    // Forward index 0 is the SYN, back index 0 the SYN-ACK; lose each twice over.
    let out = sim(&two_nodes(
        "errors = { drop = [0, 1] }\nerrors_back = { drop = [0] }",
        FLOW,
    ));
    assert_exact(&out);
    assert!(out.summary.flows[0].timeouts >= 2);
}

#[test]
fn lost_fin_and_last_acks() {
    let clean = sim(&two_nodes("", FLOW));
    let fwd = clean.summary.links[0].tx_packets;
    let back = clean.summary.links[1].tx_packets;
    // The last packets each way carry the FINs and their ACKs.
    let link = format!(
        "errors = {{ drop = [{}, {}] }}\nerrors_back = {{ drop = [{}, {}] }}",
        fwd - 2,
        fwd - 1,
        back - 2,
        back - 1
    );
    let out = sim(&two_nodes(&link, FLOW));
    assert_exact(&out);
}

#[test]
fn lost_retransmission() {
    let trace = "\n[trace]\nsegments = true";
    let first = sim(&(two_nodes("errors = { drop = [60] }", FLOW) + trace));
    let seg = first.segments.as_ref().unwrap();
    let retx = &seg
        .columns
        .iter()
        .find(|c| c.0 == "retransmission")
        .unwrap()
        .1;
    let row = retx
        .iter()
        .position(|&r| r == 1.0)
        .expect("a retransmission");
    // Forward packet index = SYN + data segments before it (the sender sends no pure ACKs).
    let again =
        sim(&(two_nodes(&format!("errors = {{ drop = [60, {}] }}", row + 1), FLOW) + trace));
    assert_exact(&again);
    let s = again.segments.unwrap();
    let retx = &s
        .columns
        .iter()
        .find(|c| c.0 == "retransmission")
        .unwrap()
        .1;
    let offs = &s.columns.iter().find(|c| c.0 == "offset").unwrap().1;
    let hole = offs[59];
    let resent = (0..retx.len())
        .filter(|&i| retx[i] == 1.0 && offs[i] == hole)
        .count();
    assert!(
        resent >= 2,
        "the lost retransmission was sent again ({resent})"
    );
    assert!(again.summary.flows[0].timeouts >= 1);
}

#[test]
fn long_outage_mid_transfer() {
    let out = sim(&two_nodes(
        r#"outages = [["1 s", "9 s"]]"#,
        r#"bytes = "2 MB""#,
    ));
    assert_exact(&out);
    let l = &out.summary.links;
    assert!(l[0].outage_drops + l[1].outage_drops > 0);
    assert!(out.summary.flows[0].last_byte_s.unwrap() > 9.0);
}
