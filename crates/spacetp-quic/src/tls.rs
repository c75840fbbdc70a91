//! TLS 1.3 for both ends (rustls with the ring provider). The server presents a
//! self-signed certificate for the name `spacetp`, made once per process at run time (no
//! key material ships with spacetp); the client trusts exactly that certificate. What the
//! simulator measures does not depend on the handshake's randomness: packet sizes and
//! timing are the same whatever the keys are.

use quinn_proto::crypto::rustls::{QuicClientConfig, QuicServerConfig};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::sync::{Arc, OnceLock};

/// The name the client asks for and the certificate carries.
pub const SERVER_NAME: &str = "spacetp";
const ALPN: &[u8] = b"spacetp";

struct Identity {
    cert: CertificateDer<'static>,
    key: PrivatePkcs8KeyDer<'static>,
}

fn identity() -> &'static Identity {
    static ID: OnceLock<Identity> = OnceLock::new();
    ID.get_or_init(|| {
        let ck = rcgen::generate_simple_self_signed(vec![SERVER_NAME.to_string()])
            .expect("rcgen makes a self-signed certificate for a fixed DNS name");
        Identity {
            cert: ck.cert.der().clone(),
            key: PrivatePkcs8KeyDer::from(ck.signing_key.serialize_der()),
        }
    })
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

pub fn server_crypto() -> Arc<QuicServerConfig> {
    let id = identity();
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("ring offers TLS 1.3")
        .with_no_client_auth()
        .with_single_cert(
            vec![id.cert.clone()],
            PrivateKeyDer::Pkcs8(id.key.clone_key()),
        )
        .expect("the certificate and key were made together");
    cfg.alpn_protocols = vec![ALPN.to_vec()];
    Arc::new(QuicServerConfig::try_from(cfg).expect("TLS 1.3 with AES-128-GCM"))
}

pub fn client_crypto(key_log: Option<Arc<dyn rustls::KeyLog>>) -> Arc<QuicClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(identity().cert.clone())
        .expect("a well-formed certificate");
    let mut cfg = rustls::ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("ring offers TLS 1.3")
        .with_root_certificates(roots)
        .with_no_client_auth();
    cfg.alpn_protocols = vec![ALPN.to_vec()];
    if let Some(k) = key_log {
        cfg.key_log = k;
    }
    Arc::new(QuicClientConfig::try_from(cfg).expect("TLS 1.3 with AES-128-GCM"))
}
