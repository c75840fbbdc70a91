//! Packets to the space link: headers encoded (compressed once negotiated) and written.

use super::*;

/// Packets this gateway writes to the space link.
pub(super) struct LinkOut {
    pub(super) fd: RawFd,
    pub(super) ip_id: u16,
    pub(super) buf: Vec<u8>,
}

impl LinkOut {
    pub(super) fn write(&mut self, rep: &mut GatewayReport) {
        // SAFETY: writes our buffer to the link fd.
        let n = unsafe {
            libc::write(
                self.fd,
                self.buf.as_ptr() as *const libc::c_void,
                self.buf.len(),
            )
        };
        if n == self.buf.len() as isize {
            rep.packets_out += 1;
        } else {
            rep.link_write_errors += 1;
        }
    }

    /// The IPv4 header of a packet of flow `key` (None for an IPv6 flow).
    pub(super) fn ipv4(&mut self, key: Key, protocol: u8) -> Option<Ipv4Params> {
        let (SocketAddr::V4(src), SocketAddr::V4(dst)) = key else {
            return None;
        };
        self.ip_id = self.ip_id.wrapping_add(1);
        Some(Ipv4Params {
            src: src.ip().octets(),
            dst: dst.ip().octets(),
            protocol,
            id: self.ip_id,
        })
    }

    /// A TCP-format segment of flow `key` in full (not compressed), IPv4 or IPv6 as the
    /// flow's addresses are.
    fn encode(&mut self, key: Key, h: &TcpHeader, payload: &[u8]) -> Result<(), WireError> {
        self.buf.clear();
        match (key, self.ipv4(key, PROTO)) {
            (_, Some(ip)) => encode_ipv4_tcp(&ip, h, Payload::Bytes(payload), &mut self.buf),
            (k, None) => {
                let ip = Ipv6Header {
                    src: ipv6_octets(k.0.ip()),
                    dst: ipv6_octets(k.1.ip()),
                    next_header: PROTO,
                    ..Default::default()
                };
                encode_ipv6_tcp(&ip, h, Payload::Bytes(payload), &mut self.buf)
            }
        }
        .map(|_| ())
    }

    /// A bare header (no flow): the reset that answers a segment for no connection.
    pub(super) fn header(&mut self, key: Key, h: &TcpHeader, rep: &mut GatewayReport) {
        if self.encode(key, h, &[]).is_ok() {
            self.write(rep);
        }
    }

    /// Everything flow `f` has to send now, as far as the shared link rate lets it; if the
    /// rate held it back, when it may go on.
    pub(super) fn transmit(
        &mut self,
        key: Key,
        f: &mut Flow,
        now: Time,
        link_rate: &mut Option<TokenBucket>,
        rep: &mut GatewayReport,
    ) -> Option<Time> {
        loop {
            if let Some(b) = link_rate {
                // Room for a whole packet, whatever comes next.
                if let Err(at) = b.ready(now, f.conn.segment_size() as u64 + 60) {
                    return Some(at);
                }
            }
            let t = f.conn.poll_transmit(now)?;
            let payload: &[u8] = if t.len == 0 {
                &[]
            } else {
                let a = t.pos.checked_sub(f.sbase).map(|a| a as usize);
                match a.and_then(|a| f.sbuf.get(a..a + t.len as usize)) {
                    Some(p) => p,
                    None => {
                        // The bytes are kept until acknowledged, so this cannot happen; if it
                        // did, sending anything else would corrupt the stream.
                        debug_assert!(false, "segment at {} beyond the send buffer", t.pos);
                        rep.integrity_resets += 1;
                        rep.integrity_detail.push(format!(
                            "segment at {} of {} bytes: {}",
                            t.pos,
                            t.len,
                            f.describe(now)
                        ));
                        f.abort();
                        continue;
                    }
                }
            };
            if t.hdr.flags & flags::SYN != 0 {
                f.comp_tx = match key {
                    (SocketAddr::V4(s), SocketAddr::V4(d)) => {
                        comp_context(&t.hdr, s.ip().octets(), d.ip().octets())
                    }
                    // The compressed header is IPv4's (its context keeps IPv4 addresses).
                    _ => None,
                };
            }
            // Compressed once both ends offered COMP (SYNs travel in full).
            let comp = match (&mut f.comp_tx, f.conn.header_compression()) {
                (Some(ctx), true) if t.hdr.flags & flags::SYN == 0 => {
                    let c = compress_with_payload(&t.hdr, payload, ctx).ok();
                    if c.is_some() {
                        ctx.record(&t.hdr);
                    }
                    c
                }
                _ => None,
            };
            // Only a compressed packet builds its IPv4 header here (a full one in `encode`).
            let compressed = comp.and_then(|c| Some((c, self.ipv4(key, PROTO_SCPS_COMPRESSED)?)));
            let encoded = match compressed {
                Some((c, ip)) => {
                    rep.compressed_out += 1;
                    self.buf.clear();
                    encode_ipv4_packet(&ip, c.as_bytes(), Payload::Bytes(payload), &mut self.buf)
                        .map(|_| ())
                }
                None => self.encode(key, &t.hdr, payload),
            };
            match encoded {
                Ok(_) => {
                    if let Some(b) = link_rate {
                        let _ = b.take(now, self.buf.len() as u64);
                    }
                    self.write(rep)
                }
                Err(_) => rep.link_write_errors += 1,
            }
        }
    }
}

/// An address as IPv6 octets (an IPv4 one mapped, which an IPv6 flow never has).
fn ipv6_octets(a: std::net::IpAddr) -> [u8; 16] {
    match a {
        std::net::IpAddr::V6(a) => a.octets(),
        std::net::IpAddr::V4(a) => a.to_ipv6_mapped().octets(),
    }
}
