//! The transport engine of spacetp, sans-IO (as quinn-proto and smoltcp are): a [`Connection`]
//! is fed segments and the current time, and is asked for segments to send and for its next
//! deadline. It never sees a link, a socket or a clock, so the simulator and a live gateway
//! drive the very same code.
//!
//! Payload bytes never enter the connection: it deals in sequence ranges. A driver that carries
//! real data keeps the bytes itself, indexed by stream offset.

pub mod cc;
pub mod config;
pub mod connection;
pub mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod profiles;
pub mod profiles_ri;
pub mod ranges;
pub mod rto;
pub mod seq;
pub mod settings;
#[cfg(test)]
pub(crate) mod testing;
pub mod time;
pub mod units;

pub use config::TcpConfig;
pub use connection::{
    reset_reply, Accepted, CloseReason, ConnStats, Connection, IntoSettings, SendLimit, Sent,
    State, TokenBucket, Transmit,
};
pub use error::FieldError;
pub use time::{Time, MS, SEC, US};
