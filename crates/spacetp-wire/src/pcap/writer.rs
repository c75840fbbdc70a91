//! Writing classic pcap, link type 101 (raw IPv4), nanosecond timestamps by default.

use super::*;
use std::io::{self, Write};

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
