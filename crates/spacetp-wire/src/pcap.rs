//! Capture files. `PcapWriter` writes classic pcap with link type 101 (LINKTYPE_RAW: each
//! record is a bare IPv4 packet), nanosecond timestamps by default (magic 0xA1B23C4D, which
//! tshark reads), always little-endian. `PcapReader` reads classic pcap (both magics, both byte
//! orders) and pcapng, and unwraps link types 101, 228, 1 (Ethernet), 113 (Linux SLL) and 276
//! (SLL2) to the IPv4 bytes. The reader works on an in-memory file and never panics on a bad
//! one.

use std::io::{self, Write};

use crate::error::{Layer, WireError};

pub const LINKTYPE_ETHERNET: u32 = 1;
pub const LINKTYPE_RAW: u32 = 101;
pub const LINKTYPE_LINUX_SLL: u32 = 113;
pub const LINKTYPE_IPV4: u32 = 228;
pub const LINKTYPE_LINUX_SLL2: u32 = 276;

const MAGIC_USEC: u32 = 0xA1B2_C3D4;
const MAGIC_NSEC: u32 = 0xA1B2_3C4D;
const PCAPNG_SHB: u32 = 0x0A0D_0D0A;
const PCAPNG_BYTE_ORDER: u32 = 0x1A2B_3C4D;
const ETHERTYPE_IPV4: u16 = 0x0800;

/// Timestamp resolution of a classic pcap file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TsResolution {
    Micro,
    /// The default: the simulator's clock is in nanoseconds.
    #[default]
    Nano,
}

/// Writes classic pcap, link type 101 (raw IPv4).
pub struct PcapWriter<W: Write> {
    out: W,
    snaplen: u32,
    resolution: TsResolution,
    zeros: [u8; 512],
}

impl<W: Write> PcapWriter<W> {
    /// Nanosecond timestamps, snaplen 65535.
    pub fn new(out: W) -> io::Result<Self> {
        Self::with_options(out, 65535, TsResolution::Nano)
    }

    /// `snaplen` bytes at most are stored per packet (at least 1); records of longer packets
    /// have `caplen < len`.
    pub fn with_options(mut out: W, snaplen: u32, resolution: TsResolution) -> io::Result<Self> {
        let snaplen = snaplen.max(1);
        let magic = match resolution {
            TsResolution::Micro => MAGIC_USEC,
            TsResolution::Nano => MAGIC_NSEC,
        };
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&magic.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&0i32.to_le_bytes()); // thiszone
        h.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        h.extend_from_slice(&snaplen.to_le_bytes());
        h.extend_from_slice(&LINKTYPE_RAW.to_le_bytes());
        out.write_all(&h)?;
        Ok(Self {
            out,
            snaplen,
            resolution,
            zeros: [0; 512],
        })
    }

    pub fn snaplen(&self) -> u32 {
        self.snaplen
    }

    fn record_header(&mut self, ts_ns: u64, caplen: u32, len: u32) -> io::Result<()> {
        let secs = (ts_ns / 1_000_000_000) as u32;
        let frac = match self.resolution {
            TsResolution::Micro => (ts_ns % 1_000_000_000 / 1_000) as u32,
            TsResolution::Nano => (ts_ns % 1_000_000_000) as u32,
        };
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&secs.to_le_bytes());
        h[4..8].copy_from_slice(&frac.to_le_bytes());
        h[8..12].copy_from_slice(&caplen.to_le_bytes());
        h[12..16].copy_from_slice(&len.to_le_bytes());
        self.out.write_all(&h)
    }

    /// Writes one IPv4 packet at `ts_ns` nanoseconds (truncated to the snaplen; microsecond
    /// files drop the sub-microsecond part).
    pub fn write_packet(&mut self, ts_ns: u64, packet: &[u8]) -> io::Result<()> {
        let len = u32::try_from(packet.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "packet too long"))?;
        let caplen = len.min(self.snaplen);
        self.record_header(ts_ns, caplen, len)?;
        self.out.write_all(&packet[..caplen as usize])
    }

    /// Writes a packet given as its headers followed by zero bytes up to `total_len` (as
    /// `encode_ipv4_tcp_headers` produces), without materialising the zeros.
    pub fn write_zero_filled(
        &mut self,
        ts_ns: u64,
        headers: &[u8],
        total_len: u32,
    ) -> io::Result<()> {
        let len = total_len.max(headers.len() as u32);
        let caplen = len.min(self.snaplen);
        self.record_header(ts_ns, caplen, len)?;
        let from_headers = (caplen as usize).min(headers.len());
        self.out.write_all(&headers[..from_headers])?;
        let mut left = caplen as usize - from_headers;
        while left > 0 {
            let n = left.min(self.zeros.len());
            self.out.write_all(&self.zeros[..n])?;
            left -= n;
        }
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

/// One captured frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PcapPacket {
    /// Nanoseconds since the epoch (pcapng `if_tsoffset` is not applied).
    pub ts_ns: u64,
    pub linktype: u32,
    /// Length of the frame on the wire (may exceed `data.len()`).
    pub orig_len: u32,
    /// The captured bytes, link-layer header included.
    pub data: Vec<u8>,
}

impl PcapPacket {
    /// The IPv4 packet inside the frame (without the link-layer header).
    pub fn ipv4(&self) -> Result<&[u8], WireError> {
        link_payload_ipv4(self.linktype, &self.data)
    }
}

/// Strips a link-layer header and returns the IPv4 bytes it carries.
pub fn link_payload_ipv4(linktype: u32, frame: &[u8]) -> Result<&[u8], WireError> {
    let trunc = |needed: usize| WireError::Truncated {
        layer: Layer::Link,
        needed,
        available: frame.len(),
    };
    let be16 = |at: usize| -> Result<u16, WireError> {
        frame
            .get(at..at + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
            .ok_or(trunc(at + 2))
    };
    let (ethertype, start) = match linktype {
        LINKTYPE_RAW | LINKTYPE_IPV4 => {
            let v = frame.first().ok_or(trunc(1))? >> 4;
            return if v == 4 {
                Ok(frame)
            } else {
                Err(WireError::NotIpv4 { version: v })
            };
        }
        LINKTYPE_ETHERNET => {
            // 802.1Q / 802.1ad tags: skip them to reach the real ethertype.
            let mut at = 12;
            let mut et = be16(at)?;
            while et == 0x8100 || et == 0x88a8 {
                at += 4;
                et = be16(at)?;
            }
            (et, at + 2)
        }
        LINKTYPE_LINUX_SLL => (be16(14)?, 16),
        LINKTYPE_LINUX_SLL2 => (be16(0)?, 20),
        other => return Err(WireError::UnsupportedLinkType { linktype: other }),
    };
    if ethertype != ETHERTYPE_IPV4 {
        return Err(WireError::NotIpv4Frame { ethertype });
    }
    frame.get(start..).ok_or(trunc(start))
}

#[derive(Clone, Copy, Debug)]
struct Interface {
    linktype: u32,
    /// Timestamp units per second.
    units_per_sec: u64,
}

#[derive(Clone, Debug)]
enum Format {
    Classic {
        big_endian: bool,
        nanos: bool,
        linktype: u32,
    },
    Ng {
        big_endian: bool,
        interfaces: Vec<Interface>,
    },
}

/// Reads a classic pcap or pcapng file held in memory.
pub struct PcapReader {
    bytes: Vec<u8>,
    pos: usize,
    format: Format,
    failed: bool,
}

fn rd16(b: &[u8], at: usize, big: bool) -> Option<u16> {
    let s = b.get(at..at.checked_add(2)?)?;
    let a = [s[0], s[1]];
    Some(if big {
        u16::from_be_bytes(a)
    } else {
        u16::from_le_bytes(a)
    })
}

fn rd32(b: &[u8], at: usize, big: bool) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    let a = [s[0], s[1], s[2], s[3]];
    Some(if big {
        u32::from_be_bytes(a)
    } else {
        u32::from_le_bytes(a)
    })
}

const fn bad(why: &'static str) -> WireError {
    WireError::BadPcap { why }
}

impl PcapReader {
    pub fn open(path: impl AsRef<std::path::Path>) -> io::Result<Self> {
        let bytes = std::fs::read(path)?;
        Self::new(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }

    /// Reads the file header (classic) or the first section header (pcapng).
    pub fn new(bytes: Vec<u8>) -> Result<Self, WireError> {
        let magic_le = rd32(&bytes, 0, false).ok_or(bad("shorter than a file header"))?;
        let format = if magic_le == PCAPNG_SHB {
            // Byte order comes from the section header; parsed again by next_ng.
            Format::Ng {
                big_endian: false,
                interfaces: Vec::new(),
            }
        } else {
            let (big_endian, nanos) = match (magic_le, magic_le.swap_bytes()) {
                (MAGIC_USEC, _) => (false, false),
                (MAGIC_NSEC, _) => (false, true),
                (_, MAGIC_USEC) => (true, false),
                (_, MAGIC_NSEC) => (true, true),
                _ => return Err(bad("unknown magic")),
            };
            let network = rd32(&bytes, 20, big_endian).ok_or(bad("shorter than a file header"))?;
            // The upper bits of the link type field may carry FCS information.
            Format::Classic {
                big_endian,
                nanos,
                linktype: network & 0x0fff_ffff,
            }
        };
        let pos = if matches!(format, Format::Classic { .. }) {
            24
        } else {
            0
        };
        Ok(Self {
            bytes,
            pos,
            format,
            failed: false,
        })
    }

    /// The next packet, `Ok(None)` at the end of the file. After an error, returns `Ok(None)`.
    pub fn next_packet(&mut self) -> Result<Option<PcapPacket>, WireError> {
        if self.failed {
            return Ok(None);
        }
        let r = match self.format {
            Format::Classic {
                big_endian,
                nanos,
                linktype,
            } => self.next_classic(big_endian, nanos, linktype),
            Format::Ng { .. } => self.next_ng(),
        };
        if r.is_err() {
            self.failed = true;
        }
        r
    }

    /// Every packet, or the first error.
    pub fn read_all(mut self) -> Result<Vec<PcapPacket>, WireError> {
        let mut v = Vec::new();
        while let Some(p) = self.next_packet()? {
            v.push(p);
        }
        Ok(v)
    }

    fn next_classic(
        &mut self,
        big: bool,
        nanos: bool,
        linktype: u32,
    ) -> Result<Option<PcapPacket>, WireError> {
        let b = &self.bytes;
        let p = self.pos;
        if p == b.len() {
            return Ok(None);
        }
        let hdr = |i: usize| rd32(b, p + 4 * i, big).ok_or(bad("truncated record header"));
        let (sec, frac, caplen, orig_len) = (hdr(0)?, hdr(1)?, hdr(2)?, hdr(3)?);
        let start = p + 16;
        let end = start
            .checked_add(caplen as usize)
            .ok_or(bad("record length overflows"))?;
        let data = b.get(start..end).ok_or(bad("truncated record"))?.to_vec();
        let frac_ns = if nanos {
            frac as u64
        } else {
            frac as u64 * 1_000
        };
        self.pos = end;
        Ok(Some(PcapPacket {
            ts_ns: sec as u64 * 1_000_000_000 + frac_ns,
            linktype,
            orig_len,
            data,
        }))
    }

    fn next_ng(&mut self) -> Result<Option<PcapPacket>, WireError> {
        loop {
            let b = &self.bytes;
            let p = self.pos;
            if p == b.len() {
                return Ok(None);
            }
            let Format::Ng { big_endian, .. } = self.format else {
                return Err(bad("not pcapng"));
            };
            let raw_type = rd32(b, p, false).ok_or(bad("truncated block"))?;
            let big = if raw_type == PCAPNG_SHB {
                // A new section: its byte-order magic decides the endianness.
                match rd32(b, p + 8, false).ok_or(bad("truncated section header"))? {
                    PCAPNG_BYTE_ORDER => false,
                    m if m.swap_bytes() == PCAPNG_BYTE_ORDER => true,
                    _ => return Err(bad("bad byte-order magic")),
                }
            } else {
                big_endian
            };
            let btype = rd32(b, p, big).ok_or(bad("truncated block"))?;
            let blen = rd32(b, p + 4, big).ok_or(bad("truncated block"))? as usize;
            if blen < 12 || blen % 4 != 0 {
                return Err(bad("bad block length"));
            }
            let end = p.checked_add(blen).ok_or(bad("block length overflows"))?;
            let block = b.get(p..end).ok_or(bad("truncated block"))?;
            let body = &block[8..blen - 4];
            self.pos = end;
            match btype {
                PCAPNG_SHB => {
                    self.format = Format::Ng {
                        big_endian: big,
                        interfaces: Vec::new(),
                    }
                }
                1 => {
                    let linktype = rd16(body, 0, big).ok_or(bad("short interface block"))? as u32;
                    let units = tsresol(body.get(8..).unwrap_or(&[]), big);
                    if let Format::Ng { interfaces, .. } = &mut self.format {
                        interfaces.push(Interface {
                            linktype,
                            units_per_sec: units,
                        });
                    }
                }
                // Enhanced packet block.
                6 => {
                    let f = |i: usize| rd32(body, 4 * i, big).ok_or(bad("short packet block"));
                    let (iface, hi, lo, caplen, orig_len) = (f(0)?, f(1)?, f(2)?, f(3)?, f(4)?);
                    let ts = ((hi as u64) << 32) | lo as u64;
                    return self
                        .timed_packet(body, iface, ts, caplen, orig_len)
                        .map(Some);
                }
                // Simple packet block: no timestamp, interface 0, caplen from the block.
                3 => {
                    let orig_len = rd32(body, 0, big).ok_or(bad("short simple packet block"))?;
                    let data = body.get(4..).unwrap_or(&[]);
                    let data = data[..data.len().min(orig_len as usize)].to_vec();
                    let i = self.interface(0)?;
                    return Ok(Some(PcapPacket {
                        ts_ns: 0,
                        linktype: i.linktype,
                        orig_len,
                        data,
                    }));
                }
                // Obsolete packet block.
                2 => {
                    let iface = rd16(body, 0, big).ok_or(bad("short packet block"))? as u32;
                    let f = |i: usize| rd32(body, 4 + 4 * i, big).ok_or(bad("short packet block"));
                    let (hi, lo, caplen, orig_len) = (f(0)?, f(1)?, f(2)?, f(3)?);
                    let ts = ((hi as u64) << 32) | lo as u64;
                    return self
                        .timed_packet(body, iface, ts, caplen, orig_len)
                        .map(Some);
                }
                // Statistics, name resolution, custom...: nothing to return.
                _ => {}
            }
        }
    }

    /// The packet of an enhanced or obsolete packet block: both keep `caplen` bytes of data
    /// from byte 20 of the body and a timestamp in the interface's units.
    fn timed_packet(
        &self,
        body: &[u8],
        iface: u32,
        ts: u64,
        caplen: u32,
        orig_len: u32,
    ) -> Result<PcapPacket, WireError> {
        let data = body
            .get(20..20usize.saturating_add(caplen as usize))
            .ok_or(bad("packet data past the block"))?
            .to_vec();
        let i = self.interface(iface)?;
        Ok(PcapPacket {
            ts_ns: to_ns(ts, i.units_per_sec),
            linktype: i.linktype,
            orig_len,
            data,
        })
    }

    fn interface(&self, id: u32) -> Result<Interface, WireError> {
        match &self.format {
            Format::Ng { interfaces, .. } => interfaces
                .get(id as usize)
                .copied()
                .ok_or(bad("packet for an undeclared interface")),
            Format::Classic { .. } => Err(bad("not pcapng")),
        }
    }
}

impl Iterator for PcapReader {
    type Item = Result<PcapPacket, WireError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_packet().transpose()
    }
}

/// Units per second from an interface block's options (`if_tsresol`, code 9); default 10^6.
fn tsresol(mut opts: &[u8], big: bool) -> u64 {
    let mut units = 1_000_000u64;
    while let (Some(code), Some(len)) = (rd16(opts, 0, big), rd16(opts, 2, big)) {
        if code == 0 {
            break;
        }
        let len = len as usize;
        let Some(val) = opts.get(4..4 + len) else {
            break;
        };
        if code == 9 && len == 1 {
            let v = val[0];
            let exp = (v & 0x7f) as u32;
            units = if v & 0x80 == 0 {
                10u64.checked_pow(exp).unwrap_or(u64::MAX)
            } else {
                2u64.checked_pow(exp).unwrap_or(u64::MAX)
            };
        }
        let padded = 4 + len.div_ceil(4) * 4;
        opts = opts.get(padded..).unwrap_or(&[]);
    }
    units.max(1)
}

fn to_ns(ts: u64, units_per_sec: u64) -> u64 {
    let ns = ts as u128 * 1_000_000_000 / units_per_sec as u128;
    ns.min(u64::MAX as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ipv4_packet(len: usize) -> Vec<u8> {
        let mut p = vec![0u8; len];
        p[0] = 0x45;
        p
    }

    #[test]
    fn write_then_read_both_resolutions() {
        for res in [TsResolution::Micro, TsResolution::Nano] {
            let mut w = PcapWriter::with_options(Vec::new(), 64, res).unwrap();
            w.write_packet(1_500_000_123, &ipv4_packet(40)).unwrap();
            w.write_packet(2_000_000_999, &ipv4_packet(100)).unwrap();
            w.write_zero_filled(3_000_000_000, &ipv4_packet(40), 1000)
                .unwrap();
            let bytes = w.into_inner();
            let pk = PcapReader::new(bytes).unwrap().read_all().unwrap();
            assert_eq!(pk.len(), 3);
            let frac = if res == TsResolution::Micro { 0 } else { 123 };
            assert_eq!(pk[0].ts_ns, 1_500_000_000 + frac);
            assert_eq!((pk[0].data.len(), pk[0].orig_len), (40, 40));
            assert_eq!((pk[1].data.len(), pk[1].orig_len), (64, 100));
            assert_eq!((pk[2].data.len(), pk[2].orig_len), (64, 1000));
            assert!(pk
                .iter()
                .all(|p| p.linktype == LINKTYPE_RAW && p.ipv4().is_ok()));
        }
    }

    #[test]
    fn big_endian_classic() {
        let mut f = Vec::new();
        f.extend_from_slice(&MAGIC_USEC.to_be_bytes());
        f.extend_from_slice(&[
            0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 228,
        ]);
        f.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 20, 0, 0, 0, 20]);
        f.extend_from_slice(&ipv4_packet(20));
        let pk = PcapReader::new(f).unwrap().read_all().unwrap();
        assert_eq!(pk[0].ts_ns, 1_000_005_000);
        assert_eq!(pk[0].linktype, LINKTYPE_IPV4);
    }

    #[test]
    fn link_layers() {
        let ip = ipv4_packet(20);
        let mut eth = vec![0u8; 12];
        eth.extend_from_slice(&[0x81, 0, 0, 1, 0x08, 0]);
        eth.extend_from_slice(&ip);
        assert_eq!(link_payload_ipv4(LINKTYPE_ETHERNET, &eth).unwrap(), &ip[..]);
        let mut sll = vec![0u8; 14];
        sll.extend_from_slice(&[0x08, 0]);
        sll.extend_from_slice(&ip);
        assert_eq!(
            link_payload_ipv4(LINKTYPE_LINUX_SLL, &sll).unwrap(),
            &ip[..]
        );
        let mut sll2 = vec![0x08, 0];
        sll2.extend_from_slice(&[0u8; 18]);
        sll2.extend_from_slice(&ip);
        assert_eq!(
            link_payload_ipv4(LINKTYPE_LINUX_SLL2, &sll2).unwrap(),
            &ip[..]
        );
        let mut arp = vec![0u8; 12];
        arp.extend_from_slice(&[0x08, 0x06]);
        assert_eq!(
            link_payload_ipv4(LINKTYPE_ETHERNET, &arp),
            Err(WireError::NotIpv4Frame { ethertype: 0x0806 })
        );
        assert!(link_payload_ipv4(999, &ip).is_err());
    }

    #[test]
    fn garbage_files_do_not_panic() {
        for f in [
            vec![],
            vec![0xd4, 0xc3],
            vec![0x0a, 0x0d, 0x0d, 0x0a, 0, 0, 0, 0],
        ] {
            if let Ok(r) = PcapReader::new(f) {
                for p in r {
                    let _ = p;
                }
            }
        }
    }
}
