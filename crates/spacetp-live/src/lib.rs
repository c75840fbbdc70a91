//! spacetp-live: the simulator's models in real time, on real packets. Two programs share
//! the crate: the link emulator (`spacetp emulate`, [`emulator`]) and the SCPS-TP gateway
//! (`spacetp gateway`, [`gateway`]); [`selftest`] runs a gateway pair over the emulator
//! inside one process.

pub mod emulator;
pub mod error;
pub mod gateway;
pub mod quic_gateway;
mod reassembly;
pub mod selftest;
pub mod sys;

pub use emulator::{
    describe, link_from_json, scenario_json, DirReport, Emulator, Lateness, Options, Report,
    LINK_DOWN, LINK_UP,
};
pub use error::LiveError;
pub use sys::monotonic_ns;
