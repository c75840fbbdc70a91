//! A reference capture read frame by frame: each frame decoded (raw IPv4, UDP-encapsulated
//! or compressed SCPS-TP), with the counts the tests compare to the READMEs'.

use super::common::*;
use spacetp_wire::checksum::Checksum;
use spacetp_wire::*;
use std::collections::HashMap;
use std::path::Path;

/// One frame of a capture, as read.
#[derive(Debug)]
pub enum Frame {
    NotIpv4,
    /// A TCP-format header (protocol 6 or 106; `encap` if it came out of UDP port 7168).
    /// `ip` holds the (inner) IPv4 packet.
    Tcp {
        ip: Vec<u8>,
        d: DecodedPacket,
        encap: bool,
        checksum_ok: bool,
    },
    /// A compressed header (protocol 105); `payload` is the IP payload.
    Compressed {
        ip: Ipv4Header,
        payload: Vec<u8>,
        d: Decompressed,
    },
}

#[derive(Debug, Default, PartialEq, Eq, Clone, Copy)]
pub struct Counts {
    pub tcp: usize,
    pub encap: usize,
    pub compressed: usize,
    pub not_ipv4: usize,
    /// Checksums left by a sender's checksum offload: the field holds the pseudo-header sum.
    pub partial_checksums: usize,
}

pub struct Capture {
    pub frames: Vec<Frame>,
    pub counts: Counts,
}

/// A checksum field left half-done by offload (Linux CHECKSUM_PARTIAL seen on the sending
/// host): it holds the folded pseudo-header sum, not the complement of the full sum.
pub fn is_partial(src: [u8; 4], dst: [u8; 4], proto: u8, len: usize, stored: u16) -> bool {
    Checksum::pseudo_header(src, dst, proto, len).fold() == stored
}

/// Decodes every frame, asserting what must hold for each; panics naming the frame.
pub fn decode_capture(path: &Path) -> Capture {
    let name = file_name(path);
    let mut frames = Vec::new();
    let mut counts = Counts::default();
    let mut ctxs: HashMap<u8, CompressionContext> = HashMap::new();
    for (i, pkt) in read_pcap(path).into_iter().enumerate() {
        let at = format!("{name} frame {}", i + 1);
        assert_eq!(
            pkt.data.len() as u32,
            pkt.orig_len,
            "{at}: capture truncated"
        );
        let ip = match pkt.ipv4() {
            Ok(ip) => ip.to_vec(),
            Err(WireError::NotIpv4Frame { ethertype }) => {
                assert!(
                    matches!(ethertype, 0x0806 | 0x86dd),
                    "{at}: ethertype {ethertype:#x}"
                );
                counts.not_ipv4 += 1;
                frames.push(Frame::NotIpv4);
                continue;
            }
            Err(e) => panic!("{at}: {e}"),
        };
        let h = decode_ipv4_header(&ip).unwrap_or_else(|e| panic!("{at}: {e}"));
        assert!(h.checksum_ok, "{at}: IPv4 header checksum");
        match h.protocol {
            PROTO_TCP | PROTO_SCPS_TP => {
                let d = decode_ipv4_tcp(&ip).unwrap_or_else(|e| panic!("{at}: {e}"));
                assert!(d.notes.is_clean(), "{at}: {:?}", d.notes);
                assert!(!d.truncated, "{at}: truncated");
                let ok = d.tcp_checksum_ok(&ip);
                if !ok {
                    let len = d.tcp_header_len + d.payload_len;
                    assert!(
                        is_partial(h.src, h.dst, h.protocol, len, d.tcp_checksum),
                        "{at}: bad TCP checksum {:#06x}",
                        d.tcp_checksum
                    );
                    counts.partial_checksums += 1;
                }
                if d.tcp.has(flags::SYN) {
                    if let Ok(c) = CompressionContext::from_syn(&d.tcp, h.src, h.dst) {
                        ctxs.insert(c.conn_id, c);
                    }
                }
                counts.tcp += 1;
                frames.push(Frame::Tcp {
                    ip,
                    d,
                    encap: false,
                    checksum_ok: ok,
                });
            }
            PROTO_UDP => {
                let (u, inner) = decode_scps_udp_encap(&ip).unwrap_or_else(|e| panic!("{at}: {e}"));
                assert_eq!(
                    (u.src_port, u.dst_port),
                    (SCPS_UDP_ENCAP_PORT, SCPS_UDP_ENCAP_PORT)
                );
                if !u.checksum_ok(&ip) {
                    assert!(
                        is_partial(h.src, h.dst, PROTO_UDP, u.length as usize, u.checksum),
                        "{at}: bad UDP checksum"
                    );
                    counts.partial_checksums += 1;
                }
                let ih = decode_ipv4_header(inner).unwrap_or_else(|e| panic!("{at} inner: {e}"));
                assert!(ih.checksum_ok, "{at}: inner IPv4 checksum");
                assert_eq!(
                    (ih.protocol, ih.ttl),
                    (PROTO_SCPS_TP, 250),
                    "{at}: inner header"
                );
                assert_eq!(ih.total_len as usize, inner.len(), "{at}: inner length");
                let d = decode_ipv4_tcp(inner).unwrap_or_else(|e| panic!("{at} inner: {e}"));
                assert!(d.notes.is_clean(), "{at}: {:?}", d.notes);
                // The RI's pseudo-header uses protocol 106, the number on the (inner) wire.
                assert!(d.tcp_checksum_ok(inner), "{at}: inner TCP checksum (106)");
                counts.encap += 1;
                frames.push(Frame::Tcp {
                    ip: inner.to_vec(),
                    d,
                    encap: true,
                    checksum_ok: true,
                });
            }
            PROTO_SCPS_COMPRESSED => {
                let payload = ip[h.header_len as usize..h.total_len as usize].to_vec();
                let id = peek_connection_id(&payload).unwrap_or_else(|| panic!("{at}: empty"));
                let ctx = ctxs
                    .get_mut(&id)
                    .unwrap_or_else(|| panic!("{at}: no SYN with COMP for connection id {id}"));
                assert_eq!(
                    (ctx.src_addr, ctx.dst_addr),
                    (h.src, h.dst),
                    "{at}: direction"
                );
                assert!(ctx.checksum_ok(&payload), "{at}: compressed checksum");
                let d = decompress(&payload, ctx).unwrap_or_else(|e| panic!("{at}: {e}"));
                assert!(d.notes.is_clean(), "{at}: {:?}", d.notes);
                counts.compressed += 1;
                frames.push(Frame::Compressed { ip: h, payload, d });
            }
            p => panic!("{at}: unexpected IP protocol {p}"),
        }
    }
    Capture { frames, counts }
}

pub fn tcp_frames(c: &Capture) -> impl Iterator<Item = (&Vec<u8>, &DecodedPacket)> {
    c.frames.iter().filter_map(|f| match f {
        Frame::Tcp { ip, d, .. } => Some((ip, d)),
        _ => None,
    })
}

/// The option bytes of a decoded TCP packet, as sent.
pub fn opt_bytes<'a>(ip: &'a [u8], d: &DecodedPacket) -> &'a [u8] {
    &ip[d.tcp_offset + 20..d.tcp_offset + d.tcp_header_len]
}

pub fn counts(
    tcp: usize,
    encap: usize,
    compressed: usize,
    not_ipv4: usize,
    partial: usize,
) -> Counts {
    Counts {
        tcp,
        encap,
        compressed,
        not_ipv4,
        partial_checksums: partial,
    }
}
