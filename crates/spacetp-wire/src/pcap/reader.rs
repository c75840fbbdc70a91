//! Reading classic pcap (both magics, both byte orders) and pcapng from memory, never
//! panicking on a bad file.

use super::*;
use crate::error::WireError;
use std::io;

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
