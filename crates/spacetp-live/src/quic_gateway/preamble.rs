//! The first bytes of every stream: where the relayed connection goes. The gateway that
//! accepted the TCP connection opens the stream and writes them before any payload; the
//! other reads them, then connects.
//!
//! ```text
//! 0      2       3      4         6              10             14           16
//! | "SQ" | ver 1 | kind | port    | dst IPv4     | src IPv4     | src port   |
//! ```
//! `kind` 1: an explicit rule, `port` names the peer's `forward` rule (the addresses are
//! zero); kind 2: an intercepted connection, `dst`:`port` is its original destination and
//! `src`:`src port` the client.

use std::net::{Ipv4Addr, SocketAddrV4};

pub const LEN: usize = 16;
const MAGIC: [u8; 2] = *b"SQ";
const VERSION: u8 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preamble {
    /// To the peer's `forward` rule for this port.
    Port(u16),
    /// To the original destination of an intercepted connection from `client`.
    Original {
        dst: SocketAddrV4,
        client: SocketAddrV4,
    },
}

impl Preamble {
    pub fn encode(&self) -> [u8; LEN] {
        let mut b = [0u8; LEN];
        b[..2].copy_from_slice(&MAGIC);
        b[2] = VERSION;
        match self {
            Preamble::Port(p) => {
                b[3] = 1;
                b[4..6].copy_from_slice(&p.to_be_bytes());
            }
            Preamble::Original { dst, client } => {
                b[3] = 2;
                b[4..6].copy_from_slice(&dst.port().to_be_bytes());
                b[6..10].copy_from_slice(&dst.ip().octets());
                b[10..14].copy_from_slice(&client.ip().octets());
                b[14..16].copy_from_slice(&client.port().to_be_bytes());
            }
        }
        b
    }

    /// The preamble in `b` (exactly `LEN` bytes), or what is wrong with it.
    pub fn decode(b: &[u8; LEN]) -> Result<Preamble, String> {
        if b[..2] != MAGIC {
            return Err(format!("not a spacetp stream (starts {:02x?})", &b[..2]));
        }
        if b[2] != VERSION {
            return Err(format!("preamble version {} (this gateway speaks 1)", b[2]));
        }
        let port = u16::from_be_bytes([b[4], b[5]]);
        let ip = |i: usize| Ipv4Addr::new(b[i], b[i + 1], b[i + 2], b[i + 3]);
        match b[3] {
            1 => Ok(Preamble::Port(port)),
            2 => Ok(Preamble::Original {
                dst: SocketAddrV4::new(ip(6), port),
                client: SocketAddrV4::new(ip(10), u16::from_be_bytes([b[14], b[15]])),
            }),
            k => Err(format!(
                "preamble kind {k} (1: a port rule, 2: an original destination)"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_kinds_round_trip_and_foreign_bytes_are_named() {
        for p in [
            Preamble::Port(7000),
            Preamble::Original {
                dst: "10.78.2.2:5001".parse().unwrap(),
                client: "10.78.1.1:40000".parse().unwrap(),
            },
        ] {
            assert_eq!(Preamble::decode(&p.encode()), Ok(p));
        }
        let mut b = Preamble::Port(1).encode();
        b[0] = b'G';
        assert!(Preamble::decode(&b)
            .unwrap_err()
            .contains("not a spacetp stream"));
        let mut b = Preamble::Port(1).encode();
        b[2] = 9;
        assert!(Preamble::decode(&b).unwrap_err().contains("version 9"));
        let mut b = Preamble::Port(1).encode();
        b[3] = 7;
        assert!(Preamble::decode(&b).unwrap_err().contains("kind 7"));
    }
}
