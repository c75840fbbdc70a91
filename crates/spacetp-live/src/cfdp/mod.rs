//! `spacetp cfdp`: a CFDP entity on a real UDP socket (port 4556 by convention, as cfdp-py's
//! and ION's UDP examples), the simulator's `protocol = "cfdp"` entities (`spacetp-cfdp`,
//! cfdp-rs) on the real clock and real files: it sends files with Put requests, one
//! transaction after another, and receives any number of transactions from its peers into a
//! directory.

pub mod config;
mod entity;
mod outlet;
pub mod over_bp;
pub mod report;

pub use config::{config_from_json, CfdpConfig, CfdpLiveSettings};
pub use entity::CfdpEntity;
pub use over_bp::CfdpOverBp;
pub use report::CfdpReport;
