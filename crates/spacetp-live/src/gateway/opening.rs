//! New flows: connections accepted from local applications, their addresses, initial
//! sequence numbers and connection ids.

use super::*;

impl Gateway {
    /// RFC 6528: a 4-microsecond clock plus a keyed hash of the addresses and ports, so
    /// that an off-path attacker cannot guess the sequence numbers of a new connection.
    pub(super) fn isn(&self, now: Time, key: Key) -> u32 {
        use std::hash::BuildHasher;
        let f = self.isn_secret.hash_one(key) as u32;
        ((now / (4 * US)) as u32).wrapping_add(f)
    }

    pub(super) fn accept(&mut self, now: Time) {
        for i in 0..self.listeners.len() {
            loop {
                let (s, client) = match self.listeners[i].0.accept() {
                    Ok(x) => x,
                    Err(e) if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) => {
                        // The connection waits in the kernel's backlog; accepting resumes
                        // once descriptors are free (or after the pause).
                        self.rep.accept_fd_limit += 1;
                        self.accept_paused_until = now + ACCEPT_PAUSE;
                        return;
                    }
                    Err(_) => break,
                };
                reset_on_close(&s); // inherited from the listener; said again to be sure
                s.set_nonblocking(true).ok();
                s.set_nodelay(true).ok();
                let key = match self.listeners[i].1 {
                    Some(port) => self.explicit_key(port),
                    // Intercepted: the client's address and port to the original destination.
                    None => match s.local_addr() {
                        Ok(d) => (client, d),
                        Err(_) => {
                            reset_on_close(&s);
                            self.rep.refused += 1;
                            continue;
                        }
                    },
                };
                if self.flows.contains_key(&key) {
                    // The same addresses and ports as a flow still lingering: refuse.
                    reset_on_close(&s);
                    self.rep.refused += 1;
                    continue;
                }
                let iss = self.isn(now, key);
                let conn = self.connection(key, iss, Connection::connect::<Arc<TcpConfig>>);
                let id = self.open_event(key, "accepted");
                self.flows
                    .insert(key, Flow::new(conn, Some(s), false, now, id));
                self.rep.accepted += 1;
                if self.listeners[i].1.is_none() {
                    self.rep.intercepted += 1;
                }
            }
        }
    }

    /// The SCPS-TP connection of a new flow with addresses `key` (`open` is
    /// `Connection::connect` or `Connection::listen`). Payload stays in the flow
    /// (manual reads). Its connection id is its local port's low byte, or the next one no
    /// other flow between the same two addresses uses, so that the peer can tell their
    /// compressed headers apart.
    pub(super) fn connection(
        &self,
        key: Key,
        iss: u32,
        open: fn(Arc<TcpConfig>, u32, u16, u16, u32) -> Connection,
    ) -> Connection {
        // `mss` leaves room for an IPv4 header; an IPv6 one is 20 bytes longer.
        let mss = self.cfg.mss - if key.0.is_ipv6() { IPV6_EXTRA } else { 0 };
        let mut conn = open(
            Arc::new(self.cfg.tcp.clone()),
            mss,
            key.0.port(),
            key.1.port(),
            iss,
        );
        conn.set_manual_read();
        let used: std::collections::HashSet<u8> = self
            .flows
            .iter()
            .filter(|(k, _)| k.0.ip() == key.0.ip() && k.1.ip() == key.1.ip())
            .map(|(_, f)| f.conn.connection_id())
            .collect();
        let first = key.0.port() as u8;
        let id = (0..=255u8)
            .map(|i| first.wrapping_add(i))
            .find(|id| !used.contains(id))
            .unwrap_or(first);
        conn.set_connection_id(id);
        conn
    }

    /// Addresses of a new flow of an explicit listener: a free local port (from
    /// `EPHEMERAL_PORTS`) to the peer gateway's SCPS-TP `port`.
    pub(super) fn explicit_key(&mut self, port: u16) -> Key {
        let peer = SocketAddr::new(self.cfg.peer_ip, port);
        let next = |p: u16| {
            if p == u16::MAX {
                EPHEMERAL_PORTS
            } else {
                p + 1
            }
        };
        let mut lp = self.next_port;
        while self
            .flows
            .contains_key(&(SocketAddr::new(self.cfg.local_ip, lp), peer))
        {
            lp = next(lp);
        }
        self.next_port = next(lp);
        (SocketAddr::new(self.cfg.local_ip, lp), peer)
    }
}
