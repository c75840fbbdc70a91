//! What carries a gateway's relayed connections across the link, chosen by the settings'
//! `protocol`: SCPS-TP (or TCP) connections ([`crate::gateway`]), or streams of one QUIC
//! connection between the gateways ([`crate::quic_gateway`]). Both read the same settings
//! (`gateway::GatewaySettings`, one schema).

use crate::gateway::{parse_settings, settings_to_config, GatewayConfig};
use crate::quic_gateway::{config_from_settings, QuicGatewayConfig};
use spacetp_proto::FieldError;

/// A gateway's configuration, for either carrier.
// One per gateway, built once.
#[allow(clippy::large_enum_variant)]
pub enum AnyConfig {
    Scps(GatewayConfig),
    Quic(QuicGatewayConfig),
}

/// A gateway's configuration from JSON, for either carrier (chosen by `protocol`).
pub fn any_config_from_json(text: &str) -> Result<AnyConfig, FieldError> {
    let s = parse_settings(text)?;
    if spacetp_quic::is_quic(&s.protocol) {
        config_from_settings(s).map(AnyConfig::Quic)
    } else {
        settings_to_config(s).map(AnyConfig::Scps)
    }
}

/// What the process running a gateway needs of it, whichever the carrier: one driver
/// (spacetp-py's `gateway`) runs both, with their signals, ticks and reloads.
pub trait RelayGateway: Send {
    /// Run for at most `chunk` ns; false once it has stopped.
    fn run_for(&mut self, chunk: u64) -> bool;
    /// Begin an orderly stop (every relayed connection reset on both sides, or drained
    /// for `drain`); a second call while draining resets at once.
    fn begin_stop(&mut self, why: &str);
    /// The report so far, with the log events since the last call under `events`.
    fn report_value(&mut self) -> serde_json::Value;
    /// New settings (JSON) while running: what can change is taken, the rest (and settings
    /// for the other carrier) is refused and said in the report's `last_reload`.
    fn reload(&mut self, text: &str);
}

/// The gateway `cfg` asks for, its link on packet fd `link_fd` (an SCPS-TP gateway's must
/// be given; a QUIC gateway without one binds a UDP socket at its tunnel address).
pub fn start_gateway(
    cfg: AnyConfig,
    link_fd: Option<std::os::fd::RawFd>,
    link_state_fd: Option<std::os::fd::RawFd>,
) -> Result<Box<dyn RelayGateway>, crate::LiveError> {
    use crate::quic_gateway::{Link, QuicGateway};
    Ok(match cfg {
        AnyConfig::Scps(cfg) => {
            let fd = link_fd.ok_or_else(|| {
                FieldError::new(
                    "gateway.link",
                    "an SCPS-TP gateway needs the link's packet fd",
                )
            })?;
            let mut g = crate::gateway::Gateway::new(cfg, fd)?;
            if let Some(fd) = link_state_fd {
                g.set_link_state_fd(fd)?;
            }
            Box::new(g)
        }
        AnyConfig::Quic(cfg) => {
            let local = cfg.local;
            let link = match link_fd {
                Some(fd) => Link::packets(fd, local),
                None => Link::socket(local),
            }
            .map_err(|e| crate::LiveError::os(format!("the tunnel at {local}"), e))?;
            let mut g = QuicGateway::new(cfg, link)?;
            if let Some(fd) = link_state_fd {
                g.set_link_state_fd(fd)?;
            }
            Box::new(g)
        }
    })
}

impl RelayGateway for crate::gateway::Gateway {
    fn run_for(&mut self, chunk: u64) -> bool {
        crate::gateway::Gateway::run_for(self, chunk)
    }

    fn begin_stop(&mut self, why: &str) {
        crate::gateway::Gateway::begin_stop(self, why)
    }

    fn report_value(&mut self) -> serde_json::Value {
        let mut r = serde_json::to_value(self.report()).unwrap_or_default();
        r["events"] = self.take_events().into();
        r
    }

    fn reload(&mut self, text: &str) {
        match any_config_from_json(text) {
            Ok(AnyConfig::Scps(cfg)) => {
                self.reconfigure(cfg);
            }
            Ok(AnyConfig::Quic(_)) => {
                self.note_reload_error("the new protocol is QUIC: that needs a restart")
            }
            Err(e) => self.note_reload_error(&e.to_string()),
        }
    }
}

impl RelayGateway for crate::quic_gateway::QuicGateway {
    fn run_for(&mut self, chunk: u64) -> bool {
        crate::quic_gateway::QuicGateway::run_for(self, chunk)
    }

    fn begin_stop(&mut self, why: &str) {
        crate::quic_gateway::QuicGateway::begin_stop(self, why)
    }

    fn report_value(&mut self) -> serde_json::Value {
        serde_json::to_value(self.report()).unwrap_or_default()
    }

    /// A QUIC gateway takes no new settings while running (its tunnel's TLS and transport
    /// settings are the connection's): the caller says so and no reload reaches here.
    fn reload(&mut self, _text: &str) {}
}
