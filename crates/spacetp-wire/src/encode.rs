//! Writing IPv4 + TCP headers (and SCPS-TP options) as bytes.
//!
//! Everything appends to a caller-provided `Vec<u8>`, so a caller can reuse one buffer for
//! every packet. On error nothing is appended.
//!
//! Option order (fixed, documented in docs/wire.md): MSS, window scale, SACK-permitted,
//! timestamps, SACK, SCPS capabilities, record boundary, corruption experienced, SNACKs last
//! (Wireshark 4.0 stops decoding the options after a SNACK), then NOPs up to a multiple of 4.

use crate::checksum::Checksum;
use crate::error::WireError;
use crate::ip::{Ipv4Params, DEFAULT_TTL};
use crate::options::{kind, TcpOptions};
use crate::tcp::{TcpHeader, IPV4_HEADER_LEN, TCP_HEADER_LEN};

/// The payload of a packet we write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Payload<'a> {
    /// Real bytes.
    Bytes(&'a [u8]),
    /// That many zero bytes (a simulator carries lengths, not bytes).
    Zeros(u32),
}

impl Payload<'_> {
    pub fn len(&self) -> usize {
        match *self {
            Payload::Bytes(b) => b.len(),
            Payload::Zeros(n) => n as usize,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(crate) fn add_to(&self, c: &mut Checksum) {
        match *self {
            Payload::Bytes(b) => c.add_bytes(b),
            Payload::Zeros(n) => c.add_zeros(n as usize),
        };
    }

    pub(crate) fn append_to(&self, out: &mut Vec<u8>) {
        match *self {
            Payload::Bytes(b) => out.extend_from_slice(b),
            Payload::Zeros(n) => out.resize(out.len() + n as usize, 0),
        }
    }
}

/// Appends the options in our order, NOP-padded to a multiple of 4. Returns the bytes written
/// (`opts.padded_len()`); the unpadded part is exactly `opts.raw_len()` bytes.
pub fn encode_options(opts: &TcpOptions, out: &mut Vec<u8>) -> Result<usize, WireError> {
    opts.validate()?;
    let start = out.len();
    write_options_unpadded(opts, out, true, true);
    while (out.len() - start) % 4 != 0 {
        out.push(kind::NOP);
    }
    Ok(out.len() - start)
}

/// Options without padding; the compressed header reuses this, leaving out the timestamps and
/// the record boundary which it carries as control bits.
/// Where options are written: a Vec, or a fixed buffer on the stack (the compressor, so that
/// the simulator's per-packet path allocates nothing).
pub(crate) trait ByteSink {
    fn extend_from_slice(&mut self, b: &[u8]);
}

impl ByteSink for Vec<u8> {
    fn extend_from_slice(&mut self, b: &[u8]) {
        Vec::extend_from_slice(self, b)
    }
}

/// Up to 40 option bytes (the most a TCP header holds), on the stack.
pub(crate) struct OptionBytes {
    pub buf: [u8; 40],
    pub len: usize,
}

impl ByteSink for OptionBytes {
    fn extend_from_slice(&mut self, b: &[u8]) {
        self.buf[self.len..self.len + b.len()].copy_from_slice(b);
        self.len += b.len();
    }
}

pub(crate) fn write_options_unpadded(
    o: &TcpOptions,
    out: &mut impl ByteSink,
    with_timestamps: bool,
    with_record_boundary: bool,
) {
    if let Some(mss) = o.mss {
        out.extend_from_slice(&[kind::MSS, 4]);
        out.extend_from_slice(&mss.to_be_bytes());
    }
    if let Some(shift) = o.window_scale {
        out.extend_from_slice(&[kind::WINDOW_SCALE, 3, shift]);
    }
    if o.sack_permitted {
        out.extend_from_slice(&[kind::SACK_PERMITTED, 2]);
    }
    if let (true, Some(ts)) = (with_timestamps, o.timestamps) {
        out.extend_from_slice(&[kind::TIMESTAMPS, 10]);
        out.extend_from_slice(&ts.val.to_be_bytes());
        out.extend_from_slice(&ts.ecr.to_be_bytes());
    }
    if !o.sack.is_empty() {
        out.extend_from_slice(&[kind::SACK, 2 + 8 * o.sack.as_slice().len() as u8]);
        for &(l, r) in o.sack.as_slice() {
            out.extend_from_slice(&l.to_be_bytes());
            out.extend_from_slice(&r.to_be_bytes());
        }
    }
    if let Some(c) = o.scps_capabilities {
        out.extend_from_slice(&[kind::SCPS_CAPABILITIES, 4, c.vector, c.connection_id]);
    }
    if with_record_boundary && o.record_boundary {
        out.extend_from_slice(&[kind::RECORD_BOUNDARY, 2]);
    }
    if o.corruption_experienced {
        out.extend_from_slice(&[kind::CORRUPTION_EXPERIENCED, 2]);
    }
    for s in o.snacks.as_slice() {
        let n = (s.bitvec_len as usize).min(s.bitvec.len());
        out.extend_from_slice(&[kind::SNACK, 6 + n as u8]);
        out.extend_from_slice(&s.offset.to_be_bytes());
        out.extend_from_slice(&s.size.to_be_bytes());
        out.extend_from_slice(&s.bitvec[..n]);
    }
}

/// Appends the TCP header with its options. The checksum field is left 0: it needs the
/// addresses (see `encode_ipv4_tcp`, or patch it with `tcp_checksum`). Returns the bytes
/// written (`h.header_len()`).
pub fn encode_tcp_header(h: &TcpHeader, out: &mut Vec<u8>) -> Result<usize, WireError> {
    h.options.validate()?;
    let start = out.len();
    let data_offset = (h.header_len() / 4) as u8;
    out.extend_from_slice(&h.src_port.to_be_bytes());
    out.extend_from_slice(&h.dst_port.to_be_bytes());
    out.extend_from_slice(&h.seq.to_be_bytes());
    out.extend_from_slice(&h.ack.to_be_bytes());
    out.push(data_offset << 4);
    out.push(h.flags);
    out.extend_from_slice(&h.window.to_be_bytes());
    out.extend_from_slice(&[0, 0]); // checksum, filled by the caller that knows the addresses
    out.extend_from_slice(&h.urgent.to_be_bytes());
    encode_options(&h.options, out)?;
    Ok(out.len() - start)
}

/// Appends a 20-byte IPv4 header (no options, TTL 64, DF) for a packet whose payload (the
/// bytes after the IP header) is `payload_len` bytes.
pub fn encode_ipv4_header(
    ip: &Ipv4Params,
    payload_len: usize,
    out: &mut Vec<u8>,
) -> Result<usize, WireError> {
    let total = IPV4_HEADER_LEN as usize + payload_len;
    if total > u16::MAX as usize {
        return Err(WireError::PacketTooLong { len: total });
    }
    let start = out.len();
    out.extend_from_slice(&[0x45, 0]);
    out.extend_from_slice(&(total as u16).to_be_bytes());
    out.extend_from_slice(&ip.id.to_be_bytes());
    out.extend_from_slice(&[0x40, 0]); // DF, offset 0
    out.extend_from_slice(&[DEFAULT_TTL, ip.protocol, 0, 0]);
    out.extend_from_slice(&ip.src);
    out.extend_from_slice(&ip.dst);
    let c = Checksum::new().add_bytes(&out[start..]).finish();
    out[start + 10..start + 12].copy_from_slice(&c.to_be_bytes());
    Ok(out.len() - start)
}

/// The TCP checksum of `segment` (header with a zero checksum field, plus any payload bytes in
/// it) followed by `extra_zeros` zero bytes not materialised, with the pseudo-header using
/// `protocol` (the number on the wire: the RI sums 106 for standalone SCPS-TP).
pub fn tcp_checksum(
    src: [u8; 4],
    dst: [u8; 4],
    protocol: u8,
    segment: &[u8],
    extra_zeros: usize,
) -> u16 {
    let mut c = Checksum::pseudo_header(src, dst, protocol, segment.len() + extra_zeros);
    c.add_bytes(segment).add_zeros(extra_zeros);
    c.finish()
}

/// Appends a whole IPv4 packet: IPv4 header, TCP header with options, payload. Both
/// checksums are computed (pseudo-header with `ip.protocol`). Returns the bytes written.
pub fn encode_ipv4_tcp(
    ip: &Ipv4Params,
    h: &TcpHeader,
    payload: Payload<'_>,
    out: &mut Vec<u8>,
) -> Result<usize, WireError> {
    let start = out.len();
    let n = encode_ipv4_tcp_headers_inner(ip, h, payload, out)?;
    payload.append_to(out);
    debug_assert_eq!(out.len() - start, n + payload.len());
    Ok(out.len() - start)
}

/// Appends only the IPv4 and TCP headers of a packet whose payload is `payload_len` zero
/// bytes. Lengths and checksums are those of the whole packet, so a pcap writer can add the
/// zeros (or truncate them away with `caplen < len`). Returns the header bytes written.
pub fn encode_ipv4_tcp_headers(
    ip: &Ipv4Params,
    h: &TcpHeader,
    payload_len: u32,
    out: &mut Vec<u8>,
) -> Result<usize, WireError> {
    encode_ipv4_tcp_headers_inner(ip, h, Payload::Zeros(payload_len), out)
}

fn encode_ipv4_tcp_headers_inner(
    ip: &Ipv4Params,
    h: &TcpHeader,
    payload: Payload<'_>,
    out: &mut Vec<u8>,
) -> Result<usize, WireError> {
    h.options.validate()?;
    let tcp_len = h.header_len() as usize;
    let start = out.len();
    encode_ipv4_header(ip, tcp_len + payload.len(), out)?;
    let tcp_start = out.len();
    encode_tcp_header(h, out)?;
    let mut c = Checksum::pseudo_header(ip.src, ip.dst, ip.protocol, tcp_len + payload.len());
    c.add_bytes(&out[tcp_start..]);
    payload.add_to(&mut c);
    out[tcp_start + 16..tcp_start + 18].copy_from_slice(&c.finish().to_be_bytes());
    debug_assert_eq!(
        out.len() - tcp_start,
        TCP_HEADER_LEN as usize + h.options.padded_len() as usize
    );
    Ok(out.len() - start)
}

/// Appends an IPv4 packet around an already encoded transport header (e.g. a compressed
/// SCPS-TP header, whose checksum it carries itself) and a payload.
pub fn encode_ipv4_packet(
    ip: &Ipv4Params,
    transport_header: &[u8],
    payload: Payload<'_>,
    out: &mut Vec<u8>,
) -> Result<usize, WireError> {
    let start = out.len();
    encode_ipv4_header(ip, transport_header.len() + payload.len(), out)?;
    out.extend_from_slice(transport_header);
    payload.append_to(out);
    Ok(out.len() - start)
}

/// Appends an IPv4 packet carrying a UDP datagram from `src_port` to `dst_port` with
/// `payload`; with `checksum`, the UDP checksum is computed (RFC 768), else it is 0 ("not
/// computed", allowed over IPv4). Returns the bytes written.
pub fn encode_ipv4_udp(
    ip: &Ipv4Params,
    src_port: u16,
    dst_port: u16,
    payload: Payload<'_>,
    checksum: bool,
    out: &mut Vec<u8>,
) -> Result<usize, WireError> {
    let udp_len = 8 + payload.len();
    if udp_len > u16::MAX as usize {
        return Err(WireError::PacketTooLong { len: udp_len });
    }
    let mut udp = [0u8; 8];
    udp[0..2].copy_from_slice(&src_port.to_be_bytes());
    udp[2..4].copy_from_slice(&dst_port.to_be_bytes());
    udp[4..6].copy_from_slice(&(udp_len as u16).to_be_bytes());
    if checksum {
        let mut c = Checksum::pseudo_header(ip.src, ip.dst, crate::ip::PROTO_UDP, udp_len);
        c.add_bytes(&udp);
        payload.add_to(&mut c);
        // A computed 0 is sent as all ones (RFC 768): 0 means "no checksum".
        let v = match c.finish() {
            0 => 0xffff,
            v => v,
        };
        udp[6..8].copy_from_slice(&v.to_be_bytes());
    }
    let mut ip = *ip;
    ip.protocol = crate::ip::PROTO_UDP;
    encode_ipv4_packet(&ip, &udp, payload, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{ScpsCapabilities, Snack, Timestamps};
    use crate::tcp::flags;

    #[test]
    fn a_udp_datagram_decodes_with_a_valid_checksum_and_its_payload() {
        let ip = Ipv4Params {
            src: [10, 77, 0, 1],
            dst: [10, 77, 0, 2],
            protocol: 0,
            id: 9,
        };
        let mut out = Vec::new();
        let n = encode_ipv4_udp(&ip, 4433, 443, Payload::Bytes(b"quic!"), true, &mut out).unwrap();
        assert_eq!(n, 20 + 8 + 5);
        let d = crate::decode_ipv4_udp(&out).unwrap();
        assert_eq!((d.src_port, d.dst_port, d.payload_len), (4433, 443, 5));
        assert_ne!(d.checksum, 0);
        assert!(d.checksum_ok(&out));
        assert_eq!(&out[d.payload_offset..], b"quic!");
        out[30] ^= 1;
        assert!(
            !d.checksum_ok(&out),
            "a flipped payload bit fails the checksum"
        );
    }

    fn syn() -> TcpHeader {
        let mut o = TcpOptions {
            mss: Some(1460),
            window_scale: Some(0),
            timestamps: Some(Timestamps {
                val: 0x6c11be77,
                ecr: 0,
            }),
            scps_capabilities: Some(ScpsCapabilities {
                vector: 0x50,
                connection_id: 0x3c,
            }),
            ..Default::default()
        };
        o.sack_permitted = true;
        TcpHeader {
            src_port: 5001,
            dst_port: 5001,
            seq: 0x6c11be77,
            flags: flags::SYN,
            window: 32767,
            options: o,
            ..Default::default()
        }
    }

    #[test]
    fn option_bytes_in_our_order() {
        let mut out = Vec::new();
        let n = encode_options(&syn().options, &mut out).unwrap();
        assert_eq!(
            out,
            [
                2, 4, 0x05, 0xb4, 3, 3, 0, 4, 2, 8, 10, 0x6c, 0x11, 0xbe, 0x77, 0, 0, 0, 0, 20, 4,
                0x50, 0x3c, 1
            ]
        );
        assert_eq!(n, 24);
        assert_eq!(syn().options.raw_len(), 23);
    }

    #[test]
    fn snack_with_bitvec_is_last() {
        let mut o = TcpOptions {
            corruption_experienced: true,
            ..Default::default()
        };
        let mut bv = [0u8; 8];
        bv[0] = 0xa0;
        o.snacks.push(Snack {
            offset: 1,
            size: 2,
            bitvec: bv,
            bitvec_len: 1,
        });
        let mut out = Vec::new();
        encode_options(&o, &mut out).unwrap();
        assert_eq!(out, [23, 2, 21, 7, 0, 1, 0, 2, 0xa0, 1, 1, 1]);
    }

    #[test]
    fn too_long_is_refused_and_nothing_written() {
        let mut o = syn().options;
        for i in 0..4 {
            o.sack.push(i, i + 1);
        }
        let mut out = vec![9u8];
        let h = TcpHeader {
            options: o,
            ..syn()
        };
        let err = encode_ipv4_tcp(&Ipv4Params::default(), &h, Payload::Zeros(0), &mut out);
        assert!(matches!(err, Err(WireError::OptionsTooLong { .. })));
        assert_eq!(out, [9]);
    }

    proptest::proptest! {
        /// `raw_len()` is exactly what is written before padding, for any option set.
        #[test]
        fn raw_len_is_bytes_written(
            mss in proptest::option::of(0u16..),
            ws in proptest::option::of(0u8..),
            sp: bool, ts: bool, rb: bool, ce: bool, caps: bool,
            sacks in 0usize..=4,
            snacks in proptest::collection::vec(0u8..=8, 0..=6),
        ) {
            let mut o = TcpOptions {
                mss,
                window_scale: ws,
                sack_permitted: sp,
                timestamps: ts.then_some(Timestamps { val: 1, ecr: 2 }),
                scps_capabilities: caps.then_some(ScpsCapabilities { vector: 1, connection_id: 1 }),
                record_boundary: rb,
                corruption_experienced: ce,
                ..Default::default()
            };
            for i in 0..sacks as u32 {
                o.sack.push(i, i + 1);
            }
            for n in snacks {
                o.snacks.push(Snack { offset: 1, size: 1, bitvec: [1; 8], bitvec_len: n });
            }
            let mut out = Vec::new();
            write_options_unpadded(&o, &mut out, true, true);
            proptest::prop_assert_eq!(out.len(), o.raw_len() as usize);
        }
    }

    #[test]
    fn tcp_header_alone_plus_tcp_checksum_equals_full_encoding() {
        let ip = Ipv4Params {
            src: [10, 0, 0, 1],
            dst: [10, 0, 0, 2],
            protocol: 106,
            id: 1,
        };
        let mut full = Vec::new();
        encode_ipv4_tcp(&ip, &syn(), Payload::Zeros(7), &mut full).unwrap();
        let mut seg = Vec::new();
        encode_tcp_header(&syn(), &mut seg).unwrap();
        let c = tcp_checksum(ip.src, ip.dst, ip.protocol, &seg, 7);
        seg[16..18].copy_from_slice(&c.to_be_bytes());
        assert_eq!(&full[20..full.len() - 7], &seg[..]);
    }

    #[test]
    fn ipv4_header_fields() {
        let ip = Ipv4Params {
            src: [10, 0, 0, 1],
            dst: [10, 0, 0, 2],
            protocol: 106,
            id: 7,
        };
        let mut out = Vec::new();
        encode_ipv4_header(&ip, 40, &mut out).unwrap();
        assert_eq!(&out[..10], &[0x45, 0, 0, 60, 0, 7, 0x40, 0, 64, 106]);
        assert_eq!(crate::checksum::checksum(&out), 0);
    }

    #[test]
    fn zero_payload_headers_match_full_packet() {
        let ip = Ipv4Params {
            src: [10, 0, 0, 1],
            dst: [10, 0, 0, 2],
            protocol: 6,
            id: 1,
        };
        for len in [0u32, 1, 2, 3, 1000, 1001] {
            let mut full = Vec::new();
            encode_ipv4_tcp(&ip, &syn(), Payload::Zeros(len), &mut full).unwrap();
            let mut heads = Vec::new();
            let n = encode_ipv4_tcp_headers(&ip, &syn(), len, &mut heads).unwrap();
            assert_eq!(&full[..n], &heads[..]);
            assert_eq!(full.len(), n + len as usize);
            let zeros = vec![0u8; len as usize];
            let mut real = Vec::new();
            encode_ipv4_tcp(&ip, &syn(), Payload::Bytes(&zeros), &mut real).unwrap();
            assert_eq!(full, real);
        }
    }
}
