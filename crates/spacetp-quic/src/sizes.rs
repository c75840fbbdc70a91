//! `quic.crypto = "sizes"`: packets of the real sizes with nothing encrypted.
//!
//! The TLS 1.3 handshake still runs in rustls, so the CRYPTO frames carry the real messages
//! (certificate, transport parameters, tickets) and every key schedule step happens when it
//! would. Only the packet and header protection quinn is handed are swapped: a packet key
//! that leaves the payload as it is and appends a tag of the AEAD's length (zeros), and a
//! header key that leaves the header as it is, with the real cipher's sample size. Every
//! packet's size, and so every timing in a simulation, is the same as with real
//! AES-128-GCM; only the bytes differ (a test drives the same transfers both ways and
//! compares every datagram's time and size). A simulated link drops a corrupted packet
//! before it arrives, as a checksum would; a tag that is not all zeros is refused anyway,
//! as an AEAD refuses a forged packet.

use bytes::BytesMut;
use quinn_proto::crypto::{
    self, CryptoError, ExportKeyingMaterialError, HeaderKey, KeyPair, Keys, PacketKey,
    UnsupportedVersion,
};
use quinn_proto::transport_parameters::TransportParameters;
use quinn_proto::{ConnectError, ConnectionId, Side, TransportError};
use std::any::Any;
use std::sync::Arc;

/// How a simulated QUIC flow protects its packets.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum CryptoMode {
    /// Real TLS 1.3 packet protection (AES-128-GCM through ring): what a pcap or a key log
    /// needs.
    #[default]
    Real,
    /// Packets, headers, tags and padding of the real sizes; nothing encrypted.
    Sizes,
}

/// A packet key of the real one's tag length and limits that encrypts nothing.
struct SizesPacketKey {
    tag_len: usize,
    confidentiality_limit: u64,
    integrity_limit: u64,
}

impl SizesPacketKey {
    fn like(real: &dyn PacketKey) -> Box<dyn PacketKey> {
        Box::new(SizesPacketKey {
            tag_len: real.tag_len(),
            confidentiality_limit: real.confidentiality_limit(),
            integrity_limit: real.integrity_limit(),
        })
    }
}

impl PacketKey for SizesPacketKey {
    fn encrypt(&self, _packet: u64, buf: &mut [u8], _header_len: usize) {
        // quinn has reserved the tag's bytes at the end of the buffer.
        let n = buf.len();
        buf[n - self.tag_len..].fill(0);
    }

    fn decrypt(
        &self,
        _packet: u64,
        _header: &[u8],
        payload: &mut BytesMut,
    ) -> Result<(), CryptoError> {
        let n = payload.len();
        if n < self.tag_len || payload[n - self.tag_len..].iter().any(|&b| b != 0) {
            return Err(CryptoError);
        }
        payload.truncate(n - self.tag_len);
        Ok(())
    }

    fn tag_len(&self) -> usize {
        self.tag_len
    }

    fn confidentiality_limit(&self) -> u64 {
        self.confidentiality_limit
    }

    fn integrity_limit(&self) -> u64 {
        self.integrity_limit
    }
}

/// A header key of the real one's sample size that masks nothing.
struct SizesHeaderKey {
    sample_size: usize,
}

impl HeaderKey for SizesHeaderKey {
    fn decrypt(&self, _pn_offset: usize, _packet: &mut [u8]) {}

    fn encrypt(&self, _pn_offset: usize, _packet: &mut [u8]) {}

    fn sample_size(&self) -> usize {
        self.sample_size
    }
}

fn header_like(real: &dyn HeaderKey) -> Box<dyn HeaderKey> {
    Box::new(SizesHeaderKey {
        sample_size: real.sample_size(),
    })
}

fn keys_like(real: Keys) -> Keys {
    Keys {
        header: KeyPair {
            local: header_like(&*real.header.local),
            remote: header_like(&*real.header.remote),
        },
        packet: packet_keys_like(real.packet),
    }
}

fn packet_keys_like(real: KeyPair<Box<dyn PacketKey>>) -> KeyPair<Box<dyn PacketKey>> {
    KeyPair {
        local: SizesPacketKey::like(&*real.local),
        remote: SizesPacketKey::like(&*real.remote),
    }
}

/// A TLS session whose handshake is real and whose keys are swapped as they come out.
struct SizesSession(Box<dyn crypto::Session>);

impl crypto::Session for SizesSession {
    fn initial_keys(&self, dst_cid: &ConnectionId, side: Side) -> Keys {
        keys_like(self.0.initial_keys(dst_cid, side))
    }

    fn handshake_data(&self) -> Option<Box<dyn Any>> {
        self.0.handshake_data()
    }

    fn peer_identity(&self) -> Option<Box<dyn Any>> {
        self.0.peer_identity()
    }

    fn early_crypto(&self) -> Option<(Box<dyn HeaderKey>, Box<dyn PacketKey>)> {
        self.0
            .early_crypto()
            .map(|(h, p)| (header_like(&*h), SizesPacketKey::like(&*p)))
    }

    fn early_data_accepted(&self) -> Option<bool> {
        self.0.early_data_accepted()
    }

    fn is_handshaking(&self) -> bool {
        self.0.is_handshaking()
    }

    fn read_handshake(&mut self, buf: &[u8]) -> Result<bool, TransportError> {
        self.0.read_handshake(buf)
    }

    fn transport_parameters(&self) -> Result<Option<TransportParameters>, TransportError> {
        self.0.transport_parameters()
    }

    fn write_handshake(&mut self, buf: &mut Vec<u8>) -> Option<Keys> {
        self.0.write_handshake(buf).map(keys_like)
    }

    fn next_1rtt_keys(&mut self) -> Option<KeyPair<Box<dyn PacketKey>>> {
        self.0.next_1rtt_keys().map(packet_keys_like)
    }

    fn is_valid_retry(&self, orig_dst_cid: &ConnectionId, header: &[u8], payload: &[u8]) -> bool {
        self.0.is_valid_retry(orig_dst_cid, header, payload)
    }

    fn export_keying_material(
        &self,
        output: &mut [u8],
        label: &[u8],
        context: &[u8],
    ) -> Result<(), ExportKeyingMaterialError> {
        self.0.export_keying_material(output, label, context)
    }
}

/// A client's crypto configuration in sizes mode, over the real one.
pub struct SizesClient(pub Arc<dyn crypto::ClientConfig>);

impl crypto::ClientConfig for SizesClient {
    fn start_session(
        self: Arc<Self>,
        version: u32,
        server_name: &str,
        params: &TransportParameters,
    ) -> Result<Box<dyn crypto::Session>, ConnectError> {
        let inner = self.0.clone().start_session(version, server_name, params)?;
        Ok(Box::new(SizesSession(inner)))
    }
}

/// A server's crypto configuration in sizes mode, over the real one.
pub struct SizesServer(pub Arc<dyn crypto::ServerConfig>);

impl crypto::ServerConfig for SizesServer {
    fn initial_keys(
        &self,
        version: u32,
        dst_cid: &ConnectionId,
    ) -> Result<Keys, UnsupportedVersion> {
        self.0.initial_keys(version, dst_cid).map(keys_like)
    }

    fn retry_tag(&self, version: u32, orig_dst_cid: &ConnectionId, packet: &[u8]) -> [u8; 16] {
        self.0.retry_tag(version, orig_dst_cid, packet)
    }

    fn start_session(
        self: Arc<Self>,
        version: u32,
        params: &TransportParameters,
    ) -> Box<dyn crypto::Session> {
        Box::new(SizesSession(self.0.clone().start_session(version, params)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> SizesPacketKey {
        SizesPacketKey {
            tag_len: 16,
            confidentiality_limit: 1 << 23,
            integrity_limit: 1 << 52,
        }
    }

    #[test]
    fn a_packet_keeps_its_bytes_and_gets_a_tag_of_the_real_length() {
        let k = key();
        let mut buf = vec![7u8; 40 + 16];
        k.encrypt(1, &mut buf, 10);
        assert_eq!(&buf[..40], &[7u8; 40][..]);
        assert_eq!(&buf[40..], &[0u8; 16][..]);
        let mut payload = BytesMut::from(&buf[10..]);
        k.decrypt(1, &buf[..10], &mut payload).unwrap();
        assert_eq!(payload.len(), 30);
    }

    #[test]
    fn a_tampered_tag_or_a_packet_shorter_than_a_tag_is_refused() {
        let k = key();
        let mut bad = BytesMut::from(&[0u8; 20][..]);
        bad[19] = 1;
        assert!(k.decrypt(1, &[], &mut bad).is_err());
        let mut short = BytesMut::from(&[0u8; 15][..]);
        assert!(k.decrypt(1, &[], &mut short).is_err());
    }
}
