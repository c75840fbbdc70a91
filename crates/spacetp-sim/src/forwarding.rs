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

/// The table of `[[forwarding]]`: names resolved by `lookup` (name, path), each next hop a neighbour by a link, no
/// instant at which the state in force sends a packet around a loop.
pub fn build(
    cfgs: &[ForwardingCfg],
    lookup: impl Fn(&str, &str) -> Result<u16, FieldError>,
    names: &[String],
    adj: &[Vec<(u16, u32)>],
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
    check_loops(&table, adj, names)?;
    Ok(table)
}

fn secs(t: Time) -> f64 {
    t as f64 / 1e9
}

/// At every instant some entry toward a destination changes, the scheduled hops toward it
/// must lead out of the scheduled nodes or to it, never around a loop.
fn check_loops(table: &Table, adj: &[Vec<(u16, u32)>], names: &[String]) -> Result<(), FieldError> {
    // The far end of each link direction.
    let mut far = HashMap::new();
    for links in adj {
        for &(nb, ld) in links {
            far.insert(ld, nb);
        }
    }
    let mut by_dst: HashMap<u16, Vec<(u16, &Points)>> = HashMap::new();
    for (&(node, to), points) in table {
        by_dst.entry(to).or_default().push((node, points));
    }
    for (dst, mut entries) in by_dst {
        entries.sort_by_key(|e| e.0);
        let mut instants: Vec<Time> = entries
            .iter()
            .flat_map(|e| e.1.iter().map(|p| p.0))
            .collect();
        instants.sort_unstable();
        instants.dedup();
        let slot: HashMap<u16, usize> = entries.iter().enumerate().map(|(i, e)| (e.0, i)).collect();
        for t in instants {
            // The hop of each scheduled node at t (None: static route or dropped: leaves).
            let hop = |i: usize| -> Option<u16> {
                let pts = entries[i].1;
                let k = pts.partition_point(|p| p.0 <= t);
                let ld = pts.get(k.checked_sub(1)?)?.1?;
                far.get(&ld).copied()
            };
            // 0 unvisited, 1 on the walk now, 2 known to leave.
            let mut mark = vec![0u8; entries.len()];
            for start in 0..entries.len() {
                let mut walk = Vec::new();
                let mut i = start;
                loop {
                    match mark[i] {
                        2 => break,
                        1 => {
                            let cycle: Vec<&str> = walk
                                .iter()
                                .map(|&w: &usize| names[entries[w].0 as usize].as_str())
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
                        _ => {}
                    }
                    mark[i] = 1;
                    walk.push(i);
                    match hop(i).filter(|&n| n != dst).and_then(|n| slot.get(&n)) {
                        Some(&j) => i = j,
                        None => break,
                    }
                }
                for w in walk {
                    mark[w] = 2;
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
