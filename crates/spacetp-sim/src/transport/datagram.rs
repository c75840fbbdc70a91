//! Datagrams (UDP-like): each write is one packet of that many bytes (IP size), sent at once
//! and never resent; the receiving end counts what arrives. The background traffic sources
//! (`[[traffic]]`, constant bit rate or on/off) write through it.

use super::capabilities::DatagramCounts;
use super::{Outgoing, SendLimit, SenderState, Transport, Wire};
use crate::result::FlowSummary;
use spacetp_proto::Time;
use std::collections::VecDeque;

/// One end of a datagram exchange.
#[derive(Debug, Default)]
pub struct DatagramEndpoint {
    port: u16,
    peer_port: u16,
    /// Sizes of the datagrams written and not yet sent.
    queued: VecDeque<u32>,
    packets_received: u64,
    bytes_received: u64,
}

impl DatagramEndpoint {
    pub fn new(port: u16, peer_port: u16) -> Self {
        DatagramEndpoint {
            port,
            peer_port,
            ..Default::default()
        }
    }
}

impl Transport for DatagramEndpoint {
    fn on_packet(&mut self, _now: Time, wire: &Wire, _payload: &[u8]) {
        if let Wire::Datagram { size, .. } = wire {
            self.packets_received += 1;
            self.bytes_received += *size as u64;
        }
    }

    fn poll_transmit(
        &mut self,
        _now: Time,
        wire: &mut Wire,
        _payload: &mut Vec<u8>,
    ) -> Option<Outgoing> {
        let size = self.queued.pop_front()?;
        *wire = Wire::Datagram {
            src_port: self.port,
            dst_port: self.peer_port,
            size,
        };
        Some(Outgoing {
            size,
            low_priority: false,
            data: None,
        })
    }

    fn poll_timeout(&self) -> Option<Time> {
        None
    }

    fn on_timeout(&mut self, _now: Time) {}

    /// One datagram of `n` bytes (its IP size).
    fn write(&mut self, n: u64) -> u64 {
        self.queued.push_back(n as u32);
        n
    }

    fn close(&mut self) {}

    fn delivered(&self) -> u64 {
        self.bytes_received
    }

    fn receive_buffer(&self) -> u64 {
        0
    }

    fn is_finished(&self) -> bool {
        false
    }

    fn failure(&self) -> Option<String> {
        None
    }

    /// Datagrams carry no transport state a network signal could act on.
    fn takes_signals(&self) -> bool {
        false
    }

    fn sender_state(&self) -> SenderState {
        SenderState {
            cwnd: 0,
            ssthresh: u64::MAX,
            srtt: None,
            in_flight: 0,
            sent: 0,
            acked: 0,
        }
    }

    fn send_limit(&self, _now: Time, _peer: &dyn Transport) -> SendLimit {
        SendLimit::Ready // a traffic source is not a flow: no limit analysis
    }

    fn report_sender(&self, _s: &mut FlowSummary) {}

    fn report_receiver(&self, _s: &mut FlowSummary) {}

    fn datagram_counts(&self) -> Option<DatagramCounts> {
        Some(DatagramCounts {
            received: self.packets_received,
            bytes_received: self.bytes_received,
            frames: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_write_is_one_datagram_sent_at_once_and_counted_where_it_arrives() {
        let (mut a, mut b) = (
            DatagramEndpoint::new(9000, 9001),
            DatagramEndpoint::new(9001, 9000),
        );
        a.write(100);
        a.write(1500);
        let mut wire = Wire::Unfilled;
        let first = a
            .poll_transmit(0, &mut wire, &mut Vec::new())
            .expect("a datagram");
        assert_eq!(first.size, 100);
        assert_eq!(wire.ports(), (9000, 9001));
        b.on_packet(0, &wire, &[]);
        assert_eq!(
            a.poll_transmit(0, &mut wire, &mut Vec::new())
                .map(|o| o.size),
            Some(1500)
        );
        assert!(
            a.poll_transmit(0, &mut wire, &mut Vec::new()).is_none(),
            "nothing is resent"
        );
        b.on_packet(0, &wire, &[]);
        let c = b.datagram_counts().unwrap();
        assert_eq!((c.received, c.bytes_received), (2, 1600));
        assert_eq!(a.poll_timeout(), None, "no timers");
    }
}
