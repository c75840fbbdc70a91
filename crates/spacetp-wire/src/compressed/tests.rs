//! SCPS compressed headers: round trips, the RI's captures, and malformed input.

use super::*;

fn ctx() -> CompressionContext {
    let syn = TcpHeader {
        src_port: 5001,
        dst_port: 5001,
        seq: 0x6c11be77,
        flags: flags::SYN,
        window: 0x7fff,
        options: TcpOptions {
            scps_capabilities: Some(ScpsCapabilities {
                vector: 0x50,
                connection_id: 0x3c,
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    CompressionContext::from_syn(&syn, [10, 99, 0, 1], [10, 99, 0, 2]).unwrap()
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn ri_handshake_ack_bytes() {
    // rawip_ttcp_compressed.pcap frame 3: the ACK completing the handshake.
    let want = hex("3c637fff6c0228bd6c11be786c11e26d6c11c5b6eec2");
    let h = TcpHeader {
        src_port: 5001,
        dst_port: 5001,
        seq: 0x6c11be78,
        ack: 0x6c0228bd,
        flags: flags::ACK,
        window: 0x7fff,
        options: TcpOptions {
            timestamps: Some(Timestamps {
                val: 0x6c11e26d,
                ecr: 0x6c11c5b6,
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let c = ctx();
    assert_eq!(compress(&h, 0, &c).unwrap().as_bytes(), &want[..]);
    let mut d = ctx();
    assert!(d.checksum_ok(&want));
    let got = decompress(&want, &mut d).unwrap();
    assert_eq!(got.header, h);
    assert_eq!((got.header_len, got.payload_len), (22, 0));
    assert_eq!((d.seq, d.ack), (h.seq, h.ack));
}

#[test]
fn length_is_always_even() {
    let mut c = ctx();
    c.record(&TcpHeader {
        seq: 1,
        ack: 2,
        window: 3,
        ..Default::default()
    });
    let base = TcpHeader {
        seq: 1,
        ack: 2,
        window: 3,
        flags: flags::ACK,
        ..Default::default()
    };
    let ce = TcpOptions {
        corruption_experienced: true,
        ..Default::default()
    };
    let mut snack = TcpOptions::default();
    snack.snacks.push(crate::Snack {
        offset: 1,
        size: 1,
        bitvec: [0x80, 0, 0, 0, 0, 0, 0, 0],
        bitvec_len: 1,
    });
    // (header, expect PAD): a FIN makes a second control octet and an odd length (the RI's
    // frame 77), options are preceded by a length octet.
    let cases = [
        (
            TcpHeader {
                flags: flags::ACK | flags::FIN,
                ..base
            },
            true,
        ),
        (
            TcpHeader {
                options: ce,
                ..base
            },
            false,
        ),
        (
            TcpHeader {
                options: snack,
                ..base
            },
            true,
        ),
        (TcpHeader { seq: 9, ..base }, false),
    ];
    for (h, pad) in cases {
        let x = compress(&h, 0, &c).unwrap();
        assert_eq!(x.len() % 2, 0);
        assert_eq!(x.control() & ctrl::PAD != 0, pad, "{h:?}");
        let mut d = c;
        let got = decompress(x.as_bytes(), &mut d).unwrap();
        assert_eq!(
            got.header,
            TcpHeader {
                src_port: 5001,
                dst_port: 5001,
                ..h
            }
        );
        assert!(c.checksum_ok(x.as_bytes()));
    }
}

#[test]
fn full_ipv4_packet_round_trip() {
    use crate::{decode_ipv4_header, encode_ipv4_packet, Ipv4Params, Payload};
    let c = ctx();
    let h = TcpHeader {
        src_port: 5001,
        dst_port: 5001,
        seq: 0x6c11be78,
        ack: 0,
        flags: flags::ACK | flags::PSH,
        window: 0x7fff,
        options: TcpOptions {
            timestamps: Some(Timestamps { val: 1, ecr: 2 }),
            record_boundary: true,
            ..Default::default()
        },
        ..Default::default()
    };
    let data = b"hello, space";
    let x = compress_with_payload(&h, data, &c).unwrap();
    let ip = Ipv4Params {
        src: c.src_addr,
        dst: c.dst_addr,
        protocol: PROTO_SCPS_COMPRESSED,
        id: 9,
    };
    let mut pkt = Vec::new();
    encode_ipv4_packet(&ip, x.as_bytes(), Payload::Bytes(data), &mut pkt).unwrap();
    let iph = decode_ipv4_header(&pkt).unwrap();
    assert!(iph.checksum_ok);
    assert_eq!(iph.protocol, PROTO_SCPS_COMPRESSED);
    let body = &pkt[20..];
    assert!(c.checksum_ok(body));
    let mut d = c;
    let got = decompress(body, &mut d).unwrap();
    assert_eq!(got.header, h);
    assert_eq!(&body[got.header_len..], data);
    // Data segment, ACK unchanged since the SYN: no window/ACK fields, S + TS + RB + PUSH.
    assert_eq!(
        x.control(),
        ctrl::TS1 | ctrl::TS2 | ctrl::RB | ctrl::PUSH | ctrl::S
    );
    // A flipped bit is caught by the checksum.
    let mut bad = body.to_vec();
    bad[5] ^= 0x10;
    assert!(!c.checksum_ok(&bad));
}

#[test]
fn refuses_syn_and_wrong_connection() {
    let c = ctx();
    let syn = TcpHeader {
        flags: flags::SYN,
        ..Default::default()
    };
    assert!(compress(&syn, 0, &c).is_err());
    let mut other = ctx();
    other.conn_id = 7;
    let x = compress(
        &TcpHeader {
            flags: flags::ACK,
            ..Default::default()
        },
        0,
        &c,
    )
    .unwrap();
    assert_eq!(
        decompress(x.as_bytes(), &mut other),
        Err(WireError::WrongConnection {
            expected: 7,
            found: 0x3c
        })
    );
}
