//! What a live CFDP entity does (`spacetp cfdp`), from JSON (the CLI's flags): serde,
//! unknown keys rejected, errors naming the key (`cfdp.peers[0]`, `cfdp.settings.nak_timer`).

use schemars::JsonSchema;
use serde::Deserialize;
use spacetp_cfdp::{Carrier, CfdpSettings, FILE_DATA_OVERHEAD, MAX_PDU};
use spacetp_proto::FieldError;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;

/// File data bytes per PDU by default: a PDU in one 1500-byte Ethernet frame with IPv4 and
/// UDP headers (1472 bytes of payload) and room to spare.
pub const DEFAULT_SEGMENT: u64 = 1400;

/// An entity's settings as written.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CfdpLiveSettings {
    /// This entity's ID (2 bytes on the wire, as the simulator's).
    pub entity: u16,
    /// The UDP address it listens on (over UDP).
    pub bind: Option<SocketAddr>,
    /// `[ENTITY, ADDRESS:PORT]`: where each peer entity listens (over UDP). A PDU from an
    /// entity not listed is answered at the address it came from.
    #[serde(default)]
    pub peers: Vec<(u16, SocketAddr)>,
    /// Over the Bundle Protocol (`settings.carrier = "bp"`): the DTN node the entity runs
    /// on, as `spacetp dtn` takes it (its `node` is the entity ID, as in ION; LTP `bind`,
    /// `peers`, `contact_plan`, `ltp`, `lifetime_s`...). Each PDU is one bundle from
    /// `ipn:ENTITY.64` to `ipn:PEER.65`, as ION's bputa sends them.
    pub bp: Option<crate::dtn::DtnSettings>,
    /// `[FILE, ENTITY, NAME]`: files to send, in order, each to entity ENTITY under the name
    /// NAME there (empty: the file's own name).
    #[serde(default)]
    pub send: Vec<(PathBuf, u16, String)>,
    /// Where files received are written (each as NAME.part until it is complete and its
    /// checksum verified, then renamed NAME).
    pub out_dir: Option<PathBuf>,
    /// The transactions' settings (`[flows.cfdp]`'s keys: class, timers, limits, checksum,
    /// segment_size, rate).
    #[serde(default)]
    pub settings: Option<serde_json::Map<String, serde_json::Value>>,
    /// Stop once this many transactions were received here (complete or not).
    pub until_received: Option<u64>,
    /// Stop once every file to send has ended its transaction.
    #[serde(default)]
    pub until_sent: bool,
    /// How long an entity that met its `until_*` condition still answers its peers (default
    /// 2 s: a Finished PDU acknowledged again, an EOF sent again).
    pub linger_s: Option<f64>,
    /// Stop after this many seconds.
    pub duration_s: Option<f64>,
}

/// The settings checked, with the transactions' settings parsed.
#[derive(Clone, Debug)]
pub struct CfdpConfig {
    pub s: CfdpLiveSettings,
    pub cfdp: CfdpSettings,
    pub peers: HashMap<u16, SocketAddr>,
    /// File data bytes per PDU.
    pub segment: usize,
    /// The node the entity runs on, over BP.
    pub bp: Option<crate::dtn::DtnConfig>,
}

/// The settings from their JSON text, checked; errors name the field (`cfdp.send[1]`).
pub fn config_from_json(text: &str) -> Result<CfdpConfig, FieldError> {
    let s: CfdpLiveSettings = crate::error::from_json(text, "cfdp")?;
    let cfdp = CfdpSettings::from_map(s.settings.as_ref(), "cfdp.settings")?;
    let bp = match (cfdp.carrier, &s.bp) {
        (Carrier::Udp, None) => None,
        (Carrier::Bp, Some(node)) => {
            Some(super::over_bp::node_config(s.entity, node, s.duration_s)?)
        }
        (Carrier::Bp, None) => {
            return Err(FieldError::new(
                "cfdp.bp",
                "CFDP over the Bundle Protocol runs on a DTN node: give its contact plan and \
                 LTP peers",
            ))
        }
        (Carrier::Udp, Some(_)) => {
            return Err(FieldError::new(
                "cfdp.bp",
                "a DTN node is for settings.carrier = \"bp\" (the carrier is \"udp\")",
            ))
        }
        (Carrier::Ltp, _) => {
            return Err(FieldError::new(
                "cfdp.settings.carrier",
                "a live entity carries its PDUs over UDP (\"udp\") or the Bundle Protocol \
                 (\"bp\"); CFDP straight over LTP is the simulator's",
            ))
        }
    };
    if bp.is_none() && s.bind.is_none() {
        return Err(FieldError::new(
            "cfdp.bind",
            "an entity over UDP needs the address it listens on",
        ));
    }
    let mut peers = HashMap::new();
    for (i, (id, addr)) in s.peers.iter().enumerate() {
        if *id == s.entity {
            return Err(FieldError::new(
                format!("cfdp.peers[{i}]"),
                format!("entity {id} is this entity's own ID"),
            ));
        }
        if peers.insert(*id, *addr).is_some() {
            return Err(FieldError::new(
                format!("cfdp.peers[{i}]"),
                format!("entity {id} is listed twice"),
            ));
        }
    }
    for (i, (file, to, name)) in s.send.iter().enumerate() {
        let at = format!("cfdp.send[{i}]");
        if bp.is_none() && !peers.contains_key(to) {
            let known: Vec<_> = peers.keys().collect();
            return Err(FieldError::new(
                at,
                format!("entity {to} has no address: add it to peers (known: {known:?})"),
            ));
        }
        if !file.is_file() {
            return Err(FieldError::new(
                at,
                format!("{} is not a file that can be read", file.display()),
            ));
        }
        let name_len = if name.is_empty() {
            file.file_name().map_or(0, |n| n.len())
        } else {
            name.len()
        };
        if name_len == 0 || name_len > 255 {
            return Err(FieldError::new(
                at,
                format!("the name at the receiver has {name_len} bytes: CFDP takes 1 to 255"),
            ));
        }
    }
    if s.until_received.is_some() && s.out_dir.is_none() {
        return Err(FieldError::new(
            "cfdp.out_dir",
            "until_received needs a directory to write the files received",
        ));
    }
    if let Some(dir) = s.out_dir.as_ref().filter(|d| !d.is_dir()) {
        return Err(FieldError::new(
            "cfdp.out_dir",
            format!("{} is not a directory", dir.display()),
        ));
    }
    for (f, v) in [("linger_s", s.linger_s), ("duration_s", s.duration_s)] {
        if v.is_some_and(|v| !(v >= 0.0 && v.is_finite())) {
            return Err(FieldError::new(
                format!("cfdp.{f}"),
                format!(
                    "{} must be a number of seconds, 0 or more",
                    v.unwrap_or_default()
                ),
            ));
        }
    }
    let segment = cfdp.segment_size.map_or(DEFAULT_SEGMENT, |b| b.0) as usize;
    debug_assert!(segment <= MAX_PDU - FILE_DATA_OVERHEAD);
    Ok(CfdpConfig {
        s,
        cfdp,
        peers,
        segment,
        bp,
    })
}
