//! Licklider Transmission Protocol (RFC 5326) for spacetp: a wire codec and a sans-IO
//! engine, with the CCSDS 734.1-B-1 profile's limits (32-bit session and serial numbers)
//! and NASA ION's behaviour where the RFC leaves a choice (each module says which).
//!
//! An [`Engine`] is one node (one engine ID) with a span per peer engine. It is fed
//! received segments, client data and the time, and asked for segments to send, its next
//! deadline and notices for its client services; it never sees a socket or a clock.
//!
//! Modules, one concept each:
//! - [`wire`]: segments as bytes (RFC 5326 section 3): SDNVs, every segment type,
//!   extensions, named decode errors; no dependency beyond std.
//! - [`config`]: engine and span settings in human units (ION's `ltprc` names), validated.
//! - [`engine`]: the public face: `send`, `on_segment`, `poll_transmit`, `poll_timeout`,
//!   `on_timeout`, `set_link_up`, `poll_event`, statistics.
//! - `shared`: what the spans of an engine share (seeded numbers, timers, notices, session
//!   numbers).
//! - `span`: one peer's sessions, queues, link state and closed-session memory; its
//!   children split it by concern: `span/aggregation.rs` (SDUs into blocks, blocks waiting
//!   for a session), `span/export.rs` (sending sessions: reports, retransmission,
//!   checkpoint timers, cancels), `span/import.rs` (receiving sessions: reassembly, reports,
//!   delivery, cancels), `span/output.rs` (what leaves next, cut to the segment size and
//!   paced to the span's rate).
//! - `timer`: acknowledgment deadlines, suspension while a link is down, the timer heap.
//! - `ranges`: sorted disjoint byte ranges (receptions, claims).
//! - [`stats`]: counters per span and per engine.
//! - [`event`]: notices to client services (RFC 5326 section 7).
//! - `fuzzing` (hidden): the decoder and engine fuzz bodies, shared by `fuzz/` and the tests.

pub mod config;
pub mod engine;
pub mod event;
#[doc(hidden)]
pub mod fuzzing;
mod ranges;
mod shared;
mod span;
pub mod stats;
mod timer;
pub mod wire;

pub use config::{EngineConfig, ImportLimitPolicy, SpanConfig};
pub use engine::{Engine, SendError};
pub use event::{CanceledBy, Event, Limit};
pub use span::import::MAX_CLAIMS_PER_REPORT;
pub use stats::{CancelCounts, EngineStats, SpanStats};
pub use wire::{CancelReason, DecodeError};
