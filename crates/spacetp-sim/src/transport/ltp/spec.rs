//! What an LTP flow or a Bundle Protocol hop runs: the span's and the engine's settings
//! (ION's names) from `[flows.ltp]` / `[dtn] ltp`, over the path's defaults, and their
//! schema.

use super::*;

/// What an LTP flow runs: its span's settings (ION's names), the engine's, and how the
/// application's bytes become client data.
#[derive(Clone, Debug)]
pub struct LtpSpec {
    /// The span; `peer_engine_id` is set for each end when the flow opens.
    pub span: SpanConfig,
    pub engine: EngineConfig,
    /// Bytes of one client service data unit.
    pub block_size: u64,
    /// Share of each unit sent red (reliable); the rest green (sent once).
    pub red_share: f64,
}

/// The `[flows.ltp]` keys that are not span settings.
#[derive(Clone, Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LtpFlowKeys {
    /// The application's data is handed to LTP in units of this size (ION's client service
    /// data units); each is a block unless the span's aggregation limits join several.
    /// Default: the span's `aggregation_size_limit`.
    pub block_size: Option<units::Bytes>,
    /// Share of each unit sent red (reliable, acknowledged and resent): 1 (default) all
    /// red, 0 all green (sent once, never resent), in between a red head and a green tail.
    pub red_share: Option<f64>,
    /// The engine's own turnaround added to its deadlines (ION `m ownqtime`, default 1 s).
    pub own_queuing_latency: Option<Duration>,
    /// The bit error rate the retransmission limits are derived from (ION `m maxber`,
    /// default 1e-6).
    pub max_ber: Option<f64>,
}

/// What the path tells an LTP flow by default: its one-way propagation delay, its
/// bottleneck rate and its largest segment.
pub struct PathDefaults {
    pub one_way: Time,
    pub rate_bps: f64,
    pub max_segment: u64,
}

impl LtpSpec {
    /// `[flows.ltp]` over the defaults, checked; errors name the field under `path`.
    pub fn from_settings(
        overrides: Option<&serde_json::Map<String, serde_json::Value>>,
        defaults: &PathDefaults,
        path: &str,
    ) -> Result<LtpSpec, FieldError> {
        const OWN: [&str; 4] = ["block_size", "red_share", "own_queuing_latency", "max_ber"];
        let p = format!("{path}.ltp");
        let mut span = overrides.cloned().unwrap_or_default();
        check_keys(&span, &p)?;
        let mut own = serde_json::Map::new();
        for k in OWN {
            if let Some(v) = span.remove(k) {
                own.insert(k.into(), v);
            }
        }
        if span.contains_key("peer_engine_id") {
            return Err(FieldError::new(
                format!("{p}.peer_engine_id"),
                "is the other end of the flow; it is not set here",
            ));
        }
        let keys: LtpFlowKeys = from_map(own, &p)?;
        span.insert("peer_engine_id".into(), 1.into());
        span.entry("one_way_light_time")
            .or_insert_with(|| format!("{} ns", defaults.one_way).into());
        // Paced so that the packets, IPv4 and UDP headers included, fill the bottleneck.
        let seg = match span.get("max_segment_size") {
            Some(v) => serde_json::from_value::<units::Bytes>(v.clone())
                .map_or(defaults.max_segment, |b| b.0),
            None => defaults.max_segment,
        };
        let share = seg as f64 / (seg + IP_UDP_HEADERS as u64) as f64;
        span.entry("transmission_rate")
            .or_insert_with(|| format!("{} b/s", defaults.rate_bps * share).into());
        span.entry("max_segment_size")
            .or_insert_with(|| format!("{} B", defaults.max_segment).into());
        // Both ends are configured alike: the receiver takes as many sessions at once as
        // the sender opens (ION's max_import_sessions is the peer's export window).
        if let Some(n) = span.get("max_export_sessions").cloned() {
            span.entry("max_import_sessions").or_insert(n);
        }
        let span: SpanConfig = from_map(span, &p)?;
        span.validate().map_err(|e| e.within(&p))?;
        let mut engine = EngineConfig::default();
        if let Some(q) = keys.own_queuing_latency {
            engine.own_queuing_latency = q;
        }
        if let Some(b) = keys.max_ber {
            engine.max_ber = b;
        }
        engine.validate().map_err(|e| e.within(&p))?;
        let red_share = keys.red_share.unwrap_or(1.0);
        if !(0.0..=1.0).contains(&red_share) {
            return Err(FieldError::new(
                format!("{p}.red_share"),
                format!("{red_share} must be from 0 (all green) to 1 (all red)"),
            ));
        }
        let block_size = keys
            .block_size
            .map_or(span.aggregation_size_limit.0, |b| b.0);
        if block_size == 0 {
            return Err(FieldError::new(
                format!("{p}.block_size"),
                "must be at least 1 B",
            ));
        }
        if span.transmission_rate.is_some_and(|r: Rate| r.0 <= 0.0) {
            return Err(FieldError::new(
                format!("{p}.transmission_rate"),
                "must be above 0 b/s",
            ));
        }
        Ok(LtpSpec {
            span,
            engine,
            block_size,
            red_share,
        })
    }

    /// The two ends of a flow: engine IDs are the nodes' numbers (index + 1), `seed` seeds
    /// both engines' session and serial numbers.
    pub(crate) fn open(&self, ends: Ends, seed: u64) -> (LtpTransport, LtpTransport) {
        self.open_engines(
            ends.client_node as u64 + 1,
            ends.server_node as u64 + 1,
            seed,
        )
    }

    /// The two ends of a Bundle Protocol hop between engines `a` and `b` (the nodes' ipn
    /// numbers), in hop mode.
    pub(crate) fn open_hop(&self, a: u64, b: u64, seed: u64) -> (LtpTransport, LtpTransport) {
        let (x, y) = self.open_engines(a, b, seed);
        (x.into_hop(), y.into_hop())
    }

    fn open_engines(&self, a: u64, b: u64, seed: u64) -> (LtpTransport, LtpTransport) {
        let end = |me: u64, peer: u64, salt: u64| {
            let mut engine = self.engine.clone();
            engine.seed = seed ^ salt;
            let mut e = Engine::new(me, engine).expect("validated when the scenario was read");
            let mut span = self.span.clone();
            span.peer_engine_id = peer;
            e.add_span(span)
                .expect("validated when the scenario was read");
            LtpTransport::new(e, peer, self)
        };
        let (mut client, server) = (end(a, b, 0), end(b, a, 0x5a5a_5a5a));
        client.sender = true;
        (client, server)
    }
}

/// The JSON Schema of `[flows.ltp]`: the span's settings (but the peer, which is the flow's
/// other end) and the keys of the flow's own.
pub fn ltp_schema() -> serde_json::Value {
    let mut span = serde_json::to_value(schemars::schema_for!(SpanConfig)).unwrap_or_default();
    let own = serde_json::to_value(schemars::schema_for!(LtpFlowKeys)).unwrap_or_default();
    if let Some(props) = span.get_mut("properties").and_then(|p| p.as_object_mut()) {
        props.remove("peer_engine_id");
        if let Some(o) = own.get("properties").and_then(|p| p.as_object()) {
            props.extend(o.clone());
        }
    }
    if let Some(req) = span.get_mut("required").and_then(|r| r.as_array_mut()) {
        req.retain(|r| r != "peer_engine_id" && r != "one_way_light_time");
    }
    if let (Some(d), Some(o)) = (
        span.get_mut("definitions").and_then(|d| d.as_object_mut()),
        own.get("definitions").and_then(|d| d.as_object()),
    ) {
        d.extend(o.clone());
    }
    span["title"] = "LtpFlowSettings".into();
    span
}

/// Every key `[flows.ltp]`, `[dtn] ltp` and `spacetp dtn --ltp` take, sorted: the span's
/// settings but the peer (the flow's other end) and the flow's own keys, read from
/// [`ltp_schema`] so that the list cannot fall behind the settings types.
pub fn ltp_keys() -> Vec<String> {
    let mut keys: Vec<String> = ltp_schema()
        .get("properties")
        .and_then(|p| p.as_object())
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    keys.sort();
    keys
}

/// Refuses a key no LTP setting has, naming the nearest one and listing them all (serde's
/// own message would list only the span's fields, not `max_ber` and the flow's keys).
fn check_keys(m: &serde_json::Map<String, serde_json::Value>, p: &str) -> Result<(), FieldError> {
    let keys = ltp_keys();
    let Some(bad) = m
        .keys()
        .find(|k| *k != "peer_engine_id" && !keys.contains(k))
    else {
        return Ok(());
    };
    let near = keys
        .iter()
        .map(|k| (edit_distance(bad, k), k))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map_or(String::new(), |(_, k)| format!(" (did you mean `{k}`?)"));
    Err(FieldError::new(
        format!("{p}.{bad}"),
        format!(
            "unknown key `{bad}`{near}; the LTP keys are {}",
            keys.iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ))
}

/// Levenshtein distance between two keys.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// A Bundle Protocol hop's LTP settings between engines `a` and `b`: `overrides` (`[dtn]
/// ltp`), and where they do not set them, export sessions for the hop's bandwidth-delay
/// product (ION's configuration guide: rate x round trip / block size; twice that, since a
/// block that lost a segment keeps its session another round trip, and the timers'
/// margins), and the plan's light time.
pub fn hop_settings(
    plan: &spacetp_dtn::ContactPlan,
    a: u64,
    b: u64,
    overrides: Option<&serde_json::Map<String, serde_json::Value>>,
    path: &PathDefaults,
) -> serde_json::Map<String, serde_json::Value> {
    let mut m = overrides.cloned().unwrap_or_default();
    let rate = plan
        .contacts_between(a, b)
        .iter()
        .chain(plan.contacts_between(b, a))
        .map(|c| c.rate_bytes_per_s)
        .fold(0.0, f64::max);
    let owlt = plan
        .range_table()
        .iter()
        .map(|e| &e.range)
        .filter(|r| (r.from, r.to) == (a, b))
        .map(|r| r.owlt)
        .max()
        .unwrap_or(path.one_way);
    m.entry("one_way_light_time")
        .or_insert_with(|| format!("{owlt} ns").into());
    if !m.contains_key("max_export_sessions") {
        let block = m
            .get("aggregation_size_limit")
            .and_then(|v| serde_json::from_value::<spacetp_proto::units::Bytes>(v.clone()).ok())
            .map_or(64_000.0, |b| b.0 as f64);
        let round_trip = 2.0 * spacetp_proto::time::secs(owlt) + 2.0;
        let sessions = (2.0 * rate * round_trip / block).ceil() as u64 + 1;
        m.insert(
            "max_export_sessions".into(),
            sessions.clamp(10, 100_000).into(),
        );
    }
    m
}

fn from_map<T: serde::de::DeserializeOwned>(
    m: serde_json::Map<String, serde_json::Value>,
    p: &str,
) -> Result<T, FieldError> {
    serde_path_to_error::deserialize(serde_json::Value::Object(m)).map_err(|e| {
        let at = e.path().to_string();
        let msg = e.into_inner().to_string();
        if at == "." {
            FieldError::new(p.to_string(), msg)
        } else {
            FieldError::new(format!("{p}.{at}"), msg)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaults() -> PathDefaults {
        PathDefaults {
            one_way: 1_000_000_000,
            rate_bps: 1e6,
            max_segment: 1400,
        }
    }

    fn settings(json: &str) -> Result<LtpSpec, FieldError> {
        let m: serde_json::Map<String, serde_json::Value> = serde_json::from_str(json).unwrap();
        LtpSpec::from_settings(Some(&m), &defaults(), "dtn")
    }

    /// The fields serde itself takes for `T` (from its "expected one of" message): what
    /// the settings types accept, independently of the schema the key list comes from.
    fn serde_fields<T: serde::de::DeserializeOwned + std::fmt::Debug>() -> Vec<String> {
        let e = serde_json::from_str::<T>(r#"{"no_such_key": 0}"#).unwrap_err();
        let text = e.to_string();
        let list = text.split("expected one of ").nth(1).unwrap_or_else(|| {
            text.split("expected ")
                .nth(1)
                .expect("serde names the fields")
        });
        list.split(" at line")
            .next()
            .unwrap()
            .split(", ")
            .map(|s| s.trim_matches('`').to_string())
            .collect()
    }

    #[test]
    fn a_misspelt_key_is_refused_with_every_real_key_listed() {
        let e = settings(r#"{"max_bar": 1e-5}"#).unwrap_err();
        assert_eq!(e.path, "dtn.ltp.max_bar");
        assert!(e.message.contains("did you mean `max_ber`?"), "{e}");
        // Every key the settings types accept is listed, the flow's own included.
        let mut accepted = serde_fields::<SpanConfig>();
        accepted.extend(serde_fields::<LtpFlowKeys>());
        accepted.retain(|k| k != "peer_engine_id");
        assert_eq!(accepted.len(), 18, "{accepted:?}");
        accepted.sort();
        assert_eq!(ltp_keys(), accepted);
        for k in &accepted {
            assert!(e.message.contains(&format!("`{k}`")), "{k} missing: {e}");
        }
        // And every listed key is taken (its value may still be refused).
        for k in ltp_keys() {
            if let Err(e) = settings(&format!(r#"{{"{k}": null}}"#)) {
                assert!(!e.message.contains("unknown key"), "{k}: {e}");
            }
        }
        // No suggestion for a key far from all of them.
        let e = settings(r#"{"colour": 1}"#).unwrap_err();
        assert!(!e.message.contains("did you mean"), "{e}");
        assert!(e.message.contains("`max_ber`"), "{e}");
    }
}
