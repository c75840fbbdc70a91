//! What a live DTN node does (`spacetp dtn`), from JSON (the CLI's flags): serde, unknown
//! keys rejected, errors naming the key. The LTP span to each peer is derived as the
//! simulator derives a Bundle Protocol hop's (`transport::ltp::hop_settings`): the plan's
//! light time and rate, export sessions for the bandwidth-delay product, `ltp` over them.

use schemars::JsonSchema;
use serde::Deserialize;
use spacetp_dtn::{ContactPlan, ParseOptions};
use spacetp_ltp::{EngineConfig, SpanConfig};
use spacetp_proto::{FieldError, Time, SEC};
use spacetp_sim::transport::ltp::{hop_settings, LtpSpec, PathDefaults};
use std::net::SocketAddr;
use std::path::PathBuf;

/// The largest LTP segment by default: ION's example spans use 1400 bytes, which fits a
/// 1500-byte MTU with IPv4 and UDP headers.
const DEFAULT_SEGMENT: u64 = 1400;

/// A node's settings as written.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DtnSettings {
    /// This node's ipn number (its LTP engine ID, as ION's).
    pub node: u64,
    /// The UDP address LTP listens on (ION's `udplsi`, port 1113 by convention).
    pub bind: SocketAddr,
    /// `[ENGINE, ADDRESS:PORT]`: where each neighbor's LTP listens (ION's `udplso`).
    #[serde(default)]
    pub peers: Vec<(u64, SocketAddr)>,
    /// `[NODE, ADDRESS:PORT]`: neighbors reached by the UDP convergence layer instead
    /// (ION's `udpclo`; one bundle per datagram, no retransmission).
    #[serde(default)]
    pub udp_peers: Vec<(u64, SocketAddr)>,
    /// Where this node's UDP convergence layer listens (ION's `udpcli`; default: the LTP
    /// address with port 4556, when there are UDP peers).
    pub udp_bind: Option<SocketAddr>,
    /// The contact plan (ION's `ionrc` syntax); `+t` times count from this node's start,
    /// absolute times are UTC.
    pub contact_plan: String,
    /// LTP span settings for every peer (`[flows.ltp]` keys, ION's names).
    #[serde(default)]
    pub ltp: Option<serde_json::Map<String, serde_json::Value>>,
    /// `[FILE, NODE, SERVICE]`: files to send at start, each as one bundle (as ION's
    /// `bpsendfile`) to `ipn:NODE.SERVICE`.
    #[serde(default)]
    pub send: Vec<(PathBuf, u64, u64)>,
    /// The service number of this node's sending endpoint (`ipn:NODE.SERVICE`; default 1).
    pub service: Option<u64>,
    /// Where delivered application data units are written (one file each).
    pub out_dir: Option<PathBuf>,
    /// Where bundles still held at a stop are kept, and taken back at start.
    pub store_dir: Option<PathBuf>,
    /// Bundle lifetime, seconds (default 86400).
    pub lifetime_s: Option<f64>,
    /// Stop once this many data units were delivered here (and the sessions that brought
    /// them were closed, or `linger_s` passed); with `until_sent`, once both hold.
    pub until_delivered: Option<u64>,
    /// Stop once everything sent from here has left: no bundle stored, no LTP block
    /// waiting or unacknowledged.
    #[serde(default)]
    pub until_sent: bool,
    /// How long a node that met its `until_*` condition keeps answering the peer before it
    /// stops (default: two of the longest light times plus 2 s, enough for the peer to
    /// hear the last report's acknowledgement).
    pub linger_s: Option<f64>,
    /// Stop after this many seconds.
    pub duration_s: Option<f64>,
    /// Give a bundle up once the LTP blocks that carried it were canceled this many times
    /// (by either end, for any reason but this node's own stop): it is dropped with a
    /// message, and the command exits with status 1. Default 10; 0: never (the bundle is
    /// sent again until its lifetime ends, as ION does).
    pub max_session_cancels: Option<u32>,
}

/// Canceled LTP sessions a bundle may take before it is given up, by default.
pub const DEFAULT_MAX_SESSION_CANCELS: u32 = 10;

/// One neighbor: its engine, address and LTP span.
#[derive(Clone, Debug)]
pub struct Peer {
    pub engine: u64,
    pub addr: SocketAddr,
    pub span: SpanConfig,
}

/// A node's configuration, checked.
#[derive(Clone, Debug)]
pub struct DtnConfig {
    pub s: DtnSettings,
    pub plan: ContactPlan,
    pub peers: Vec<Peer>,
    pub engine: EngineConfig,
    pub lifetime: Time,
    pub duration: Option<Time>,
    pub linger: Time,
    /// `max_session_cancels` (0: no bound).
    pub max_session_cancels: u32,
}

fn secs(v: Option<f64>, key: &str) -> Result<Option<Time>, FieldError> {
    match v {
        None => Ok(None),
        Some(x) if (0.0..1e9).contains(&x) => Ok(Some((x * 1e9) as Time)),
        Some(x) => Err(FieldError::new(
            format!("dtn.{key}"),
            format!("{x} is not a number of seconds from 0 to 1e9"),
        )),
    }
}

/// The settings checked; `epoch` is the node's start (POSIX seconds, UTC), time 0 of the
/// plan.
pub fn config_from_json(text: &str, epoch: i64) -> Result<DtnConfig, FieldError> {
    config_from_settings(crate::error::from_json(text, "dtn")?, epoch)
}

/// The settings checked (errors name them `dtn.KEY`); `epoch` as for [`config_from_json`].
pub fn config_from_settings(s: DtnSettings, epoch: i64) -> Result<DtnConfig, FieldError> {
    if s.node == 0 {
        return Err(FieldError::new("dtn.node", "ipn node numbers start at 1"));
    }
    if s.peers.is_empty() && s.udp_peers.is_empty() {
        return Err(FieldError::new(
            "dtn.peers",
            "a node needs at least one peer (ENGINE and ADDRESS:PORT)",
        ));
    }
    let all: Vec<(String, u64)> = (s.peers.iter().enumerate())
        .map(|(i, p)| (format!("dtn.peers[{i}]"), p.0))
        .chain((s.udp_peers.iter().enumerate()).map(|(i, p)| (format!("dtn.udp_peers[{i}]"), p.0)))
        .collect();
    for (i, (at, e)) in all.iter().enumerate() {
        if *e == 0 || *e == s.node || all[..i].iter().any(|p| p.1 == *e) {
            return Err(FieldError::new(
                at.clone(),
                format!("node {e} is 0, this node, or another peer's"),
            ));
        }
    }
    let plan = ContactPlan::parse_with(
        &s.contact_plan,
        &ParseOptions {
            epoch: Some(epoch),
            nodes: None,
        },
    )
    .map_err(|e| FieldError::new("dtn.contact_plan", e.to_string()))?;
    for c in plan.contacts_from(s.node) {
        if c.to != s.node && !all.iter().any(|p| p.1 == c.to) {
            return Err(FieldError::new(
                "dtn.contact_plan",
                format!(
                    "a contact from this node ({}) to {} but {} is not among the peers (its LTP address is unknown)",
                    s.node, c.to, c.to
                ),
            ));
        }
    }
    let mut peers = Vec::new();
    let mut engine = None;
    for (i, &(e, addr)) in s.peers.iter().enumerate() {
        let at = format!("dtn.peers[{i}]");
        let between: Vec<_> = plan
            .contacts_between(s.node, e)
            .iter()
            .chain(plan.contacts_between(e, s.node))
            .collect();
        if between.is_empty() {
            return Err(FieldError::new(
                at,
                format!("the contact plan has no contact between {} and {e}", s.node),
            ));
        }
        let Some(owlt) = plan
            .range_table()
            .iter()
            .map(|r| &r.range)
            .filter(|r| (r.from, r.to) == (s.node, e))
            .map(|r| r.owlt)
            .max()
        else {
            return Err(FieldError::new(
                at,
                format!(
                    "the contact plan has no `a range` between {} and {e}: LTP's timers need the one-way light time",
                    s.node
                ),
            ));
        };
        let defaults = PathDefaults {
            one_way: owlt,
            rate_bps: between
                .iter()
                .map(|c| c.rate_bytes_per_s * 8.0)
                .fold(0.0, f64::max),
            max_segment: DEFAULT_SEGMENT,
        };
        let m = hop_settings(&plan, s.node, e, s.ltp.as_ref(), &defaults);
        let spec = LtpSpec::from_settings(Some(&m), &defaults, "dtn")?;
        let mut span = spec.span;
        span.peer_engine_id = e;
        engine.get_or_insert(spec.engine);
        peers.push(Peer {
            engine: e,
            addr,
            span,
        });
    }
    for (i, &(n, _)) in s.udp_peers.iter().enumerate() {
        if plan.contacts_between(s.node, n).is_empty()
            && plan.contacts_between(n, s.node).is_empty()
        {
            return Err(FieldError::new(
                format!("dtn.udp_peers[{i}]"),
                format!("the contact plan has no contact between {} and {n}", s.node),
            ));
        }
        if !plan
            .range_table()
            .iter()
            .any(|r| (r.range.from, r.range.to) == (s.node, n))
        {
            return Err(FieldError::new(
                format!("dtn.udp_peers[{i}]"),
                format!(
                    "the contact plan has no `a range` between {} and {n}: routing needs the one-way light time",
                    s.node
                ),
            ));
        }
    }
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
    let longest = peers
        .iter()
        .map(|p| p.span.one_way_light_time.0)
        .max()
        .unwrap_or(0);
    Ok(DtnConfig {
        lifetime: secs(s.lifetime_s, "lifetime_s")?.unwrap_or(86_400 * SEC),
        duration: secs(s.duration_s, "duration_s")?,
        linger: secs(s.linger_s, "linger_s")?.unwrap_or(2 * longest + 2 * SEC),
        engine: engine.unwrap_or_default(),
        max_session_cancels: s.max_session_cancels.unwrap_or(DEFAULT_MAX_SESSION_CANCELS),
        plan,
        peers,
        s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAN: &str = "a contact +0 +3600 1 2 125000\na contact +0 +3600 2 1 125000\n\
                        a range +0 +3600 1 2 10\n";

    fn json(extra: &str) -> String {
        format!(
            r#"{{"node": 1, "bind": "127.0.0.1:1113", "peers": [[2, "127.0.0.1:1114"]],
               "contact_plan": {PLAN:?} {extra}}}"#
        )
    }

    #[test]
    fn a_peer_span_takes_the_plans_light_time_and_rate() {
        let c = config_from_json(&json(""), 0).unwrap();
        let span = &c.peers[0].span;
        assert_eq!(span.peer_engine_id, 2);
        assert_eq!(span.one_way_light_time.0, 10 * SEC);
        // 1 Mb/s less IPv4 and UDP headers around 1400-byte segments.
        let r = span.transmission_rate.unwrap().0;
        assert!((r - 1e6 * 1400.0 / 1428.0).abs() < 1.0, "{r}");
        // Sessions for two rounds of 2 x 10 s + 2 s at 125 kB/s in 64 kB blocks.
        assert!(
            span.max_export_sessions >= 85,
            "{}",
            span.max_export_sessions
        );
        assert_eq!(c.linger, 22 * SEC);
    }

    #[test]
    fn errors_name_the_setting() {
        let e = config_from_json(&json(r#", "lifetime_s": -1"#), 0).unwrap_err();
        assert_eq!(e.path, "dtn.lifetime_s");
        let e = config_from_json(&json(r#", "ltp": {"max_segment_size": "0 B"}"#), 0).unwrap_err();
        assert!(e.path.starts_with("dtn.ltp"), "{e}");
        let e = config_from_json(&json(r#", "colour": 1"#), 0).unwrap_err();
        assert!(e.message.contains("colour"), "{e}");
        let no_range = json("").replace("a range +0 +3600 1 2 10\\n", "");
        let e = config_from_json(&no_range, 0).unwrap_err();
        assert_eq!(e.path, "dtn.peers[0]");
        assert!(e.message.contains("a range"), "{e}");
        let unknown = json("").replace("[[2,", "[[3,");
        let e = config_from_json(&unknown, 0).unwrap_err();
        assert_eq!(e.path, "dtn.contact_plan");
        assert!(e.message.contains("not among the peers"), "{e}");
    }
}
