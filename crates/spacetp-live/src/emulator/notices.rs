//! Link-state notices: at each outage's start and end, `link down` / `link up` to every
//! notify fd, and as UDP datagrams inside the link when asked.

use super::*;

/// The next link-state notice waiting on datagram fd `fd` (non-blocking): Some(true) for
/// `link up`, Some(false) for `link down`, None once nothing more is waiting. Datagrams that
/// are neither are skipped. What both gateways read.
pub fn next_link_notice(fd: RawFd) -> Option<bool> {
    let mut b = [0u8; 64];
    loop {
        // SAFETY: reads into our own buffer.
        let n = unsafe { libc::read(fd, b.as_mut_ptr() as *mut libc::c_void, b.len()) };
        if n <= 0 {
            return None;
        }
        match &b[..n as usize] {
            m if m == LINK_DOWN => return Some(false),
            m if m == LINK_UP => return Some(true),
            _ => continue,
        }
    }
}

/// The link-state notices written to [`Options::notify`] fds (one datagram each).
pub const LINK_DOWN: &[u8] = b"link down";
pub const LINK_UP: &[u8] = b"link up";

/// An IPv4/UDP packet from `src` to `dst`, both ports `port`, carrying `data` (UDP checksum
/// 0: none, which IPv4 allows).
fn udp_packet(src: [u8; 4], dst: [u8; 4], port: u16, data: &[u8]) -> Vec<u8> {
    let mut udp = Vec::with_capacity(8);
    udp.extend_from_slice(&port.to_be_bytes());
    udp.extend_from_slice(&port.to_be_bytes());
    udp.extend_from_slice(&(8 + data.len() as u16).to_be_bytes());
    udp.extend_from_slice(&[0, 0]);
    let ip = spacetp_wire::Ipv4Params {
        src,
        dst,
        protocol: spacetp_wire::PROTO_UDP,
        id: 0,
    };
    let mut out = Vec::new();
    // Cannot fail: the packet is far below the IPv4 size limit.
    let _ =
        spacetp_wire::encode_ipv4_packet(&ip, &udp, spacetp_wire::Payload::Bytes(data), &mut out);
    out
}

impl Emulator {
    /// Write the link-state notices that are due (to every notify fd; a full or closed
    /// socket loses the notice, as a lost datagram would).
    pub(super) fn announce(&mut self, now: Time) {
        while let Some(&(t, up)) = self.transitions.get(self.next_transition) {
            if t > now {
                return;
            }
            self.next_transition += 1;
            let msg = if up { LINK_UP } else { LINK_DOWN };
            let mut out: Vec<(RawFd, Vec<u8>)> =
                self.notify.iter().map(|&fd| (fd, msg.to_vec())).collect();
            if let Some((port, a, b)) = self.notify_udp {
                out.push((self.fds[0], udp_packet(b, a, port, msg)));
                out.push((self.fds[1], udp_packet(a, b, port, msg)));
            }
            for (fd, bytes) in out {
                // SAFETY: writes our own buffer to an fd the caller owns.
                let n =
                    unsafe { libc::write(fd, bytes.as_ptr() as *const libc::c_void, bytes.len()) };
                if n == bytes.len() as isize {
                    self.notices_sent += 1;
                }
            }
        }
    }
}
