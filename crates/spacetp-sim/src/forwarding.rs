//! Forwarding that changes over time (`[[forwarding]]`): from given instants on, a node's
//! next hop toward a destination is another neighbour, or none. A constellation's routing
//! writes one entry per node and destination it touches, a point per change of the
//! shortest path. A packet takes the hop in force when it reaches a node, so packets in
//! flight follow the new state from their next node on (Hypatia's forwarding state). Pairs
//! without an entry keep the static shortest-hop route (`routes.rs`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use spacetp_proto::units::Duration;
use spacetp_proto::{FieldError, Time};
use std::collections::HashMap;

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForwardingCfg {
    /// The node that forwards.
    pub node: String,
    /// The destination its packets are for.
    pub to: String,
    /// `[time, next hop]` points, times strictly increasing: from each time on, packets for
    /// `to` leave `node` toward that neighbour ("" drops them: no route). Before the first
    /// point the static route applies.
    pub schedule: Vec<(Duration, String)>,
}

/// One node's hops toward one destination: (from time, link direction or None), in time
/// order.
pub type Points = Vec<(Time, Option<u32>)>;

/// Next hops by (node, destination).
pub type Table = HashMap<(u16, u16), Points>;

/// The table of `[[forwarding]]`: names resolved by `lookup` (name, path), the static
/// routes (`static_hop`) where no entry is in force, each next hop a neighbour by a link, no
/// instant at which the state in force sends a packet around a loop.
pub fn build(
    cfgs: &[ForwardingCfg],
    lookup: impl Fn(&str, &str) -> Result<u16, FieldError>,
    names: &[String],
    adj: &[Vec<(u16, u32)>],
    static_hop: &dyn Fn(u16, u16) -> Option<u32>,
) -> Result<Table, FieldError> {
    let mut table = Table::new();
    for (i, f) in cfgs.iter().enumerate() {
        let p = format!("forwarding[{i}]");
        let node = lookup(&f.node, &format!("{p}.node"))?;
        let to = lookup(&f.to, &format!("{p}.to"))?;
        if node == to {
            return Err(FieldError::new(
                format!("{p}.to"),
                format!("\"{}\" is the forwarding node itself", f.to),
            ));
        }
        if f.schedule.is_empty() {
            return Err(FieldError::new(
                format!("{p}.schedule"),
                "give at least one [time, next hop] point",
            ));
        }
        let mut points = Vec::with_capacity(f.schedule.len());
        for (k, (t, next)) in f.schedule.iter().enumerate() {
            let pk = format!("{p}.schedule[{k}]");
            if let Some(&(prev, _)) = points.last() {
                if t.0 <= prev {
                    return Err(FieldError::new(
                        pk,
                        format!(
                            "times must increase strictly: {} s after {} s",
                            secs(t.0),
                            secs(prev)
                        ),
                    ));
                }
            }
            let ld = if next.is_empty() {
                None
            } else {
                let nb = lookup(next, &pk)?;
                let Some(&(_, ld)) = adj[node as usize].iter().find(|&&(n, _)| n == nb) else {
                    return Err(FieldError::new(
                        pk,
                        format!(
                            "\"{next}\" is not a neighbour of \"{}\": no link joins them",
                            f.node
                        ),
                    ));
                };
                Some(ld)
            };
            points.push((t.0, ld));
        }
        if table.insert((node, to), points).is_some() {
            return Err(FieldError::new(
                p,
                format!("a second entry for \"{}\" toward \"{}\"", f.node, f.to),
            ));
        }
    }
    check_loops(&table, adj, names, static_hop)?;
    Ok(table)
}

fn secs(t: Time) -> f64 {
    t as f64 / 1e9
}

/// At every instant some entry toward a destination changes, the hops in force toward it
/// (a node's entry once its first point has passed, else its static route: `static_hop`)
/// must lead to it or out of the network, never around a loop.
fn check_loops(
    table: &Table,
    adj: &[Vec<(u16, u32)>],
    names: &[String],
    static_hop: &dyn Fn(u16, u16) -> Option<u32>,
) -> Result<(), FieldError> {
    // The far end of each link direction.
    let mut far = HashMap::new();
    for links in adj {
        for &(nb, ld) in links {
            far.insert(ld, nb);
        }
    }
    let mut by_dst: HashMap<u16, HashMap<u16, &Points>> = HashMap::new();
    for (&(node, to), points) in table {
        by_dst.entry(to).or_default().insert(node, points);
    }
    for (dst, entries) in by_dst {
        let mut instants: Vec<Time> = entries
            .values()
            .flat_map(|pts| pts.iter().map(|p| p.0))
            .collect();
        instants.sort_unstable();
        instants.dedup();
        for t in instants {
            // A loop in force at t that was not before has a node whose hop changed at t:
            // walking from those finds it.
            let mut starts: Vec<u16> = entries
                .iter()
                .filter(|(_, pts)| pts.binary_search_by_key(&t, |p| p.0).is_ok())
                .map(|(&n, _)| n)
                .collect();
            starts.sort_unstable();
            // The next node from n at t, None when the packet leaves (dropped, no route).
            let next = |n: u16| -> Option<u16> {
                let ld = match entries.get(&n).and_then(|pts| at(pts, t)) {
                    Some(hop) => hop?,
                    None => static_hop(n, dst)?,
                };
                far.get(&ld).copied()
            };
            // 1: on the walk now, 2: known to arrive or leave.
            let mut mark: HashMap<u16, u8> = HashMap::new();
            for &start in &starts {
                let mut walk = Vec::new();
                let mut n = start;
                while n != dst {
                    match mark.get(&n) {
                        Some(2) => break,
                        Some(_) => {
                            let cycle: Vec<&str> = walk
                                .iter()
                                .map(|&w: &u16| names[w as usize].as_str())
                                .collect();
                            return Err(FieldError::new(
                                "forwarding",
                                format!(
                                    "at {} s the hops toward \"{}\" go around a loop: {}",
                                    secs(t),
                                    names[dst as usize],
                                    cycle.join(" -> ")
                                ),
                            ));
                        }
                        None => {}
                    }
                    mark.insert(n, 1);
                    walk.push(n);
                    match next(n) {
                        Some(m) => n = m,
                        None => break,
                    }
                }
                for w in walk {
                    mark.insert(w, 2);
                }
            }
        }
    }
    Ok(())
}

/// The hop in force at `now` in `points`: Some(hop) once the first point has passed.
#[inline]
pub fn at(points: &[(Time, Option<u32>)], now: Time) -> Option<Option<u32>> {
    let k = points.partition_point(|p| p.0 <= now);
    points.get(k.checked_sub(1)?).map(|p| p.1)
}
