//! The entity's way out, paced at the settings' `rate` (CFDP has no congestion control;
//! ION meters its output to the contact's rate), holding the one PDU that waits for the
//! pacer or for room in the socket's buffer: its UDP socket, or bundles for the node it
//! runs on (CFDP over the Bundle Protocol, as ION's bputa).

use spacetp_proto::{Time, MS, SEC};
use std::collections::VecDeque;
use std::net::{SocketAddr, UdpSocket};

/// IPv4 and UDP headers: what a datagram costs on the link beyond its PDU.
const IP_UDP: u64 = 28;
/// What a PDU costs beyond itself as a bundle over LTP: a primary block with ipn EIDs and
/// a payload block (about 30 bytes), an LTP data segment's header (about 10), IPv4 and UDP.
const BUNDLE_LTP_IP_UDP: u64 = 30 + 10 + IP_UDP;
/// How far behind its schedule the pacer may catch up at once.
const SLACK: Time = MS;

/// Where PDUs go.
pub enum Way {
    /// Datagrams to the peer entity's address.
    Udp(UdpSocket),
    /// Bundles for the node to send to the peer entity's node: (entity, PDU).
    Bundles(VecDeque<(u16, Vec<u8>)>),
}

/// A PDU's destination: the peer entity, and its address when over UDP.
#[derive(Clone, Copy, Debug)]
pub struct Dest {
    pub entity: u16,
    pub addr: Option<SocketAddr>,
}

pub struct Outlet {
    way: Way,
    /// Bits per second, if paced.
    rate: Option<f64>,
    /// When the next PDU may leave.
    pace_at: Time,
    held: Option<(Vec<u8>, Dest)>,
    /// The socket's buffer was full when the held PDU was tried.
    full: bool,
    pub datagrams: u64,
    pub bytes: u64,
}

impl Outlet {
    pub fn new(way: Way, rate: Option<f64>) -> Outlet {
        Outlet {
            way,
            rate,
            pace_at: 0,
            held: None,
            full: false,
            datagrams: 0,
            bytes: 0,
        }
    }

    /// Sends the PDU held, if it may leave now; false if it still waits.
    pub fn flush(&mut self, now: Time) -> bool {
        match self.held.take() {
            Some((pdu, to)) => self.send(now, pdu, to),
            None => true,
        }
    }

    /// Sends `pdu` to `to` if the pacer lets it leave now and the socket takes it; else
    /// holds it (false: send nothing more before `flush` succeeds).
    pub fn send(&mut self, now: Time, pdu: Vec<u8>, to: Dest) -> bool {
        if now < self.pace_at {
            self.held = Some((pdu, to));
            return false;
        }
        let (len, overhead) = (pdu.len() as u64, self.overhead());
        match &mut self.way {
            Way::Udp(socket) => {
                // No address for that entity: lost, as on a link.
                let Some(addr) = to.addr else { return true };
                match socket.send_to(&pdu, addr) {
                    Ok(_) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        self.held = Some((pdu, to));
                        self.full = true;
                        return false;
                    }
                    // Unreachable peer (ICMP), no route: the PDU is lost, as on a link;
                    // CFDP's timers recover it.
                    Err(_) => return true,
                }
            }
            Way::Bundles(queue) => queue.push_back((to.entity, pdu)),
        }
        self.datagrams += 1;
        self.bytes += len;
        if let Some(rate) = self.rate {
            // A wake-up late by up to SLACK is made up for by the next PDUs, so the average
            // rate holds with a coarse sleep.
            let bits = (len + overhead) * 8;
            let from = self.pace_at.max(now.saturating_sub(SLACK));
            self.pace_at = from + (bits as f64 / rate * SEC as f64) as Time;
        }
        self.full = false;
        true
    }

    /// What a PDU costs on the link beyond itself, the way it goes.
    fn overhead(&self) -> u64 {
        match self.way {
            Way::Udp(_) => IP_UDP,
            Way::Bundles(_) => BUNDLE_LTP_IP_UDP,
        }
    }

    /// The bundles to send, for the node (over BP).
    pub fn take_bundle(&mut self) -> Option<(u16, Vec<u8>)> {
        match &mut self.way {
            Way::Bundles(queue) => queue.pop_front(),
            Way::Udp(_) => None,
        }
    }

    /// The UDP socket, when PDUs go over UDP.
    pub fn socket(&self) -> Option<&UdpSocket> {
        match &self.way {
            Way::Udp(s) => Some(s),
            Way::Bundles(_) => None,
        }
    }

    pub fn holds(&self) -> bool {
        self.held.is_some()
    }

    /// When a PDU may next leave (after a full socket buffer: 1 ms on).
    pub fn ready_at(&self, now: Time) -> Time {
        match self.full {
            true => self.pace_at.max(now + MS),
            false => self.pace_at,
        }
    }
}
