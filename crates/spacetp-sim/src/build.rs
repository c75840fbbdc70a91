//! From a validated scenario to the pieces of a world: node indices, link directions, routes,
//! per-flow transport settings. Every check names the scenario path it refers to.

use crate::channel::Channel;
use crate::config::*;
use crate::link::{DirSched, LinkDir, LinkStats, QueueLimit};
use crate::rng::{stream, Rng};
use spacetp_proto::FieldError;
use spacetp_proto::Time;
use std::collections::{HashMap, VecDeque};

pub struct Built {
    pub node_names: Vec<String>,
    pub node_kinds: Vec<NodeKind>,
    pub links: Vec<LinkDir>,
    /// The first hop from a node toward another (`routes.rs`).
    pub routes: crate::routes::Routes,
    pub link_names: Vec<String>,
    /// Each scenario link's path in the scenario (`links[2]`, or `topology.core` for a
    /// template's): link direction `d` is link `d / 2`, `d % 2 == 1` its back direction.
    pub link_paths: Vec<String>,
    /// Per link: its table sets both directions at once (`origin`): no `_back` settings.
    pub link_one_setting: Vec<bool>,
}

/// Add the nodes and links of a ready-made topology to the scenario's own. Returns, for every
/// link, the scenario path its settings came from (`topology.core` for template links), so
/// errors name the field the user wrote.
pub fn expand_topology(sc: &mut Scenario) -> Result<Vec<String>, FieldError> {
    if sc.constellation.is_some() {
        return Err(FieldError::new(
            "constellation",
            "a constellation is turned into nodes, links and forwarding by the Python front \
             before the run (spacetp run, spacetp.run, sweeps; it needs `pip install \
             spacetp[orbits]`); this core takes them explicitly",
        ));
    }
    let own = sc.links.len();
    let mut origins: Vec<String> = (0..own).map(|i| format!("links[{i}]")).collect();
    let Some(t) = sc.topology.clone() else {
        return Ok(origins);
    };
    let need = |v: Option<u32>, field: &str| -> Result<u32, FieldError> {
        match v {
            Some(n) if n >= 1 => Ok(n),
            Some(_) => Err(FieldError::new(
                format!("topology.{field}"),
                "must be at least 1",
            )),
            None => Err(FieldError::new(
                format!("topology.{field}"),
                format!("required for kind {:?}", t.kind),
            )),
        }
    };
    let access = || {
        t.access.clone().ok_or_else(|| {
            FieldError::new("topology.access", format!("required for kind {:?}", t.kind))
        })
    };
    let add_node = |sc: &mut Scenario, name: String, kind: NodeKind| {
        sc.nodes.push(NodeCfg {
            name,
            kind: Some(kind),
            dtn_node: None,
        });
    };
    match t.kind {
        TopologyKind::Chain => {
            let n = need(t.nodes, "nodes")?;
            if n < 2 {
                return Err(FieldError::new(
                    "topology.nodes",
                    "a chain needs at least 2 nodes",
                ));
            }
            for i in 0..n {
                let kind = if i == 0 || i == n - 1 {
                    NodeKind::Host
                } else {
                    NodeKind::Router
                };
                add_node(sc, format!("n{i}"), kind);
            }
            for i in 0..n - 1 {
                sc.links
                    .push(t.core.between(&format!("n{i}"), &format!("n{}", i + 1)));
            }
        }
        TopologyKind::Dumbbell => {
            let n = need(t.pairs, "pairs")?;
            let acc = access()?;
            add_node(sc, "left".into(), NodeKind::Router);
            add_node(sc, "right".into(), NodeKind::Router);
            sc.links.push(t.core.between("left", "right"));
            for i in 0..n {
                add_node(sc, format!("s{i}"), NodeKind::Host);
                add_node(sc, format!("r{i}"), NodeKind::Host);
                sc.links.push(acc.between(&format!("s{i}"), "left"));
                sc.links.push(acc.between("right", &format!("r{i}")));
            }
        }
        TopologyKind::GroundStations => {
            let n = need(t.hosts, "hosts")?;
            let m = match t.servers {
                Some(0) => return Err(FieldError::new("topology.servers", "must be at least 1")),
                Some(m) => m,
                None => 1,
            };
            let acc = access()?;
            add_node(sc, "gs_a".into(), NodeKind::Router);
            add_node(sc, "gs_b".into(), NodeKind::Router);
            sc.links.push(t.core.between("gs_a", "gs_b"));
            for i in 0..n {
                add_node(sc, format!("h{i}"), NodeKind::Host);
                sc.links.push(acc.between(&format!("h{i}"), "gs_a"));
            }
            for i in 0..m {
                add_node(sc, format!("srv{i}"), NodeKind::Host);
                sc.links.push(acc.between("gs_b", &format!("srv{i}")));
            }
        }
    }
    sc.topology = None;
    // The core link comes first for dumbbell and ground stations; chains are all core.
    for i in own..sc.links.len() {
        let core = t.kind == TopologyKind::Chain || i == own;
        origins.push(if core {
            "topology.core".into()
        } else {
            "topology.access".into()
        });
    }
    Ok(origins)
}

pub fn node_index(sc: &Scenario) -> Result<HashMap<String, u16>, FieldError> {
    if sc.nodes.len() > u16::MAX as usize {
        return Err(FieldError::new(
            "nodes",
            format!("{} nodes; at most {}", sc.nodes.len(), u16::MAX),
        ));
    }
    let mut m = HashMap::new();
    for (i, n) in sc.nodes.iter().enumerate() {
        if n.name.is_empty() {
            return Err(FieldError::new(
                format!("nodes[{i}].name"),
                "must not be empty",
            ));
        }
        if m.insert(n.name.clone(), i as u16).is_some() {
            return Err(FieldError::new(
                format!("nodes[{i}].name"),
                format!("\"{}\" is used twice", n.name),
            ));
        }
    }
    Ok(m)
}

pub fn lookup(idx: &HashMap<String, u16>, name: &str, path: &str) -> Result<u16, FieldError> {
    idx.get(name).copied().ok_or_else(|| {
        let mut known: Vec<&String> = idx.keys().collect();
        known.sort();
        let known: Vec<&str> = known.iter().take(12).map(|s| s.as_str()).collect();
        FieldError::new(
            path.to_string(),
            format!("unknown node \"{name}\"; nodes are: {}", known.join(", ")),
        )
    })
}

fn queue_limit(
    cfg: Option<&QueueCfg>,
    rate: f64,
    rtt: Time,
    pkt: u32,
    path: &str,
) -> Result<QueueLimit, FieldError> {
    let Some(q) = cfg else {
        return Ok(QueueLimit::Packets(100));
    };
    let given = [q.packets.is_some(), q.bytes.is_some(), q.bdp.is_some()]
        .iter()
        .filter(|&&b| b)
        .count();
    if given != 1 {
        return Err(FieldError::new(
            path.to_string(),
            "give exactly one of packets, bytes, bdp",
        ));
    }
    if let Some(p) = q.packets {
        if p == 0 {
            return Err(FieldError::new(
                format!("{path}.packets"),
                "must be at least 1",
            ));
        }
        return Ok(QueueLimit::Packets(p));
    }
    if let Some(b) = q.bytes {
        if b.0 == 0 {
            return Err(FieldError::new(
                format!("{path}.bytes"),
                "must be at least 1 byte",
            ));
        }
        return Ok(QueueLimit::Bytes(b.0));
    }
    let f = q.bdp.unwrap_or(1.0);
    if !(f.is_finite() && f > 0.0) {
        return Err(FieldError::new(
            format!("{path}.bdp"),
            format!("{f} must be > 0"),
        ));
    }
    // Packets of the largest size the flows send, as ns-3 scripts size BDP queues.
    let bytes = f * rate / 8.0 * rtt as f64 / 1e9;
    Ok(QueueLimit::Packets(
        ((bytes / pkt as f64).ceil() as u32).max(2),
    ))
}

pub fn build_links(
    sc: &Scenario,
    idx: &HashMap<String, u16>,
    max_pkt: u32,
    origins: &[String],
) -> Result<Built, FieldError> {
    let n = sc.nodes.len();
    let mut links = Vec::new();
    let mut link_names = Vec::new();
    let mut adj: Vec<Vec<(u16, u32)>> = vec![Vec::new(); n];
    for (li, l) in sc.links.iter().enumerate() {
        let p = origins
            .get(li)
            .cloned()
            .unwrap_or_else(|| format!("links[{li}]"));
        if let Some(o) = &l.origin {
            if !["constellation.isl", "constellation.gsl"].contains(&o.as_str()) {
                return Err(FieldError::new(
                    format!("{p}.origin"),
                    format!(
                        "\"{o}\": set by the Python front for a constellation's links, \
                         \"constellation.isl\" or \"constellation.gsl\""
                    ),
                ));
            }
        }
        // A constellation's link is reported as the table that made it.
        let p = l.origin.clone().unwrap_or(p);
        let a = lookup(idx, &l.between[0], &format!("{p}.between[0]"))?;
        let b = lookup(idx, &l.between[1], &format!("{p}.between[1]"))?;
        if a == b {
            return Err(FieldError::new(
                format!("{p}.between"),
                "a link needs two different nodes",
            ));
        }
        let mtu = match l.mtu {
            Some(m) if m.0 < 68 || m.0 > 65535 => {
                return Err(FieldError::new(
                    format!("{p}.mtu"),
                    format!("{} must be in [68, 65535] bytes", m.0),
                ))
            }
            Some(m) => m.0 as u32,
            None => 65535,
        };
        let scheds = crate::link_sched::directions(l, &p)?;
        for (dir, DirSched { rate, delay, down }) in scheds.into_iter().enumerate() {
            let (from, to, suffix) = if dir == 0 {
                (a, b, "")
            } else {
                (b, a, "_back")
            };
            let rtt = 2 * delay.max();
            let qcfg = if dir == 0 {
                l.queue.as_ref()
            } else {
                l.queue_back.as_ref()
            };
            let limit = queue_limit(
                qcfg,
                rate.max(),
                rtt,
                max_pkt,
                &format!("{p}.queue{suffix}"),
            )?;
            let ecfg = if dir == 0 {
                l.errors.as_ref()
            } else {
                l.errors_back.as_ref().or(l.errors.as_ref())
            };
            let rng = Rng::for_component(sc.seed, stream::CHANNEL, 2 * li as u64 + dir as u64);
            let channel = match ecfg {
                Some(e) => Channel::from_cfg(e, &format!("{p}.errors{suffix}"), rng)?,
                None => Channel::none(rng),
            };
            let name = format!(
                "{}->{}",
                sc.nodes[from as usize].name, sc.nodes[to as usize].name
            );
            adj[from as usize].push((to, links.len() as u32));
            links.push(LinkDir {
                from,
                to,
                rate,
                framing: l.framing.0 as u32,
                mtu,
                delay,
                limit,
                channel,
                corrupted_policy: l.corrupted,
                outages: down,
                queue: VecDeque::new(),
                queue_low: VecDeque::new(),
                priority: qcfg.is_some_and(|q| q.discipline == Discipline::Priority),
                queue_bytes: 0,
                on_wire: None,
                pipe: VecDeque::new(),
                last_arrival: 0,
                stats: LinkStats {
                    name: name.clone(),
                    ..Default::default()
                },
                tap: None,
                busy: 0,
            });
            link_names.push(name);
        }
    }
    let names: Vec<String> = sc.nodes.iter().map(|x| x.name.clone()).collect();
    let by_name = |name: &str, path: &str| lookup(idx, name, path);
    let routes = crate::routes::Routes::new(adj);
    let static_hop = |n: u16, d: u16| routes.static_hop(n, d);
    let scheduled = crate::forwarding::build(
        &sc.forwarding,
        by_name,
        &names,
        routes.adjacency(),
        &static_hop,
    )?;
    let routes = routes.with_schedule(scheduled);
    let node_kinds = infer_kinds(sc, idx)?;
    Ok(Built {
        node_names: names,
        node_kinds,
        links,
        routes,
        link_names,
        link_paths: (0..sc.links.len())
            .map(|li| {
                sc.links[li]
                    .origin
                    .clone()
                    .or_else(|| origins.get(li).cloned())
                    .unwrap_or_else(|| format!("links[{li}]"))
            })
            .collect(),
        link_one_setting: sc.links.iter().map(|l| l.origin.is_some()).collect(),
    })
}

fn infer_kinds(sc: &Scenario, idx: &HashMap<String, u16>) -> Result<Vec<NodeKind>, FieldError> {
    let mut endpoints = vec![false; sc.nodes.len()];
    let mut mark = |name: &str| {
        if let Some(&i) = idx.get(name) {
            endpoints[i as usize] = true;
        }
    };
    for f in &sc.flows {
        mark(&f.from);
        mark(&f.to);
    }
    for w in &sc.workloads {
        mark(&w.server);
        w.clients.iter().for_each(|c| mark(c));
    }
    for t in &sc.traffic {
        mark(&t.from);
        mark(&t.to);
    }
    sc.nodes
        .iter()
        .enumerate()
        .map(|(i, n)| match (n.kind, endpoints[i]) {
            (Some(NodeKind::Router), true) => Err(FieldError::new(
                format!("nodes[{i}].kind"),
                format!(
                    "\"{}\" is a router but a flow starts or ends there; make it a host",
                    n.name
                ),
            )),
            (Some(k), _) => Ok(k),
            (None, true) => Ok(NodeKind::Host),
            (None, false) => Ok(NodeKind::Router),
        })
        .collect()
}

/// The transport settings of a flow (defined beside the profiles, shared with the gateway).
pub use spacetp_proto::settings::tcp_config;

/// The MSS for a flow of IP packet size `mtu` (IPv4 + TCP headers without options: 40 bytes).
pub fn mss_for(mtu: u64, path: &str) -> Result<u32, FieldError> {
    if !(68..=65535).contains(&mtu) {
        return Err(FieldError::new(
            format!("{path}.mtu"),
            format!("{mtu} B must be in [68, 65535] bytes"),
        ));
    }
    Ok(mtu as u32 - 40)
}
