//! Every packet of every reference capture (tests/data/scps-ri: real SCPS Reference
//! Implementation traffic; tests/data/tshark: scapy-built SCPS option samples) decodes, with
//! valid checksums, and the fields match the values their READMEs state.

mod capture;
#[path = "../common/mod.rs"]
mod common;

use std::collections::HashMap;

use capture::*;
use common::*;
use spacetp_wire::checksum::Checksum;
use spacetp_wire::*;

#[test]
fn every_packet_of_every_anchor_decodes() {
    // Frame counts per capture (checked against tshark 4.0.17). Partial checksums: the
    // kernel-TCP sides of the gateway captures and the RI's UDP socket, both offloaded.
    let expected: HashMap<&str, Counts> = [
        ("gateway_pair_wan_loss2pct.pcap", counts(286, 0, 0, 2, 0)),
        ("gateway_tun_Aside.pcap", counts(114, 0, 0, 0, 19)),
        ("gateway_tun_Bside.pcap", counts(357, 0, 0, 1, 171)),
        ("rawip_ttcp.pcap", counts(85, 0, 0, 4, 0)),
        ("rawip_ttcp_compressed.pcap", counts(2, 0, 79, 5, 0)),
        ("rawip_ttcp_loss2pct_snack.pcap", counts(1380, 0, 0, 4, 0)),
        ("udp_encap_ttcp.pcap", counts(0, 85, 0, 4, 85)),
        ("udp_encap_ttcp_loss2pct.pcap", counts(0, 711, 0, 5, 711)),
        ("scps_sample_eth.pcap", counts(16, 0, 0, 0, 0)),
        ("scps_sample_raw.pcap", counts(16, 0, 0, 0, 0)),
        ("scps_sample_raw_handmade.pcap", counts(16, 0, 0, 0, 0)),
    ]
    .into_iter()
    .collect();
    let mut seen = 0;
    for sub in ["scps-ri", "tshark"] {
        for path in pcaps_in(sub) {
            let name = file_name(&path);
            let cap = decode_capture(&path);
            let want = expected.get(name.as_str()).unwrap_or_else(|| {
                panic!(
                    "{name}: new anchor capture, add its expected counts: {:?}",
                    cap.counts
                )
            });
            assert_eq!(&cap.counts, want, "{name}");
            seen += 1;
        }
    }
    assert_eq!(seen, expected.len(), "an anchor capture is missing");
}

#[test]
fn partial_checksums_come_only_from_offloading_senders() {
    for (file, kernel_sender) in [
        ("gateway_tun_Aside.pcap", [10, 1, 0, 1]),
        ("gateway_tun_Bside.pcap", [10, 2, 0, 1]),
    ] {
        let cap = decode_capture(&anchor("scps-ri", file));
        for f in &cap.frames {
            if let Frame::Tcp {
                d,
                checksum_ok: false,
                ..
            } = f
            {
                assert_eq!(d.ip.src, kernel_sender, "{file}");
            }
        }
    }
}

#[test]
fn rawip_syn_options_and_isn_quirk() {
    let cap = decode_capture(&anchor("scps-ri", "rawip_ttcp.pcap"));
    let (ip, syn) = tcp_frames(&cap).next().unwrap();
    assert_eq!(syn.ip.protocol, PROTO_SCPS_TP);
    assert_eq!(syn.tcp.flags, flags::SYN);
    let o = opt_bytes(ip, syn);
    assert_eq!(&o[..16], &hex("14044000 020405b4 01 030300 0101 080a")[..]);
    let opts = syn.tcp.options;
    assert_eq!(
        opts.scps_capabilities,
        Some(ScpsCapabilities {
            vector: 0x40,
            connection_id: 0
        })
    );
    assert_eq!(
        (opts.mss, opts.window_scale, opts.sack_permitted),
        (Some(1460), Some(0), false)
    );
    let ts = opts.timestamps.unwrap();
    assert_eq!(
        (ts.val, ts.ecr),
        (syn.tcp.seq, 0),
        "ISN equals the SYN's TSval"
    );
    assert_eq!(syn.tcp.window, 32767);
    // SYN-ACK: same capabilities.
    let (_, synack) = tcp_frames(&cap).nth(1).unwrap();
    assert_eq!(synack.tcp.flags, flags::SYN | flags::ACK);
    assert_eq!(synack.tcp.ack, syn.tcp.seq.wrapping_add(1));
    assert_eq!(synack.tcp.options.scps_capabilities.unwrap().vector, 0x40);
}

#[test]
fn udp_encap_syn() {
    let cap = decode_capture(&anchor("scps-ri", "udp_encap_ttcp.pcap"));
    assert!(cap
        .frames
        .iter()
        .all(|f| !matches!(f, Frame::Tcp { encap: false, .. })));
    let (ip, syn) = tcp_frames(&cap).next().unwrap();
    assert_eq!(&opt_bytes(ip, syn)[..8], &hex("14044000 02040598")[..]);
    assert_eq!(syn.tcp.options.mss, Some(1432));
    assert_eq!(syn.ip.ttl, 250);
}

/// SNACK ACKs of a capture: each is `15 06 0000 0001` after the timestamps. A hole is often
/// SNACKed by several ACKs in a row; within a few frames of the first of them the peer
/// retransmits the hole (the segment at the ACK).
fn check_snacks(sub: &str, file: &str, expected: usize) {
    let cap = decode_capture(&anchor(sub, file));
    let pkts: Vec<_> = tcp_frames(&cap).collect();
    let mut n = 0;
    let mut first_snack_of_hole: HashMap<u32, usize> = HashMap::new();
    for (k, (ip, d)) in pkts.iter().enumerate() {
        if d.tcp.options.snacks.is_empty() {
            continue;
        }
        n += 1;
        let s = d.tcp.options.snacks.as_slice();
        assert_eq!(s.len(), 1);
        assert_eq!(
            (s[0].offset, s[0].size, s[0].bitvec_len),
            (0, 1, 0),
            "{file}"
        );
        let o = opt_bytes(ip, d);
        assert_eq!(o.len(), 20);
        assert_eq!(&o[..4], &hex("0101080a")[..]);
        assert_eq!(&o[12..], &hex("150600000001 0101")[..], "{file}");
        first_snack_of_hole.entry(d.tcp.ack).or_insert(k);
    }
    assert_eq!(n, expected, "{file}: SNACK ACKs");
    for (&hole, &k) in &first_snack_of_hole {
        let d = pkts[k].1;
        let resend = pkts[k + 1..]
            .iter()
            .position(|(_, p)| p.ip.src == d.ip.dst && p.payload_len > 0 && p.tcp.seq == hole)
            .unwrap_or_else(|| panic!("{file}: hole {hole} never resent"));
        assert!(
            resend < 8,
            "{file}: hole {hole} resent {} frames after its SNACK",
            resend + 1
        );
    }
}

#[test]
fn snack_counts_and_bytes() {
    check_snacks("scps-ri", "rawip_ttcp_loss2pct_snack.pcap", 43);
    check_snacks("scps-ri", "udp_encap_ttcp_loss2pct.pcap", 15);
    check_snacks("scps-ri", "gateway_pair_wan_loss2pct.pcap", 3);
}

#[test]
fn gateway_captures_negotiation() {
    let cap = decode_capture(&anchor("scps-ri", "gateway_pair_wan_loss2pct.pcap"));
    let syns: Vec<_> = tcp_frames(&cap)
        .filter(|(_, d)| d.tcp.has(flags::SYN))
        .collect();
    assert_eq!(syns.len(), 2);
    for (_, d) in &syns {
        assert_eq!(d.ip.protocol, PROTO_TCP);
        assert_eq!(
            d.tcp.options.scps_capabilities.map(|c| c.vector),
            Some(ScpsCapabilities::SNACK1)
        );
    }
    // B side: the gateway offers SCPS, the Linux server's SYN-ACK ignores it.
    let cap = decode_capture(&anchor("scps-ri", "gateway_tun_Bside.pcap"));
    let syns: Vec<_> = tcp_frames(&cap)
        .filter(|(_, d)| d.tcp.has(flags::SYN))
        .collect();
    assert_eq!(syns.len(), 2);
    assert!(syns[0].1.tcp.options.scps_capabilities.is_some());
    assert!(syns[1].1.tcp.has(flags::ACK));
    assert!(syns[1].1.tcp.options.scps_capabilities.is_none());
}

#[test]
fn tshark_samples_match_their_scenario() {
    let mut ip_bytes = Vec::new();
    for file in [
        "scps_sample_raw.pcap",
        "scps_sample_eth.pcap",
        "scps_sample_raw_handmade.pcap",
    ] {
        let cap = decode_capture(&anchor("tshark", file));
        let p: Vec<_> = tcp_frames(&cap).map(|(ip, d)| (ip.clone(), *d)).collect();
        assert_eq!(p.len(), 16);
        let (c_isn, s_isn) = (1000u32, 5000u32);
        let o = |i: usize| p[i - 1].1.tcp.options;
        assert_eq!(o(1).mss, Some(1000));
        assert_eq!(
            o(1).scps_capabilities,
            Some(ScpsCapabilities {
                vector: 0xc8,
                connection_id: 42
            })
        );
        assert_eq!(
            o(2).scps_capabilities,
            Some(ScpsCapabilities {
                vector: 0x70,
                connection_id: 21
            })
        );
        let ce: Vec<usize> = (1..=16).filter(|&i| o(i).corruption_experienced).collect();
        assert_eq!(ce, [7]);
        assert_eq!(opt_bytes(&p[6].0, &p[6].1), &[23, 2, 1, 1]);
        let sn: Vec<usize> = (1..=16).filter(|&i| !o(i).snacks.is_empty()).collect();
        assert_eq!(sn, [9]);
        let s = o(9).snacks.as_slice()[0];
        assert_eq!((s.offset, s.size), (2, 3));
        assert_eq!(p[8].1.tcp.ack, c_isn + 1001);
        let rb: Vec<usize> = (1..=16).filter(|&i| o(i).record_boundary).collect();
        assert_eq!(rb, [15]);
        assert_eq!((p[14].1.tcp.seq, p[14].1.payload_len), (c_isn + 7001, 1000));
        assert_eq!(p[15].1.tcp.ack, c_isn + 8001);
        assert_eq!(p[1].1.tcp.seq, s_isn);
        ip_bytes.push(
            p.into_iter()
                .map(|(ip, d)| ip[..d.ip.total_len as usize].to_vec())
                .collect::<Vec<_>>(),
        );
    }
    // Ethernet or raw, scapy or hand-framed: the same IPv4 packets.
    assert_eq!(ip_bytes[0], ip_bytes[1]);
    assert_eq!(ip_bytes[0], ip_bytes[2]);
}

#[test]
fn compressed_stream_continues_the_uncompressed_one() {
    let cap = decode_capture(&anchor("scps-ri", "rawip_ttcp_compressed.pcap"));
    let mut tcp = tcp_frames(&cap);
    let (syn_ip, syn) = tcp.next().unwrap();
    let (synack_ip, synack) = tcp.next().unwrap();
    assert!(
        tcp.next().is_none(),
        "only the handshake travels uncompressed"
    );
    assert_eq!(&opt_bytes(syn_ip, syn)[..4], &hex("1404503c")[..]);
    assert_eq!(&opt_bytes(synack_ip, synack)[..4], &hex("1404508c")[..]);
    let (c_isn, s_isn) = (syn.tcp.seq, synack.tcp.seq);
    let client = syn.ip.src;

    let mut client_next = c_isn.wrapping_add(1); // next new sequence number of the client
    let mut client_fin = None;
    let mut last_server_ack = synack.tcp.ack;
    let mut server_fin = None;
    let (mut n_client, mut n_server, mut data) = (0, 0, 0usize);
    for f in &cap.frames {
        let Frame::Compressed { ip, d, .. } = f else {
            continue;
        };
        let h = d.header;
        assert_eq!((h.src_port, h.dst_port), (5001, 5001));
        assert!(h.options.timestamps.is_some());
        assert!(h.has(flags::ACK) && !h.has(flags::SYN) && !h.has(flags::RST));
        if ip.src == client {
            if n_client == 0 {
                assert_eq!(
                    h.seq,
                    c_isn.wrapping_add(1),
                    "first compressed seq = ISN + 1"
                );
            }
            n_client += 1;
            let peer_next = s_isn.wrapping_add(1 + server_fin.is_some() as u32);
            assert_eq!(h.ack, peer_next, "client ACKs the server's SYN (and FIN)");
            if d.payload_len > 0 {
                assert_eq!(h.seq, client_next, "data continues without a gap");
                client_next = client_next.wrapping_add(d.payload_len as u32);
                data += d.payload_len;
            }
            if h.has(flags::FIN) {
                assert_eq!(h.seq, client_next);
                client_fin = Some(h.seq);
            }
        } else {
            n_server += 1;
            let fin_done = client_fin.is_some() as u32;
            assert_eq!(h.seq, s_isn.wrapping_add(1 + server_fin.is_some() as u32));
            assert!(
                h.ack.wrapping_sub(last_server_ack) as i32 >= 0,
                "ACKs never go back"
            );
            assert!(client_next.wrapping_add(fin_done).wrapping_sub(h.ack) as i32 >= 0);
            last_server_ack = h.ack;
            if h.has(flags::FIN) {
                server_fin = Some(h.seq);
            }
        }
    }
    assert_eq!(n_client + n_server, 79);
    assert!(data > 50_000, "{data} bytes of data");
    let fin = client_fin.expect("client FIN");
    assert_eq!(last_server_ack, fin.wrapping_add(1), "server ACKs the FIN");
    assert!(server_fin.is_some());
}

#[test]
fn compressed_checksum_uses_protocol_106() {
    let cap = decode_capture(&anchor("scps-ri", "rawip_ttcp_compressed.pcap"));
    let mut n = 0;
    for f in &cap.frames {
        let Frame::Compressed { ip, payload, .. } = f else {
            continue;
        };
        let sum = |p: u8| {
            let mut c = Checksum::pseudo_header(ip.src, ip.dst, p, payload.len());
            c.add_bytes(payload).is_valid()
        };
        assert!(sum(PROTO_SCPS_TP) && !sum(PROTO_SCPS_COMPRESSED));
        n += 1;
    }
    assert_eq!(n, 79);
}

#[test]
fn recompressing_reproduces_the_ri_bytes() {
    let cap = decode_capture(&anchor("scps-ri", "rawip_ttcp_compressed.pcap"));
    let mut ctxs: HashMap<u8, CompressionContext> = HashMap::new();
    let mut n = 0;
    for f in &cap.frames {
        match f {
            Frame::Tcp { d, .. } => {
                let c = CompressionContext::from_syn(&d.tcp, d.ip.src, d.ip.dst).unwrap();
                ctxs.insert(c.conn_id, c);
            }
            Frame::Compressed { payload, d, .. } => {
                let ctx = ctxs.get_mut(&payload[0]).unwrap();
                let x = compress_with_payload(&d.header, &payload[d.header_len..], ctx).unwrap();
                assert_eq!(
                    x.as_bytes(),
                    &payload[..d.header_len],
                    "frame {n}: {:?}",
                    d.header
                );
                ctx.record(&d.header);
                n += 1;
            }
            Frame::NotIpv4 => {}
        }
    }
    assert_eq!(n, 79);
}

#[test]
fn reencoding_decoded_packets() {
    let (mut total, mut same_segment, mut same_ip_header) = (0, 0, 0);
    for sub in ["scps-ri", "tshark"] {
        for path in pcaps_in(sub) {
            let name = file_name(&path);
            let cap = decode_capture(&path);
            for f in &cap.frames {
                let Frame::Tcp {
                    ip, d, checksum_ok, ..
                } = f
                else {
                    continue;
                };
                let params = Ipv4Params {
                    src: d.ip.src,
                    dst: d.ip.dst,
                    protocol: d.ip.protocol,
                    id: d.ip.id,
                };
                let payload = d.payload(ip);
                let mut out = Vec::new();
                encode_ipv4_tcp(&params, &d.tcp, Payload::Bytes(payload), &mut out)
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                let d2 = decode_ipv4_tcp(&out).unwrap();
                assert_eq!(d2.tcp, d.tcp, "{name}");
                assert_eq!(d2.payload(&out), payload, "{name}");
                assert!(d2.tcp_checksum_ok(&out) && d2.ip.checksum_ok, "{name}");
                total += 1;
                // Byte for byte where our option order is theirs.
                let ours = &out[20..];
                let theirs = &ip[d.tcp_offset..d.payload_offset + d.payload_len];
                if *checksum_ok && opt_bytes(ip, d) == opt_bytes(&out, &d2) {
                    assert_eq!(ours, theirs, "{name}: same options, different segment");
                    same_segment += 1;
                }
                let h = d.ip;
                let like_ours = h.header_len == 20
                    && h.tos == 0
                    && h.ttl == 64
                    && h.dont_fragment
                    && !h.more_fragments
                    && h.fragment_offset == 0;
                if like_ours && out.len() == h.total_len as usize {
                    assert_eq!(&out[..20], &ip[..20], "{name}: IPv4 header");
                    same_ip_header += 1;
                }
            }
        }
    }
    println!("re-encoded {total}: {same_segment} identical TCP segments, {same_ip_header} identical IPv4 headers");
    assert!(same_segment >= 48, "the scapy samples use our option order");
    assert!(same_ip_header > 1000);
}

#[test]
#[should_panic(expected = "anchor directory")]
fn a_missing_anchor_directory_fails_loudly() {
    anchor_dir("no-such-anchor-dir");
}
