//! The packets of the capture: a handshake with every SYN option, data, SACK, SNACKs with
//! and without bit vector, corruption experienced, record boundary, FIN.

use super::{C_ISN, S_ISN};
use spacetp_wire::*;

/// One packet of the scenario: direction, header, payload length.
pub struct Pkt {
    pub from_client: bool,
    pub h: TcpHeader,
    pub len: u32,
}

fn ts(val: u32, ecr: u32) -> Option<Timestamps> {
    Some(Timestamps { val, ecr })
}

/// Handshake with every SYN option, data, SACK, SNACKs with and without bit vector,
/// corruption experienced, record boundary, FIN.
pub fn scenario() -> Vec<Pkt> {
    let mut v = Vec::new();
    let c = |flags: u8, seq: u32, ack: u32, options: TcpOptions| TcpHeader {
        src_port: 40000,
        dst_port: 5001,
        seq: C_ISN.wrapping_add(seq),
        ack: if flags & flags::ACK != 0 {
            S_ISN.wrapping_add(ack)
        } else {
            0
        },
        flags,
        window: 65535,
        urgent: 0,
        options,
    };
    let s = |flags: u8, ack: u32, options: TcpOptions| TcpHeader {
        src_port: 5001,
        dst_port: 40000,
        seq: S_ISN.wrapping_add((flags & flags::SYN == 0) as u32),
        ack: C_ISN.wrapping_add(ack),
        flags,
        window: 32000,
        urgent: 0,
        options,
    };
    let syn_opts = |val, ecr, vector, id| TcpOptions {
        mss: Some(1000),
        window_scale: Some(7),
        sack_permitted: true,
        timestamps: ts(val, ecr),
        scps_capabilities: Some(ScpsCapabilities {
            vector,
            connection_id: id,
        }),
        ..Default::default()
    };
    let only_ts = |val, ecr| TcpOptions {
        timestamps: ts(val, ecr),
        ..Default::default()
    };
    use flags::*;
    v.push(Pkt {
        from_client: true,
        h: c(SYN, 0, 0, syn_opts(100, 0, 0xd8, 42)),
        len: 0,
    });
    v.push(Pkt {
        from_client: false,
        h: s(SYN | ACK, 1, syn_opts(500, 100, 0x70, 21)),
        len: 0,
    });
    v.push(Pkt {
        from_client: true,
        h: c(ACK, 1, 1, only_ts(101, 500)),
        len: 0,
    });
    for i in 0..6u32 {
        v.push(Pkt {
            from_client: true,
            h: c(ACK | PSH, 1 + 1000 * i, 1, only_ts(102, 500)),
            len: 1000,
        });
    }
    // SACK of segments 3-4 and 6 (segments 2 and 5 lost).
    let mut o = only_ts(501, 102);
    o.sack.push(C_ISN + 2001, C_ISN + 4001);
    o.sack.push(C_ISN + 5001, C_ISN + 6001);
    v.push(Pkt {
        from_client: false,
        h: s(ACK, 1001, o),
        len: 0,
    });
    // SNACK: hole 0 after the ACK, 1 segment.
    let mut o = only_ts(502, 102);
    o.snacks.push(Snack {
        offset: 0,
        size: 1,
        ..Default::default()
    });
    v.push(Pkt {
        from_client: false,
        h: s(ACK, 1001, o),
        len: 0,
    });
    // SNACK with a bit vector: hole at the ACK, and bit 2 says segment 5 is missing too.
    let mut o = only_ts(503, 102);
    let mut bv = [0u8; 8];
    bv[0] = 0x20;
    o.snacks.push(Snack {
        offset: 0,
        size: 1,
        bitvec: bv,
        bitvec_len: 1,
    });
    v.push(Pkt {
        from_client: false,
        h: s(ACK, 1001, o),
        len: 0,
    });
    // Corruption experienced.
    let o = TcpOptions {
        corruption_experienced: true,
        ..only_ts(504, 102)
    };
    v.push(Pkt {
        from_client: false,
        h: s(ACK, 1001, o),
        len: 0,
    });
    // Two SNACKs in one header (second with a 2-byte vector), no timestamps.
    let mut o = TcpOptions::default();
    o.snacks.push(Snack {
        offset: 0,
        size: 1,
        ..Default::default()
    });
    o.snacks.push(Snack {
        offset: 3,
        size: 1,
        bitvec: [0x80, 0x01, 0, 0, 0, 0, 0, 0],
        bitvec_len: 2,
    });
    v.push(Pkt {
        from_client: false,
        h: s(ACK, 1001, o),
        len: 0,
    });
    // Retransmissions, then the last segment with a record boundary.
    v.push(Pkt {
        from_client: true,
        h: c(ACK | PSH, 1001, 1, only_ts(103, 504)),
        len: 1000,
    });
    v.push(Pkt {
        from_client: true,
        h: c(ACK | PSH, 4001, 1, only_ts(103, 504)),
        len: 1000,
    });
    let o = TcpOptions {
        record_boundary: true,
        ..only_ts(104, 504)
    };
    v.push(Pkt {
        from_client: true,
        h: c(ACK | PSH, 6001, 1, o),
        len: 500,
    });
    v.push(Pkt {
        from_client: false,
        h: s(ACK, 6501, only_ts(505, 104)),
        len: 0,
    });
    v.push(Pkt {
        from_client: true,
        h: c(ACK | FIN, 6501, 1, only_ts(105, 505)),
        len: 0,
    });
    v
}
