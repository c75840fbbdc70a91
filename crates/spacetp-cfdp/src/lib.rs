//! CFDP, the CCSDS File Delivery Protocol (727.0-B-5), on simulated time: the source and
//! destination entities of cfdp-rs (the engine of the IRS's flight software), driven by a
//! caller that moves their PDUs and sets their clock. `spacetp-sim`'s `cfdp` transport
//! carries the PDUs over UDP across the simulated links.
//!
//! - `settings.rs`: `[flows.cfdp]`, the class and the remote entity's timers and limits.
//! - `sender.rs`, `receiver.rs`: the sending and receiving entity of one file;
//!   `entity.rs`: what both keep alike and report.
//! - `clock.rs`: cfdp-rs's countdowns on the caller's clock, with their next expiry.
//! - `filestore.rs`: files of any size never held in memory, checked byte by byte.
//! - `outbox.rs`, `events.rs`: the PDUs a handler produced, what it told its user.
//! - `keep_alive.rs`: Prompt and Keep Alive PDUs (cfdp-rs has none), and the keep alive
//!   limit kept here.
//! - `early.rs`: PDUs that come before the Metadata PDU kept and handed again after it,
//!   and the Metadata PDU asked for again (cfdp-rs 0.3 asks once).
//! - `late.rs`: a Finished PDU sent again after the sender's transaction ended (its ACK
//!   lost) acknowledged again (cfdp-rs's idle source handler does not).
//! - `retransmit.rs`: the sender's answer to NAKs, done here: cfdp-rs 0.3.0's resends only
//!   a request's first segment and lets repairs skip new data.
//!
//! Not in cfdp-rs 0.3 and done here around it: suspension (the timers held), the inactivity
//! limit, Prompt and Keep Alive PDUs with the keep alive limit.

pub mod clock;
mod early;
pub mod entity;
pub mod events;
pub mod filestore;
pub mod keep_alive;
mod late;
pub mod outbox;
pub mod receiver;
mod retransmit;
pub mod sender;
pub mod settings;

pub use entity::EntityStats;
pub use receiver::Receiver;
pub use sender::Sender;
pub use settings::{Carrier, CfdpSettings, FILE_DATA_OVERHEAD, MAX_PDU};
