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
