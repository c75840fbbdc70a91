//! One Dijkstra search of the contact graph, as ION's `computeDistanceToTerminus`
//! (bpv7/cgr/libcgr.c): contacts are the vertices; the search starts from a node reached
//! at some time (the local node now, or the end of a root path for Yen's spur routes).
//!
//! A contact C (B -> C) follows the current contact (-> B) when C has not ended by the
//! time the bundle reaches B; the cost of C is its best-case arrival time
//! max(C.start, arrival at B) + the light time of C (+ ION's margin for the receiver's
//! motion). No queueing and no transmission time: those belong to the bundle's projected
//! arrival ([`super::pbat`]). The next vertex is the unvisited one of earliest arrival,
//! then fewest hops, then first in ION's contact order (from, to, start): exactly the
//! choice of ION's linear scan, made with a heap. The search ends when the chosen vertex
//! is a contact to the destination.
//!
//! Contacts that ended by `now`, contacts without a range (ION cannot use them either),
//! contacts suppressed by the caller (a root path) and excluded first hops are skipped.
//! One rule is ours: a contact into a node the path already holds is never relaxed, so a
//! route never visits a node twice. Without exclusions such a path is never the earliest
//! (arrival times do not decrease along a path), so this changes nothing there; it keeps
//! Yen's spur routes loopless, as Yen's algorithm removes the root path's nodes.

use crate::contact_plan::{ContactId, ContactPlan};
use spacetp_proto::{Time, SEC};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// ION's allowance for the motion of the receiver while the signal travels
/// (libcgr.c: `((MAX_SPEED_MPH / 3600) * owlt) / 186282` in whole seconds, with
/// MAX_SPEED_MPH = 450000, ici/include/ion.h): 0 below 1491 s of light time.
pub fn owlt_margin(owlt: Time) -> Time {
    (450_000 / 3600) * (owlt / SEC) / 186_282 * SEC
}

/// The contact graph of a plan: each contact's light time for CGR, margin included.
pub(crate) struct Graph {
    pub plan: std::sync::Arc<ContactPlan>,
    pub owlt: Vec<Option<Time>>,
}

impl Graph {
    pub fn new(plan: std::sync::Arc<ContactPlan>, margin: bool) -> Self {
        let owlt = (0..plan.contacts().len())
            .map(|i| {
                plan.contact_owlt(ContactId(i))
                    .map(|o| if margin { o + owlt_margin(o) } else { o })
            })
            .collect();
        Graph { plan, owlt }
    }

    /// The best-case arrival at the end of `path` for a bundle at its first node at `now`;
    /// None if a contact of the path has ended before the bundle can use it.
    pub fn arrival_along(&self, path: &[usize], now: Time) -> Option<Time> {
        let mut t = now;
        for &id in path {
            let c = &self.plan.contacts()[id];
            if c.end <= t {
                return None;
            }
            t = c.start.max(t) + self.owlt[id]?;
        }
        Some(t)
    }
}

/// Where a search starts: `node`, reached at `arrival` through the contacts `path`
/// (empty at the local node).
pub(crate) struct Start<'a> {
    pub node: u64,
    pub arrival: Time,
    pub path: &'a [usize],
}

/// The contacts from the start to the destination, and the best-case arrival.
pub(crate) struct Found {
    pub hops: Vec<usize>,
    pub arrival: Time,
}

const NONE: usize = usize::MAX;

pub(crate) fn search(
    g: &Graph,
    start: &Start,
    dest: u64,
    now: Time,
    excluded_first: &[usize],
) -> Option<Found> {
    let contacts = g.plan.contacts();
    let n = contacts.len();
    let mut arrival = vec![Time::MAX; n];
    let mut hops = vec![0u32; n];
    let mut pred = vec![NONE; n];
    let mut visited = vec![false; n];
    let mut suppressed = vec![false; n];
    let mut path_nodes = vec![start.node];
    for &id in start.path {
        suppressed[id] = true;
        path_nodes.push(contacts[id].from);
    }
    let on_path = |node: u64, mut at: usize, pred: &[usize]| {
        while at != NONE {
            if contacts[at].to == node {
                return true;
            }
            at = pred[at];
        }
        path_nodes.contains(&node)
    };
    let mut heap = BinaryHeap::new();
    let mut current = NONE;
    let (mut node, mut t, mut h) = (start.node, start.arrival, start.path.len() as u32);
    loop {
        for id in g.plan.ids_from(node) {
            let c = &contacts[id];
            if c.end <= now || suppressed[id] || visited[id] {
                continue;
            }
            if current == NONE && excluded_first.contains(&id) {
                suppressed[id] = true;
                continue;
            }
            if c.end <= t {
                continue; // transmission has stopped by the time the bundle is here
            }
            let Some(owlt) = g.owlt[id] else {
                suppressed[id] = true; // no range: ION cannot use the contact
                continue;
            };
            if on_path(c.to, current, &pred) {
                continue;
            }
            let a = c.start.max(t) + owlt;
            if a < arrival[id] {
                arrival[id] = a;
                pred[id] = current;
                hops[id] = h + 1;
                heap.push(Reverse((a, h + 1, id)));
            }
        }
        if current != NONE {
            visited[current] = true;
        }
        let next = loop {
            let Reverse((a, hh, id)) = heap.pop()?;
            if !visited[id] && !suppressed[id] && arrival[id] == a && hops[id] == hh {
                break id;
            }
        };
        if contacts[next].to == dest {
            let mut route = Vec::new();
            let mut at = next;
            while at != NONE {
                route.push(at);
                at = pred[at];
            }
            route.reverse();
            return Some(Found {
                hops: route,
                arrival: arrival[next],
            });
        }
        current = next;
        (node, t, h) = (contacts[next].to, arrival[next], hops[next]);
    }
}
