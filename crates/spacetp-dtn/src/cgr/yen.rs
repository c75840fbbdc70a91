//! The routes to one destination, found one at a time as ION finds them: the first by one
//! Dijkstra search, each next one by Yen's algorithm with Lawler's modification
//! (libcgr.c `computeAnotherRoute`, `computeSpurRoute`): ION's "selected routes" are
//! Yen's list A, its "known routes" list B.
//!
//! For the last selected route, spur routes branch off each of its contacts from the one
//! where it branched off its parent (Lawler), or from the local node if it did not: the
//! root path's contacts and nodes are left out, and so is the next contact of every
//! selected route that shares the root path. The best candidate (earliest best-case
//! arrival; the first found among equals, as ION) moves from B to A.
//!
//! ION 4.1.3's spur searches from a route's contacts start from the arrival time the
//! previous search left in the spur contact's work area (`clearWorkAreas(rootContact)`
//! keeps it), and the previous search had reset it and never reached that contact (it was
//! the excluded one), so they find nothing: only the spurs from the local node produce
//! routes ([`Spurs::LocalNodeOnly`], the default, checked against cgrfetch). With
//! [`Spurs::Lawler`] every spur is searched, from the root path's arrival recomputed from
//! `now`, indexing the route's own hops (ION keeps the spur root as an element of the hop
//! list of the route it branched from). Candidates already in list B are not added twice.

use super::search::{search, Graph, Start};
use super::Route;
use crate::contact_plan::ContactId;
use spacetp_proto::Time;

pub(crate) struct Selected {
    pub route: Route,
    /// The last contact of the root path this route branched from (None: the local node).
    pub spur_root: Option<usize>,
    pub spurs_computed: bool,
}

/// Yen's lists A and B for one (source, destination), and the time they were computed at.
pub(crate) struct RouteLists {
    pub selected: Vec<Selected>,
    pub known: Vec<(Route, Option<usize>)>,
    pub since: Time,
}

impl RouteLists {
    pub fn new(now: Time) -> Self {
        RouteLists {
            selected: Vec::new(),
            known: Vec::new(),
            since: now,
        }
    }
}

pub(crate) fn make_route(g: &Graph, hops: Vec<usize>, arrival: Time) -> Route {
    let contacts = g.plan.contacts();
    let first = &contacts[hops[0]];
    Route {
        neighbor: first.to,
        from_time: first.start,
        forfeit_time: hops.iter().map(|&i| contacts[i].end).min().unwrap_or(0),
        best_delivery_time: arrival,
        confidence: hops.iter().map(|&i| contacts[i].confidence).product(),
        hops: hops.into_iter().map(ContactId).collect(),
    }
}

/// ION's first route: Dijkstra from the local node.
pub(crate) fn first_route(g: &Graph, source: u64, dest: u64, now: Time) -> Option<Route> {
    let start = Start {
        node: source,
        arrival: now,
        path: &[],
    };
    search(g, &start, dest, now, &[]).map(|f| make_route(g, f.hops, f.arrival))
}

/// Which spur searches run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Spurs {
    /// From the local node only (what ION 4.1.3's searches amount to).
    LocalNodeOnly,
    /// From the branch point of the route and each later contact (Yen with Lawler).
    Lawler,
}

/// Computes the spur routes of `lists.selected[k]` into list B and moves the best of B to
/// list A; false when B is then empty (no more routes).
pub(crate) fn compute_another(
    g: &Graph,
    lists: &mut RouteLists,
    k: usize,
    (source, dest, now): (u64, u64, Time),
    spurs: Spurs,
) -> bool {
    let hops: Vec<usize> = lists.selected[k].route.hops.iter().map(|h| h.0).collect();
    let first_root = lists.selected[k].spur_root;
    let last = match spurs {
        Spurs::LocalNodeOnly => 0,
        Spurs::Lawler => hops.len().saturating_sub(1),
    };
    let roots =
        std::iter::once(first_root).chain((first_root.map_or(0, |i| i + 1)..last).map(Some));
    for root in roots {
        let path = &hops[..root.map_or(0, |i| i + 1)];
        if path.len() == hops.len() {
            break; // the root path already reaches the destination
        }
        let Some(arrival) = g.arrival_along(path, now) else {
            break; // the root path can no longer be followed
        };
        let node = path.last().map_or(source, |&i| g.plan.contacts()[i].to);
        let excluded: Vec<usize> = lists
            .selected
            .iter()
            .map(|s| &s.route.hops)
            .filter(|h| h.len() > path.len() && h.iter().zip(path).all(|(a, b)| a.0 == *b))
            .map(|h| h[path.len()].0)
            .collect();
        let start = Start {
            node,
            arrival,
            path,
        };
        let Some(found) = search(g, &start, dest, now, &excluded) else {
            continue;
        };
        let full: Vec<usize> = path.iter().copied().chain(found.hops).collect();
        let duplicate = lists
            .known
            .iter()
            .any(|(r, _)| r.hops.iter().map(|h| h.0).eq(full.iter().copied()));
        if !duplicate {
            lists.known.push((make_route(g, full, found.arrival), root));
        }
    }
    let Some(best) = (0..lists.known.len()).min_by_key(|&i| lists.known[i].0.best_delivery_time)
    else {
        return false;
    };
    let (route, spur_root) = lists.known.remove(best);
    lists.selected.push(Selected {
        route,
        spur_root,
        spurs_computed: false,
    });
    true
}
