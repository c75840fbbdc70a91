//! SCPS header compression in the simulator: links carry (and are charged for) the compressed
//! headers, the receiver decodes them against its own context, captures hold them as IP
//! protocol 105 like the SCPS Reference Implementation's, and a plain TCP peer sees none.

mod common;
use common::*;
use spacetp_sim::{run, scenario_from_toml, RunOptions, RunOutput};
use spacetp_wire::pcap::PcapReader;
use spacetp_wire::*;

/// 200 kB from a to b over 2 Mb/s, 40 ms (common::two_nodes, seed 7).
fn scenario(proto: &str, extra_flow: &str, errors: &str) -> String {
    two_nodes(
        errors,
        &format!("protocol = \"{proto}\"\nbytes = \"200 kB\"\n{extra_flow}"),
    )
}

fn with_seed(toml: String, seed: u64) -> String {
    toml.replacen("seed = 7", &format!("seed = {seed}"), 1)
}

fn run_with_pcap(toml: &str, name: &str) -> (RunOutput, Vec<Vec<u8>>) {
    let dir = std::env::temp_dir().join(format!("spacetp-comp-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("link.pcap");
    let opts = RunOptions {
        pcap: vec![("0".into(), path.to_string_lossy().into_owned())],
        keylog: None,
        qlog: None,
    };
    let out = run(scenario_from_toml(toml).unwrap(), &opts).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let packets = PcapReader::new(bytes)
        .unwrap()
        .map(|p| p.unwrap().ipv4().unwrap().to_vec())
        .collect();
    std::fs::remove_dir_all(&dir).ok();
    (out, packets)
}

#[test]
fn compressed_headers_are_charged_on_the_link_and_decode_from_the_capture() {
    let (out, packets) = run_with_pcap(&scenario("scps-1c", "", ""), "clean");
    let (mut with_ack, mut with_seq) = (0, 0);
    assert_exact(&out);

    // Contexts from the SYN and SYN-ACK, as a third party reading the capture would build them.
    let mut ctx: Vec<([u8; 4], CompressionContext)> = vec![];
    let (mut compressed, mut next_seq, mut data_bytes) = (0, None::<u32>, 0u64);
    for p in &packets {
        let ip = decode_ipv4_header(p).unwrap();
        let payload = &p[ip.header_len as usize..ip.total_len as usize];
        match ip.protocol {
            PROTO_TCP => {
                let t = decode_ipv4_tcp(p).unwrap().tcp;
                if t.has(flags::SYN) {
                    let c = CompressionContext::from_syn(&t, ip.src, ip.dst).unwrap();
                    ctx.retain(|(a, _)| *a != ip.src);
                    ctx.push((ip.src, c));
                } else {
                    panic!("an uncompressed segment after the handshake: {t:?}");
                }
            }
            PROTO_SCPS_COMPRESSED => {
                compressed += 1;
                let c = &mut ctx.iter_mut().find(|(a, _)| *a == ip.src).unwrap().1;
                assert!(c.checksum_ok(payload), "checksum of packet {compressed}");
                let d = decompress(payload, c).unwrap();
                if d.payload_len > 0 {
                    // A data header is id + control + sequence + checksum (8 bytes; 10 with
                    // FIN's second control octet and a pad), and carries window and ACK only
                    // when they changed (the first after the SYN-ACK).
                    if d.control & compressed::ctrl::A != 0 {
                        with_ack += 1;
                    } else {
                        assert!(d.header_len <= 10, "{} byte header", d.header_len);
                    }
                    if let Some(n) = next_seq {
                        assert_eq!(d.header.seq, n, "data continues the stream");
                    }
                    next_seq = Some(d.header.seq.wrapping_add(d.payload_len as u32));
                    data_bytes += d.payload_len as u64;
                } else if d.control & compressed::ctrl::S != 0 {
                    with_seq += 1; // the first ACK after the SYN-ACK, and the FINs
                } else {
                    // A pure ACK is id + control + window + ACK + checksum.
                    assert!(d.header_len <= 10, "{} byte ACK header", d.header_len);
                }
            }
            other => panic!("protocol {other}"),
        }
    }
    assert_eq!(data_bytes, 200_000);
    assert!(
        with_ack <= 2,
        "{with_ack} data headers carried an unchanged ACK"
    );
    assert!(with_seq <= 4, "{with_seq} ACKs carried a sequence number");
    assert!(
        compressed > 200_000 / 1000,
        "{compressed} compressed packets"
    );

    // The same transfer without compression costs the link 20-byte headers.
    let plain = sim(&scenario(
        "scps-1c",
        "[flows.tcp]\nscps = { compression = false }",
        "",
    ));
    assert_exact(&plain);
    let (with, without) = (&out.summary.links[0], &plain.summary.links[0]);
    assert_eq!(with.tx_packets, without.tx_packets);
    let saved = without.tx_bytes - with.tx_bytes;
    assert!(
        saved >= 10 * with.tx_packets,
        "saved {saved} bytes on {} packets",
        with.tx_packets
    );
}

#[test]
fn compressed_transfers_survive_loss_in_both_directions() {
    let errors = "errors = { per = 0.03 }\nerrors_back = { per = 0.03 }";
    for proto in ["scps-1b", "scps-1c", "scps-2a", "scps-2b"] {
        for seed in 1..=3 {
            let out = sim(&with_seed(scenario(proto, "", errors), seed));
            assert_exact(&out);
            assert!(out.summary.flows[0].retransmitted_segments > 0, "{proto}");
        }
    }
}

#[test]
fn a_plain_tcp_peer_gets_no_compressed_header() {
    for (a, b) in [("scps-1c", "newreno"), ("newreno", "scps-1c")] {
        let flow = format!("peer_protocol = \"{b}\"");
        let (out, packets) = run_with_pcap(&scenario(a, &flow, ""), a);
        assert_exact(&out);
        for p in &packets {
            let d = decode_ipv4_tcp(p).expect("every packet is plain TCP");
            if !d.tcp.has(flags::SYN) {
                assert!(d.tcp.options.scps_capabilities.is_none());
            }
        }
    }
}

#[test]
fn records_and_bets_reach_the_flow_summary() {
    // Records of 10 kB over a lossy link: every record arrives whole.
    let errors = "errors = { per = 0.02 }";
    let out = sim(&with_seed(
        scenario("scps-1c", "record_size = \"10 kB\"", errors),
        5,
    ));
    assert_exact(&out);
    assert_eq!(tcp_block(&out.summary.flows[0]).records_delivered, 20);
    assert_eq!(tcp_block(&out.summary.flows[0]).bets_bytes_lost, 0);

    // BETS with a 0.5 s wait on a link losing 40% of packets: holes are given up, the
    // transfer ends, and the flow reports the bytes it lost.
    let bets = "[flows.tcp]\nscps = { bets = \"500 ms\" }";
    let out = sim(&with_seed(
        scenario("scps-1c", bets, "errors = { per = 0.4 }"),
        5,
    ));
    let f = &out.summary.flows[0];
    assert_eq!(f.state, "closed");
    let lost = tcp_block(f).bets_bytes_lost;
    assert!(lost > 0, "{f:?}");
    assert_eq!(f.bytes_delivered + lost, 200_000);
    assert!(!f.complete);

    let err = spacetp_sim::scenario_from_toml(&scenario("scps-1c", "record_size = \"0 B\"", ""))
        .and_then(|sc| run(sc, &RunOptions::default()).map(|_| ()))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("record_size: must be at least 1 byte"),
        "{err}"
    );
}
