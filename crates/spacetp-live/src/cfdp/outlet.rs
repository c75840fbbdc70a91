//! The entity's way out: its UDP socket, paced at the settings' `rate` (CFDP has no
//! congestion control; ION meters its output to the contact's rate), holding the one PDU
//! that waits for the pacer or for room in the socket's buffer.

use spacetp_proto::{Time, MS, SEC};
use std::net::{SocketAddr, UdpSocket};

/// IPv4 and UDP headers: what a datagram costs on the link beyond its PDU.
const IP_UDP: u64 = 28;
/// How far behind its schedule the pacer may catch up at once.
const SLACK: Time = MS;

pub struct Outlet {
    pub socket: UdpSocket,
    /// Bits per second, if paced.
    rate: Option<f64>,
    /// When the next PDU may leave.
    pace_at: Time,
    held: Option<(Vec<u8>, SocketAddr)>,
    /// The socket's buffer was full when the held PDU was tried.
    full: bool,
    pub datagrams: u64,
    pub bytes: u64,
}

impl Outlet {
    pub fn new(socket: UdpSocket, rate: Option<f64>) -> Outlet {
        Outlet {
            socket,
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
    pub fn send(&mut self, now: Time, pdu: Vec<u8>, to: SocketAddr) -> bool {
        if now < self.pace_at {
            self.held = Some((pdu, to));
            return false;
        }
        match self.socket.send_to(&pdu, to) {
            Ok(_) => {
                self.datagrams += 1;
                self.bytes += pdu.len() as u64;
                if let Some(rate) = self.rate {
                    // A wake-up late by up to SLACK is made up for by the next PDUs, so the
                    // average rate holds with a coarse sleep.
                    let bits = (pdu.len() as u64 + IP_UDP) * 8;
                    let from = self.pace_at.max(now.saturating_sub(SLACK));
                    self.pace_at = from + (bits as f64 / rate * SEC as f64) as Time;
                }
                self.full = false;
                true
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                self.held = Some((pdu, to));
                self.full = true;
                false
            }
            // Unreachable peer (ICMP), no route: the PDU is lost, as on a link; CFDP's
            // timers recover it.
            Err(_) => true,
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
