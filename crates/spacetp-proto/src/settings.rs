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
        Some(o) => {
            let table = format!("{path}.tcp");
            crate::cc::ControllerParams::check_tables(o).map_err(|e| e.within(&table))?;
            overlay(&base, o, &table)?
        }
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
        refuse_unknown(m, overrides, table)?;
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

/// An override names a field of the settings. Serde refuses the others itself only in
/// structs without a flattened part, and `TcpConfig` flattens its controllers' tables; the
/// tables inside refuse their own unknown fields.
fn refuse_unknown(
    base: &serde_json::Map<String, serde_json::Value>,
    over: &serde_json::Map<String, serde_json::Value>,
    table: &str,
) -> Result<(), FieldError> {
    match over.keys().find(|k| !base.contains_key(*k)) {
        None => Ok(()),
        Some(k) => {
            let known: Vec<String> = base.keys().map(|k| format!("`{k}`")).collect();
            Err(FieldError::new(
                format!("{table}.{k}"),
                format!("unknown field `{k}`, expected one of {}", known.join(", ")),
            ))
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn error(over: serde_json::Value) -> String {
        let o = over.as_object().expect("a table").clone();
        tcp_config("linux-cubic", Some(&o), None, None, "flows[0]")
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn a_controller_table_overrides_one_field_and_keeps_the_profiles_others() {
        let o = serde_json::json!({"cubic": {"c": 0.8}, "congestion_control": "cubic"});
        let cfg = tcp_config("linux-cubic", o.as_object(), None, None, "f").unwrap();
        assert_eq!(cfg.cc.cubic.c, 0.8);
        assert_eq!(
            cfg.cc.cubic.beta,
            717.0 / 1024.0,
            "the profile's beta stays"
        );
        assert!(cfg.cc.cubic.hystart);
    }

    #[test]
    fn unknown_and_bad_settings_are_refused_with_their_field_path() {
        let e = error(serde_json::json!({"initial_windw": 4}));
        assert!(
            e.starts_with(
                "flows[0].tcp.initial_windw: unknown field `initial_windw`, expected one of"
            ),
            "{e}"
        );
        assert!(e.contains("`cubic`") && e.contains("`sack`"), "{e}");
        let e = error(serde_json::json!({"cubic": {"bta": 0.5}}));
        assert!(
            e.starts_with("flows[0].tcp.cubic.bta: unknown field `bta`"),
            "{e}"
        );
        let e = error(serde_json::json!({"bbr3": {"beta": "much"}}));
        assert!(e.starts_with("flows[0].tcp.bbr3.beta: invalid type"), "{e}");
        let e = error(serde_json::json!({"vegas": 5}));
        assert!(e.starts_with("flows[0].tcp.vegas: invalid type"), "{e}");
        let e = error(serde_json::json!({"cubic": {"beta": 1.5}}));
        assert!(e.starts_with("flows[0].tcp.cubic.beta: "), "{e}");
        let e = error(serde_json::json!({"congestion_control": "cubicc"}));
        assert!(e.starts_with("flows[0].tcp.congestion_control: "), "{e}");
        assert!(e.contains("bbr3"), "every keyword is listed: {e}");
    }
}
