//! The transports a scenario can name, one entry each ([`TRANSPORTS`]). An entry owns its
//! protocols (with what `spacetp protocols` and Python list about them), the table of its
//! settings (`[flows.KEY]`) and their schema, the flow fields it takes besides the common
//! ones, and how a flow's (or a workload's) settings become the ends the world opens. What
//! no single transport owns is done here, once: finding the entry a `protocol` names (an
//! unknown one is an error listing every name) and refusing the settings of the others.
//!
//! A new transport: a folder under `transport/` with an entry, and one line in
//! [`TRANSPORTS`].

use super::{bp, cfdp, ltp, quic, tcp, Ends, Transport};
use crate::config::{FlowCfg, WorkloadCfg};
use crate::fit::{FitPath, Fitted};
use spacetp_proto::FieldError;
use std::path::PathBuf;
use std::sync::Arc;

/// Every transport, in the order `spacetp protocols` lists them.
pub static TRANSPORTS: &[&dyn TransportEntry] = &[
    &tcp::entry::TCP,
    &quic::entry::QUIC,
    &ltp::entry::LTP,
    &bp::BP_ENTRY,
    &cfdp::entry::CFDP,
];

/// A protocol a transport answers to, as `spacetp protocols` lists it.
pub struct Profile {
    pub name: &'static str,
    pub description: &'static str,
    /// The settings a flow of it starts from, as JSON.
    pub settings: serde_json::Value,
    /// Where it comes from: "textbook", "linux", "scps", "windows", "quic", "ltp", "dtn"...
    pub family: &'static str,
}

/// What opens the two ends of each connection of a flow or a workload.
pub trait EndsSpec: Send + Sync {
    /// The client (which opens and, in a flow, sends) and the server; `isn` draws each
    /// end's initial sequence number (or seed).
    fn open(
        &self,
        ends: Ends,
        isn: &mut dyn FnMut() -> u32,
    ) -> (Box<dyn Transport>, Box<dyn Transport>);
    /// The largest payload one packet carries (from the flow's MTU).
    fn mss(&self) -> u32;
    /// Its ends' packets travel as bundles through the nodes' agents (by the contact plan,
    /// world/dtn.rs), with this lifetime, instead of over the links' routes.
    fn bundle_lifetime(&self) -> Option<spacetp_proto::Time> {
        None
    }
}

/// What a flow's connections run, once its settings are read.
#[derive(Clone)]
pub enum TransportSpec {
    /// A pair of ends the world opens.
    Ends(Arc<dyn EndsSpec>),
    /// Bundles from the source's agent, hop by hop through the network by the contact
    /// plan (world/dtn.rs): no pair of ends.
    Bundles(bp::BpSpec),
}

impl TransportSpec {
    /// The largest payload one packet carries.
    pub fn mss(&self) -> u32 {
        match self {
            TransportSpec::Ends(s) => s.mss(),
            TransportSpec::Bundles(b) => b.mss(),
        }
    }
}

/// What an entry needs besides the flow's own fields.
pub struct Context<'a> {
    /// Where the flow is in the scenario (`flows[2]`, `workloads[0]`): errors start with it.
    pub path: &'a str,
    /// The payload of a full segment, from the flow's `mtu`.
    pub mss: u32,
    /// The flow's path: its one-way delay, bottleneck and largest segment (a workload's:
    /// from its server to its first client, or back for uploads).
    pub defaults: Option<&'a ltp::PathDefaults>,
    /// With `fit = true`, the path to fit the settings to.
    pub fit: Option<&'a FitPath>,
    /// The run's TLS key log, and the prefix of the flow's qlog files (QUIC writes them).
    pub key_log: Option<Arc<spacetp_quic::KeyLogFile>>,
    pub qlog_prefix: Option<PathBuf>,
    /// Why QUIC must encrypt for real (`quic.crypto`), if it must: the run writes a pcap
    /// or a key log.
    pub needs_ciphertext: Option<&'static str>,
    /// Settings the run's flows share when they are equal.
    pub shared: &'a Shared,
}

/// Settings shared across a run's flows: a flow whose TCP settings equal one of the last
/// few flows' gets the same copy. 10 000 flows of one profile then read one set of
/// settings (536 bytes, read on every segment), which stays in the caches, instead of
/// 20 000 copies that do not.
#[derive(Default)]
pub struct Shared {
    tcp: std::cell::RefCell<Vec<Arc<spacetp_proto::TcpConfig>>>,
}

impl Shared {
    /// How many of the latest distinct settings a flow's are compared with: flows are
    /// usually written in runs of the same settings, and the comparison stays bounded.
    const RECENT: usize = 8;

    pub fn tcp(&self, cfg: spacetp_proto::TcpConfig) -> Arc<spacetp_proto::TcpConfig> {
        let mut known = self.tcp.borrow_mut();
        if let Some(same) = known.iter().rev().take(Self::RECENT).find(|c| ***c == cfg) {
            return Arc::clone(same);
        }
        let cfg = Arc::new(cfg);
        known.push(Arc::clone(&cfg));
        cfg
    }
}

/// One transport, as scenarios name it.
pub trait TransportEntry: Sync {
    /// Its name in messages: "TCP", "QUIC", "LTP", "BP".
    fn title(&self) -> &'static str;
    /// The flow's table of its settings (`[flows.KEY]`): "tcp", "quic", "ltp", "bp".
    fn settings_key(&self) -> &'static str;
    /// The `protocol` names it answers to.
    fn protocols(&self) -> Vec<&'static str>;
    /// Its protocols with their descriptions, default settings and families.
    fn profiles(&self) -> Vec<Profile>;
    /// JSON Schema of its settings table.
    fn settings_schema(&self) -> serde_json::Value;
    /// The flow fields it takes besides the common ones and its own table (a flow of
    /// another transport that sets one is refused).
    fn takes(&self) -> &'static [&'static str];
    /// Why it refuses flow field `field` (one it does not take), if it has its own reason;
    /// None gives the common one ([`refusal`]). `table` is "flows" or "workloads".
    fn why_not(&self, _field: &str, _table: &str) -> Option<String> {
        None
    }
    /// Whether a flow's packets go end to end along the route between its hosts (false:
    /// bundles, hop by hop by the contact plan).
    fn routed(&self) -> bool {
        true
    }
    /// Whether flow `f` needs a route (a transport whose carrier is chosen per flow).
    fn routed_flow(&self, _f: &FlowCfg) -> bool {
        self.routed()
    }
    /// A flow's ends from its settings (fitted to its path with `cx.fit`), and the settings
    /// fitted. The other transports' settings were refused before.
    fn flow(&self, f: &FlowCfg, cx: Context) -> Result<(TransportSpec, Vec<Fitted>), FieldError>;
    /// Whether it carries `[[workloads]]` (one connection per file).
    fn carries_workloads(&self) -> bool {
        false
    }
    /// A workload's ends (every file's connection opens from them), for a transport that
    /// [`carries_workloads`](TransportEntry::carries_workloads).
    fn workload(
        &self,
        wl: &WorkloadCfg,
        cx: Context,
    ) -> Result<(Arc<dyn EndsSpec>, Vec<Fitted>), FieldError> {
        let _ = (wl, cx.mss);
        Err(FieldError::new(
            format!("{}.protocol", cx.path),
            format!("{} carries [[flows]] only", self.title()),
        ))
    }
}

/// The entry that answers to `protocol`.
pub fn entry(protocol: &str) -> Option<&'static dyn TransportEntry> {
    TRANSPORTS
        .iter()
        .copied()
        .find(|t| t.protocols().contains(&protocol))
}

/// Every `protocol` a `[[flows]]` entry takes.
pub fn flow_protocols() -> Vec<&'static str> {
    TRANSPORTS.iter().flat_map(|t| t.protocols()).collect()
}

/// A flow's transport: its entry, and its ends built from its settings (fitted with
/// `cx.fit`); the other transports' settings refused, an unknown protocol named.
pub fn flow_transport(
    f: &FlowCfg,
    cx: Context,
) -> Result<(&'static dyn TransportEntry, TransportSpec, Vec<Fitted>), FieldError> {
    let Some(t) = entry(&f.protocol) else {
        return Err(unknown_protocol(
            &f.protocol,
            cx.path,
            &flow_protocols(),
            "",
        ));
    };
    refuse_foreign(t, &f.protocol, &f.transport_fields(), cx.path)?;
    let (spec, fitted) = t.flow(f, cx)?;
    Ok((t, spec, fitted))
}

/// A workload's transport, as [`flow_transport`]; a transport that carries flows only is
/// an unknown protocol here (the list says which those are).
pub fn workload_transport(
    wl: &WorkloadCfg,
    cx: Context,
) -> Result<(Arc<dyn EndsSpec>, Vec<Fitted>), FieldError> {
    let t = entry(&wl.protocol).filter(|t| t.carries_workloads());
    let Some(t) = t else {
        let names = |workloads: bool| -> Vec<&str> {
            TRANSPORTS
                .iter()
                .filter(|t| t.carries_workloads() == workloads)
                .flat_map(|t| t.protocols())
                .collect()
        };
        let (known, only) = (names(true), names(false));
        let note = match only.split_last() {
            Some((last, [])) => format!(" ({last} carries [[flows]] only)"),
            Some((last, rest)) => {
                format!(" ({} and {last} carry [[flows]] only)", rest.join(", "))
            }
            None => String::new(),
        };
        return Err(unknown_protocol(&wl.protocol, cx.path, &known, &note));
    };
    refuse_foreign(t, &wl.protocol, &wl.transport_fields(), cx.path)?;
    t.workload(wl, cx)
}

/// The fields `set` (name, whether the flow sets it) that `t` does not take: the first one
/// set is an error naming it and saying why.
fn refuse_foreign(
    t: &dyn TransportEntry,
    protocol: &str,
    set: &[(&'static str, bool)],
    p: &str,
) -> Result<(), FieldError> {
    let foreign = set
        .iter()
        .filter(|(_, on)| *on)
        .map(|(field, _)| *field)
        .find(|field| *field != t.settings_key() && !t.takes().contains(field));
    let Some(field) = foreign else {
        return Ok(());
    };
    let table = p.split('[').next().unwrap_or(p);
    let why = match TRANSPORTS.iter().find(|o| o.settings_key() == field) {
        Some(owner) => format!(
            "{o} settings do not apply to {e} (protocol \"{protocol}\"); {e}'s are \
             [{table}.{k}], {o}'s need {need}",
            o = owner.title(),
            e = t.title(),
            k = t.settings_key(),
            need = protocol_phrase(*owner),
        ),
        None => t
            .why_not(field, table)
            .unwrap_or_else(|| refusal(t, field, table)),
    };
    Err(FieldError::new(format!("{p}.{field}"), why))
}

/// `protocol = "ltp"`, or `a QUIC protocol (quic, quic-cubic, ...)`.
fn protocol_phrase(t: &dyn TransportEntry) -> String {
    match t.protocols().as_slice() {
        [one] => format!("protocol = \"{one}\""),
        many if many.len() <= 6 => format!("a {} protocol ({})", t.title(), many.join(", ")),
        _ => format!("a {} profile (`spacetp protocols`)", t.title()),
    }
}

/// The common reason a transport refuses a flow field it does not take.
pub fn refusal(t: &dyn TransportEntry, field: &str, table: &str) -> String {
    let (name, key) = (t.title(), t.settings_key());
    match field {
        "peer_protocol" => format!("both ends of a {name} flow run the same {name}"),
        "record_size" => format!("{name} has no record boundaries"),
        "read_rate" => format!("a rate-limited reader is not modelled for {name} yet"),
        "write_rate" => format!("a bundle agent writes the file at once; {name} has no writer"),
        "receive_buffer" | "send_buffer" => {
            format!("{name}'s buffering is its sessions: [{table}.{key}] max_export_sessions")
        }
        _ => format!("these are not {name} settings; {name}'s are [{table}.{key}]"),
    }
}

/// `protocol` is none of `known`: the error names the field and lists them.
fn unknown_protocol(protocol: &str, p: &str, known: &[&str], note: &str) -> FieldError {
    FieldError::new(
        format!("{p}.protocol"),
        format!(
            "unknown protocol \"{protocol}\"; known: {}{note}",
            known.join(", ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flows_of_equal_tcp_settings_share_one_copy() {
        use spacetp_proto::TcpConfig;
        let shared = Shared::default();
        let a = shared.tcp(TcpConfig::default());
        let b = shared.tcp(TcpConfig::default());
        assert!(Arc::ptr_eq(&a, &b), "equal settings: one copy");
        let other = TcpConfig {
            dupack_threshold: 5,
            ..TcpConfig::default()
        };
        let c = shared.tcp(other.clone());
        assert!(!Arc::ptr_eq(&a, &c), "different settings: their own copy");
        assert_eq!(*c, other);
        // Alternating settings still find their copy among the recent ones.
        assert!(Arc::ptr_eq(&shared.tcp(TcpConfig::default()), &a));
        assert!(Arc::ptr_eq(&shared.tcp(other), &c));
    }

    #[test]
    fn every_protocol_has_one_transport() {
        let all = flow_protocols();
        for p in &all {
            let owners = TRANSPORTS.iter().filter(|t| t.protocols().contains(p));
            assert_eq!(owners.count(), 1, "{p}");
        }
        for key in ["newreno", "scps-tp", "quic-bbr", "ltp", "bp", "cfdp"] {
            assert!(all.contains(&key), "{key} in {all:?}");
        }
    }

    #[test]
    fn every_transport_owns_a_distinct_settings_table_and_lists_its_profiles() {
        let mut keys: Vec<_> = TRANSPORTS.iter().map(|t| t.settings_key()).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), TRANSPORTS.len());
        for t in TRANSPORTS {
            let names: Vec<_> = t.profiles().iter().map(|p| p.name).collect();
            assert_eq!(names, t.protocols(), "{}", t.title());
            assert!(t.settings_schema().is_object(), "{}", t.title());
        }
    }
}
