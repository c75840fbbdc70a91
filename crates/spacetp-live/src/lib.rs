//! spacetp-live: the simulator's models in real time, on real packets. Two programs share
//! the crate: the link emulator (`spacetp emulate`, [`emulator`]) and the gateway
//! (`spacetp gateway`): SCPS-TP across the link ([`gateway`]) or QUIC ([`quic_gateway`]),
//! chosen by [`carrier`]; [`selftest`] runs a gateway pair over the emulator inside one
//! process; [`dtn`] is a live Bundle Protocol node over LTP (`spacetp dtn`); [`cfdp`] a live
//! CFDP entity over UDP (`spacetp cfdp`).

pub mod carrier;
pub mod cfdp;
pub mod dtn;
pub mod emulator;
pub mod error;
pub mod gateway;
pub mod quic_gateway;
mod reassembly;
pub mod selftest;
pub mod sys;
pub mod turns;

pub use emulator::{
    describe, link_from_json, scenario_json, DirReport, Emulator, Lateness, Options, Report,
    LINK_DOWN, LINK_UP,
};
pub use error::LiveError;
pub use sys::monotonic_ns;
