//! Contact Graph Routing as NASA ION 4.1.3 computes it (bpv7/cgr/libcgr.c, the default
//! "classic" CGR; Unibo-CGR is a build option ION does not enable by default), which
//! implements CCSDS 734.3-B-1 Schedule-Aware Bundle Routing. Background: Fraire, Araniti
//! et al., "Routing in the Space Internet: a contact graph routing tutorial", J. Netw.
//! Comput. Appl. 2021.
//!
//! Two stages, as in ION:
//! 1. **Routes** (bundle-independent; `search`, `yen`): Dijkstra over the contact graph
//!    (contacts are vertices) gives the route of earliest best-case arrival; the next ones
//!    come on demand, as ION 4.1.3 finds them (a different first contact each) or by Yen's
//!    algorithm with Lawler's modification ([`Alternatives`]). A [`Route`]
//!    carries its contacts, its first hop (the neighbor), its best-case delivery time and
//!    its forfeit time (the earliest end of its contacts, after which it is unusable).
//! 2. **Selection** for one bundle (`pbat`; ION's `loadBestRoutesList`, `checkRoute`,
//!    `tryRoute`, `computePBAT`): the routes found so far are checked in order and the
//!    best projected arrival wins; another route is computed only while none qualifies.
//!    A route is skipped when it has expired, its best case arrives after the bundle
//!    expires, its first contact is not certain (confidence 1), its neighbor is excluded,
//!    or the bundle's projection fails (see `pbat`). Routes are kept between bundles (per
//!    source and destination), as ION keeps them until the plan changes, so the same
//!    sequence of calls gives ION's sequence of choices.
//!
//! Booking ([`Cgr::book`], ION's `ipnfw.c`) subtracts the bundle's estimated consumption
//! from the residual volume of every contact of its route, for its priority and the lower
//! ones, so successive bundles fill contacts and later ones move to later routes.
//!
//! Implemented from ION: Dijkstra with ION's tie-breaking (arrival, hops, contact order);
//! ION's light-time margin for the receiver's motion; ION's range lookup for a contact
//! (`getApplicableRange`) and contacts without a range unusable; the next routes as ION
//! 4.1.3 finds them, or Yen/Lawler; the checks and the order of candidate routes; the
//! earliest transmission opportunity from the caller's backlog, less what earlier contacts
//! to the same neighbor carry first; per-hop transmission time; residual volume per
//! priority (ION's "MTV") and booking; the effective volume limit, and the volume a
//! fragmentable bundle would be cut to; ION's estimate of convergence-layer overhead
//! (`computeECCC`, can be turned off); excluded neighbors (ION excludes the node a bundle
//! came from).
//!
//! Ours: a route never visits a node twice (ION only avoids the root path's contacts; see
//! `search`); times are to the nanosecond where ION truncates to seconds.
//!
//! Not implemented: overbooking management (bumping queued lower-priority bundles,
//! `manageOverbooking`); minimum-latency ("critical") bundles sent on every route;
//! forwarding extra copies for confidence (`MIN_CONFIDENCE_IMPROVEMENT`); the throttle's
//! commitment of the current second in prior claims; hypothetical, discovered and
//! predicted contacts (opportunistic CGR; ION's Dijkstra walks hypothetical contacts but
//! can never select a route through them, their volume being 0); egress plans missing or
//! blocked (every neighbor is assumed to have one); regions; proactive fragmentation
//! itself (the caller cuts the bundle to `Forwarding::volume`); routing to the local node.

mod pbat;
mod search;
mod yen;

pub use search::owlt_margin;

use crate::contact_plan::{ContactId, ContactPlan};
use search::Graph;
use spacetp_proto::Time;
use std::collections::BTreeMap;
use yen::RouteLists;

/// A bundle's priority (ION's class of service: bulk 0, standard 1, expedited 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Priority {
    Bulk = 0,
    Standard = 1,
    Expedited = 2,
}

/// What CGR needs to know of a bundle.
#[derive(Clone, Debug, PartialEq)]
pub struct Bundle {
    /// Size of the bundle, bytes (ION's `guessBundleSize`: primary block, extensions
    /// and payload).
    pub size: u64,
    pub priority: Priority,
    /// The bundle expires at this time; routes that deliver later are refused.
    pub expiration: Time,
    /// Whether the bundle may be fragmented to fit a contact (ION fragments proactively
    /// unless the bundle says "do not fragment"). When false, a contact that cannot take
    /// the whole bundle is not used.
    pub fragmentable: bool,
}

impl Bundle {
    /// A standard-priority bundle that may not be fragmented.
    pub fn new(size: u64, expiration: Time) -> Self {
        Bundle {
            size,
            priority: Priority::Standard,
            expiration,
            fragmentable: false,
        }
    }
}

/// A path through the contact graph, independent of any bundle.
#[derive(Clone, Debug, PartialEq)]
pub struct Route {
    /// The contacts, in order; the first leaves the source, the last reaches the destination.
    pub hops: Vec<ContactId>,
    /// The receiving node of the first contact: the node to forward to.
    pub neighbor: u64,
    /// The start of the first contact.
    pub from_time: Time,
    /// The earliest end among the route's contacts: after it the route cannot be used
    /// (ION's route `toTime`).
    pub forfeit_time: Time,
    /// Best-case arrival at the destination for data at the source when the route was
    /// computed: no queueing, no transmission time (ION's route `arrivalTime`).
    pub best_delivery_time: Time,
    /// The product of the contacts' confidences.
    pub confidence: f64,
}

/// The route chosen for a bundle and what CGR projects for it.
#[derive(Clone, Debug, PartialEq)]
pub struct Forwarding {
    pub route: Route,
    /// When the bundle's last byte reaches the destination (ION's PBAT).
    pub projected_arrival: Time,
    /// When the bundle's first byte leaves the source: the earliest transmission
    /// opportunity, after the backlog ahead of it.
    pub first_byte_time: Time,
    /// Bytes the route can take of the bundle's consumption; less than `consumption`
    /// only for a fragmentable bundle (ION would send a fragment of that size).
    pub volume: f64,
    /// The volume the bundle takes on a contact (size plus ION's overhead estimate).
    pub consumption: u64,
}

/// How the routes after the first are found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Alternatives {
    /// What ION 4.1.3 computes: each next route is the earliest one that starts with a
    /// contact no selected route starts with. libcgr.c means to run Yen's algorithm, but
    /// its spur searches from a route's contacts start from the arrival time the previous
    /// search left in the spur contact's work area, which that search had reset, so they
    /// find nothing and only the spurs from the local node remain. Seen with cgrfetch on
    /// the plan of the `routes_in_ion_4_1_3s_order` test: ION proposed 1-2-4, 1-3-4, 1-4
    /// and never 1-2-3-4 ("IGNORE contact ends before data arrives" at every spur).
    #[default]
    Ion,
    /// Yen's algorithm with Lawler's modification, as published and as libcgr.c's comments
    /// describe it: spurs from the local node and from every contact of the route.
    Yen,
}

/// Choices where ION's behaviour can be changed.
#[derive(Clone, Debug, PartialEq)]
pub struct CgrSettings {
    /// Add ION's estimate of convergence-layer overhead to a bundle's size when it
    /// occupies a contact: 1/16 of the size, at least 36 bytes (libbpP.c `computeECCC`,
    /// `TYPICAL_STACK_OVERHEAD`). Default true.
    pub ion_overhead: bool,
    /// Add ION's margin for the receiver's motion to light times ([`owlt_margin`]).
    /// Default true.
    pub owlt_margin: bool,
    /// How the routes after the first are found. Default [`Alternatives::Ion`].
    pub alternatives: Alternatives,
}

impl Default for CgrSettings {
    fn default() -> Self {
        CgrSettings {
            ion_overhead: true,
            owlt_margin: true,
            alternatives: Alternatives::Ion,
        }
    }
}

/// The state of the local forwarding node a bundle is routed against.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Conditions {
    /// Bytes already queued to each neighbor ahead of this bundle (of its priority or
    /// higher; ION's prior claims). Missing neighbors have none.
    pub backlog: BTreeMap<u64, u64>,
    /// Neighbors not to forward to (ION excludes the node the bundle came from).
    pub excluded: Vec<u64>,
}

/// A CGR router over one contact plan: residual volumes, and the routes found so far per
/// (source, destination). Deterministic: the same calls give the same answers.
pub struct Cgr {
    graph: Graph,
    settings: CgrSettings,
    mtv: Vec<[f64; 3]>,
    lists: BTreeMap<(u64, u64), RouteLists>,
}

impl Cgr {
    /// A router over a copy of `plan`.
    pub fn new(plan: &ContactPlan) -> Self {
        Self::with_settings(plan, CgrSettings::default())
    }

    pub fn with_settings(plan: &ContactPlan, settings: CgrSettings) -> Self {
        Self::shared(std::sync::Arc::new(plan.clone()), settings)
    }

    /// A router over a plan it shares with others (each node of a network routes over
    /// the same plan, with volumes booked of its own).
    pub fn shared(plan: std::sync::Arc<ContactPlan>, settings: CgrSettings) -> Self {
        Cgr {
            mtv: plan.contacts().iter().map(|c| [c.volume(); 3]).collect(),
            graph: Graph::new(plan, settings.owlt_margin),
            settings,
            lists: BTreeMap::new(),
        }
    }

    pub fn plan(&self) -> &ContactPlan {
        &self.graph.plan
    }

    /// The volume a bundle occupies on a contact.
    pub fn consumption(&self, bundle: &Bundle) -> u64 {
        if self.settings.ion_overhead {
            bundle.size + (bundle.size / 16).max(36)
        } else {
            bundle.size
        }
    }

    /// Bytes of a contact not yet booked for `priority` (ION's MTV); may be negative once
    /// overbooked.
    pub fn residual_volume(&self, id: ContactId, priority: Priority) -> f64 {
        self.mtv[id.0][priority as usize]
    }

    /// Reserves `bytes` of a contact for `priority` and every lower priority, as ION does
    /// for each contact of a bundle's route.
    pub fn book_contact(&mut self, id: ContactId, bytes: f64, priority: Priority) {
        for p in 0..=priority as usize {
            self.mtv[id.0][p] -= bytes;
        }
    }

    /// Reserves the bundle's consumption on every contact of `route`.
    pub fn book(&mut self, route: &Route, bundle: &Bundle) {
        let bytes = self.consumption(bundle) as f64;
        for &id in &route.hops {
            self.book_contact(id, bytes, bundle.priority);
        }
    }

    fn lists(&mut self, source: u64, dest: u64, now: Time) -> &mut RouteLists {
        let lists = self
            .lists
            .entry((source, dest))
            .or_insert_with(|| RouteLists::new(now));
        if now < lists.since {
            *lists = RouteLists::new(now); // time went back: start afresh
        }
        lists
    }

    /// Adds the next route to list A: the first route, or Yen's next from the last
    /// selected route whose spurs are not computed yet. False when there is none.
    fn extend(&mut self, source: u64, dest: u64, now: Time) -> bool {
        let graph = &self.graph;
        let lists = self.lists.get_mut(&(source, dest)).expect("lists exist");
        lists.selected.retain(|s| s.route.forfeit_time > now);
        if lists.selected.is_empty() {
            return match yen::first_route(graph, source, dest, now) {
                Some(route) => {
                    lists.selected.push(yen::Selected {
                        route,
                        spur_root: None,
                        spurs_computed: false,
                    });
                    true
                }
                None => false,
            };
        }
        let Some(k) = lists.selected.iter().rposition(|s| !s.spurs_computed) else {
            return false;
        };
        lists.selected[k].spurs_computed = true;
        let spurs = match self.settings.alternatives {
            Alternatives::Ion => yen::Spurs::LocalNodeOnly,
            Alternatives::Yen => yen::Spurs::Lawler,
        };
        yen::compute_another(graph, lists, k, (source, dest, now), spurs)
    }

    /// Up to `k` routes from `source` to `dest` at `now`, in the order ION's Yen search
    /// finds them (best-case delivery time, earliest first), skipping expired ones.
    pub fn routes(&mut self, source: u64, dest: u64, now: Time, k: usize) -> Vec<Route> {
        if source == dest {
            return Vec::new();
        }
        self.lists(source, dest, now);
        loop {
            let lists = &self.lists[&(source, dest)];
            let live: Vec<Route> = lists
                .selected
                .iter()
                .filter(|s| s.route.forfeit_time > now)
                .map(|s| s.route.clone())
                .collect();
            if live.len() >= k || !self.extend(source, dest, now) {
                return live.into_iter().take(k).collect();
            }
        }
    }

    /// The route ION would forward `bundle` on from `source` to `dest` at `now`, with no
    /// backlog and no excluded neighbor. None: no route delivers it before it expires.
    pub fn best_route(
        &mut self,
        source: u64,
        dest: u64,
        now: Time,
        bundle: &Bundle,
    ) -> Option<Forwarding> {
        self.best_route_with(source, dest, now, bundle, &Conditions::default())
    }

    /// [`Cgr::best_route`] given the node's backlog and excluded neighbors.
    pub fn best_route_with(
        &mut self,
        source: u64,
        dest: u64,
        now: Time,
        bundle: &Bundle,
        conditions: &Conditions,
    ) -> Option<Forwarding> {
        if source == dest {
            return None;
        }
        let consumption = self.consumption(bundle);
        self.lists(source, dest, now);
        let mut best: Option<Forwarding> = None;
        let mut i = 0;
        loop {
            let lists = &self.lists[&(source, dest)];
            if i == lists.selected.len() {
                if best.is_some() || !self.extend(source, dest, now) {
                    return best;
                }
                // Check the route just added (expired ones may have been dropped).
                i = self.lists[&(source, dest)].selected.len() - 1;
                continue;
            }
            let route = &lists.selected[i].route;
            i += 1;
            if route.forfeit_time <= now
                || route.best_delivery_time > bundle.expiration
                || self.graph.plan.contact(route.hops[0]).confidence != 1.0
                || conditions.excluded.contains(&route.neighbor)
            {
                continue;
            }
            let prior = conditions
                .backlog
                .get(&route.neighbor)
                .copied()
                .unwrap_or(0);
            let Some(p) = pbat::project(
                &self.graph,
                &self.mtv,
                route,
                source,
                now,
                bundle,
                consumption,
                prior,
            ) else {
                continue;
            };
            let improves = match &best {
                Some(b) => pbat::better((route, p.arrival), (&b.route, b.projected_arrival)),
                None => true,
            };
            if improves {
                best = Some(Forwarding {
                    route: route.clone(),
                    projected_arrival: p.arrival,
                    first_byte_time: p.first_byte,
                    volume: p.volume,
                    consumption,
                });
            }
        }
    }

    /// [`Cgr::best_route_with`], then [`Cgr::book`] of the chosen route: what ION's
    /// forwarder does with a bundle.
    pub fn forward(
        &mut self,
        source: u64,
        dest: u64,
        now: Time,
        bundle: &Bundle,
        conditions: &Conditions,
    ) -> Option<Forwarding> {
        let f = self.best_route_with(source, dest, now, bundle, conditions)?;
        self.book(&f.route, bundle);
        Some(f)
    }
}

/// The route ION would forward `bundle` on, with a fresh router (no bookings).
pub fn best_route(
    plan: &ContactPlan,
    source: u64,
    dest: u64,
    now: Time,
    bundle: &Bundle,
) -> Option<Forwarding> {
    Cgr::new(plan).best_route(source, dest, now, bundle)
}
