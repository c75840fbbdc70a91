//! The RFC 9293 states of a connection, and why one ended.

/// RFC 9293 connection states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Closed,
    Listen,
    SynSent,
    SynReceived,
    Established,
    FinWait1,
    FinWait2,
    CloseWait,
    Closing,
    LastAck,
    TimeWait,
}

/// Why a connection ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloseReason {
    /// FIN exchange completed.
    Normal,
    /// The peer sent RST.
    Reset,
    /// The handshake timed out `syn_retries` times.
    HandshakeTimeout,
    /// The same data timed out `max_retries` times.
    RetransmissionTimeout,
    /// The application aborted the connection ([`Connection::reset`]): an RST was sent.
    Aborted,
}

impl CloseReason {
    pub fn as_str(&self) -> &'static str {
        match self {
            CloseReason::Normal => "closed",
            CloseReason::Reset => "reset by peer",
            CloseReason::HandshakeTimeout => "aborted: handshake timed out (syn_retries)",
            CloseReason::RetransmissionTimeout => "aborted: data timed out (max_retries)",
            CloseReason::Aborted => "aborted by the application (RST sent)",
        }
    }
}
