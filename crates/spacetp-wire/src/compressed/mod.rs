//! SCPS-TP compressed headers (CCSDS 714.0-B-2 header compression), byte-compatible with the
//! SCPS Reference Implementation (RI, `new_compress.c`), sent as IP protocol 105.
//!
//! Layout (all big-endian; docs/wire.md has the table):
//!
//! ```text
//! conn id (1) | control (1, or 2 if MORE) | [urgent (2)] | [window (2) ack (4)] | [seq (4)]
//!   | [TSval (4)] | [TSecr (4)] | [opt len (1) options (n)] | [pad (1)] | checksum (2) | data
//! ```
//!
//! Unlike RFC 1144, fields are absolute values, never deltas: a lost packet does not corrupt
//! the decoding of later ones. A field is omitted only when the receiver can supply it from
//! its context: the sequence number on segments without data or FIN when it equals the last
//! one sent, the window and ACK on data segments when they equal the last ones sent. The
//! context is set up from the SYN (uncompressed) of the direction and then holds the last
//! sequence, ACK and window of that direction. Headers whose omitted fields were carried
//! by a lost header decode with the previous values (an older ACK, an older sequence number on
//! a pure ACK), which TCP treats as old duplicates; set `self_contained` to make every header
//! carry sequence, ACK and window, so that each decodes alone given the handshake context.
//!
//! The checksum is the Internet checksum over a pseudo-header (src, dst, zero, protocol,
//! length of compressed header + data), the compressed header up to the checksum and the data.
//! The RI puts its uncompressed protocol number (106 standalone, 6 in gateway builds) in the
//! pseudo-header, not 105, and accepts either 106 or 105 on receipt; so do we.

use crate::checksum::Checksum;
use crate::encode::{write_options_unpadded, OptionBytes};
use crate::error::{Layer, WireError};
use crate::ip::{PROTO_SCPS_COMPRESSED, PROTO_SCPS_TP};
use crate::options::{ScpsCapabilities, TcpOptions, Timestamps};
use crate::tcp::{flags, TcpHeader};

/// Control bits, as the 16-bit value of the two control octets (the second octet is present
/// only when `MORE` is set). Names follow the RI's `new_compress.h`.
pub mod ctrl {
    /// A second control octet follows.
    pub const MORE: u16 = 0x8000;
    /// The TSval of a timestamps option is present.
    pub const TS1: u16 = 0x4000;
    /// The TSecr of a timestamps option is present.
    pub const TS2: u16 = 0x2000;
    /// A record boundary option (kind 22) was present.
    pub const RB: u16 = 0x1000;
    /// Defined by the RI, never sent nor read by it (SNACKs travel among the options).
    pub const SNACK: u16 = 0x0800;
    /// PSH flag.
    pub const PUSH: u16 = 0x0400;
    /// The sequence number is present.
    pub const S: u16 = 0x0200;
    /// The window and the acknowledgment number are present.
    pub const A: u16 = 0x0100;
    /// Uncompressed options follow (length octet + options).
    pub const OPTS: u16 = 0x0080;
    /// One zero pad octet before the checksum (keeps the header an even length).
    pub const PAD: u16 = 0x0040;
    /// URG flag; the urgent pointer is present.
    pub const URG: u16 = 0x0020;
    /// ACK flag NOT set (the decoder sets ACK unless this bit is present).
    pub const ACKR: u16 = 0x0010;
    /// RST flag.
    pub const RST: u16 = 0x0004;
    /// FIN flag.
    pub const FIN: u16 = 0x0001;
}

/// Longest compressed header: id 1 + control 2 + urgent 2 + window 2 + ack 4 + seq 4 +
/// timestamps 8 + options 1 + 40 + pad 1 + checksum 2.
pub const MAX_COMPRESSED_LEN: usize = 67;

/// The state both ends keep for one direction of a compressed connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CompressionContext {
    /// The sender's connection id: the one it advertised in its SYN's SCPS capabilities.
    pub conn_id: u8,
    /// Ports of this direction (the compressed header does not carry them).
    pub src_port: u16,
    pub dst_port: u16,
    /// Addresses of this direction, for the checksum pseudo-header.
    pub src_addr: [u8; 4],
    pub dst_addr: [u8; 4],
    /// Protocol number in the checksum pseudo-header: 106 (RI standalone) or 6 (RI gateway).
    pub pseudo_protocol: u8,
    /// Last sequence number, ACK number and window sent (compressor) or decoded (decompressor)
    /// in this direction.
    pub seq: u32,
    pub ack: u32,
    pub window: u16,
    /// Always send sequence, ACK and window (every header then decodes alone).
    pub self_contained: bool,
}

impl CompressionContext {
    /// The context of the direction that sent `syn` (a SYN or SYN-ACK, sent uncompressed)
    /// from `src_addr` to `dst_addr`. The SYN must offer compression (SCPS capabilities with
    /// the COMP bit); its connection id becomes the id of every compressed header.
    pub fn from_syn(
        syn: &TcpHeader,
        src_addr: [u8; 4],
        dst_addr: [u8; 4],
    ) -> Result<Self, WireError> {
        let caps = syn
            .options
            .scps_capabilities
            .ok_or(WireError::NotCompressible {
                why: "the SYN has no SCPS capabilities",
            })?;
        if caps.vector & ScpsCapabilities::COMP == 0 {
            return Err(WireError::NotCompressible {
                why: "the SYN does not offer COMP",
            });
        }
        Ok(Self {
            conn_id: caps.connection_id,
            src_port: syn.src_port,
            dst_port: syn.dst_port,
            src_addr,
            dst_addr,
            pseudo_protocol: PROTO_SCPS_TP,
            seq: syn.seq,
            ack: syn.ack,
            window: syn.window,
            self_contained: false,
        })
    }

    /// Records a header as sent (call after `compress`) or decoded (`decompress` does it).
    pub fn record(&mut self, h: &TcpHeader) {
        self.seq = h.seq;
        self.ack = h.ack;
        self.window = h.window;
    }

    /// Verifies the checksum of a compressed packet (the IP payload) of this direction,
    /// accepting the pseudo-header protocol `pseudo_protocol` or 105, as the RI does.
    pub fn checksum_ok(&self, ip_payload: &[u8]) -> bool {
        [self.pseudo_protocol, PROTO_SCPS_COMPRESSED]
            .iter()
            .any(|&p| {
                let mut c =
                    Checksum::pseudo_header(self.src_addr, self.dst_addr, p, ip_payload.len());
                c.add_bytes(ip_payload).is_valid()
            })
    }
}

/// A compressed header, checksum included. Fixed-size, `Copy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompressedHeader {
    bytes: [u8; MAX_COMPRESSED_LEN],
    len: u8,
}

impl CompressedHeader {
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The two control octets as one value (second octet 0 when absent).
    pub fn control(&self) -> u16 {
        let hi = self.bytes[1] as u16;
        if hi & (ctrl::MORE >> 8) != 0 {
            hi << 8 | self.bytes[2] as u16
        } else {
            hi << 8
        }
    }
}

/// Compresses `h` for a segment of `payload_len` zero bytes (the checksum assumes zeros,
/// which add nothing to the sum; see `compress_with_payload` for real data).
pub fn compress(
    h: &TcpHeader,
    payload_len: usize,
    ctx: &CompressionContext,
) -> Result<CompressedHeader, WireError> {
    compress_inner(h, payload_len, Checksum::new(), ctx)
}

/// Compresses `h` for a segment carrying `payload`.
pub fn compress_with_payload(
    h: &TcpHeader,
    payload: &[u8],
    ctx: &CompressionContext,
) -> Result<CompressedHeader, WireError> {
    let mut sum = Checksum::new();
    sum.add_bytes(payload);
    compress_inner(h, payload.len(), sum, ctx)
}

fn compress_inner(
    h: &TcpHeader,
    payload_len: usize,
    payload_sum: Checksum,
    ctx: &CompressionContext,
) -> Result<CompressedHeader, WireError> {
    if h.has(flags::SYN) {
        return Err(WireError::NotCompressible {
            why: "SYN segments travel uncompressed",
        });
    }
    if h.flags & (flags::ECE | flags::CWR) != 0 {
        return Err(WireError::NotCompressible {
            why: "no control bit for ECE/CWR",
        });
    }
    h.options.validate()?;

    // Fields after the control octets, in wire order.
    let mut f = [0u8; MAX_COMPRESSED_LEN];
    let mut n = 0;
    let mut put = |b: &[u8]| {
        f[n..n + b.len()].copy_from_slice(b);
        n += b.len();
    };
    let mut c: u16 = 0;
    let data = payload_len > 0;
    if h.has(flags::URG) {
        c |= ctrl::URG;
        put(&h.urgent.to_be_bytes());
    }
    // The RI always sends window+ACK without data and never with data; we also send them
    // with data when they changed, so that a piggybacked ACK is not lost.
    if !data || ctx.self_contained || h.ack != ctx.ack || h.window != ctx.window {
        c |= ctrl::A;
        put(&h.window.to_be_bytes());
        put(&h.ack.to_be_bytes());
    }
    if data || h.has(flags::FIN) || ctx.self_contained || h.seq != ctx.seq {
        c |= ctrl::S;
        put(&h.seq.to_be_bytes());
    }
    if let Some(ts) = h.options.timestamps {
        c |= ctrl::TS1 | ctrl::TS2;
        put(&ts.val.to_be_bytes());
        put(&ts.ecr.to_be_bytes());
    }
    if h.options.record_boundary {
        c |= ctrl::RB;
    }
    if h.has(flags::PSH) {
        c |= ctrl::PUSH;
    }
    if h.has(flags::FIN) {
        c |= ctrl::FIN;
    }
    if h.has(flags::RST) {
        c |= ctrl::RST;
    }
    if !h.has(flags::ACK) {
        c |= ctrl::ACKR;
    }
    // Every other option travels as is, after a length octet.
    // `validate` above bounds the options to the 40 bytes a TCP header holds.
    let mut ob = OptionBytes {
        buf: [0; 40],
        len: 0,
    };
    write_options_unpadded(&h.options, &mut ob, false, false);
    let opts = &ob.buf[..ob.len];
    if !opts.is_empty() {
        c |= ctrl::OPTS;
    }

    if c & 0x00ff != 0 {
        c |= ctrl::MORE;
    }
    let opt_part = if opts.is_empty() { 0 } else { 1 + opts.len() };
    let mut chl = 1 + if c & ctrl::MORE != 0 { 2 } else { 1 } + n + opt_part + 2;
    // An odd length gets one octet more so that the data (and its checksum) start on an even
    // boundary: the second control octet if there is none yet, else a pad octet.
    if chl % 2 == 1 {
        if c & ctrl::MORE != 0 {
            c |= ctrl::PAD;
        } else {
            c |= ctrl::MORE;
        }
        chl += 1;
    }
    let total = chl + payload_len;
    if total > u16::MAX as usize - 20 {
        return Err(WireError::PacketTooLong { len: total + 20 });
    }

    let mut out = CompressedHeader {
        bytes: [0; MAX_COMPRESSED_LEN],
        len: chl as u8,
    };
    let b = &mut out.bytes;
    let mut i = 0;
    b[i] = ctx.conn_id;
    i += 1;
    b[i] = (c >> 8) as u8;
    i += 1;
    if c & ctrl::MORE != 0 {
        b[i] = c as u8;
        i += 1;
    }
    b[i..i + n].copy_from_slice(&f[..n]);
    i += n;
    if !opts.is_empty() {
        b[i] = opts.len() as u8;
        b[i + 1..i + 1 + opts.len()].copy_from_slice(opts);
        i += 1 + opts.len();
    }
    if c & ctrl::PAD != 0 {
        b[i] = 0;
        i += 1;
    }
    debug_assert_eq!(i + 2, chl);
    let mut sum = Checksum::pseudo_header(ctx.src_addr, ctx.dst_addr, ctx.pseudo_protocol, total);
    sum.add_bytes(&b[..i]);
    // Data follows an even-length header, so its sum adds in directly.
    let cks = !ones_add(sum.fold(), payload_sum.fold());
    b[i..i + 2].copy_from_slice(&cks.to_be_bytes());
    Ok(out)
}

fn ones_add(a: u16, b: u16) -> u16 {
    let s = a as u32 + b as u32;
    ((s & 0xffff) + (s >> 16)) as u16
}

/// A decompressed header and where the data lies in the compressed packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Decompressed {
    pub header: TcpHeader,
    /// Length of the compressed header (checksum included): the data starts here.
    pub header_len: usize,
    pub payload_len: usize,
    /// The checksum field as sent.
    pub checksum: u16,
    /// The control octets as one value (see `ctrl`).
    pub control: u16,
    /// Notes from decoding the carried options.
    pub notes: crate::decode::DecodeNotes,
}

/// The connection id of a compressed packet, to pick a context among several.
pub fn peek_connection_id(ip_payload: &[u8]) -> Option<u8> {
    ip_payload.first().copied()
}

/// Decompresses the compressed packet `ip_payload` (the bytes after the IPv4 header):
/// omitted fields come from `ctx`, which is then updated. Does not verify the checksum (the
/// data may not be all there): call `ctx.checksum_ok` first, as the RI does. On error `ctx` is
/// unchanged.
pub fn decompress(
    ip_payload: &[u8],
    ctx: &mut CompressionContext,
) -> Result<Decompressed, WireError> {
    let b = ip_payload;
    let trunc = |needed: usize| WireError::Truncated {
        layer: Layer::Compressed,
        needed,
        available: b.len(),
    };
    let mut i = 0;
    let mut take = |n: usize| -> Result<&[u8], WireError> {
        let s = b.get(i..i + n).ok_or(trunc(i + n))?;
        i += n;
        Ok(s)
    };
    let id = take(1)?[0];
    if id != ctx.conn_id {
        return Err(WireError::WrongConnection {
            expected: ctx.conn_id,
            found: id,
        });
    }
    let mut c = (take(1)?[0] as u16) << 8;
    if c & ctrl::MORE != 0 {
        c |= take(1)?[0] as u16;
    }
    let u16_at = |s: &[u8]| u16::from_be_bytes([s[0], s[1]]);
    let u32_at = |s: &[u8]| u32::from_be_bytes([s[0], s[1], s[2], s[3]]);

    let mut h = TcpHeader {
        src_port: ctx.src_port,
        dst_port: ctx.dst_port,
        seq: ctx.seq,
        ack: ctx.ack,
        window: ctx.window,
        flags: flags::ACK,
        ..Default::default()
    };
    if c & ctrl::PUSH != 0 {
        h.flags |= flags::PSH;
    }
    if c & ctrl::RST != 0 {
        h.flags |= flags::RST;
    }
    if c & ctrl::FIN != 0 {
        h.flags |= flags::FIN;
    }
    if c & ctrl::ACKR != 0 {
        h.flags &= !flags::ACK;
    }
    if c & ctrl::URG != 0 {
        h.flags |= flags::URG;
        h.urgent = u16_at(take(2)?);
    }
    if c & ctrl::A != 0 {
        h.window = u16_at(take(2)?);
        h.ack = u32_at(take(4)?);
    }
    if c & ctrl::S != 0 {
        h.seq = u32_at(take(4)?);
    }
    let tsval = if c & ctrl::TS1 != 0 {
        Some(u32_at(take(4)?))
    } else {
        None
    };
    let tsecr = if c & ctrl::TS2 != 0 {
        Some(u32_at(take(4)?))
    } else {
        None
    };
    let mut notes = Default::default();
    let mut options = TcpOptions::default();
    if c & ctrl::OPTS != 0 {
        let len = take(1)?[0] as usize;
        let (o, n) = crate::decode::decode_tcp_options(take(len)?)?;
        options = o;
        notes = n;
    }
    if tsval.is_some() || tsecr.is_some() {
        // A missing half (never sent by the RI or by us) reads as 0.
        options.timestamps = Some(Timestamps {
            val: tsval.unwrap_or(0),
            ecr: tsecr.unwrap_or(0),
        });
    }
    if c & ctrl::RB != 0 {
        options.record_boundary = true;
    }
    // Options rebuilt from control bits may exceed 40 bytes only in a hostile packet; the
    // header still decodes (the caller may check `options.fits()`).
    h.options = options;
    if c & ctrl::PAD != 0 {
        take(1)?;
    }
    let checksum = u16_at(take(2)?);
    ctx.record(&h);
    Ok(Decompressed {
        header: h,
        header_len: i,
        payload_len: b.len() - i,
        checksum,
        control: c,
        notes,
    })
}

#[cfg(test)]
mod tests;
