//! `spacetp dtn`: a Bundle Protocol node over LTP on a real UDP socket, the engine and agent
//! of the simulator's `protocol = "bp"` flows, interoperable with NASA's ION (LTP over UDP
//! port 1113, BPv7 bundles back to back in red blocks of client service 1).

pub mod config;
mod node;
pub mod notices;
pub mod report;

pub use config::{config_from_json, config_from_settings, DtnConfig, DtnSettings};
pub use node::DtnNode;
pub use report::DtnReport;
pub mod udp_cl;
