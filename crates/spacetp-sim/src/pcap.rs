//! A pcap tap on a link: every packet that starts transmission in either direction is written
//! as a raw IPv4 packet (linktype 101) with real header bytes from spacetp-wire and a
//! zero-filled payload whose checksums are correct, so Wireshark and tshark decode it.

use crate::packet::{Body, Packet};
use crate::transport::{node_addr, Wire};
use spacetp_proto::Time;
use spacetp_wire::{
    encode_ipv4_packet, encode_ipv4_tcp_headers, encode_ipv4_udp, Ipv4Params, Payload, PcapWriter,
    PROTO_TCP,
};
use std::fs::File;
use std::io::BufWriter;

pub struct PcapTap {
    writer: Option<PcapWriter<BufWriter<File>>>,
    buf: Vec<u8>,
    ip_id: u16,
    error: Option<String>,
}

impl PcapTap {
    pub fn create(path: &str, _node_names: &[String]) -> Result<PcapTap, String> {
        let f = File::create(path).map_err(|e| format!("cannot create the file: {e}"))?;
        let writer = PcapWriter::new(BufWriter::new(f)).map_err(|e| e.to_string())?;
        Ok(PcapTap {
            writer: Some(writer),
            buf: Vec::with_capacity(128),
            ip_id: 0,
            error: None,
        })
    }

    /// Write packet `p` (with `payload`, its real bytes if its transport has any).
    pub fn record(&mut self, now: Time, p: &Packet, ports: &(u16, u16), payload: &[u8]) {
        let Some(w) = &mut self.writer else { return };
        self.ip_id = self.ip_id.wrapping_add(1);
        self.buf.clear();
        let mut ip = Ipv4Params {
            src: node_addr(p.src),
            dst: node_addr(p.dst),
            protocol: PROTO_TCP,
            id: self.ip_id,
        };
        let res = match &p.body {
            Body::Transport {
                wire: Wire::Tcp {
                    comp: Some(c), len, ..
                },
                ..
            } => {
                // SCPS compressed header: IP protocol 105, as the Reference Implementation.
                ip.protocol = spacetp_wire::PROTO_SCPS_COMPRESSED;
                encode_ipv4_packet(&ip, c.as_bytes(), Payload::Zeros(*len), &mut self.buf)
                    .map(|_| ())
            }
            Body::Transport {
                wire: Wire::Tcp { hdr, len, .. },
                ..
            } => encode_ipv4_tcp_headers(&ip, hdr, *len, &mut self.buf).map(|_| ()),
            Body::Transport {
                wire: Wire::Unfilled,
                ..
            } => return, // never on a link: filled before it is sent
            Body::Transport {
                wire: Wire::Datagram { .. } | Wire::Udp { .. },
                ..
            } => {
                // UDP checksum 0 = not computed (allowed over IPv4). A QUIC packet's bytes
                // are real (tshark decrypts them with the key log); others are zeros.
                let body = if payload.is_empty() {
                    Payload::Zeros(p.size - 28)
                } else {
                    Payload::Bytes(payload)
                };
                encode_ipv4_udp(&ip, ports.0, ports.1, body, false, &mut self.buf).map(|_| ())
            }
            Body::CorruptionNotice { .. } | Body::LinkNotice { .. } => {
                // ICMP type 253 (RFC 4727 experimental): SCPS-TP's corruption notice has no
                // IANA ICMP type. The quoted offending header is zeros here.
                ip.protocol = 1;
                let mut icmp = [0u8; 8];
                icmp[0] = 253;
                let body_len = (p.size - 28) as usize;
                let c = spacetp_wire::Checksum::new()
                    .add_bytes(&icmp)
                    .add_zeros(body_len)
                    .finish();
                icmp[2..4].copy_from_slice(&c.to_be_bytes());
                encode_ipv4_packet(&ip, &icmp, Payload::Zeros(p.size - 28), &mut self.buf)
                    .map(|_| ())
            }
        };
        let res = res.map_err(|e| e.to_string()).and_then(|_| {
            w.write_zero_filled(now, &self.buf[..], p.size)
                .map_err(|e| e.to_string())
        });
        if let Err(e) = res {
            self.error.get_or_insert(e);
        }
    }

    pub fn finish(&mut self) {
        if let Some(mut w) = self.writer.take() {
            if let Err(e) = w.flush() {
                self.error.get_or_insert(e.to_string());
            }
        }
    }
}
