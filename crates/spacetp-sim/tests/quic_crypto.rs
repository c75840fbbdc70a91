//! `quic.crypto`: "sizes" (packets, headers, tags and padding of the real sizes, nothing
//! encrypted; the default when nothing needs ciphertext) and "real" (TLS 1.3's AES-128-GCM)
//! give the same run: every summary field of every flow, datagram source and link, every
//! sample of the sender's state every 10 ms (cwnd, flight, RTT, delivered) and every change
//! of its limit state. A pcap or a key log needs real ciphertext, so "sizes" is refused with
//! either. (spacetp-quic's tests/pipe.rs compares every datagram's time and size.)

mod common;
use common::*;
use spacetp_sim::{run, scenario_from_toml, RunOptions, RunOutput};

const TRACE: &str = "[trace]\ninterval = \"10 ms\"\n";

/// Scenarios whose QUIC settings hold `CRYPTO`, to be replaced by a `crypto = ...` entry.
fn scenarios() -> Vec<(&'static str, String)> {
    let geo = |head: &str, link_extra: &str| {
        hosts_a_b(
            head,
            "10 Mb/s",
            "300 ms",
            &format!("rate_back = \"1 Mb/s\"\nqueue = {{ bdp = 1.0 }}\n{link_extra}"),
        )
    };
    let flow = |protocol: &str, quic: &str| {
        flow_a_to_b(&format!(
            "protocol = \"{protocol}\"\nbytes = 2000000\nquic = {{ CRYPTO{quic} }}"
        ))
    };
    vec![
        ("clean GEO, CUBIC", geo("seed = 1", "") + &flow("quic", "")),
        (
            "GEO with 1% loss, 20 streams",
            geo("seed = 2", "errors = { per = 0.01 }") + &flow("quic", ", streams = 20"),
        ),
        (
            "BBR across a 2 s outage",
            geo("seed = 3", "outages = [[\"4 s\", \"6 s\"]]") + &flow("quic-bbr", ""),
        ),
        (
            "a workload of files resumed in 0-RTT",
            hosts_a_b("seed = 4", "10 Mb/s", "300 ms", "rate_back = \"1 Mb/s\"")
                + r#"
[[workloads]]
kind = "file_requests"
clients = ["a"]
server = "b"
size = { exponential = "100 kB" }
interval = { constant = "3 s" }
count = 4
protocol = "quic-cubic"
quic = { CRYPTO, zero_rtt = true }
"#,
        ),
        (
            "a datagram source over a lossy link",
            hosts_a_b(
                "seed = 5\nstop = \"10 s\"",
                "4 Mb/s",
                "100 ms",
                "errors = { per = 0.02 }",
            ) + "[[traffic]]\nfrom = \"a\"\nto = \"b\"\nrate = \"2 Mb/s\"\nsize = \"1000 B\"\n\
                 protocol = \"quic\"\nquic = { CRYPTO }\n",
        ),
    ]
}

fn run_with(text: &str, crypto: &str) -> RunOutput {
    sim(&(text.replace("CRYPTO", &format!("crypto = \"{crypto}\"")) + TRACE))
}

/// A trace's columns, each number by its bits (a NaN equals itself).
type Columns = Vec<(&'static str, Vec<u64>)>;

/// The traces' columns.
fn tables(out: &RunOutput) -> Vec<Option<Columns>> {
    [&out.samples, &out.limits]
        .map(|t| {
            t.as_ref().map(|t| {
                t.columns
                    .iter()
                    .map(|(name, v)| (*name, v.iter().map(|x| x.to_bits()).collect()))
                    .collect()
            })
        })
        .to_vec()
}

#[test]
fn sizes_only_and_real_crypto_give_the_same_run_field_for_field() {
    for (name, text) in scenarios() {
        let real = run_with(&text, "real");
        let sizes = run_with(&text, "sizes");
        let unset = sim(&(text.replace("CRYPTO, ", "").replace("CRYPTO", "") + TRACE));
        let json = |o: &RunOutput| serde_json::to_value(&o.summary).unwrap();
        assert_eq!(json(&real), json(&sizes), "{name}: summaries differ");
        let (t_real, t_sizes) = (tables(&real), tables(&sizes));
        let differs = t_real != t_sizes;
        assert!(!differs, "{name}: traces differ");
        assert_eq!(
            json(&unset),
            json(&sizes),
            "{name}: the default is not the same run"
        );
        let links = &real.summary.links;
        assert!(
            links.iter().any(|l| l.tx_packets > 100),
            "{name}: {links:?}"
        );
        let samples = real.samples.as_ref().unwrap().columns[0].1.len();
        let datagrams = real
            .summary
            .datagrams
            .first()
            .map_or(0, |d| d.packets_received);
        assert!(samples > 100 || datagrams > 100, "{name}: nothing traced");
    }
}

#[test]
fn a_pcap_or_a_key_log_turns_real_crypto_on_and_refuses_sizes_only() {
    let dir = std::env::temp_dir().join(format!("spacetp-quic-crypto-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pcap = dir.join("a.pcap").to_string_lossy().to_string();
    let keys = dir.join("keys.txt").to_string_lossy().to_string();
    let text = hosts_a_b("seed = 1", "10 Mb/s", "20 ms", "")
        + &flow_a_to_b("protocol = \"quic\"\nbytes = 100000\nquic = { CRYPTO }");
    let with_pcap = RunOptions {
        pcap: vec![("0".into(), pcap.clone())],
        ..RunOptions::default()
    };
    let with_keys = RunOptions {
        keylog: Some(keys.clone()),
        ..RunOptions::default()
    };
    for (opts, why) in [(&with_pcap, "pcap"), (&with_keys, "key log")] {
        let sizes = scenario_from_toml(&text.replace("CRYPTO", "crypto = \"sizes\"")).unwrap();
        let e = run(sizes, opts)
            .err()
            .expect("sizes with a pcap or key log")
            .to_string();
        assert!(e.contains("flows[0].quic.crypto") && e.contains(why), "{e}");
        // Unset, the run encrypts: the key log holds the TLS secrets of the connection.
        let unset = scenario_from_toml(&text.replace("CRYPTO", "")).unwrap();
        assert!(run(unset, opts).unwrap().summary.flows[0].complete);
    }
    let secrets = std::fs::read_to_string(&keys).unwrap();
    assert!(secrets.contains("CLIENT_TRAFFIC_SECRET_0"), "{secrets}");
    // The pcap's QUIC packets are encrypted: the server name in the client's ClientHello
    // and the server's certificate ("spacetp-sim-server") appear nowhere in plain text.
    let bytes = std::fs::read(&pcap).unwrap();
    assert!(bytes.len() > 100_000);
    let plain = spacetp_quic::tls::SERVER_NAME.as_bytes();
    assert!(!bytes.windows(plain.len()).any(|w| w == plain));
    let e = sim_err(&text.replace("CRYPTO", "crypto = \"rot13\""));
    assert!(e.contains("flows[0].quic.crypto"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
