//! A captured frame, and the IPv4 packet inside it by link type.

use super::*;
use crate::error::{Layer, WireError};

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
