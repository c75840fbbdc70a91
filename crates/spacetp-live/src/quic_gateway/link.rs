//! The tunnel's UDP datagrams on the space link: a kernel UDP socket bound to the tunnel
//! address (a real ground station: the kernel routes them out of the space interface), or
//! a packet fd carrying whole IPv4 packets (the emulator's socket pair in the testbed and
//! the self-test), whose IPv4 and UDP headers are written and checked here.

use spacetp_wire::{decode_ipv4_udp, encode_ipv4_udp, Ipv4Params, Payload};
use std::io::{self, ErrorKind};
use std::net::{SocketAddr, SocketAddrV4, UdpSocket};
use std::ops::Range;
use std::os::fd::{AsRawFd, RawFd};

pub enum Link {
    Socket(UdpSocket),
    Packets {
        fd: RawFd,
        local: SocketAddrV4,
        ip_id: u16,
        frame: Vec<u8>,
    },
}

/// What one read from the link gave.
pub enum Received {
    /// A datagram for the tunnel from `from`; its payload is `buf[range]`.
    Datagram {
        from: SocketAddrV4,
        range: Range<usize>,
    },
    /// A packet that is not a UDP datagram to the tunnel's port (or fails its checksum).
    Foreign,
    /// Nothing more to read now.
    Empty,
}

impl Link {
    /// A non-blocking UDP socket bound to `local`.
    pub fn socket(local: SocketAddrV4) -> io::Result<Link> {
        let s = UdpSocket::bind(local)?;
        s.set_nonblocking(true)?;
        Ok(Link::Socket(s))
    }

    /// Packet fd `fd` (owned by the caller), made non-blocking; datagrams from `local`.
    pub fn packets(fd: RawFd, local: SocketAddrV4) -> io::Result<Link> {
        if local.ip().is_unspecified() {
            return Err(io::Error::new(
                ErrorKind::InvalidInput,
                "a packet fd as the link needs this gateway's address (local): the source of \
                 the tunnel's packets",
            ));
        }
        crate::sys::set_nonblocking(fd).map_err(|e| io::Error::other(e.to_string()))?;
        Ok(Link::Packets {
            fd,
            local,
            ip_id: 0,
            frame: Vec::with_capacity(2048),
        })
    }

    pub fn fd(&self) -> RawFd {
        match self {
            Link::Socket(s) => s.as_raw_fd(),
            Link::Packets { fd, .. } => *fd,
        }
    }

    /// Send `data` to `to`. A full buffer drops the datagram (as a full queue would): QUIC
    /// repairs the loss.
    pub fn send(&mut self, to: SocketAddrV4, data: &[u8]) -> io::Result<()> {
        let r = match self {
            Link::Socket(s) => s.send_to(data, to).map(|_| ()),
            Link::Packets {
                fd,
                local,
                ip_id,
                frame,
            } => {
                frame.clear();
                *ip_id = ip_id.wrapping_add(1);
                let ip = Ipv4Params {
                    src: local.ip().octets(),
                    dst: to.ip().octets(),
                    protocol: 0,
                    id: *ip_id,
                };
                encode_ipv4_udp(
                    &ip,
                    local.port(),
                    to.port(),
                    Payload::Bytes(data),
                    true,
                    frame,
                )
                .map_err(|e| io::Error::new(ErrorKind::InvalidInput, e.to_string()))?;
                // SAFETY: writes our own buffer to an fd the caller keeps open.
                let n =
                    unsafe { libc::write(*fd, frame.as_ptr() as *const libc::c_void, frame.len()) };
                if n < 0 {
                    Err(io::Error::last_os_error())
                } else {
                    Ok(())
                }
            }
        };
        match r {
            Err(e)
                if e.kind() == ErrorKind::WouldBlock || e.raw_os_error() == Some(libc::ENOBUFS) =>
            {
                Ok(())
            }
            r => r,
        }
    }

    /// Read one packet into `buf`.
    pub fn recv(&mut self, buf: &mut [u8]) -> io::Result<Received> {
        match self {
            Link::Socket(s) => match s.recv_from(buf) {
                Ok((n, SocketAddr::V4(from))) => Ok(Received::Datagram { from, range: 0..n }),
                Ok((_, SocketAddr::V6(_))) => Ok(Received::Foreign),
                Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(Received::Empty),
                // An ICMP error for an earlier datagram (the peer was not there yet).
                Err(e) if e.kind() == ErrorKind::ConnectionRefused => Ok(Received::Foreign),
                Err(e) if e.kind() == ErrorKind::Interrupted => Ok(Received::Foreign),
                Err(e) => Err(e),
            },
            Link::Packets { fd, local, .. } => {
                // SAFETY: reads into our own buffer.
                let n =
                    unsafe { libc::read(*fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
                if n < 0 {
                    let e = io::Error::last_os_error();
                    return match e.kind() {
                        ErrorKind::WouldBlock | ErrorKind::Interrupted => Ok(Received::Empty),
                        _ => Err(e),
                    };
                }
                if n == 0 {
                    return Err(io::Error::new(
                        ErrorKind::UnexpectedEof,
                        "the link fd closed",
                    ));
                }
                let pkt = &buf[..n as usize];
                match decode_ipv4_udp(pkt) {
                    Ok(d) if d.dst_port == local.port() && d.checksum_ok(pkt) => {
                        let from = SocketAddrV4::new(d.ip.src.into(), d.src_port);
                        let start = d.payload_offset;
                        Ok(Received::Datagram {
                            from,
                            range: start..start + d.payload_len,
                        })
                    }
                    _ => Ok(Received::Foreign),
                }
            }
        }
    }
}
