//! Packets from the space link: decoded, checked, and handed to their flow; a SYN the
//! gateway admits opens one, anything else for no flow is answered with a reset.

use super::*;

impl Gateway {
    pub(super) fn read_link(&mut self, now: Time) -> Result<(), LiveError> {
        // The buffer is taken out of `self` while its packets are handled (no copy each).
        let mut buf = std::mem::take(&mut self.buf);
        let r = self.read_packets(now, &mut buf);
        self.buf = buf;
        r
    }

    pub(super) fn read_packets(&mut self, now: Time, buf: &mut [u8]) -> Result<(), LiveError> {
        for _ in 0..READ_BATCH {
            // SAFETY: reads into our own buffer.
            let n =
                unsafe { libc::read(self.link, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                return match e.raw_os_error() {
                    Some(libc::EAGAIN) | Some(libc::EINTR) => Ok(()),
                    // A UDP link reports the peer gateway's ICMP errors on the next read
                    // (its process is down or restarting, the path is gone): the error is
                    // consumed, the link stays; the connections' timers do the rest.
                    Some(
                        libc::ECONNREFUSED
                        | libc::EHOSTUNREACH
                        | libc::ENETUNREACH
                        | libc::EHOSTDOWN
                        | libc::ENETDOWN,
                    ) => {
                        self.rep.link_unreachable += 1;
                        continue;
                    }
                    _ => Err(LiveError::os("reading the link fd", e)),
                };
            }
            if n == 0 {
                // An empty datagram (a packet link never closes with a read of 0).
                self.rep.undecodable += 1;
                continue;
            }
            self.rep.packets_in += 1;
            self.on_packet(now, &buf[..n as usize]);
        }
        Ok(())
    }

    /// A packet with a compressed header: the flow between its addresses whose peer
    /// announced its connection id, decoded against that flow's context.
    pub(super) fn on_compressed(&mut self, now: Time, pkt: &[u8]) {
        let Ok(ip) = decode_ipv4_header(pkt) else {
            self.rep.undecodable += 1;
            return;
        };
        let body = &pkt[ip.header_len as usize..(ip.total_len as usize).min(pkt.len())];
        let id = body.first().copied();
        // A live flow before a lingering one that had the same id.
        let flow = self
            .flows
            .values_mut()
            .filter(|f| {
                f.comp_rx.is_some_and(|c| {
                    c.src_addr == ip.src && c.dst_addr == ip.dst && Some(c.conn_id) == id
                })
            })
            .min_by_key(|f| f.finished_at.is_some());
        let Some(f) = flow else {
            self.rep.compressed_bad += 1;
            return;
        };
        let Some(ctx) = f.comp_rx.as_mut() else {
            return;
        };
        if !ctx.checksum_ok(body) {
            self.rep.compressed_bad += 1;
            return;
        }
        let Ok(d) = decompress(body, ctx) else {
            self.rep.compressed_bad += 1;
            return;
        };
        self.rep.compressed_in += 1;
        f.on_segment(now, &d.header, &body[d.header_len..]);
    }

    pub(super) fn on_packet(&mut self, now: Time, pkt: &[u8]) {
        if pkt.first().is_some_and(|b| b >> 4 == 6) {
            return self.on_packet6(now, pkt);
        }
        if pkt.len() > 9 && pkt[9] == PROTO_SCPS_COMPRESSED {
            return self.on_compressed(now, pkt);
        }
        let Ok(d) = decode_ipv4_tcp(pkt) else {
            self.rep.undecodable += 1;
            return;
        };
        if d.ip.protocol != PROTO {
            self.rep.undecodable += 1;
            return;
        }
        if !d.tcp_checksum_ok(pkt) {
            self.rep.bad_checksum += 1;
            return;
        }
        let h = &d.tcp;
        let key = link_key(d.ip.dst.into(), d.ip.src.into(), h);
        // The peer's compression context, from its SYN or SYN-ACK.
        let ctx = || comp_context(h, d.ip.src, d.ip.dst);
        self.on_segment_for(now, key, h, d.payload(pkt), ctx);
    }

    /// An IPv6 packet (no extension headers): as IPv4, without header compression.
    fn on_packet6(&mut self, now: Time, pkt: &[u8]) {
        let Ok(d) = decode_ipv6_tcp(pkt) else {
            self.rep.undecodable += 1;
            return;
        };
        if d.ip.next_header != PROTO {
            self.rep.undecodable += 1;
            return;
        }
        if !d.checksum_ok {
            self.rep.bad_checksum += 1;
            return;
        }
        let h = &d.tcp;
        let key = link_key(d.ip.dst.into(), d.ip.src.into(), h);
        self.on_segment_for(now, key, h, d.payload(pkt), || None);
    }

    /// A decoded segment to flow `key`, or to none (`comp` makes the peer's compression
    /// context from the segment, if it is a SYN that offers it).
    fn on_segment_for(
        &mut self,
        now: Time,
        key: Key,
        h: &TcpHeader,
        payload: &[u8],
        comp: impl Fn() -> Option<CompressionContext>,
    ) {
        match self.flows.get_mut(&key) {
            Some(f) => {
                let opening = f.conn.state() == State::SynSent;
                f.on_segment(now, h, payload);
                // Only the SYN-ACK that completes our handshake sets up the peer's context.
                if opening && f.conn.state() != State::SynSent && h.flags & flags::SYN != 0 {
                    f.comp_rx = comp();
                }
            }
            None => self.on_new_segment(now, key, h, payload.len() as u32, comp),
        }
    }

    /// A segment for no flow: a SYN this gateway admits opens one; anything else is
    /// answered with a reset (RFC 9293 3.10.7.1), so a peer whose gateway restarted learns
    /// at once that its connections are gone.
    pub(super) fn on_new_segment(
        &mut self,
        now: Time,
        key: Key,
        h: &TcpHeader,
        len: u32,
        comp_rx: impl Fn() -> Option<CompressionContext>,
    ) {
        let is_syn = h.flags & flags::SYN != 0 && h.flags & flags::ACK == 0;
        // A SYN to this gateway's own address follows the explicit rules (no rule: RST);
        // one to any other address is relayed to that address with forward_original.
        let to_us = key.0.ip() == self.cfg.local_ip && !self.cfg.local_ip.is_unspecified();
        let ours = is_syn && (to_us || self.cfg.forward_original) && self.stopping.is_none();
        if !ours {
            if is_syn {
                self.rep.refused += 1;
            } else {
                self.rep.foreign += 1;
            }
            self.reply_reset(now, key, h, len);
            return;
        }
        // A SYN flood must not hold every resource: past the limit of half-open flows
        // (admitted, handshake not complete) new SYNs are dropped, as a kernel's full SYN
        // backlog does; the established flows go on.
        if self.half_open >= self.cfg.max_half_open {
            self.rep.half_open_dropped += 1;
            return;
        }
        self.half_open += 1;
        let dest = if to_us {
            self.cfg
                .forward
                .iter()
                .find(|f| f.0 == h.dst_port)
                .map(|f| f.1)
        } else {
            Some(key.0)
        };
        let iss = self.isn(now, key);
        let conn = self.connection(key, iss, Connection::listen::<Arc<TcpConfig>>);
        let sock = match dest.map(connect_nonblocking) {
            Some(Ok(s)) => Some(s),
            _ => None,
        };
        let ok = sock.is_some();
        let id = self.open_event(key, if ok { "admitted" } else { "refused" });
        let mut f = Flow::new(conn, sock, true, now, id);
        // Only an admitted SYN's context is built (not one per forged segment).
        f.comp_rx = comp_rx();
        f.on_segment(now, h, &[]);
        if ok {
            self.rep.admitted += 1;
        } else {
            self.rep.refused += 1;
            f.conn.reset();
        }
        self.flows.insert(key, f);
    }

    /// Answer a segment for no flow with a reset, at most `RESETS_PER_SECOND` a second.
    pub(super) fn reply_reset(&mut self, now: Time, key: Key, h: &TcpHeader, len: u32) {
        let Some(r) = reset_reply(h, len) else { return };
        if now >= self.rst_window.0 + SEC {
            self.rst_window = (now, 0);
        }
        if self.rst_window.1 >= RESETS_PER_SECOND {
            self.rep.rst_replies_suppressed += 1;
            return;
        }
        self.rst_window.1 += 1;
        self.rep.rst_replies += 1;
        self.out.header(key, &r, &mut self.rep);
    }
}

/// A segment's flow: (this gateway's side, the peer's side) from its addresses and ports.
fn link_key(dst: std::net::IpAddr, src: std::net::IpAddr, h: &TcpHeader) -> Key {
    (
        SocketAddr::new(dst, h.dst_port),
        SocketAddr::new(src, h.src_port),
    )
}
