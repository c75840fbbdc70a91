//! Unreliable application datagrams (RFC 9221 DATAGRAM frames) on a `QuicEnd`: a traffic
//! source writes one datagram at a time; quinn sends each in a DATAGRAM frame under the
//! connection's congestion control, never resends it, and drops the oldest waiting one when
//! its send buffer is full. What was written before the handshake ended waits for it.

use super::{QuicEnd, ZEROS};
use bytes::Bytes;
use std::collections::VecDeque;

/// Datagram counters of one end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DatagramStats {
    /// Handed to quinn, and refused by it as larger than the path allows.
    pub sent: u64,
    pub too_large: u64,
    /// Received from the peer, and their payload bytes.
    pub received: u64,
    pub bytes_received: u64,
}

#[derive(Debug, Default)]
pub(super) struct Datagrams {
    /// Payload sizes written before the connection could take them.
    waiting: VecDeque<usize>,
    stats: DatagramStats,
}

impl QuicEnd {
    /// The application sends one datagram of `len` payload bytes (at most 1200 less the
    /// packet's overhead before MTU discovery, more after; larger ones count as too large).
    pub fn send_datagram(&mut self, len: usize) {
        self.datagrams.waiting.push_back(len.min(ZEROS.len()));
        self.pump_datagrams();
        self.refresh_deadline();
    }

    /// Hand the waiting datagrams to quinn once the handshake is done.
    pub(super) fn pump_datagrams(&mut self) {
        let Some((_, conn)) = self.conn.as_mut() else {
            return;
        };
        if conn.is_handshaking() {
            return;
        }
        let d = &mut self.datagrams;
        while let Some(len) = d.waiting.pop_front() {
            match conn
                .datagrams()
                .send(Bytes::from_static(&ZEROS[..len]), true)
            {
                Ok(()) => d.stats.sent += 1,
                // Larger than the path allows now. (Disabled or unsupported cannot happen:
                // both ends here enable datagrams.)
                Err(_) => d.stats.too_large += 1,
            }
        }
    }

    /// Take the datagrams that arrived.
    pub(super) fn read_datagrams(&mut self) {
        let Some((_, conn)) = self.conn.as_mut() else {
            return;
        };
        while let Some(b) = conn.datagrams().recv() {
            self.datagrams.stats.received += 1;
            self.datagrams.stats.bytes_received += b.len() as u64;
        }
    }

    pub fn datagram_stats(&self) -> DatagramStats {
        self.datagrams.stats
    }
}
