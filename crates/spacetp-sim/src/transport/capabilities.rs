//! What a transport offers beyond [`super::Transport`]'s core, each only where it has it: the
//! world asks for a capability and gets it or `None`, and never names the transport behind
//! it (no downcast).
//!
//! - [`ConvergenceLayer`]: a Bundle Protocol hop's blocks (LTP);
//! - [`ForgedSegments`]: a byte stream an attacker can inject forged segments into (TCP);
//! - [`DatagramCounts`]: what a traffic source's datagrams did (UDP, QUIC DATAGRAM frames).

use bytes::Bytes;
use spacetp_ltp::SpanStats;
use spacetp_proto::{Connection, Time};

/// A transport that carries a bundle agent's bundles between two nodes as blocks.
pub trait ConvergenceLayer {
    /// The agent hands a bundle (or several, aggregated) to this hop.
    fn send_sdu(&mut self, now: Time, data: Vec<u8>);
    /// The blocks that arrived whole since the last call, and the units of canceled
    /// sessions given back to the agent.
    fn take_hop_io(&mut self) -> (Vec<Bytes>, Vec<Bytes>);
    /// The contact plan's cues: the link up or down, and its rate (bits/s) from now on.
    fn set_contact(&mut self, now: Time, up: bool, rate_bps: Option<f64>);
    /// The hop's counters for the run's DTN summary.
    fn span_stats(&self) -> SpanStats;
}

/// A transport whose receiving side an attacker can feed forged segments as if they had
/// come from the peer (`[[attacks]]`).
pub trait ForgedSegments {
    fn connection_mut(&mut self) -> &mut Connection;
}

/// A traffic source's datagrams, as one end counted them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DatagramCounts {
    pub received: u64,
    pub bytes_received: u64,
    /// Over QUIC: the datagrams handed to the connection as DATAGRAM frames, and those it
    /// refused as larger than the path allows (None over UDP).
    pub frames: Option<(u64, u64)>,
}
