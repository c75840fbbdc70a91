//! The TCP header as fields (not bytes). Encoding and decoding live beside it.

use crate::options::TcpOptions;

/// Length of an IPv4 header without options, in bytes.
pub const IPV4_HEADER_LEN: u32 = 20;
/// Length of a TCP header without options, in bytes.
pub const TCP_HEADER_LEN: u32 = 20;

/// TCP flag bits (RFC 9293 section 3.1).
pub mod flags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
    pub const URG: u8 = 0x20;
    pub const ECE: u8 = 0x40;
    pub const CWR: u8 = 0x80;
}

/// A TCP header with its options, as the fields a transport reads and writes.
/// `seq` and `ack` are the 32-bit wire values (they wrap).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TcpHeader {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    /// The window field as sent (before scaling).
    pub window: u16,
    pub urgent: u16,
    pub options: TcpOptions,
}

impl TcpHeader {
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    /// Header length on the wire: 20 bytes plus options padded to a multiple of 4.
    pub fn header_len(&self) -> u32 {
        TCP_HEADER_LEN + self.options.padded_len()
    }
}
