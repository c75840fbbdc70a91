//! The UDP convergence layer (as ION's udpcli/udpclo, RFC 9171 section 7's simplest case):
//! each bundle is one UDP datagram, sent once, never acknowledged. For tests and for links
//! where loss is not a concern; a bundle larger than a datagram goes as fragments
//! (RFC 9171 5.8) that the destination's agent joins.

use spacetp_dtn::bundle::Bundle;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;

use crate::error::LiveError;

/// Port ION's udpcli listens on by convention (the IANA port of the bundle protocol).
pub const DEFAULT_PORT: u16 = 4556;

/// The largest bundle sent in one datagram: ION's UDPCLA_BUFSZ less IPv6 and UDP headers.
pub const MAX_DATAGRAM: usize = 65_000;

/// What the UDP convergence layer counted.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct UdpClCounts {
    pub bundles_out: u64,
    pub bundles_in: u64,
    pub bytes_out: u64,
    pub bytes_in: u64,
    /// Bundles cut into fragments to fit a datagram.
    pub fragmented: u64,
    pub send_errors: u64,
}

pub struct UdpCl {
    pub socket: UdpSocket,
    peers: HashMap<u64, SocketAddr>,
    by_ip: HashMap<IpAddr, u64>,
    pub counts: UdpClCounts,
}

impl UdpCl {
    pub fn new(bind: SocketAddr, peers: &[(u64, SocketAddr)]) -> Result<UdpCl, LiveError> {
        let socket = UdpSocket::bind(bind).map_err(|e| {
            LiveError::os(format!("binding the UDP convergence layer to {bind}"), e)
        })?;
        socket
            .set_nonblocking(true)
            .map_err(|e| LiveError::os("making the UDP convergence layer non-blocking", e))?;
        crate::sys::set_socket_buffers(socket.as_raw_fd(), 4 << 20);
        Ok(UdpCl {
            socket,
            peers: peers.iter().copied().collect(),
            by_ip: peers.iter().map(|&(n, a)| (a.ip(), n)).collect(),
            counts: UdpClCounts::default(),
        })
    }

    pub fn reaches(&self, node: u64) -> bool {
        self.peers.contains_key(&node)
    }

    /// Sends the bundle in `bytes` to `node`, in fragments if it does not fit a datagram.
    /// False if it could not be sent (the agent routes it again).
    pub fn send(&mut self, node: u64, bytes: &[u8]) -> bool {
        let Some(&addr) = self.peers.get(&node) else {
            return false;
        };
        let datagrams = if bytes.len() <= MAX_DATAGRAM {
            vec![bytes.to_vec()]
        } else {
            match Bundle::decode(bytes) {
                Ok(b) => {
                    self.counts.fragmented += 1;
                    fit(b)
                }
                Err(_) => return false,
            }
        };
        for d in datagrams {
            match self.socket.send_to(&d, addr) {
                Ok(n) => {
                    self.counts.bundles_out += 1;
                    self.counts.bytes_out += n as u64;
                }
                Err(_) => {
                    self.counts.send_errors += 1;
                    return false;
                }
            }
        }
        true
    }

    /// The next datagram, and the neighbor it came from (by its address; 0 if unknown: ION's
    /// udpclo sends from an ephemeral port, so the port is not compared).
    pub fn receive(&mut self, buf: &mut [u8]) -> Option<(u64, usize)> {
        let (n, from) = self.socket.recv_from(buf).ok()?;
        self.counts.bundles_in += 1;
        self.counts.bytes_in += n as u64;
        Some((self.by_ip.get(&from.ip()).copied().unwrap_or(0), n))
    }
}

/// The bundle as fragments whose encodings each fit a datagram.
fn fit(mut b: Bundle) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let bytes = b.to_bytes();
        let payload = b.payload().len();
        if bytes.len() <= MAX_DATAGRAM || payload < 2 {
            out.push(bytes);
            return out;
        }
        // The blocks around the payload, kept in every fragment.
        let overhead = bytes.len() - payload + 16;
        let at = (MAX_DATAGRAM - overhead).min(payload - 1) as u64;
        let (mut first, rest) = b.fragment(at);
        out.push(first.to_bytes());
        b = rest;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spacetp_dtn::bundle::Eid;

    #[test]
    fn a_large_bundle_goes_as_fragments_that_each_fit_a_datagram() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i * 7) as u8).collect();
        let b = Bundle::new(
            Eid {
                node: 1,
                service: 1,
            },
            Eid {
                node: 2,
                service: 1,
            },
            5,
            1,
            60_000,
            data.clone(),
        );
        let parts = fit(b);
        assert_eq!(parts.len(), 4);
        let mut joined = vec![0u8; data.len()];
        for p in &parts {
            assert!(p.len() <= MAX_DATAGRAM, "{}", p.len());
            let f = Bundle::decode(p).unwrap();
            let (off, total) = f.header.fragment.unwrap();
            assert_eq!(total, 200_000);
            joined[off as usize..off as usize + f.payload().len()].copy_from_slice(f.payload());
        }
        assert_eq!(joined, data);
    }
}
