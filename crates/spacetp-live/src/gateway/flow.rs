//! One relayed connection: the kernel socket on this side, the SCPS-TP connection across the
//! link, and the bytes between them.

use super::owed_reset::OwedReset;
use super::*;

pub(super) struct Flow {
    /// This gateway's number for the flow (logs), counted from 1.
    pub(super) id: u64,
    pub(super) opened_at: Time,
    /// The last payload byte moved either way (idle reaping).
    pub(super) last_active: Time,
    /// Payload read from the kernel socket and written to it.
    pub(super) bytes_up: u64,
    pub(super) bytes_down: u64,
    /// Why the gateway ended the flow, if it did (logs): "keepalive", "idle", "stop", ...
    pub(super) ended_by: Option<&'static str>,
    /// Once finished: whether every byte went both ways (a close, even if a reset ended
    /// the FIN exchange).
    pub(super) clean_end: bool,
    pub(super) conn: Connection,
    pub(super) sock: Option<TcpStream>,
    pub(super) connecting: bool,
    /// Sent bytes from stream position `sbase` on (position 1 is the first data byte).
    pub(super) sbuf: Vec<u8>,
    pub(super) sbase: u64,
    /// Read from the socket but not yet taken by the connection.
    pub(super) stage: Vec<u8>,
    /// Bytes received from the link, by position, until the socket takes them.
    pub(super) received: Reassembly,
    pub(super) sock_eof: bool,
    pub(super) close_sent: bool,
    pub(super) shut_wr: bool,
    pub(super) finished_at: Option<Time>,
    /// The last segment from the peer, and the keepalive probes sent since.
    pub(super) last_heard: Time,
    pub(super) probes: u32,
    /// The kernel socket reported an error (a reset from the end host): abort at once.
    pub(super) sock_error: bool,
    /// Header compression contexts of the two directions, set up from the SYNs (used once
    /// both ends offered COMP).
    pub(super) comp_tx: Option<CompressionContext>,
    pub(super) comp_rx: Option<CompressionContext>,
    /// After this side aborted: the RST repeats still owed to the peer.
    owed_reset: Option<OwedReset>,
}

impl Flow {
    pub(super) fn new(
        conn: Connection,
        sock: Option<TcpStream>,
        connecting: bool,
        now: Time,
        id: u64,
    ) -> Self {
        Flow {
            id,
            opened_at: now,
            last_active: now,
            bytes_up: 0,
            bytes_down: 0,
            ended_by: None,
            clean_end: false,
            conn,
            sock,
            connecting,
            sbuf: Vec::new(),
            sbase: 1,
            stage: Vec::new(),
            received: Reassembly::new(),
            sock_eof: false,
            close_sent: false,
            shut_wr: false,
            finished_at: None,
            last_heard: now,
            probes: 0,
            sock_error: false,
            comp_tx: None,
            comp_rx: None,
            owed_reset: None,
        }
    }

    /// A segment from the peer: the connection decides what of its payload it takes, and
    /// exactly that is stored.
    pub(super) fn on_segment(&mut self, now: Time, h: &TcpHeader, payload: &[u8]) {
        self.last_heard = now;
        self.probes = 0;
        let opening = self.opening();
        if !payload.is_empty() {
            self.last_active = now;
        }
        if let Some(a) = self.conn.on_segment(now, h, payload.len() as u32) {
            self.received.store(a, payload);
        }
        if opening && !self.opening() {
            // Idle time counts from the handshake's end: a slow opening is for the SYN
            // retries to judge.
            self.last_active = now;
        }
    }

    pub(super) fn peer_fin(&self) -> bool {
        matches!(
            self.conn.state(),
            State::CloseWait | State::LastAck | State::Closing | State::TimeWait
        ) || (self.conn.state() == State::Closed
            && self.conn.close_reason() == Some(CloseReason::Normal))
    }

    pub(super) fn aborted(&self) -> bool {
        self.conn
            .close_reason()
            .is_some_and(|r| r != CloseReason::Normal)
    }

    /// Abort both sides: the end host gets a reset (SO_LINGER 0), the peer gateway an RST,
    /// and nothing read from the socket but not yet sent goes on.
    pub(super) fn abort(&mut self) {
        self.stage.clear();
        self.conn.reset();
        if let Some(s) = self.sock.take() {
            reset_on_close(&s);
        }
    }

    /// A one-line account of an open flow, for the report.
    pub(super) fn describe(&self, now: Time) -> String {
        format!(
            "state {:?}, sock_eof {}, close_sent {}, shut_wr {}, unread {}, unsent {}, snd_una {}, sbase {}, sbuf {}, rto {} ms, backoff {}, retransmitted {}, next timer in {:?} ms, last heard {} ms ago",
            self.conn.state(),
            self.sock_eof,
            self.close_sent,
            self.shut_wr,
            self.conn.readable(),
            self.stage.len(),
            self.conn.snd_una(),
            self.sbase,
            self.sbuf.len(),
            self.conn.rtt().rto() / MS,
            self.conn.rtt().backoff_count(),
            self.conn.stats().retransmitted_segments,
            self.conn.poll_timeout().map(|t| t.saturating_sub(now) / MS),
            now.saturating_sub(self.last_heard) / MS
        )
    }

    /// How long a finished flow stays to answer late segments (a retransmitted FIN whose
    /// ACK was lost): at least `LINGER`, and four retransmission timeouts on slow links.
    pub(super) fn linger(&self) -> Time {
        // A reset flow stays only to repeat its RST to a peer that challenges it (a few
        // round trips); its backed-off RTO (a SYN flood's half-open flows have one) would
        // keep thousands of dead flows for half a minute.
        if self.aborted() {
            return LINGER;
        }
        LINGER.max(4 * self.conn.rtt().rto())
    }

    /// A finished flow's lingering is over: no RST repeat is still owed, and `linger()` has
    /// passed since it finished, since the last segment heard (RFC 9293 3.10.7.4: a
    /// retransmitted FIN restarts the TIME-WAIT timeout) and since the last RST repeat.
    pub(super) fn lingered(&self, now: Time) -> bool {
        let owing = self.owed_reset.is_some_and(|o| o.due().is_some());
        !owing && self.linger_end().is_some_and(|t| now >= t)
    }

    fn linger_end(&self) -> Option<Time> {
        let last_reset = self.owed_reset.map_or(0, |o| o.last);
        let t = self.finished_at?.max(self.last_heard).max(last_reset);
        Some(t + self.linger())
    }

    /// Repeat the RST this side owes the peer, when due.
    pub(super) fn repeat_owed_reset(&mut self, now: Time) {
        if let Some(o) = self.owed_reset.as_mut() {
            o.on_time(&mut self.conn, now);
        }
    }

    /// When the last RST repeat goes if this flow, just aborted at `now`, owes them.
    pub(super) fn owed_resets_end(&self, now: Time) -> Option<Time> {
        OwedReset::after_abort(&self.conn, now).map(|o| o.end())
    }

    /// The kernel side's state: a connect that completed or failed, or an error (a reset from
    /// the end host) reported by the last poll. An error aborts at once, without sending on
    /// what the socket held: an abort is an abort.
    pub(super) fn check_socket(&mut self) {
        let Some(s) = self.sock.as_ref() else { return };
        if self.connecting || self.sock_error {
            self.sock_error = false;
            match s.take_error() {
                Ok(None) if !self.connecting || s.peer_addr().is_ok() => self.connecting = false,
                Ok(None) => {}
                _ => return self.abort(),
            }
        }
        if self.aborted() {
            self.abort();
        }
    }

    /// The kernel socket and what to poll it for (POLLERR comes unasked: a reset from the end
    /// host). None without a socket, or once both directions are shut: poll would report
    /// POLLHUP at once, every time, and the loop would spin while the link side finishes.
    pub(super) fn socket_poll(&self) -> Option<libc::pollfd> {
        let s = self.sock.as_ref()?;
        if self.sock_eof && self.shut_wr {
            return None;
        }
        let mut events = 0;
        if self.connecting || (self.conn.readable() > 0 && self.received.in_order() > 0) {
            events |= libc::POLLOUT;
        }
        if !self.connecting && self.stage.is_empty() && !self.sock_eof {
            events |= libc::POLLIN;
        }
        Some(libc::pollfd {
            fd: s.as_raw_fd(),
            events,
            revents: 0,
        })
    }

    /// Kernel -> link: what the socket has, as far as the connection's send buffer takes it.
    pub(super) fn socket_to_connection(
        &mut self,
        now: Time,
        tmp: &mut [u8],
        rep: &mut GatewayReport,
    ) {
        let Some(s) = self.sock.as_mut().filter(|_| !self.connecting) else {
            return;
        };
        if !self.stage.is_empty() {
            let n = self.conn.send(self.stage.len() as u64) as usize;
            self.sbuf.extend_from_slice(&self.stage[..n]);
            self.stage.drain(..n);
        }
        while self.stage.is_empty() && !self.sock_eof {
            match s.read(tmp) {
                Ok(0) => self.sock_eof = true,
                Ok(n) => {
                    rep.bytes_up += n as u64;
                    self.bytes_up += n as u64;
                    self.last_active = now;
                    let k = self.conn.send(n as u64) as usize;
                    self.sbuf.extend_from_slice(&tmp[..k]);
                    self.stage.extend_from_slice(&tmp[k..n]);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return self.abort(),
            }
        }
        if self.sock_eof && self.stage.is_empty() && !self.close_sent {
            self.conn.close();
            self.close_sent = true;
        }
    }

    /// Link -> kernel: in-order bytes, only those both the connection counts as received
    /// and the reassembly buffer holds. The two agree by construction; if they ever did not,
    /// the flow is reset rather than a gap filled.
    pub(super) fn connection_to_socket(&mut self, now: Time, rep: &mut GatewayReport) {
        let Some(s) = self.sock.as_mut().filter(|_| !self.connecting) else {
            return;
        };
        loop {
            let readable = self.conn.readable();
            debug_assert!(
                readable <= self.received.in_order(),
                "the connection counts {readable} bytes in order, the buffer holds {}",
                self.received.in_order()
            );
            if readable > self.received.in_order() {
                rep.integrity_resets += 1;
                return self.abort();
            }
            let chunk = self.received.peek(readable as usize);
            if chunk.is_empty() {
                break;
            }
            match s.write(chunk) {
                Ok(n) => {
                    self.conn.read(n as u64);
                    self.received.consume(n);
                    rep.bytes_down += n as u64;
                    self.bytes_down += n as u64;
                    self.last_active = now;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(_) => return self.abort(),
            }
        }
        if self.peer_fin() && self.conn.readable() == 0 && !self.shut_wr {
            if let Some(s) = &self.sock {
                s.shutdown(Shutdown::Write).ok();
            }
            self.shut_wr = true;
        }
    }

    /// Keepalive across the space link: after `idle` without a segment from the peer, a
    /// probe every `interval`; after `probes` unanswered ones the peer is gone (its gateway
    /// crashed, or a reset was lost) and the flow is reset on both sides.
    pub(super) fn keepalive(&mut self, now: Time, k: &Keepalive, rep: &mut GatewayReport) {
        let Some(due) = self.keepalive_due(k) else {
            return;
        };
        if now < due {
            return;
        }
        if self.probes >= k.probes {
            rep.reaped += 1;
            self.ended_by = Some("keepalive");
            return self.abort();
        }
        self.probes += 1;
        rep.keepalive_probes += 1;
        self.conn.probe();
    }

    /// With an idle timeout: reset both sides of a flow that moved no payload for that long.
    pub(super) fn reap_if_idle(&mut self, now: Time, idle: Option<Time>, rep: &mut GatewayReport) {
        let Some(due) = self.idle_due(idle) else {
            return;
        };
        if now >= due {
            rep.idle_reaped += 1;
            self.ended_by = Some("idle");
            self.abort();
        }
    }

    fn idle_due(&self, idle: Option<Time>) -> Option<Time> {
        let open = self.finished_at.is_none() && !self.aborted() && !self.opening();
        idle.filter(|_| open).map(|i| self.last_active + i)
    }

    /// Still in the handshake (or never started): not yet idle, not yet waiting on a peer.
    fn opening(&self) -> bool {
        matches!(
            self.conn.state(),
            State::Closed | State::Listen | State::SynSent | State::SynReceived
        )
    }

    /// When the next keepalive probe (or the reaping) is due, for a flow that waits on its
    /// peer: handshake done, not finished.
    pub(super) fn keepalive_due(&self, k: &Keepalive) -> Option<Time> {
        let waiting = self.finished_at.is_none() && !self.opening();
        waiting.then(|| self.last_heard + k.idle + self.probes as Time * k.interval)
    }

    /// The earliest time this flow has work without input: a connection timer, keepalive,
    /// idle reaping, an owed RST repeat, or the end of its linger.
    pub(super) fn next_deadline(&self, k: &Keepalive, idle: Option<Time>) -> Option<Time> {
        [
            self.conn.poll_timeout(),
            self.keepalive_due(k),
            self.linger_end(),
            self.idle_due(idle),
            self.owed_reset.and_then(|o| o.due()),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Acknowledged bytes are no longer needed.
    pub(super) fn release_acknowledged(&mut self) {
        let una = self.conn.snd_una();
        if una > self.sbase {
            let k = ((una - self.sbase) as usize).min(self.sbuf.len());
            self.sbuf.drain(..k);
            self.sbase += k as u64;
        }
    }

    /// Note the end of the flow: both directions closed and delivered, or an abort.
    pub(super) fn finish(&mut self, now: Time, rep: &mut GatewayReport) {
        let done = (self.aborted() && self.conn.state() == State::Closed)
            || (self.conn.is_finished() && self.conn.readable() == 0 && self.shut_wr);
        if !done || self.finished_at.is_some() {
            return;
        }
        self.finished_at = Some(now);
        self.clean_end = !self.aborted() || self.delivered_both_ways();
        if !self.clean_end {
            rep.reset += 1;
            self.owed_reset = OwedReset::after_abort(&self.conn, now);
            if let Some(s) = self.sock.take() {
                reset_on_close(&s);
            }
        } else {
            rep.closed += 1;
            if let Some(s) = self.sock.take() {
                close_gracefully(s);
            }
        }
        self.sbuf = Vec::new();
        self.stage = Vec::new();
        rep.add_connection_stats(self.conn.stats());
    }

    /// Every byte of both directions was delivered: the peer's FIN reached the socket, the
    /// socket's EOF became our FIN and the peer acknowledged all our data. A reset after
    /// that only cut the FIN exchange short (the peer had forgotten the connection, its
    /// TIME-WAIT over before our retransmitted FIN arrived): a close, not a loss.
    fn delivered_both_ways(&self) -> bool {
        self.shut_wr
            && self.close_sent
            && self.stage.is_empty()
            && self.conn.snd_una() >= self.sbase + self.sbuf.len() as u64
    }

    /// The log event of this flow's end.
    pub(super) fn close_event(&self, now: Time) -> serde_json::Value {
        let how = if self.clean_end { "closed" } else { "reset" };
        let cause = self.ended_by.or(match self.conn.close_reason() {
            Some(CloseReason::Normal) | None => None,
            Some(r) => Some(r.as_str()),
        });
        serde_json::json!({
            "event": "close",
            "conn": self.id,
            "how": how,
            "cause": cause,
            "bytes_up": self.bytes_up,
            "bytes_down": self.bytes_down,
            "seconds": (now.saturating_sub(self.opened_at)) as f64 / 1e9,
            "retransmitted": self.conn.stats().retransmitted_segments,
        })
    }
}

/// The compression context of the direction that sent `syn` from `src` to `dst`, if the SYN
/// offers COMP. The checksum pseudo-header carries protocol 6, as with the RI gateway.
pub(super) fn comp_context(
    syn: &TcpHeader,
    src: [u8; 4],
    dst: [u8; 4],
) -> Option<CompressionContext> {
    let mut c = CompressionContext::from_syn(syn, src, dst).ok()?;
    c.pseudo_protocol = PROTO;
    Some(c)
}
