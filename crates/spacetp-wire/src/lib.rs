//! Bytes on the wire for spacetp: IPv4, IPv6 and TCP headers, the TCP options the papers use
//! (MSS, window scale, SACK-permitted, SACK, timestamps) and the SCPS-TP options
//! (capabilities 20, SNACK 21, record boundary 22, corruption experienced 23), the SCPS
//! compressed header, checksums and pcap files.
//!
//! Pure functions over plain data: nothing here knows about a simulator, a clock or a socket.
//! The header structs are `Copy` and fixed-size so that a simulator can carry them per packet
//! without allocating. Decoders never panic; docs/wire.md describes every byte layout.

pub mod checksum;
pub mod compressed;
pub mod decode;
pub mod encode;
pub mod error;
pub mod ip;
pub mod ipv6;
pub mod options;
pub mod pcap;
pub mod tcp;

pub use checksum::Checksum;
pub use compressed::{
    compress, compress_with_payload, decompress, peek_connection_id, CompressedHeader,
    CompressionContext, Decompressed,
};
pub use decode::{
    decode_ipv4_header, decode_ipv4_tcp, decode_ipv4_udp, decode_scps_udp_encap, decode_tcp_header,
    decode_tcp_options, DecodeNotes, DecodedPacket, TcpSegment, UdpDatagram,
};
pub use encode::{
    encode_ipv4_header, encode_ipv4_packet, encode_ipv4_tcp, encode_ipv4_tcp_headers,
    encode_ipv4_udp, encode_options, encode_tcp_header, tcp_checksum, Payload,
};
pub use error::{Layer, WireError};
pub use ip::{
    Ipv4Header, Ipv4Params, PROTO_SCPS_COMPRESSED, PROTO_SCPS_TP, PROTO_TCP, PROTO_UDP,
    SCPS_UDP_ENCAP_PORT,
};
pub use ipv6::{decode_ipv6_tcp, encode_ipv6_tcp, DecodedPacket6, Ipv6Header, IPV6_HEADER_LEN};
pub use options::{
    SackBlocks, ScpsCapabilities, Snack, SnackList, TcpOptions, Timestamps, MAX_OPTIONS_LEN,
    MAX_SACK_BLOCKS, MAX_SNACKS, MAX_SNACK_BITVEC,
};
pub use pcap::{PcapPacket, PcapReader, PcapWriter, TsResolution};
pub use tcp::{flags, TcpHeader, IPV4_HEADER_LEN, TCP_HEADER_LEN};
