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

    pub(super) fn ip(&mut self, key: Key, protocol: u8) -> Ipv4Params {
        self.ip_id = self.ip_id.wrapping_add(1);
        Ipv4Params {
            src: key.0.ip().octets(),
            dst: key.1.ip().octets(),
            protocol,
            id: self.ip_id,
        }
    }

    /// A bare header (no flow): the reset that answers a segment for no connection.
    pub(super) fn header(&mut self, key: Key, h: &TcpHeader, rep: &mut GatewayReport) {
        self.buf.clear();
        let ip = self.ip(key, PROTO);
        if encode_ipv4_tcp(&ip, h, Payload::Bytes(&[]), &mut self.buf).is_ok() {
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
            self.buf.clear();
            let mut ip = self.ip(key, PROTO);
            if t.hdr.flags & flags::SYN != 0 {
                f.comp_tx = comp_context(&t.hdr, ip.src, ip.dst);
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
            let encoded = match comp {
                Some(c) => {
                    ip.protocol = PROTO_SCPS_COMPRESSED;
                    rep.compressed_out += 1;
                    encode_ipv4_packet(&ip, c.as_bytes(), Payload::Bytes(payload), &mut self.buf)
                }
                None => encode_ipv4_tcp(&ip, &t.hdr, Payload::Bytes(payload), &mut self.buf),
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
