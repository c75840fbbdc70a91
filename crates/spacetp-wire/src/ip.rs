//! IPv4 header as fields, and the protocol numbers SCPS uses. Encoding is in `encode`,
//! decoding in `decode`.

/// IP protocol number of TCP (and of SCPS-TP run through a gateway).
pub const PROTO_TCP: u8 = 6;
/// IP protocol number of UDP (the RI's UDP encapsulation rides on it).
pub const PROTO_UDP: u8 = 17;
/// IP protocol number of SCPS-TP compressed headers, as the SCPS Reference Implementation sends.
pub const PROTO_SCPS_COMPRESSED: u8 = 105;
/// IP protocol number of standalone SCPS-TP (TCP format), as the RI sends.
pub const PROTO_SCPS_TP: u8 = 106;
/// UDP port (source and destination) of the RI's encapsulation of a full IPv4 packet.
pub const SCPS_UDP_ENCAP_PORT: u16 = 7168;

/// TTL of the IPv4 headers we write.
pub const DEFAULT_TTL: u8 = 64;

/// What the caller chooses for an IPv4 header we write. The rest is fixed: version 4, IHL 5,
/// TOS 0, DF set, fragment offset 0, TTL 64; total length and checksum are computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Ipv4Params {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    /// 6 (TCP), 106 (standalone SCPS-TP) or 105 (compressed SCPS-TP).
    pub protocol: u8,
    pub id: u16,
}

/// An IPv4 header as read from the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Ipv4Header {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub protocol: u8,
    pub ttl: u8,
    pub tos: u8,
    pub id: u16,
    /// Total length field (header + payload), as sent.
    pub total_len: u16,
    /// Header length in bytes (IHL * 4).
    pub header_len: u8,
    pub dont_fragment: bool,
    pub more_fragments: bool,
    /// In 8-byte units.
    pub fragment_offset: u16,
    pub checksum: u16,
    /// The header checksum verifies.
    pub checksum_ok: bool,
}

impl Ipv4Header {
    /// Bytes after the IP header according to the total length field.
    pub fn payload_len(&self) -> usize {
        (self.total_len as usize).saturating_sub(self.header_len as usize)
    }
}
