//! What both ends of a connection are made from: quinn's settings, the flow's largest
//! payload, the seed, the clock, and what an end writes besides its packets.

use crate::clock::SimClock;
use crate::settings::QuicSettings;
use crate::sizes::CryptoMode;
use crate::tls;
use std::sync::Arc;

/// What an end writes besides its packets: the client's TLS secrets (a key log shared by
/// the run) and a qlog of the connection (JSON-SEQ, one file per end, `PREFIX-client.sqlog`
/// and `PREFIX-server.sqlog`), each if asked for.
#[derive(Clone, Default)]
pub struct EndOutputs {
    pub key_log: Option<Arc<dyn rustls::KeyLog>>,
    pub qlog_prefix: Option<std::path::PathBuf>,
}

/// What both ends of a connection share: quinn's settings, the largest UDP payload the
/// flow's MTU carries, the seed of quinn's RNGs (so that a run is repeatable), the clock and
/// the outputs.
#[derive(Clone)]
pub struct EndConfig {
    pub settings: QuicSettings,
    pub max_payload: u16,
    pub seed: u64,
    pub clock: SimClock,
    pub out: EndOutputs,
    /// TLS sessions shared by the connections of one flow definition (`zero_rtt`).
    pub resumption: Option<tls::Resumption>,
    /// Real packet protection, or packets of the real sizes with nothing encrypted.
    pub crypto: CryptoMode,
}

impl EndConfig {
    /// quinn's transport configuration for one end (`side`), with its qlog stream if one
    /// was asked for and its file can be created (a qlog that cannot be written is skipped,
    /// not fatal: the caller checks the folder before the run).
    pub(super) fn transport(&self, side: &str) -> Arc<quinn_proto::TransportConfig> {
        let mut t = self.settings.transport_config(self.max_payload);
        if let Some(prefix) = &self.out.qlog_prefix {
            let mut name = prefix.as_os_str().to_owned();
            name.push(format!("-{side}.sqlog"));
            if let Ok(f) = std::fs::File::create(&name) {
                let mut q = quinn_proto::QlogConfig::default();
                q.writer(Box::new(std::io::BufWriter::new(f)))
                    .title(Some(format!("spacetp {side}")))
                    // Event times count from the run's start: simulated time.
                    .start_time(self.clock.instant(0));
                t.qlog_stream(q.into_stream());
            }
        }
        Arc::new(t)
    }
}
