//! Encode -> decode gives back what was encoded, for every option combination; options that
//! do not fit are refused; compressed headers round-trip too.

use proptest::prelude::*;
use spacetp_wire::*;

fn arb_snack() -> impl Strategy<Value = Snack> {
    (
        any::<u16>(),
        any::<u16>(),
        proptest::collection::vec(any::<u8>(), 0..=MAX_SNACK_BITVEC),
    )
        .prop_map(|(offset, size, bv)| {
            let mut bitvec = [0u8; 8];
            bitvec[..bv.len()].copy_from_slice(&bv);
            Snack {
                offset,
                size,
                bitvec,
                bitvec_len: bv.len() as u8,
            }
        })
}

prop_compose! {
    fn arb_options()(
        mss in proptest::option::of(any::<u16>()),
        window_scale in proptest::option::of(any::<u8>()),
        sack_permitted in any::<bool>(),
        timestamps in proptest::option::of((any::<u32>(), any::<u32>())),
        sack in proptest::collection::vec((any::<u32>(), any::<u32>()), 0..=MAX_SACK_BLOCKS),
        caps in proptest::option::of((any::<u8>(), any::<u8>())),
        record_boundary in any::<bool>(),
        corruption_experienced in any::<bool>(),
        snacks in proptest::collection::vec(arb_snack(), 0..=MAX_SNACKS),
    ) -> TcpOptions {
        let mut o = TcpOptions {
            mss,
            window_scale,
            sack_permitted,
            timestamps: timestamps.map(|(val, ecr)| Timestamps { val, ecr }),
            scps_capabilities: caps.map(|(vector, connection_id)| ScpsCapabilities { vector, connection_id }),
            record_boundary,
            corruption_experienced,
            ..Default::default()
        };
        for (l, r) in sack {
            o.sack.push(l, r);
        }
        for s in snacks {
            o.snacks.push(s);
        }
        o
    }
}

/// Options that fit in 40 bytes: drop SNACKs, then SACK blocks, until they do.
fn fitting(mut o: TcpOptions) -> TcpOptions {
    while !o.fits() && o.snacks.len > 0 {
        o.snacks.len -= 1;
        o.snacks.items[o.snacks.len as usize] = Snack::default();
    }
    while !o.fits() && o.sack.len > 0 {
        o.sack.len -= 1;
        o.sack.blocks[o.sack.len as usize] = (0, 0);
    }
    o
}

prop_compose! {
    fn arb_header()(
        src_port in any::<u16>(), dst_port in any::<u16>(), seq in any::<u32>(), ack in any::<u32>(),
        flags in any::<u8>(), window in any::<u16>(), urgent in any::<u16>(), options in arb_options(),
    ) -> TcpHeader {
        TcpHeader { src_port, dst_port, seq, ack, flags, window, urgent, options: fitting(options) }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn options_round_trip_or_are_refused(o in arb_options()) {
        let mut out = vec![0xee];
        match encode_options(&o, &mut out) {
            Ok(n) => {
                prop_assert!(o.padded_len() <= 40);
                prop_assert_eq!(n, o.padded_len() as usize);
                prop_assert_eq!(out.len(), 1 + n);
                // Padding is NOPs after exactly raw_len() option bytes.
                prop_assert!(out[1 + o.raw_len() as usize..].iter().all(|&b| b == 1));
                let (back, notes) = decode_tcp_options(&out[1..]).unwrap();
                prop_assert!(notes.is_clean());
                prop_assert_eq!(back, o);
            }
            Err(e) => {
                prop_assert!(o.padded_len() > 40);
                prop_assert_eq!(e, WireError::OptionsTooLong { len: o.padded_len() });
                prop_assert_eq!(out.len(), 1, "nothing appended on error");
            }
        }
    }

    #[test]
    fn packets_round_trip(
        h in arb_header(),
        src in any::<[u8; 4]>(),
        dst in any::<[u8; 4]>(),
        id in any::<u16>(),
        scps in any::<bool>(),
        payload in proptest::collection::vec(any::<u8>(), 0..300),
        zeros in any::<bool>(),
    ) {
        let protocol = if scps { PROTO_SCPS_TP } else { PROTO_TCP };
        let ip = Ipv4Params { src, dst, protocol, id };
        let pl = if zeros { Payload::Zeros(payload.len() as u32) } else { Payload::Bytes(&payload) };
        let mut out = Vec::new();
        let n = encode_ipv4_tcp(&ip, &h, pl, &mut out).unwrap();
        prop_assert_eq!(n, out.len());
        prop_assert_eq!(n, 20 + h.header_len() as usize + payload.len());
        let d = decode_ipv4_tcp(&out).unwrap();
        prop_assert_eq!(d.tcp, h);
        prop_assert!(d.notes.is_clean());
        prop_assert!(d.ip.checksum_ok);
        prop_assert!(d.tcp_checksum_ok(&out));
        prop_assert_eq!((d.ip.src, d.ip.dst, d.ip.protocol, d.ip.id, d.ip.ttl), (src, dst, protocol, id, 64));
        prop_assert!(d.ip.dont_fragment);
        prop_assert_eq!(d.tcp_header_len, h.header_len() as usize);
        prop_assert_eq!(d.payload_len, payload.len());
        if !zeros {
            prop_assert_eq!(d.payload(&out), &payload[..]);
        } else {
            prop_assert!(d.payload(&out).iter().all(|&b| b == 0));
        }
        // The TCP part alone is the same bytes, checksum field aside.
        let mut t = Vec::new();
        prop_assert_eq!(encode_tcp_header(&h, &mut t).unwrap(), h.header_len() as usize);
        prop_assert_eq!(&t[..16], &out[20..36]);
        prop_assert_eq!(&t[18..], &out[38..20 + h.header_len() as usize]);
        // Headers only (zero payload implied) equal the head of the zero-filled packet.
        let mut heads = Vec::new();
        encode_ipv4_tcp_headers(&ip, &h, payload.len() as u32, &mut heads).unwrap();
        let mut full = Vec::new();
        encode_ipv4_tcp(&ip, &h, Payload::Zeros(payload.len() as u32), &mut full).unwrap();
        prop_assert_eq!(&full[..heads.len()], &heads[..]);
    }

    #[test]
    fn compressed_round_trip(
        h in arb_header(),
        last in (any::<u32>(), any::<u32>(), any::<u16>()),
        conn_id in any::<u8>(),
        payload in proptest::collection::vec(any::<u8>(), 0..300),
        self_contained in any::<bool>(),
    ) {
        // No SYN/ECE/CWR in the compressed form; the urgent pointer travels only with URG.
        let h = TcpHeader { flags: h.flags & !(flags::SYN | flags::ECE | flags::CWR), ..h };
        let h = TcpHeader { urgent: if h.has(flags::URG) { h.urgent } else { 0 }, ..h };
        let mut ctx = CompressionContext {
            conn_id,
            src_port: h.src_port,
            dst_port: h.dst_port,
            src_addr: [10, 0, 0, 1],
            dst_addr: [10, 0, 0, 2],
            pseudo_protocol: PROTO_SCPS_TP,
            self_contained,
            ..Default::default()
        };
        ctx.record(&TcpHeader { seq: last.0, ack: last.1, window: last.2, ..Default::default() });
        let x = compress_with_payload(&h, &payload, &ctx).unwrap();
        prop_assert_eq!(x.len() % 2, 0);
        let mut pkt = x.as_bytes().to_vec();
        pkt.extend_from_slice(&payload);
        prop_assert!(ctx.checksum_ok(&pkt));
        let mut rx = ctx;
        let d = decompress(&pkt, &mut rx).unwrap();
        // Every field comes back, whatever was omitted (the receiver has the same context).
        prop_assert_eq!(d.header, h);
        prop_assert_eq!((d.header_len, d.payload_len), (x.len(), payload.len()));
        prop_assert_eq!((rx.seq, rx.ack, rx.window), (h.seq, h.ack, h.window));
        // Self-contained headers decode with any context of the connection.
        if self_contained {
            let mut fresh = ctx;
            fresh.record(&TcpHeader { seq: !last.0, ack: !last.1, window: !last.2, ..Default::default() });
            prop_assert_eq!(decompress(&pkt, &mut fresh).unwrap().header, h);
        }
        // The zero-payload form is the same header for a zero payload.
        let zeros = vec![0u8; payload.len()];
        prop_assert_eq!(compress(&h, payload.len(), &ctx).unwrap(), compress_with_payload(&h, &zeros, &ctx).unwrap());
    }
}

/// Every subset of the nine option kinds, each with its smallest and its largest form.
#[test]
fn every_option_combination() {
    let (mut ok, mut refused) = (0, 0);
    for mask in 0u32..512 {
        for big in [false, true] {
            let on = |bit: u32| mask & (1 << bit) != 0;
            let mut o = TcpOptions {
                mss: on(0).then_some(1460),
                window_scale: on(1).then_some(14),
                sack_permitted: on(2),
                timestamps: on(3).then_some(Timestamps { val: 1, ecr: 2 }),
                scps_capabilities: on(5).then_some(ScpsCapabilities {
                    vector: 0x50,
                    connection_id: 9,
                }),
                record_boundary: on(6),
                corruption_experienced: on(7),
                ..Default::default()
            };
            if on(4) {
                for i in 0..if big { 4 } else { 1 } {
                    o.sack.push(i * 100, i * 100 + 50);
                }
            }
            if on(8) {
                for i in 0..if big { 6 } else { 1 } {
                    let n = if big { 8 } else { 0 };
                    o.snacks.push(Snack {
                        offset: i,
                        size: 1,
                        bitvec: if big { [0xa5; 8] } else { [0; 8] },
                        bitvec_len: n,
                    });
                }
            }
            let h = TcpHeader {
                flags: flags::ACK,
                options: o,
                ..Default::default()
            };
            let ip = Ipv4Params {
                src: [1, 2, 3, 4],
                dst: [5, 6, 7, 8],
                protocol: 106,
                id: 1,
            };
            let mut out = Vec::new();
            match encode_ipv4_tcp(&ip, &h, Payload::Zeros(10), &mut out) {
                Ok(_) => {
                    let d = decode_ipv4_tcp(&out).unwrap();
                    assert_eq!(d.tcp, h, "mask {mask:#x} big {big}");
                    assert!(d.tcp_checksum_ok(&out));
                    assert_eq!(d.tcp_header_len, 20 + o.padded_len() as usize);
                    ok += 1;
                }
                Err(WireError::OptionsTooLong { len }) => {
                    assert!(len > 40 && len == o.padded_len(), "mask {mask:#x}");
                    assert!(out.is_empty());
                    refused += 1;
                }
                Err(e) => panic!("mask {mask:#x}: {e}"),
            }
        }
    }
    assert_eq!(ok + refused, 1024);
    assert!(ok >= 512, "every small form fits: {ok}");
}

#[test]
fn out_of_range_counts_are_refused() {
    let mut o = TcpOptions::default();
    o.sack.len = 5;
    assert!(matches!(
        o.validate(),
        Err(WireError::InvalidOptions { .. })
    ));
    let mut o = TcpOptions::default();
    o.snacks.len = 7;
    assert!(matches!(
        o.validate(),
        Err(WireError::InvalidOptions { .. })
    ));
    let mut o = TcpOptions::default();
    o.snacks.push(Snack {
        bitvec_len: 9,
        ..Default::default()
    });
    let mut out = Vec::new();
    assert!(encode_options(&o, &mut out).is_err());
    assert!(out.is_empty());
}

/// A capture cut by its snaplen still yields the headers; the payload is marked incomplete.
#[test]
fn snaplen_truncated_packets_still_decode_headers() {
    let h = TcpHeader {
        seq: 7,
        ack: 9,
        flags: flags::ACK,
        options: TcpOptions {
            timestamps: Some(Timestamps { val: 1, ecr: 2 }),
            ..Default::default()
        },
        ..Default::default()
    };
    let ip = Ipv4Params {
        src: [1, 1, 1, 1],
        dst: [2, 2, 2, 2],
        protocol: PROTO_TCP,
        id: 3,
    };
    let mut heads = Vec::new();
    encode_ipv4_tcp_headers(&ip, &h, 1400, &mut heads).unwrap();
    let mut w = PcapWriter::with_options(Vec::new(), 96, TsResolution::Micro).unwrap();
    w.write_zero_filled(5, &heads, heads.len() as u32 + 1400)
        .unwrap();
    let pk = PcapReader::new(w.into_inner()).unwrap().read_all().unwrap();
    assert_eq!((pk[0].data.len(), pk[0].orig_len), (96, 52 + 1400));
    let d = decode_ipv4_tcp(pk[0].ipv4().unwrap()).unwrap();
    assert_eq!(d.tcp, h);
    assert!(d.truncated);
    assert_eq!(d.payload_len, 1400);
    assert_eq!(d.payload(&pk[0].data).len(), 96 - 52);
    assert!(
        !d.tcp_checksum_ok(&pk[0].data),
        "cannot verify a cut packet"
    );
}
