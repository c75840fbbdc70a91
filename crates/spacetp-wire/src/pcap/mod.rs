//! Capture files. `PcapWriter` writes classic pcap with link type 101 (LINKTYPE_RAW: each
//! record is a bare IPv4 packet), nanosecond timestamps by default (magic 0xA1B23C4D, which
//! tshark reads), always little-endian. `PcapReader` reads classic pcap (both magics, both byte
//! orders) and pcapng, and unwraps link types 101, 228, 1 (Ethernet), 113 (Linux SLL) and 276
//! (SLL2) to the IPv4 bytes. The reader works on an in-memory file and never panics on a bad
//! one.

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

mod link;
mod reader;
mod writer;

pub use link::{link_payload_ipv4, PcapPacket};
pub use reader::PcapReader;
pub use writer::{PcapWriter, TsResolution};

#[cfg(test)]
mod tests;
