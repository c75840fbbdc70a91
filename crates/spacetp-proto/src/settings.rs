//! A connection's settings as a user writes them: a named profile, then overrides of any
//! of its fields (`[flows.tcp]` in scenarios, `tcp` in a gateway's configuration), then the
//! buffer shorthands. One function, so the simulator and the gateway read them alike.

use crate::config::TcpConfig;
use crate::error::FieldError;
use crate::profiles;
use crate::units::Bytes;

/// The transport settings of a flow: profile, then `[flows.tcp]` overrides, then the
/// buffer shorthands.
pub fn tcp_config(
    protocol: &str,
    overrides: Option<&serde_json::Map<String, serde_json::Value>>,
    rcv: Option<Bytes>,
    snd: Option<Bytes>,
    path: &str,
) -> Result<TcpConfig, FieldError> {
    let base = profiles::profile(protocol).ok_or_else(|| {
        FieldError::new(
            format!("{path}.protocol"),
            format!(
                "unknown protocol \"{protocol}\"; known: {}",
                profiles::names().join(", ")
            ),
        )
    })?;
    let mut cfg = match overrides {
        Some(o) => overlay(&base, o, &format!("{path}.tcp"))?,
        None => base,
    };
    if let Some(b) = rcv {
        cfg.receive_buffer = b;
    }
    if let Some(b) = snd {
        cfg.send_buffer = b;
    }
    cfg.validate().map_err(|e| e.within("tcp").within(path))?;
    Ok(cfg)
}

/// `base` with the user's `overrides` table laid over it (`merge_tables`), read back; an
/// error names the field under `table`, the overrides' own path (`flows[0].tcp`).
pub fn overlay<T: serde::Serialize + serde::de::DeserializeOwned>(
    base: &T,
    overrides: &serde_json::Map<String, serde_json::Value>,
    table: &str,
) -> Result<T, FieldError> {
    let mut v = serde_json::to_value(base).map_err(|e| FieldError::new(table, e.to_string()))?;
    if let serde_json::Value::Object(m) = &mut v {
        merge_tables(m, overrides);
    }
    serde_path_to_error::deserialize(v).map_err(|e| {
        let p = e.path().to_string();
        let inner = e.into_inner().to_string();
        if p == "." {
            FieldError::new(table, inner)
        } else {
            FieldError::new(format!("{table}.{p}"), inner)
        }
    })
}

/// Overlays `over` on `base`, table by table: `scps = { bets = "1 s" }` changes `scps.bets`
/// and keeps the profile's other SCPS settings.
pub fn merge_tables(
    base: &mut serde_json::Map<String, serde_json::Value>,
    over: &serde_json::Map<String, serde_json::Value>,
) {
    for (k, val) in over {
        match (base.get_mut(k), val) {
            (Some(serde_json::Value::Object(b)), serde_json::Value::Object(o)) => {
                merge_tables(b, o)
            }
            _ => {
                base.insert(k.clone(), val.clone());
            }
        }
    }
}
