//! Bytes on the wire for spacetp: IPv4 and TCP headers, the TCP options the papers use
//! (MSS, window scale, SACK-permitted, SACK, timestamps) and the SCPS-TP options
//! (capabilities 20, SNACK 21, record boundary 22, corruption experienced 23), the SCPS
//! compressed header, checksums and a pcap writer.
//!
//! Pure functions over plain data: nothing here knows about a simulator, a clock or a socket.
//! The header structs are `Copy` and fixed-size so that a simulator can carry them per packet
//! without allocating.

pub mod options;
pub mod tcp;

pub use options::{
    SackBlocks, ScpsCapabilities, Snack, SnackList, TcpOptions, Timestamps, MAX_SACK_BLOCKS,
    MAX_SNACKS,
};
pub use tcp::{flags, TcpHeader, IPV4_HEADER_LEN, TCP_HEADER_LEN};
