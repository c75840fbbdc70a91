//! QUIC in the simulator, from a real implementation: quinn-proto's endpoints and
//! connections (RFC 9000/9001/9002: a real TLS 1.3 handshake through rustls, real loss
//! recovery, congestion control and flow control, real encrypted packets) driven sans-IO on
//! simulated time, as the simulator drives its own TCP connection.
//!
//! - `clock.rs`: simulated nanoseconds as quinn's `Instant`s (a base plus an offset), so
//!   RTTs of minutes are just numbers;
//! - `tls.rs`: the server's self-signed certificate, made once at run time, and both ends'
//!   rustls configurations;
//! - `settings.rs`: `[flows.quic]` in human units, checked with errors that name the field,
//!   and what they set in quinn's `TransportConfig`;
//! - `keylog.rs`: the TLS secrets in the NSS key log format, for Wireshark;
//! - `end.rs`: one end of a connection (client or server): datagrams in and out, timers, and
//!   the application's streams for the application; `end/config.rs`: what both ends are
//!   made from; `end/stats.rs`: what an end reports; `end/datagrams.rs`: unreliable
//!   DATAGRAM frames (RFC 9221) for traffic sources;
//! - `sizes.rs`: `quic.crypto = "sizes"`, the real handshake with packet protection that
//!   keeps every size and encrypts nothing (the simulator's default when no pcap or key
//!   log needs ciphertext);
//! - `rate_cap.rs`: `quic.max_pacing_rate`, a cap on a connection's sending rate over
//!   quinn's own pacer (the simulated end and the gateway both apply it).

mod clock;
mod end;
mod keylog;
pub mod rate_cap;
mod settings;
pub mod sizes;
pub mod tls;

pub use clock::SimClock;
pub use end::{DatagramStats, EndConfig, EndOutputs, QuicEnd, QuicStats, Role};
pub use keylog::KeyLogFile;
pub use rustls::KeyLog;
pub use settings::{is_quic, quic_config, quic_config_on, QuicCongestion, QuicSettings, PROFILES};
pub use sizes::CryptoMode;
