//! Named presets users pass as `protocol = "..."`: each is a full `TcpConfig`; a scenario's
//! `[flows.tcp]` table overrides any of its fields.

use crate::config::TcpConfig;

/// Every profile name with a one-line description.
pub const PROFILES: &[(&str, &str)] = &[(
    "newreno",
    "TCP NewReno: RFC 5681 AIMD, RFC 6582 fast recovery, RFC 3042 limited transmit, no SACK",
)];

/// The settings of profile `name`, or None if there is no such profile.
pub fn profile(name: &str) -> Option<TcpConfig> {
    match name {
        "newreno" => Some(TcpConfig::default()),
        _ => None,
    }
}

pub fn names() -> Vec<&'static str> {
    PROFILES.iter().map(|p| p.0).collect()
}
