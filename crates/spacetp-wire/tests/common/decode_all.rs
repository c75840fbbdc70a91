//! Every decoder of `spacetp-wire` on one input: shared by the robustness tests and the
//! cargo-fuzz target (`fuzz/fuzz_targets/decode.rs`), so both exercise the same code.

use spacetp_wire::pcap::link_payload_ipv4;
use spacetp_wire::*;

/// Runs every decoder of the crate on `b`; returns how many accepted it.
pub fn decode_everything(b: &[u8]) -> usize {
    let mut ok = 0;
    ok += decode_ipv4_header(b).is_ok() as usize;
    if let Ok(d) = decode_ipv4_tcp(b) {
        ok += 1;
        let _ = d.tcp_checksum_ok(b);
        let _ = d.payload(b);
        // Whatever decodes re-encodes (or is refused) without panicking.
        let ip = Ipv4Params {
            src: d.ip.src,
            dst: d.ip.dst,
            protocol: d.ip.protocol,
            id: d.ip.id,
        };
        let _ = encode_ipv4_tcp(&ip, &d.tcp, Payload::Bytes(d.payload(b)), &mut Vec::new());
    }
    if let Ok(u) = decode_ipv4_udp(b) {
        ok += 1;
        let _ = u.checksum_ok(b);
    }
    if let Ok((_, inner)) = decode_scps_udp_encap(b) {
        ok += decode_ipv4_tcp(inner).is_ok() as usize;
    }
    ok += decode_tcp_header(b).is_ok() as usize;
    ok += decode_tcp_options(b).is_ok() as usize;
    // Compressed: as the IP payload, with a context of the right id so parsing goes deep.
    for payload in [b, b.get(20..).unwrap_or(&[])] {
        if let Some(id) = peek_connection_id(payload) {
            let mut ctx = CompressionContext {
                conn_id: id,
                ..Default::default()
            };
            let _ = ctx.checksum_ok(payload);
            if let Ok(d) = decompress(payload, &mut ctx) {
                ok += 1;
                let _ = compress(&d.header, d.payload_len, &ctx);
            }
        }
    }
    for lt in [1, 101, 113, 228, 276, 12345] {
        ok += link_payload_ipv4(lt, b).is_ok() as usize;
    }
    if let Ok(r) = PcapReader::new(b.to_vec()) {
        // The reader yields None after its first error, so this ends.
        for p in r.flatten() {
            ok += p.ipv4().is_ok() as usize;
        }
    }
    ok
}
