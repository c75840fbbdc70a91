//! What a live DTN node does (`spacetp dtn`), from JSON (the CLI's flags): serde, unknown
//! keys rejected, errors naming the key.

use schemars::JsonSchema;
use serde::Deserialize;
use spacetp_dtn::{ContactPlan, ParseOptions};
use spacetp_proto::{FieldError, Time, SEC};
use std::net::SocketAddr;
use std::path::PathBuf;

/// A node's settings as written.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DtnSettings {
    /// This node's ipn number (its LTP engine ID, as ION's).
    pub node: u64,
    /// The UDP address LTP listens on (ION's `udplsi`, port 1113 by convention).
    pub bind: SocketAddr,
    /// `[ENGINE, ADDRESS:PORT]`: where each neighbor's LTP listens (ION's `udplso`).
    pub peers: Vec<(u64, SocketAddr)>,
    /// The contact plan (ION's `ionrc` syntax); times `+t` count from this node's start.
    pub contact_plan: String,
    /// LTP span settings for every peer (`[flows.ltp]` keys, ION's names).
    #[serde(default)]
    pub ltp: Option<serde_json::Map<String, serde_json::Value>>,
    /// `[FILE, NODE, SERVICE]`: files to send at start, each as one bundle (as ION's
    /// `bpsendfile`) to `ipn:NODE.SERVICE`.
    #[serde(default)]
    pub send: Vec<(PathBuf, u64, u64)>,
    /// Where delivered application data units are written (one file each).
    pub out_dir: Option<PathBuf>,
    /// Where bundles still held at an orderly stop are kept, and taken back at start.
    pub store_dir: Option<PathBuf>,
    /// Bundle lifetime, seconds (default 86400).
    pub lifetime_s: Option<f64>,
    /// Stop once this many data units were delivered here.
    pub until_delivered: Option<u64>,
    /// Stop after this many seconds.
    pub duration_s: Option<f64>,
}

/// A node's configuration, checked.
#[derive(Clone, Debug)]
pub struct DtnConfig {
    pub s: DtnSettings,
    pub plan: ContactPlan,
    pub lifetime: Time,
    pub duration: Option<Time>,
}

pub fn config_from_json(text: &str) -> Result<DtnConfig, FieldError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    let s: DtnSettings = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        let inner = inner.split(" at line ").next().unwrap_or_default().to_string();
        FieldError::new(if path == "." { "dtn".into() } else { format!("dtn.{path}") }, inner)
    })?;
    if s.node == 0 {
        return Err(FieldError::new("dtn.node", "ipn node numbers start at 1"));
    }
    let mut nodes: Vec<u64> = s.peers.iter().map(|p| p.0).collect();
    nodes.push(s.node);
    for (i, (e, _)) in s.peers.iter().enumerate() {
        if *e == s.node || s.peers[..i].iter().any(|p| p.0 == *e) {
            return Err(FieldError::new(
                format!("dtn.peers[{i}]"),
                format!("engine {e} is this node or another peer"),
            ));
        }
    }
    let plan = ContactPlan::parse_with(
        &s.contact_plan,
        &ParseOptions {
            epoch: None,
            nodes: None,
        },
    )
    .map_err(|e| FieldError::new("dtn.contact_plan", e.to_string()))?;
    for (i, (f, n, _)) in s.send.iter().enumerate() {
        if !f.is_file() {
            return Err(FieldError::new(
                format!("dtn.send[{i}]"),
                format!("{}: no such file", f.display()),
            ));
        }
        if *n == s.node {
            return Err(FieldError::new(
                format!("dtn.send[{i}]"),
                "the destination is this node",
            ));
        }
    }
    let secs = |v: Option<f64>, key: &str| -> Result<Option<Time>, FieldError> {
        match v {
            None => Ok(None),
            Some(x) if x.is_finite() && x > 0.0 && x < 1e9 => Ok(Some((x * 1e9) as Time)),
            Some(x) => Err(FieldError::new(
                format!("dtn.{key}"),
                format!("{x} is not a number of seconds above 0"),
            )),
        }
    };
    Ok(DtnConfig {
        lifetime: secs(s.lifetime_s, "lifetime_s")?.unwrap_or(86_400 * SEC),
        duration: secs(s.duration_s, "duration_s")?,
        plan,
        s,
    })
}
