//! Static shortest-hop routes. The first hop from a node toward a destination is the first
//! link listed at that node whose far end is one hop nearer the destination: what a
//! breadth-first search from the node gives when it keeps the first link by which it
//! reached each node. Every node's first hop toward a destination is computed the first
//! time a route to it is asked for (one search from it), so memory and setup grow with the
//! destinations used (flow ends), not with the square of the nodes (a chain of 10 000 nodes
//! held 800 MB of routes), and a packet's hop is one lookup.

use std::cell::OnceCell;
use std::collections::VecDeque;

/// No path.
const UNREACHABLE: u32 = u32::MAX;

#[derive(Debug, Default)]
pub struct Routes {
    /// For each node, (neighbour, link direction to it), in the order the links are listed.
    adj: Vec<Vec<(u16, u32)>>,
    /// Every node's first hop toward destination `d`, once a route to `d` was asked for.
    first_to: Vec<OnceCell<Vec<Option<u32>>>>,
    /// `[[forwarding]]`: hops that change over time, before the static ones.
    scheduled: crate::forwarding::Table,
}

impl Routes {
    /// Routes over `adj`, whose links go both ways (each link direction's reverse is
    /// listed at the far end).
    pub fn new(adj: Vec<Vec<(u16, u32)>>) -> Routes {
        let first_to = (0..adj.len()).map(|_| OnceCell::new()).collect();
        Routes {
            adj,
            first_to,
            scheduled: Default::default(),
        }
    }

    /// For each node, (neighbour, link direction to it).
    pub fn adjacency(&self) -> &[Vec<(u16, u32)>] {
        &self.adj
    }

    /// These routes with hops that change over time (`forwarding::build`).
    pub fn with_schedule(mut self, scheduled: crate::forwarding::Table) -> Routes {
        self.scheduled = scheduled;
        self
    }

    /// The link direction of the first hop from `from` toward `to` at the start; None when
    /// `to` is `from` or out of reach.
    pub fn first_hop(&self, from: u16, to: u16) -> Option<u32> {
        self.hop_at(from, to, 0)
    }

    /// The hop from `from` toward `to` in force at `now`: a scheduled one, else the static.
    #[inline]
    pub fn hop_at(&self, from: u16, to: u16, now: spacetp_proto::Time) -> Option<u32> {
        if !self.scheduled.is_empty() {
            if let Some(hop) = self
                .scheduled
                .get(&(from, to))
                .and_then(|pts| crate::forwarding::at(pts, now))
            {
                return hop;
            }
        }
        self.static_hop(from, to)
    }

    /// Every instant (after the start) at which a `[[forwarding]]` entry changes, in order:
    /// where a flow's path may change.
    pub fn change_instants(&self) -> Vec<spacetp_proto::Time> {
        let mut out: Vec<_> = self
            .scheduled
            .values()
            .flat_map(|pts| pts.iter().map(|p| p.0))
            .filter(|&t| t > 0)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The static shortest-hop route's first hop (no `[[forwarding]]`).
    pub fn static_hop(&self, from: u16, to: u16) -> Option<u32> {
        self.first_to[to as usize].get_or_init(|| first_hops_to(&self.adj, to))[from as usize]
    }

    /// The link directions a flow's set-up checks walk (route, MTU, path defaults): the
    /// route in force at the start, or, where `[[forwarding]]` leaves none then (a path that
    /// appears later, an empty hop), the static one. None when neither reaches `to`.
    pub fn setup_path(
        &self,
        from: u16,
        to: u16,
        links_to: impl Fn(u32) -> u16,
    ) -> Option<Vec<u32>> {
        let walk = |hop: &dyn Fn(u16) -> Option<u32>| {
            let (mut n, mut dirs) = (from, Vec::new());
            while n != to {
                let ld = hop(n)?;
                dirs.push(ld);
                if dirs.len() > self.adj.len() {
                    return None; // around a loop
                }
                n = links_to(ld);
            }
            Some(dirs)
        };
        walk(&|n| self.hop_at(n, to, 0)).or_else(|| walk(&|n| self.static_hop(n, to)))
    }
}

/// Every node's first hop toward `dst`: the first link listed at the node whose far end
/// is one hop nearer.
pub(crate) fn first_hops_to(adj: &[Vec<(u16, u32)>], dst: u16) -> Vec<Option<u32>> {
    let hops = hops_to(adj, dst);
    adj.iter()
        .zip(&hops)
        .map(|(links, &h)| {
            if h == UNREACHABLE || h == 0 {
                return None;
            }
            links
                .iter()
                .find(|&&(nb, _)| hops[nb as usize] == h - 1)
                .map(|&(_, ld)| ld)
        })
        .collect()
}

/// Hops from every node to `dst` (links go both ways: a search from `dst`).
fn hops_to(adj: &[Vec<(u16, u32)>], dst: u16) -> Vec<u32> {
    let mut hops = vec![UNREACHABLE; adj.len()];
    hops[dst as usize] = 0;
    let mut q = VecDeque::from([dst]);
    while let Some(u) = q.pop_front() {
        for &(nb, _) in &adj[u as usize] {
            if hops[nb as usize] == UNREACHABLE {
                hops[nb as usize] = hops[u as usize] + 1;
                q.push_back(nb);
            }
        }
    }
    hops
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The search from each source these routes replace: the first link by which a
    /// breadth-first search from `src` reaches each node.
    fn first_hops_from(adj: &[Vec<(u16, u32)>], src: u16) -> Vec<Option<u32>> {
        let mut first = vec![None; adj.len()];
        let mut seen = vec![false; adj.len()];
        seen[src as usize] = true;
        let mut q = VecDeque::new();
        for &(nb, ld) in &adj[src as usize] {
            if !seen[nb as usize] {
                seen[nb as usize] = true;
                first[nb as usize] = Some(ld);
                q.push_back(nb);
            }
        }
        while let Some(u) = q.pop_front() {
            for &(nb, _) in &adj[u as usize] {
                if !seen[nb as usize] {
                    seen[nb as usize] = true;
                    first[nb as usize] = first[u as usize];
                    q.push_back(nb);
                }
            }
        }
        first
    }

    #[test]
    fn the_same_first_hops_as_a_search_from_each_source_on_random_graphs() {
        // Meshes with ties (many shortest paths), parallel links and unreachable parts.
        let mut x: u64 = 11;
        let mut rnd = |n: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        for _ in 0..200 {
            let n = 2 + rnd(30) as u16;
            let mut adj = vec![Vec::new(); n as usize];
            let mut dirs = 0u32;
            for _ in 0..rnd(3 * n as u64) {
                let (a, b) = (rnd(n as u64) as u16, rnd(n as u64) as u16);
                if a != b {
                    adj[a as usize].push((b, dirs));
                    adj[b as usize].push((a, dirs + 1));
                    dirs += 2;
                }
            }
            let routes = Routes::new(adj.clone());
            for src in 0..n {
                let expect = first_hops_from(&adj, src);
                for dst in 0..n {
                    assert_eq!(routes.first_hop(src, dst), expect[dst as usize]);
                }
            }
        }
    }
}
