//! The one error type of this crate. Decoders return it instead of panicking on bad input;
//! encoders return it instead of writing a header that would not be what the caller asked for.

use std::fmt;

/// Which layer a length problem was found in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layer {
    Ipv4,
    Ipv6,
    Tcp,
    Udp,
    Compressed,
    Link,
    Pcap,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    /// Fewer bytes than the layer needs (`needed` is a lower bound).
    Truncated {
        layer: Layer,
        needed: usize,
        available: usize,
    },
    /// The IP version nibble is not 4.
    NotIpv4 { version: u8 },
    /// The IP version nibble is not 6 (an IPv6 decoder was asked).
    NotIpv6 { version: u8 },
    /// IHL below 5 words.
    BadIpHeaderLength { ihl: u8 },
    /// IPv4 total length smaller than the IPv4 header.
    BadTotalLength { total_len: u16, header_len: usize },
    /// A fragment (MF set or non-zero offset): its transport header cannot be read alone.
    Fragment,
    /// An IP protocol this decoder does not handle.
    UnsupportedProtocol { protocol: u8 },
    /// TCP data offset below 5 words.
    BadTcpHeaderLength { data_offset: u8 },
    /// An option other than EOL/NOP with length 0 or 1: the option list cannot be walked.
    BadOptionLength { kind: u8, len: u8 },
    /// An option whose length runs past the end of the header (or whose length byte is missing).
    OptionOverrun { kind: u8 },
    /// Encoding: options need more than 40 bytes (after padding).
    OptionsTooLong { len: u32 },
    /// Encoding: a field of the option structs is out of range (e.g. `sack.len > 4`).
    InvalidOptions { what: &'static str },
    /// Encoding: the packet would exceed 65535 bytes.
    PacketTooLong { len: usize },
    /// Compression: this header cannot be expressed in the compressed form.
    NotCompressible { why: &'static str },
    /// Decompression: the connection id in the packet is not the context's.
    WrongConnection { expected: u8, found: u8 },
    /// Link layer: the frame does not carry IPv4 (ARP, IPv6, ...).
    NotIpv4Frame { ethertype: u16 },
    /// Pcap: a link type this reader does not unwrap.
    UnsupportedLinkType { linktype: u32 },
    /// Pcap: the file is not classic pcap or pcapng, or a block is inconsistent.
    BadPcap { why: &'static str },
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use WireError::*;
        match *self {
            Truncated {
                layer,
                needed,
                available,
            } => {
                write!(
                    f,
                    "{layer:?}: truncated, need {needed} bytes, have {available}"
                )
            }
            NotIpv4 { version } => write!(f, "IP version {version}, not 4"),
            NotIpv6 { version } => write!(f, "IP version {version}, not 6"),
            BadIpHeaderLength { ihl } => write!(f, "IPv4 IHL {ihl} < 5"),
            BadTotalLength {
                total_len,
                header_len,
            } => {
                write!(
                    f,
                    "IPv4 total length {total_len} < header length {header_len}"
                )
            }
            Fragment => write!(f, "IPv4 fragment"),
            UnsupportedProtocol { protocol } => write!(f, "unsupported IP protocol {protocol}"),
            BadTcpHeaderLength { data_offset } => write!(f, "TCP data offset {data_offset} < 5"),
            BadOptionLength { kind, len } => write!(f, "TCP option kind {kind} has length {len}"),
            OptionOverrun { kind } => write!(f, "TCP option kind {kind} runs past the header"),
            OptionsTooLong { len } => write!(f, "TCP options need {len} bytes, at most 40 fit"),
            InvalidOptions { what } => write!(f, "invalid options: {what}"),
            PacketTooLong { len } => write!(f, "packet of {len} bytes exceeds 65535"),
            NotCompressible { why } => write!(f, "cannot compress: {why}"),
            WrongConnection { expected, found } => {
                write!(
                    f,
                    "compressed header for connection {found}, context is {expected}"
                )
            }
            NotIpv4Frame { ethertype } => write!(f, "frame carries ethertype {ethertype:#06x}"),
            UnsupportedLinkType { linktype } => write!(f, "unsupported pcap link type {linktype}"),
            BadPcap { why } => write!(f, "bad pcap: {why}"),
        }
    }
}

impl std::error::Error for WireError {}
