//! TLS 1.3 for both ends (rustls with the ring provider).
//!
//! In the simulator the server presents a self-signed certificate for the name `spacetp`,
//! made once per process at run time (no key material ships with spacetp); the client
//! trusts exactly that certificate. What the simulator measures does not depend on the
//! handshake's randomness: packet sizes and timing are the same whatever the keys are. For
//! that the key is Ed25519 and the serial number fixed: an ECDSA signature's encoding is a
//! byte or two longer or shorter with its random nonce (70 to 72 bytes for P-256), in the
//! certificate and in every handshake's CertificateVerify, and with it the handshake's
//! packets, so a run's timing changed from one process to the next.
//!
//! A gateway pair (`spacetp gateway --protocol quic`) shares one certificate and key that the
//! operator made (`spacetp gateway --make-cert DIR`, or any PEM pair): each gateway presents
//! it when the other dials, and trusts exactly it when dialing.

use quinn_proto::crypto::rustls::{QuicClientConfig, QuicServerConfig};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::net::IpAddr;
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// The name the simulator's client asks for and its certificate carries.
pub const SERVER_NAME: &str = "spacetp";
/// The name `make_identity` puts in a gateway pair's certificate.
pub const GATEWAY_NAME: &str = "spacetp-gateway";
const ALPN: &[u8] = b"spacetp";

/// A certificate and its private key.
pub struct Identity {
    pub cert: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
}

impl Clone for Identity {
    fn clone(&self) -> Self {
        Identity {
            cert: self.cert.clone(),
            key: self.key.clone_key(),
        }
    }
}

impl Identity {
    /// A new self-signed certificate for `name` whose encoding, and whose signatures', have
    /// the same length whatever the key: an Ed25519 key (64-byte signatures, made without a
    /// random nonce) and serial number 1 (by default it is taken from the key's hash, one
    /// byte shorter when that starts with a zero byte).
    pub fn generate(name: &str) -> Identity {
        let key =
            rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519).expect("ring makes Ed25519 keys");
        let mut params = rcgen::CertificateParams::new(vec![name.to_string()])
            .expect("a DNS name is a valid subject alternative name");
        params.serial_number = Some(rcgen::SerialNumber::from(1u64));
        let cert = params
            .self_signed(&key)
            .expect("rcgen signs a certificate with an Ed25519 key");
        Identity {
            cert: cert.der().clone(),
            key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        }
    }

    /// A certificate (the first of the PEM file `cert`) and its private key (PEM file `key`);
    /// the error says which file and what is wrong with it.
    pub fn from_pem_files(cert: &Path, key: &Path) -> Result<Identity, String> {
        let c = CertificateDer::from_pem_file(cert)
            .map_err(|e| format!("{}: not a PEM certificate ({e})", cert.display()))?;
        let k = PrivateKeyDer::from_pem_file(key)
            .map_err(|e| format!("{}: not a PEM private key ({e})", key.display()))?;
        let id = Identity { cert: c, key: k };
        // The pair must sign and verify together: build a server configuration now, so a
        // mismatch is found at start, not at the first handshake.
        server_config(&id).map_err(|e| {
            format!(
                "{} and {}: the key does not go with the certificate ({e})",
                cert.display(),
                key.display()
            )
        })?;
        Ok(id)
    }
}

/// A new self-signed certificate for `name` and its private key, as PEM text: the files an
/// operator copies to both gateways of a pair.
pub fn make_pem_pair(name: &str) -> (String, String) {
    let ck = rcgen::generate_simple_self_signed(vec![name.to_string()])
        .expect("rcgen makes a self-signed certificate for a DNS name");
    (ck.cert.pem(), ck.signing_key.serialize_pem())
}

/// The simulator's identity: made once per process, of the same size in every process.
fn sim_identity() -> &'static Identity {
    static ID: OnceLock<Identity> = OnceLock::new();
    ID.get_or_init(|| Identity::generate(SERVER_NAME))
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn server_config(id: &Identity) -> Result<rustls::ServerConfig, rustls::Error> {
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("ring offers TLS 1.3")
        .with_no_client_auth()
        .with_single_cert(vec![id.cert.clone()], id.key.clone_key())?;
    cfg.alpn_protocols = vec![ALPN.to_vec()];
    Ok(cfg)
}

/// A server presenting `id`.
pub fn server_crypto_for(id: &Identity) -> Arc<QuicServerConfig> {
    let cfg = server_config(id).expect("the identity was checked when it was made or read");
    Arc::new(QuicServerConfig::try_from(cfg).expect("TLS 1.3 with AES-128-GCM"))
}

/// The simulator's server.
pub fn server_crypto() -> Arc<QuicServerConfig> {
    server_crypto_for(sim_identity())
}

/// A client that trusts exactly certificate `trusted`.
pub fn client_crypto_trusting(
    trusted: &CertificateDer<'static>,
    key_log: Option<Arc<dyn rustls::KeyLog>>,
) -> Arc<QuicClientConfig> {
    Arc::new(
        QuicClientConfig::try_from(client_config(trusted, key_log))
            .expect("TLS 1.3 with AES-128-GCM"),
    )
}

fn client_config(
    trusted: &CertificateDer<'static>,
    key_log: Option<Arc<dyn rustls::KeyLog>>,
) -> rustls::ClientConfig {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(trusted.clone())
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
    cfg
}

/// The simulator's client (trusts the simulator's server).
pub fn client_crypto(key_log: Option<Arc<dyn rustls::KeyLog>>) -> Arc<QuicClientConfig> {
    client_crypto_trusting(&sim_identity().cert, key_log)
}

/// TLS state that outlives a connection, for 0-RTT on resumption: for each (client, server)
/// pair of addresses, the client's session cache (with early data enabled) and the server's
/// session store (accepting early data). Connections of one run opened with the same
/// `Resumption` resume the session an earlier one obtained and send their first bytes in
/// 0-RTT packets, as a browser does with a server it has visited.
#[derive(Clone, Default)]
pub struct Resumption {
    pairs: Arc<std::sync::Mutex<ResumedPairs>>,
}

type ResumedPairs =
    std::collections::HashMap<(IpAddr, IpAddr), (Arc<QuicClientConfig>, Arc<QuicServerConfig>)>;

impl std::fmt::Debug for Resumption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Resumption")
    }
}

impl Resumption {
    /// The client's and the server's TLS configurations between `client` and `server`,
    /// the same objects for every connection between them.
    pub fn crypto(
        &self,
        client: IpAddr,
        server: IpAddr,
        key_log: Option<Arc<dyn rustls::KeyLog>>,
    ) -> (Arc<QuicClientConfig>, Arc<QuicServerConfig>) {
        let mut pairs = self.pairs.lock().expect("no panic while held");
        pairs
            .entry((client, server))
            .or_insert_with(|| {
                let id = sim_identity();
                let mut sc = server_config(id).expect("the simulator's identity is sound");
                // quinn takes early data only with the largest limit (RFC 9001 4.6.1).
                sc.max_early_data_size = u32::MAX;
                let mut cc = client_config(&id.cert, key_log);
                cc.enable_early_data = true;
                (
                    Arc::new(QuicClientConfig::try_from(cc).expect("TLS 1.3 with AES-128-GCM")),
                    Arc::new(QuicServerConfig::try_from(sc).expect("TLS 1.3 with AES-128-GCM")),
                )
            })
            .clone()
    }
}

/// A gateway of a pair when the other dials: it presents the pair's certificate and
/// demands it back (mutual TLS), so that nobody else can open streams through it.
pub fn gateway_server_crypto(id: &Identity) -> Arc<QuicServerConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(id.cert.clone())
        .expect("a well-formed certificate");
    let verifier =
        rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
            .build()
            .expect("one trust anchor");
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("ring offers TLS 1.3")
        .with_client_cert_verifier(verifier)
        .with_single_cert(vec![id.cert.clone()], id.key.clone_key())
        .expect("the identity was checked when it was read");
    cfg.alpn_protocols = vec![ALPN.to_vec()];
    Arc::new(QuicServerConfig::try_from(cfg).expect("TLS 1.3 with AES-128-GCM"))
}

/// A gateway dialing the other: it trusts exactly the pair's certificate and presents it.
pub fn gateway_client_crypto(id: &Identity) -> Arc<QuicClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(id.cert.clone())
        .expect("a well-formed certificate");
    let mut cfg = rustls::ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("ring offers TLS 1.3")
        .with_root_certificates(roots)
        .with_client_auth_cert(vec![id.cert.clone()], id.key.clone_key())
        .expect("the identity was checked when it was read");
    cfg.alpn_protocols = vec![ALPN.to_vec()];
    Arc::new(QuicClientConfig::try_from(cfg).expect("TLS 1.3 with AES-128-GCM"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every process makes its own key; the handshake's sizes, and so a run's timing, must
    /// not depend on which. With an ECDSA key about half the pairs of certificates differ
    /// in length.
    #[test]
    fn the_simulators_certificates_have_one_length_whatever_the_key() {
        let ids: Vec<Identity> = (0..32).map(|_| Identity::generate(SERVER_NAME)).collect();
        let first = ids[0].cert.len();
        assert!(ids.iter().all(|id| id.cert.len() == first));
        assert!(
            ids.windows(2).all(|w| w[0].cert != w[1].cert),
            "a new key each time"
        );
        // The identity is usable by a server.
        let _ = server_crypto_for(&ids[0]);
    }

    #[test]
    fn a_generated_identity_reads_back_from_its_pem_files() {
        let dir = std::env::temp_dir().join(format!("spacetp-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (c, k) = make_pem_pair(GATEWAY_NAME);
        std::fs::write(dir.join("c.pem"), &c).unwrap();
        std::fs::write(dir.join("k.pem"), &k).unwrap();
        let back = Identity::from_pem_files(&dir.join("c.pem"), &dir.join("k.pem")).unwrap();
        assert_eq!(
            back.cert,
            CertificateDer::from_pem_slice(c.as_bytes()).unwrap()
        );
        // A key that is not the certificate's is refused, naming both files.
        let other = make_pem_pair(GATEWAY_NAME).1;
        std::fs::write(dir.join("k2.pem"), other).unwrap();
        let e = Identity::from_pem_files(&dir.join("c.pem"), &dir.join("k2.pem"))
            .err()
            .unwrap();
        assert!(e.contains("does not go with"), "{e}");
        let e = Identity::from_pem_files(&dir.join("k.pem"), &dir.join("k.pem"))
            .err()
            .unwrap();
        assert!(e.contains("not a PEM certificate"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
