//! Reading IPv4 + TCP-format headers (protocol 6 or 106) from bytes.
//!
//! Never panics: every length is checked and every problem is a `WireError`. What the
//! structs cannot hold but a real peer may send (unknown options, the extended SCPS
//! capabilities form, SNACK bit vectors longer than 8 bytes) is skipped or truncated and
//! counted in `DecodeNotes`, not an error.

use crate::checksum::Checksum;
use crate::error::{Layer, WireError};
use crate::ip::{Ipv4Header, PROTO_SCPS_TP, PROTO_TCP, PROTO_UDP, SCPS_UDP_ENCAP_PORT};
use crate::options::{
    kind, ScpsCapabilities, Snack, TcpOptions, Timestamps, MAX_SACK_BLOCKS, MAX_SNACK_BITVEC,
};
use crate::tcp::TcpHeader;

/// What the decoder skipped or cut while still producing a header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct DecodeNotes {
    /// Options of a kind we do not know, skipped.
    pub unknown_options: u8,
    /// Options of a known kind with a length that kind cannot have, skipped.
    pub malformed_options: u8,
    /// Kind-20 options with length != 4 (extended capabilities / binding space), skipped.
    pub scps_extended_capabilities: u8,
    /// A SNACK bit vector longer than 8 bytes was cut to its first 8 bytes.
    pub snack_bitvec_truncated: bool,
    /// SACK blocks or SNACKs beyond what the fixed-size arrays hold, dropped.
    pub dropped: u8,
    /// An EOL option ended the list before the header did.
    pub eol: bool,
}

impl DecodeNotes {
    /// Nothing was skipped, cut or dropped (EOL does not count).
    pub fn is_clean(&self) -> bool {
        self.unknown_options == 0
            && self.malformed_options == 0
            && self.scps_extended_capabilities == 0
            && !self.snack_bitvec_truncated
            && self.dropped == 0
    }
}

fn need(layer: Layer, bytes: &[u8], needed: usize) -> Result<(), WireError> {
    if bytes.len() < needed {
        Err(WireError::Truncated {
            layer,
            needed,
            available: bytes.len(),
        })
    } else {
        Ok(())
    }
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Parses an IPv4 header. `packet` may hold more bytes than the total length (link-layer
/// padding) or fewer (a truncated capture): the caller compares with `total_len`.
pub fn decode_ipv4_header(packet: &[u8]) -> Result<Ipv4Header, WireError> {
    need(Layer::Ipv4, packet, 1)?;
    let version = packet[0] >> 4;
    if version != 4 {
        return Err(WireError::NotIpv4 { version });
    }
    let ihl = packet[0] & 0x0f;
    if ihl < 5 {
        return Err(WireError::BadIpHeaderLength { ihl });
    }
    let header_len = ihl as usize * 4;
    need(Layer::Ipv4, packet, header_len)?;
    let total_len = be16(packet, 2);
    if (total_len as usize) < header_len {
        return Err(WireError::BadTotalLength {
            total_len,
            header_len,
        });
    }
    let frag = be16(packet, 6);
    Ok(Ipv4Header {
        src: [packet[12], packet[13], packet[14], packet[15]],
        dst: [packet[16], packet[17], packet[18], packet[19]],
        protocol: packet[9],
        ttl: packet[8],
        tos: packet[1],
        id: be16(packet, 4),
        total_len,
        header_len: header_len as u8,
        dont_fragment: frag & 0x4000 != 0,
        more_fragments: frag & 0x2000 != 0,
        fragment_offset: frag & 0x1fff,
        checksum: be16(packet, 10),
        checksum_ok: Checksum::new().add_bytes(&packet[..header_len]).is_valid(),
    })
}

/// Walks a TCP option list (the bytes after the fixed 20-byte header).
pub fn decode_tcp_options(bytes: &[u8]) -> Result<(TcpOptions, DecodeNotes), WireError> {
    let mut o = TcpOptions::default();
    let mut notes = DecodeNotes::default();
    let mut i = 0;
    while i < bytes.len() {
        let k = bytes[i];
        match k {
            kind::EOL => {
                notes.eol = i + 1 < bytes.len();
                break;
            }
            kind::NOP => {
                i += 1;
                continue;
            }
            _ => {}
        }
        let Some(&len) = bytes.get(i + 1) else {
            return Err(WireError::OptionOverrun { kind: k });
        };
        if len < 2 {
            return Err(WireError::BadOptionLength { kind: k, len });
        }
        let Some(opt) = bytes.get(i..i + len as usize) else {
            return Err(WireError::OptionOverrun { kind: k });
        };
        let body = &opt[2..];
        match (k, body.len()) {
            (kind::MSS, 2) => o.mss = Some(be16(body, 0)),
            (kind::WINDOW_SCALE, 1) => o.window_scale = Some(body[0]),
            (kind::SACK_PERMITTED, 0) => o.sack_permitted = true,
            (kind::TIMESTAMPS, 8) => {
                o.timestamps = Some(Timestamps {
                    val: be32(body, 0),
                    ecr: be32(body, 4),
                })
            }
            (kind::SACK, n) if n > 0 && n % 8 == 0 => {
                for b in body.chunks_exact(8) {
                    if !o.sack.push(be32(b, 0), be32(b, 4)) {
                        notes.dropped = notes.dropped.saturating_add(1);
                    }
                }
                debug_assert!(o.sack.len as usize <= MAX_SACK_BLOCKS);
            }
            (kind::SCPS_CAPABILITIES, 2) => {
                o.scps_capabilities = Some(ScpsCapabilities {
                    vector: body[0],
                    connection_id: body[1],
                })
            }
            (kind::SCPS_CAPABILITIES, _) => {
                notes.scps_extended_capabilities =
                    notes.scps_extended_capabilities.saturating_add(1)
            }
            (kind::SNACK, n) if n >= 4 => {
                let mut s = Snack {
                    offset: be16(body, 0),
                    size: be16(body, 2),
                    ..Default::default()
                };
                let bv = &body[4..];
                let keep = bv.len().min(MAX_SNACK_BITVEC);
                s.bitvec[..keep].copy_from_slice(&bv[..keep]);
                s.bitvec_len = keep as u8;
                if bv.len() > MAX_SNACK_BITVEC {
                    notes.snack_bitvec_truncated = true;
                }
                if !o.snacks.push(s) {
                    notes.dropped = notes.dropped.saturating_add(1);
                }
            }
            (kind::RECORD_BOUNDARY, 0) => o.record_boundary = true,
            (kind::CORRUPTION_EXPERIENCED, 0) => o.corruption_experienced = true,
            (
                kind::MSS
                | kind::WINDOW_SCALE
                | kind::SACK_PERMITTED
                | kind::TIMESTAMPS
                | kind::SACK
                | kind::SNACK
                | kind::RECORD_BOUNDARY
                | kind::CORRUPTION_EXPERIENCED,
                _,
            ) => notes.malformed_options = notes.malformed_options.saturating_add(1),
            _ => notes.unknown_options = notes.unknown_options.saturating_add(1),
        }
        i += len as usize;
    }
    Ok((o, notes))
}

/// A TCP-format header read from the start of a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TcpSegment {
    pub header: TcpHeader,
    /// Data offset in bytes (20 + options).
    pub header_len: usize,
    /// The checksum field as sent.
    pub checksum: u16,
    pub notes: DecodeNotes,
}

/// Parses the TCP header at the start of `segment` (which may continue with payload).
pub fn decode_tcp_header(segment: &[u8]) -> Result<TcpSegment, WireError> {
    need(Layer::Tcp, segment, 20)?;
    let data_offset = segment[12] >> 4;
    if data_offset < 5 {
        return Err(WireError::BadTcpHeaderLength { data_offset });
    }
    let header_len = data_offset as usize * 4;
    need(Layer::Tcp, segment, header_len)?;
    let (options, notes) = decode_tcp_options(&segment[20..header_len])?;
    Ok(TcpSegment {
        header: TcpHeader {
            src_port: be16(segment, 0),
            dst_port: be16(segment, 2),
            seq: be32(segment, 4),
            ack: be32(segment, 8),
            flags: segment[13],
            window: be16(segment, 14),
            urgent: be16(segment, 18),
            options,
        },
        header_len,
        checksum: be16(segment, 16),
        notes,
    })
}

/// An IPv4 packet carrying a TCP-format header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct DecodedPacket {
    pub ip: Ipv4Header,
    pub tcp: TcpHeader,
    pub notes: DecodeNotes,
    /// The TCP checksum field as sent.
    pub tcp_checksum: u16,
    /// Offset of the TCP header in the packet (the IP header length).
    pub tcp_offset: usize,
    pub tcp_header_len: usize,
    pub payload_offset: usize,
    /// Payload length according to the IP total length.
    pub payload_len: usize,
    /// The bytes given hold less than the IP total length (a capture cut by its snaplen):
    /// the payload is incomplete and the TCP checksum cannot be verified.
    pub truncated: bool,
}

impl DecodedPacket {
    /// The payload bytes present in `packet` (fewer than `payload_len` when truncated).
    pub fn payload<'a>(&self, packet: &'a [u8]) -> &'a [u8] {
        let end = (self.payload_offset + self.payload_len).min(packet.len());
        packet.get(self.payload_offset..end).unwrap_or(&[])
    }

    /// Verifies the TCP checksum with the pseudo-header protocol on the wire (6 or 106).
    pub fn tcp_checksum_ok(&self, packet: &[u8]) -> bool {
        self.tcp_checksum_ok_with(packet, self.ip.protocol)
    }

    /// Verifies the TCP checksum with a chosen pseudo-header protocol number.
    pub fn tcp_checksum_ok_with(&self, packet: &[u8], protocol: u8) -> bool {
        let end = self.payload_offset + self.payload_len;
        match packet.get(self.tcp_offset..end) {
            Some(seg) if !self.truncated => {
                let mut c = Checksum::pseudo_header(self.ip.src, self.ip.dst, protocol, seg.len());
                c.add_bytes(seg).is_valid()
            }
            _ => false,
        }
    }
}

/// The IPv4 header and the bytes it carries (up to its total length), if the packet is not a
/// fragment and carries one of `protocols`.
fn decode_ipv4_unfragmented<'a>(
    packet: &'a [u8],
    protocols: &[u8],
) -> Result<(Ipv4Header, &'a [u8]), WireError> {
    let ip = decode_ipv4_header(packet)?;
    if !protocols.contains(&ip.protocol) {
        return Err(WireError::UnsupportedProtocol {
            protocol: ip.protocol,
        });
    }
    if ip.more_fragments || ip.fragment_offset != 0 {
        return Err(WireError::Fragment);
    }
    let end = (ip.total_len as usize).min(packet.len());
    Ok((ip, &packet[ip.header_len as usize..end]))
}

/// Parses an IPv4 packet carrying TCP (protocol 6) or standalone SCPS-TP (protocol 106).
/// Trailing bytes past the IP total length (Ethernet padding) are ignored.
pub fn decode_ipv4_tcp(packet: &[u8]) -> Result<DecodedPacket, WireError> {
    let (ip, seg) = decode_ipv4_unfragmented(packet, &[PROTO_TCP, PROTO_SCPS_TP])?;
    let hl = ip.header_len as usize;
    let t = decode_tcp_header(seg)?;
    let payload_len = ip.payload_len().saturating_sub(t.header_len);
    Ok(DecodedPacket {
        ip,
        tcp: t.header,
        notes: t.notes,
        tcp_checksum: t.checksum,
        tcp_offset: hl,
        tcp_header_len: t.header_len,
        payload_offset: hl + t.header_len,
        payload_len,
        truncated: packet.len() < ip.total_len as usize,
    })
}

/// A UDP header and where its payload lies in the IPv4 packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct UdpDatagram {
    pub ip: Ipv4Header,
    pub src_port: u16,
    pub dst_port: u16,
    pub length: u16,
    pub checksum: u16,
    pub payload_offset: usize,
    pub payload_len: usize,
}

impl UdpDatagram {
    /// Verifies the UDP checksum (0 means "not computed" and passes).
    pub fn checksum_ok(&self, packet: &[u8]) -> bool {
        if self.checksum == 0 {
            return true;
        }
        let start = self.ip.header_len as usize;
        match packet.get(start..start + self.length as usize) {
            Some(d) => {
                let mut c = Checksum::pseudo_header(self.ip.src, self.ip.dst, PROTO_UDP, d.len());
                c.add_bytes(d).is_valid()
            }
            None => false,
        }
    }
}

/// Parses an IPv4 packet carrying UDP.
pub fn decode_ipv4_udp(packet: &[u8]) -> Result<UdpDatagram, WireError> {
    let (ip, d) = decode_ipv4_unfragmented(packet, &[PROTO_UDP])?;
    let hl = ip.header_len as usize;
    need(Layer::Udp, d, 8)?;
    let length = be16(d, 4);
    if (length as usize) < 8 {
        return Err(WireError::Truncated {
            layer: Layer::Udp,
            needed: 8,
            available: length as usize,
        });
    }
    need(Layer::Udp, d, length as usize)?;
    Ok(UdpDatagram {
        ip,
        src_port: be16(d, 0),
        dst_port: be16(d, 2),
        length,
        checksum: be16(d, 6),
        payload_offset: hl + 8,
        payload_len: length as usize - 8,
    })
}

/// The inner IPv4 packet of the RI's UDP encapsulation (UDP port 7168 carrying a whole IPv4
/// packet, TTL 250, protocol 106). Returns the outer datagram and the inner packet bytes.
pub fn decode_scps_udp_encap(packet: &[u8]) -> Result<(UdpDatagram, &[u8]), WireError> {
    let u = decode_ipv4_udp(packet)?;
    if u.dst_port != SCPS_UDP_ENCAP_PORT && u.src_port != SCPS_UDP_ENCAP_PORT {
        return Err(WireError::UnsupportedProtocol {
            protocol: PROTO_UDP,
        });
    }
    Ok((
        u,
        &packet[u.payload_offset..u.payload_offset + u.payload_len],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ri_syn_options() {
        // The RI's standalone SYN options (scps-ri/README.md).
        let b = [
            0x14, 4, 0x40, 0, 2, 4, 5, 0xb4, 1, 3, 3, 0, 1, 1, 8, 10, 0x6c, 0x11, 0xbe, 0x77, 0, 0,
            0, 0,
        ];
        let (o, n) = decode_tcp_options(&b).unwrap();
        assert!(n.is_clean());
        assert_eq!(
            o.scps_capabilities,
            Some(ScpsCapabilities {
                vector: 0x40,
                connection_id: 0
            })
        );
        assert_eq!(o.mss, Some(1460));
        assert_eq!(o.window_scale, Some(0));
        assert_eq!(
            o.timestamps,
            Some(Timestamps {
                val: 0x6c11be77,
                ecr: 0
            })
        );
        assert!(!o.sack_permitted);
    }

    #[test]
    fn bad_lengths_are_errors_not_panics() {
        assert_eq!(
            decode_tcp_options(&[2]),
            Err(WireError::OptionOverrun { kind: 2 })
        );
        assert_eq!(
            decode_tcp_options(&[2, 0]),
            Err(WireError::BadOptionLength { kind: 2, len: 0 })
        );
        assert_eq!(
            decode_tcp_options(&[99, 1]),
            Err(WireError::BadOptionLength { kind: 99, len: 1 })
        );
        assert_eq!(
            decode_tcp_options(&[8, 10, 0, 0]),
            Err(WireError::OptionOverrun { kind: 8 })
        );
        // EOL stops the walk: what follows is not read.
        let (o, n) = decode_tcp_options(&[0, 2, 0]).unwrap();
        assert!(o.is_empty() && n.eol);
    }

    #[test]
    fn skipped_and_truncated_are_noted() {
        // unknown kind 30; MSS of length 3; extended SCPS caps; SNACK with a 10-byte bit vector
        let mut b = vec![
            30, 3, 0, 2, 3, 0, 20, 6, 9, 0x10, 0xaa, 0xbb, 21, 16, 0, 1, 0, 2,
        ];
        b.extend(1..=10u8);
        let (o, n) = decode_tcp_options(&b).unwrap();
        assert_eq!(
            (
                n.unknown_options,
                n.malformed_options,
                n.scps_extended_capabilities
            ),
            (1, 1, 1)
        );
        assert!(n.snack_bitvec_truncated);
        let s = o.snacks.as_slice()[0];
        assert_eq!(
            (s.offset, s.size, s.bitvec_len, s.bitvec),
            (1, 2, 8, [1, 2, 3, 4, 5, 6, 7, 8])
        );
        assert_eq!(o.mss, None);
    }

    #[test]
    fn ipv4_errors() {
        assert_eq!(
            decode_ipv4_header(&[]).unwrap_err(),
            WireError::Truncated {
                layer: Layer::Ipv4,
                needed: 1,
                available: 0
            }
        );
        assert_eq!(
            decode_ipv4_header(&[0x60]).unwrap_err(),
            WireError::NotIpv4 { version: 6 }
        );
        assert_eq!(
            decode_ipv4_header(&[0x44]).unwrap_err(),
            WireError::BadIpHeaderLength { ihl: 4 }
        );
        let mut p = [0u8; 20];
        p[0] = 0x45;
        p[3] = 19;
        assert_eq!(
            decode_ipv4_header(&p).unwrap_err(),
            WireError::BadTotalLength {
                total_len: 19,
                header_len: 20
            }
        );
    }
}
