//! TCP and SCPS-TP in the transport registry: every profile of `spacetp-proto` (textbook,
//! Linux, SCPS, Windows), `[flows.tcp]` overrides with the socket-buffer shorthands, a
//! receiver's own profile (`peer_protocol`), records, a rate-limited reader and writer;
//! flows and workloads.

use super::fit::{self as tcp_fit, UserSettings};
use super::TcpSpec;
use crate::config::{FlowCfg, WorkloadCfg};
use crate::fit::Fitted;
use crate::transport::registry::{Context, EndsSpec, Profile, TransportEntry, TransportSpec};
use crate::transport::{Ends, Transport};
use spacetp_proto::settings::tcp_config;
use spacetp_proto::{profiles, FieldError};
use std::sync::Arc;

pub struct TcpEntry;
pub static TCP: TcpEntry = TcpEntry;

impl TransportEntry for TcpEntry {
    fn title(&self) -> &'static str {
        "TCP"
    }

    fn settings_key(&self) -> &'static str {
        "tcp"
    }

    fn protocols(&self) -> Vec<&'static str> {
        profiles::names()
    }

    fn profiles(&self) -> Vec<Profile> {
        profiles::PROFILES
            .iter()
            .map(|&(name, description)| Profile {
                name,
                description,
                settings: profiles::profile(name)
                    .and_then(|c| serde_json::to_value(c).ok())
                    .unwrap_or_default(),
                family: profiles::family(name).unwrap_or("textbook"),
            })
            .collect()
    }

    fn settings_schema(&self) -> serde_json::Value {
        serde_json::to_value(spacetp_proto::TcpConfig::schema()).unwrap_or_default()
    }

    fn takes(&self) -> &'static [&'static str] {
        &[
            "peer_protocol",
            "record_size",
            "read_rate",
            "write_rate",
            "receive_buffer",
            "send_buffer",
        ]
    }

    fn flow(&self, f: &FlowCfg, cx: Context) -> Result<(TransportSpec, Vec<Fitted>), FieldError> {
        let p = cx.path;
        let (tcp, rb, sb) = (f.tcp.as_ref(), f.receive_buffer, f.send_buffer);
        let mut cfg = tcp_config(&f.protocol, tcp, rb, sb, p)?;
        let mut peer_cfg = match &f.peer_protocol {
            Some(name) => Some(tcp_config(name, tcp, rb, sb, p).map_err(|e| FieldError {
                path: e.path.replace(".protocol", ".peer_protocol"),
                ..e
            })?),
            None => None,
        };
        let mut fitted = Vec::new();
        if let Some(fp) = cx.fit {
            let user = UserSettings {
                tcp,
                receive_buffer: rb.is_some(),
                send_buffer: sb.is_some(),
            };
            fitted = tcp_fit::fit(&mut cfg, family(&f.protocol), &user, fp);
            if let (Some(c), Some(name)) = (peer_cfg.as_mut(), &f.peer_protocol) {
                tcp_fit::fit(c, family(name), &user, fp);
            }
        }
        let spec = TcpSpec {
            cfg: cx.shared.tcp(cfg),
            peer_cfg: peer_cfg.map(|c| cx.shared.tcp(c)),
            mss: cx.mss,
        };
        Ok((TransportSpec::Ends(Arc::new(spec)), fitted))
    }

    fn carries_workloads(&self) -> bool {
        true
    }

    fn workload(
        &self,
        wl: &WorkloadCfg,
        cx: Context,
    ) -> Result<(Arc<dyn EndsSpec>, Vec<Fitted>), FieldError> {
        let (tcp, rb, sb) = (wl.tcp.as_ref(), wl.receive_buffer, wl.send_buffer);
        let mut cfg = tcp_config(&wl.protocol, tcp, rb, sb, cx.path)?;
        let fitted = cx.fit.map_or_else(Vec::new, |fp| {
            let user = UserSettings {
                tcp,
                receive_buffer: rb.is_some(),
                send_buffer: sb.is_some(),
            };
            tcp_fit::fit(&mut cfg, family(&wl.protocol), &user, fp)
        });
        let spec = TcpSpec {
            cfg: cx.shared.tcp(cfg),
            peer_cfg: None,
            mss: cx.mss,
        };
        Ok((Arc::new(spec), fitted))
    }
}

impl EndsSpec for TcpSpec {
    fn open(
        &self,
        ends: Ends,
        isn: &mut dyn FnMut() -> u32,
    ) -> (Box<dyn Transport>, Box<dyn Transport>) {
        let client = self.client(ends, isn());
        let server = self.server(ends, isn());
        (Box::new(client), Box::new(server))
    }

    fn mss(&self) -> u32 {
        self.mss
    }
}

/// A profile's family as the fitting rules ask for it (`profiles::family`; "" for none).
fn family(name: &str) -> &'static str {
    profiles::family(name).unwrap_or("")
}
