//! The limit analysis: where each flow's time went. From its start to its last byte, a flow
//! is always in one named state; its time in each is accounted from the engine's own events
//! (every time its sender is serviced, and every link-state change on its path), and the
//! shares add up to 100%.
//!
//! Two sources decide the state. The flow's bottleneck link (the slowest direction of its
//! forward path): while it transmits, the flow is link-limited, the good case, whatever its
//! sender would say (a shared bottleneck counts too: it is the link that limits). While it
//! is idle, the sender names why it is not sending (the transports' `SendLimit`: each
//! transport writes its own, beside its code), and the world refines that with what only it
//! sees: a link down on the path, whether the application has more to write, a slow reader
//! behind a closed window, and a window that would already fill the path (then the ACKs come
//! back too slowly: the return path). The busy time of the bottleneck between two accounting
//! points is read from its integral ([`crate::link::LinkDir::busy_time`]), so the split is
//! exact without an event per packet.

mod account;
mod paths;
pub mod text;

pub use account::{Account, PathFacts};
pub use paths::PathsTaken;
pub use text::{describe, LimitShare};

/// A state a flow's time is accounted to (declared in the order of [`ALL`]: its
/// discriminant is its index there).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Limit {
    /// The bottleneck link was transmitting: the path's own limit.
    Link,
    /// Opening the connection (SYN, SYN-ACK; QUIC's handshake).
    Handshake,
    /// The congestion window was full and below the path's bandwidth-delay product.
    CongestionWindow,
    /// The receiver's window (TCP rwnd, QUIC stream or connection flow control) was full
    /// and below the bandwidth-delay product.
    ReceiveWindow,
    /// The receive window was closed by a receiving application that reads slowly.
    SlowReader,
    /// The send buffer held everything it could (in flight, unacknowledged).
    SendBuffer,
    /// SCPS-TP rate control held the next segment.
    RateControl,
    /// Pacing held the next segment.
    Pacing,
    /// Every LTP export session was busy (awaiting its report) while blocks waited.
    LtpSessions,
    /// Bundles were stored at a relay, waiting for a contact onward (BP custody).
    BundleStorage,
    /// A window that would fill the path was full, and the ACKs that open it came back too
    /// slowly (queued or lost on the return link, or thinned).
    ReturnPath,
    /// Loss recovery, and retransmission timeouts with their backoff.
    Recovery,
    /// The sending application had written nothing more to send.
    Application,
    /// A link of the path was down.
    LinkDown,
    /// Everything was sent; the last bytes were on their way.
    Propagation,
}

/// Every state, in the order of the summary's tie-breaks.
pub const ALL: [Limit; 15] = [
    Limit::Link,
    Limit::Handshake,
    Limit::CongestionWindow,
    Limit::ReceiveWindow,
    Limit::SlowReader,
    Limit::SendBuffer,
    Limit::RateControl,
    Limit::Pacing,
    Limit::LtpSessions,
    Limit::BundleStorage,
    Limit::ReturnPath,
    Limit::Recovery,
    Limit::Application,
    Limit::LinkDown,
    Limit::Propagation,
];

#[cfg(test)]
#[test]
fn every_state_sits_at_its_index() {
    for (i, l) in ALL.iter().enumerate() {
        assert_eq!(l.index(), i, "{l:?}");
    }
}

impl Limit {
    /// Its name in the summary and the JSON.
    pub fn key(self) -> &'static str {
        match self {
            Limit::Link => "link",
            Limit::Handshake => "handshake",
            Limit::CongestionWindow => "congestion_window",
            Limit::ReceiveWindow => "receive_window",
            Limit::SlowReader => "slow_reader",
            Limit::SendBuffer => "send_buffer",
            Limit::RateControl => "rate_control",
            Limit::Pacing => "pacing",
            Limit::LtpSessions => "ltp_sessions",
            Limit::BundleStorage => "bundle_storage",
            Limit::ReturnPath => "return_path",
            Limit::Recovery => "recovery",
            Limit::Application => "application",
            Limit::LinkDown => "link_down",
            Limit::Propagation => "propagation",
        }
    }

    /// Its index in [`ALL`].
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// Whether the bottleneck's busy time counts as the link's while the flow is in this
    /// state: not while it opens (its SYN on the wire is not what limits it) nor while a
    /// link of its path is down.
    pub(crate) fn yields_to_link(self) -> bool {
        !matches!(self, Limit::Handshake | Limit::LinkDown)
    }
}
