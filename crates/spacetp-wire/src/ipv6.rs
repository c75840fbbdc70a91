//! IPv6 (RFC 8200) around a TCP-format header: the fixed 40-byte header, no extension
//! headers (a packet with one is refused by name: the gateway's SCPS-TP never sends them),
//! and the transport checksum over the IPv6 pseudo-header (RFC 8200 section 8.1: source,
//! destination, 32-bit upper-layer length, three zero bytes, next header).

use crate::checksum::Checksum;
use crate::decode::{decode_tcp_header, DecodeNotes};
use crate::encode::{encode_tcp_header, Payload};
use crate::error::{Layer, WireError};
use crate::ip::DEFAULT_TTL;
use crate::tcp::TcpHeader;

/// Bytes of the fixed IPv6 header.
pub const IPV6_HEADER_LEN: usize = 40;

/// The fields of an IPv6 header spacetp reads and writes (traffic class and flow label are
/// written 0 and ignored on reading).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Ipv6Header {
    pub src: [u8; 16],
    pub dst: [u8; 16],
    /// Next header: 6 (TCP, SCPS-TP as the gateways carry it) or 106 (standalone SCPS-TP).
    pub next_header: u8,
    pub hop_limit: u8,
    /// Bytes after the fixed header, as sent.
    pub payload_len: u16,
}

/// The IPv6 pseudo-header's sum for an upper-layer packet of `len` bytes.
pub fn ipv6_pseudo_header(src: &[u8; 16], dst: &[u8; 16], next: u8, len: usize) -> Checksum {
    let mut c = Checksum::new();
    c.add_bytes(src).add_bytes(dst).add_u32(len as u32);
    c.add_u32(next as u32);
    c
}

/// Appends an IPv6 packet: fixed header (hop limit 64), TCP header with options, payload;
/// the TCP checksum over the IPv6 pseudo-header. Returns the bytes written.
pub fn encode_ipv6_tcp(
    ip: &Ipv6Header,
    h: &TcpHeader,
    payload: Payload<'_>,
    out: &mut Vec<u8>,
) -> Result<usize, WireError> {
    h.options.validate()?;
    let tcp_len = h.header_len() as usize + payload.len();
    if tcp_len > u16::MAX as usize {
        return Err(WireError::PacketTooLong {
            len: IPV6_HEADER_LEN + tcp_len,
        });
    }
    let start = out.len();
    out.extend_from_slice(&[0x60, 0, 0, 0]);
    out.extend_from_slice(&(tcp_len as u16).to_be_bytes());
    out.extend_from_slice(&[ip.next_header, DEFAULT_TTL]);
    out.extend_from_slice(&ip.src);
    out.extend_from_slice(&ip.dst);
    let tcp_start = out.len();
    encode_tcp_header(h, out)?;
    let mut c = ipv6_pseudo_header(&ip.src, &ip.dst, ip.next_header, tcp_len);
    c.add_bytes(&out[tcp_start..]);
    payload.add_to(&mut c);
    out[tcp_start + 16..tcp_start + 18].copy_from_slice(&c.finish().to_be_bytes());
    payload.append_to(out);
    Ok(out.len() - start)
}

/// An IPv6 packet carrying a TCP-format header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct DecodedPacket6 {
    pub ip: Ipv6Header,
    pub tcp: TcpHeader,
    pub notes: DecodeNotes,
    pub tcp_header_len: usize,
    /// Payload bytes from `IPV6_HEADER_LEN + tcp_header_len`, per the payload length field.
    pub payload_len: usize,
    /// The TCP checksum verifies over the pseudo-header.
    pub checksum_ok: bool,
}

impl DecodedPacket6 {
    pub fn payload<'a>(&self, packet: &'a [u8]) -> &'a [u8] {
        let start = IPV6_HEADER_LEN + self.tcp_header_len;
        packet.get(start..start + self.payload_len).unwrap_or(&[])
    }
}

/// Parses an IPv6 packet whose next header is TCP (6) or standalone SCPS-TP (106), and
/// verifies its transport checksum. Trailing bytes past the payload length are ignored.
pub fn decode_ipv6_tcp(packet: &[u8]) -> Result<DecodedPacket6, WireError> {
    if packet.len() < IPV6_HEADER_LEN {
        return Err(WireError::Truncated {
            layer: Layer::Ipv6,
            needed: IPV6_HEADER_LEN,
            available: packet.len(),
        });
    }
    let version = packet[0] >> 4;
    if version != 6 {
        return Err(WireError::NotIpv6 { version });
    }
    let payload_len = u16::from_be_bytes([packet[4], packet[5]]);
    let next = packet[6];
    if next != 6 && next != 106 {
        // Extension headers (hop-by-hop 0, routing 43, fragment 44, ...) included.
        return Err(WireError::UnsupportedProtocol { protocol: next });
    }
    let end = IPV6_HEADER_LEN + payload_len as usize;
    let Some(seg) = packet.get(IPV6_HEADER_LEN..end) else {
        return Err(WireError::Truncated {
            layer: Layer::Ipv6,
            needed: end,
            available: packet.len(),
        });
    };
    let mut ip = Ipv6Header {
        next_header: next,
        hop_limit: packet[7],
        payload_len,
        ..Default::default()
    };
    ip.src.copy_from_slice(&packet[8..24]);
    ip.dst.copy_from_slice(&packet[24..40]);
    let t = decode_tcp_header(seg)?;
    let mut c = ipv6_pseudo_header(&ip.src, &ip.dst, next, seg.len());
    c.add_bytes(seg);
    Ok(DecodedPacket6 {
        ip,
        tcp: t.header,
        notes: t.notes,
        tcp_header_len: t.header_len,
        payload_len: seg.len().saturating_sub(t.header_len),
        checksum_ok: c.is_valid(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::flags;

    /// A SYN from [2001:db8::1]:40000 to [2001:db8::2]:5000 with MSS 1440, built by Scapy
    /// (`IPv6(src=..., dst=...)/TCP(sport=40000, dport=5000, seq=1000, flags="S",
    /// window=65535, options=[("MSS", 1440)])`), whose checksum Scapy computed.
    const SCAPY_SYN: &str = concat!(
        "6000000000180640",
        "20010db8000000000000000000000001",
        "20010db8000000000000000000000002",
        "9c401388000003e8000000006002ffff89150000020405a0"
    );

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn decodes_scapys_syn_and_its_checksum_verifies() {
        let p = hex(SCAPY_SYN);
        let d = decode_ipv6_tcp(&p).unwrap();
        assert!(d.checksum_ok);
        assert_eq!(
            (d.tcp.src_port, d.tcp.dst_port, d.tcp.seq),
            (40000, 5000, 1000)
        );
        assert_eq!(d.tcp.flags, flags::SYN);
        assert_eq!(d.tcp.options.mss, Some(1440));
        assert_eq!(d.ip.src[15], 1);
        assert_eq!(d.ip.dst[15], 2);
    }

    #[test]
    fn encodes_scapys_syn_byte_for_byte() {
        let d = decode_ipv6_tcp(&hex(SCAPY_SYN)).unwrap();
        let mut out = Vec::new();
        encode_ipv6_tcp(&d.ip, &d.tcp, Payload::Bytes(&[]), &mut out).unwrap();
        assert_eq!(out, hex(SCAPY_SYN));
    }

    #[test]
    fn a_payload_round_trips_and_a_flipped_bit_fails_the_checksum() {
        let ip = Ipv6Header {
            src: [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9],
            dst: [0xfd; 16],
            next_header: 6,
            ..Default::default()
        };
        let h = TcpHeader {
            src_port: 1,
            dst_port: 2,
            seq: 7,
            ack: 9,
            flags: flags::ACK,
            window: 100,
            ..Default::default()
        };
        let mut out = Vec::new();
        encode_ipv6_tcp(&ip, &h, Payload::Bytes(b"hello"), &mut out).unwrap();
        let d = decode_ipv6_tcp(&out).unwrap();
        assert!(d.checksum_ok);
        assert_eq!(d.payload(&out), b"hello");
        let last = out.len() - 1;
        out[last] ^= 1;
        assert!(!decode_ipv6_tcp(&out).unwrap().checksum_ok);
    }

    #[test]
    fn extension_headers_ipv4_and_short_packets_are_refused_by_name() {
        let mut p = hex(SCAPY_SYN);
        p[6] = 0; // hop-by-hop options
        assert_eq!(
            decode_ipv6_tcp(&p),
            Err(WireError::UnsupportedProtocol { protocol: 0 })
        );
        let mut p = hex(SCAPY_SYN);
        p[0] = 0x45;
        assert_eq!(decode_ipv6_tcp(&p), Err(WireError::NotIpv6 { version: 4 }));
        let p = hex(SCAPY_SYN);
        assert!(matches!(
            decode_ipv6_tcp(&p[..50]),
            Err(WireError::Truncated { .. })
        ));
    }
}
