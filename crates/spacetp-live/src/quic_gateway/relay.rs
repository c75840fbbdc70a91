//! One relayed connection: a kernel TCP socket and a bidirectional stream of a tunnel
//! connection, copied both ways as each side takes the bytes (a slow reader closes the
//! other side's window: the socket's, or the stream's flow control), half-closes carried
//! (a FIN is the stream's end, the stream's end a shutdown), a reset either way a reset.

use super::preamble::{self, Preamble};
use super::report::QuicGatewayReport;
use crate::gateway::reset_on_close;
use bytes::{Buf, Bytes};
use quinn_proto::{
    Connection, ConnectionHandle, ReadError, ReadableError, StreamId, VarInt, WriteError,
};
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};

/// Stream error codes (RESET_STREAM, STOP_SENDING) between the gateways.
pub mod code {
    /// An end host reset its connection.
    pub const HOST_RESET: u32 = 1;
    /// No rule for the stream's destination, or a preamble the peer could not read.
    pub const REFUSED: u32 = 2;
    /// The destination could not be reached.
    pub const UNREACHABLE: u32 = 3;
    /// The gateway is stopping.
    pub const STOPPING: u32 = 4;
}

/// Bytes read from a kernel socket at once, and read from a stream at once.
pub const CHUNK: usize = 65_536;

/// How a relay ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// FINs both ways.
    Closed,
    /// Reset by either end host or the other gateway.
    Reset,
}

pub struct Relay {
    pub conn: ConnectionHandle,
    pub stream: Option<StreamId>,
    pub sock: Option<TcpStream>,
    /// A connect to the destination is under way (the side that read the preamble).
    pub connecting: bool,
    /// The side that read the preamble and has not yet decided where to connect: the
    /// preamble's bytes so far.
    preamble_in: Option<Vec<u8>>,
    /// Bytes read from the socket that the stream has not taken yet (from `up_off`).
    up: Vec<u8>,
    up_off: usize,
    /// Bytes read from the stream that the socket has not taken yet.
    down: Bytes,
    sock_eof: bool,
    finished: bool,
    peer_fin: bool,
    shut_wr: bool,
    pub ended: Option<Ended>,
    /// The socket reported an error (POLLERR: the end host reset it).
    pub sock_error: bool,
}

/// What servicing a relay found that the gateway must act on.
pub enum Need {
    Nothing,
    /// The preamble is in: the gateway connects to its destination (or refuses).
    Connect(Preamble),
    /// The preamble is unreadable.
    BadPreamble,
}

impl Relay {
    /// The side that accepted a connection from an application: it will open the stream
    /// and write `preamble` first.
    pub fn opener(conn: ConnectionHandle, sock: TcpStream, p: Preamble) -> Relay {
        let mut r = Relay::new(conn, None, Some(sock));
        r.up.extend_from_slice(&p.encode());
        r
    }

    /// The side the peer opened stream `id` to: it reads the preamble, then connects.
    pub fn acceptor(conn: ConnectionHandle, id: StreamId) -> Relay {
        let mut r = Relay::new(conn, Some(id), None);
        r.preamble_in = Some(Vec::with_capacity(preamble::LEN));
        r
    }

    fn new(conn: ConnectionHandle, stream: Option<StreamId>, sock: Option<TcpStream>) -> Relay {
        Relay {
            conn,
            stream,
            sock,
            connecting: false,
            preamble_in: None,
            up: Vec::new(),
            up_off: 0,
            down: Bytes::new(),
            sock_eof: false,
            finished: false,
            peer_fin: false,
            shut_wr: false,
            ended: None,
            sock_error: false,
        }
    }

    /// The kernel socket of the destination (connect under way).
    pub fn connected_to(&mut self, sock: TcpStream) {
        self.sock = Some(sock);
        self.connecting = true;
    }

    /// Poll interest in the socket: (read, write).
    pub fn interest(&self) -> (bool, bool) {
        let read = self.stream.is_some()
            && !self.connecting
            && self.up_off == self.up.len()
            && !self.sock_eof;
        (read, self.connecting || !self.down.is_empty())
    }

    /// Copy what can be copied each way; close or reset as either side did.
    pub fn service(
        &mut self,
        conn: &mut Connection,
        chunk: &mut [u8],
        rep: &mut QuicGatewayReport,
    ) -> Need {
        if self.ended.is_some() {
            return Need::Nothing;
        }
        let Some(id) = self.stream else {
            return Need::Nothing;
        };
        if self.connecting {
            match self.sock.as_ref().map(|s| s.take_error()) {
                Some(Ok(None)) => {
                    // Connected once the peer address is known.
                    if self.sock.as_ref().is_some_and(|s| s.peer_addr().is_ok()) {
                        self.connecting = false;
                    } else {
                        return Need::Nothing;
                    }
                }
                _ => {
                    self.reset(conn, code::UNREACHABLE);
                    rep.refused += 1;
                    return Need::Nothing;
                }
            }
        }
        if self.sock_error
            && self
                .sock
                .as_ref()
                .is_some_and(|s| matches!(s.take_error(), Ok(Some(_))))
        {
            self.reset(conn, code::HOST_RESET);
            return Need::Nothing;
        }
        self.sock_error = false;
        let need = self.stream_to_socket(conn, id, rep);
        if self.ended.is_none() && !matches!(need, Need::Connect(_) | Need::BadPreamble) {
            self.socket_to_stream(conn, id, chunk, rep);
        }
        if self.ended.is_none() && self.finished && self.shut_wr {
            self.ended = Some(Ended::Closed);
        }
        need
    }

    fn socket_to_stream(
        &mut self,
        conn: &mut Connection,
        id: StreamId,
        chunk: &mut [u8],
        rep: &mut QuicGatewayReport,
    ) {
        if self.sock.is_none() || self.connecting {
            return;
        }
        loop {
            if self.up_off < self.up.len() {
                match conn.send_stream(id).write(&self.up[self.up_off..]) {
                    Ok(n) if n > 0 => self.up_off += n,
                    Ok(_) | Err(WriteError::Blocked) => return,
                    Err(WriteError::Stopped(_)) | Err(WriteError::ClosedStream) => {
                        self.reset(conn, code::HOST_RESET);
                        return;
                    }
                }
                continue;
            }
            self.up.clear();
            self.up_off = 0;
            if self.sock_eof {
                break;
            }
            let sock = self.sock.as_mut().expect("checked above");
            match sock.read(chunk) {
                Ok(0) => self.sock_eof = true,
                Ok(n) => {
                    self.up.extend_from_slice(&chunk[..n]);
                    rep.bytes_up += n as u64;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => {
                    self.reset(conn, code::HOST_RESET);
                    return;
                }
            }
        }
        if self.sock_eof && !self.finished && conn.send_stream(id).finish().is_ok() {
            self.finished = true;
        }
    }

    fn stream_to_socket(
        &mut self,
        conn: &mut Connection,
        id: StreamId,
        rep: &mut QuicGatewayReport,
    ) -> Need {
        loop {
            if self.down.is_empty() {
                if self.peer_fin {
                    break;
                }
                match read_chunk(conn, id) {
                    Ok(Some(b)) => self.down = b,
                    Ok(None) => self.peer_fin = true,
                    Err(ReadError::Blocked) => break,
                    Err(ReadError::Reset(_)) => {
                        self.reset(conn, code::HOST_RESET);
                        return Need::Nothing;
                    }
                }
                if self.down.is_empty() {
                    continue;
                }
            }
            if let Some(p) = self.preamble_in.as_mut() {
                let take = (preamble::LEN - p.len()).min(self.down.len());
                p.extend_from_slice(&self.down[..take]);
                self.down.advance(take);
                if p.len() == preamble::LEN {
                    let b: [u8; preamble::LEN] = p[..].try_into().expect("LEN bytes");
                    self.preamble_in = None;
                    return match Preamble::decode(&b) {
                        Ok(p) => Need::Connect(p),
                        Err(_) => Need::BadPreamble,
                    };
                }
                continue;
            }
            let Some(sock) = self.sock.as_mut().filter(|_| !self.connecting) else {
                break;
            };
            match sock.write(&self.down) {
                Ok(n) => {
                    self.down.advance(n);
                    rep.bytes_down += n as u64;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => {
                    self.reset(conn, code::HOST_RESET);
                    return Need::Nothing;
                }
            }
        }
        if self.peer_fin && self.down.is_empty() && !self.shut_wr && self.preamble_in.is_none() {
            if let Some(s) = self.sock.as_ref().filter(|_| !self.connecting) {
                s.shutdown(Shutdown::Write).ok();
                self.shut_wr = true;
            }
        }
        Need::Nothing
    }

    /// Reset both sides: the stream (both directions) with `why`, the socket with an RST.
    pub fn reset(&mut self, conn: &mut Connection, why: u32) {
        if let Some(id) = self.stream {
            let c = VarInt::from_u32(why);
            conn.send_stream(id).reset(c).ok();
            conn.recv_stream(id).stop(c).ok();
        }
        self.drop_socket_with_reset();
    }

    /// The socket is closed with an RST (the tunnel connection is gone).
    pub fn drop_socket_with_reset(&mut self) {
        if let Some(s) = self.sock.take() {
            reset_on_close(&s);
        }
        self.ended = Some(Ended::Reset);
    }

    /// One line for the report: where the relay stood.
    pub fn describe(&self) -> String {
        format!(
            "stream {:?}: connecting {}, {} B up waiting, {} B down waiting, socket EOF {}, stream \
             finished {}, peer finished {}, socket shut {}",
            self.stream,
            self.connecting,
            self.up.len() - self.up_off,
            self.down.len(),
            self.sock_eof,
            self.finished,
            self.peer_fin,
            self.shut_wr
        )
    }
}

/// The next chunk of stream `id` in order (None: its end), flow-control credit returned.
fn read_chunk(conn: &mut Connection, id: StreamId) -> Result<Option<Bytes>, ReadError> {
    let mut rs = conn.recv_stream(id);
    let mut chunks = match rs.read(true) {
        Ok(c) => c,
        // Read to its end already, or reset and forgotten: nothing more comes.
        Err(ReadableError::ClosedStream) => return Ok(None),
        Err(ReadableError::IllegalOrderedRead) => unreachable!("always read in order"),
    };
    let r = chunks.next(CHUNK).map(|c| c.map(|c| c.bytes));
    let _ = chunks.finalize();
    r
}
