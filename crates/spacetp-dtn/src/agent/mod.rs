//! A bundle protocol agent (RFC 9171 section 5), one per node, sans-IO: it takes bundles
//! from its application and from its convergence layers, keeps them while no contact is
//! open (store and forward), forwards each by Contact Graph Routing over the node's contact
//! plan, fragments one that a contact cannot carry whole, delivers those addressed to its
//! node (reassembling fragments), and deletes expired ones. The caller moves bytes: it
//! asks [`Agent::poll_forward`] for the next bundle to hand to a neighbor's convergence
//! layer, and gives back what a convergence layer could not deliver.
//!
//! As ION's forwarder does: a bundle is routed when it arrives (or is created), its route
//! booked on the contacts' volumes; it waits in the queue of the route's first neighbor
//! until that contact opens, and leaves at the contact's rate; one still queued when the
//! contact ends, or given back by the convergence layer, is routed again. ION keeps a
//! bundle with no route in limbo until it expires; with a fixed plan no route now means no
//! route ever (routes only close as time passes), so the agent reports it at once.

use crate::bundle::{Bundle, BundleId, Eid};
use crate::cgr::{self, Cgr, CgrSettings, Conditions, Priority};
use crate::contact_plan::ContactPlan;
use spacetp_proto::{Time, MS, SEC};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::Arc;

/// Bytes a contact may be ahead of its rate: the convergence layer is handed up to a
/// second of the contact's data at once, so that its own pacing keeps the link busy.
const LOOKAHEAD: Time = SEC;
/// A fragment smaller than this is not worth its headers: the rest waits for a contact.
const MIN_FRAGMENT: u64 = 1024;
/// Bytes of a bundle that are not payload, as ours are encoded (primary block with a
/// CRC, previous node, age and hop count blocks, the payload's header).
const HEADER_ESTIMATE: u64 = 80;

/// What an agent tells its node.
#[derive(Clone, Debug, PartialEq)]
pub enum AgentEvent {
    /// An application data unit for a service of this node arrived whole (its fragments
    /// joined).
    Delivered {
        id: BundleId,
        service: u64,
        bytes: u64,
        /// The bundle's age on delivery (RFC 9171 4.4.2), and the time it spent stored at
        /// nodes on the way (the sum of residences, without the links' light times).
        age_ms: u64,
        /// The application data, fragments joined, when the agent keeps payloads
        /// ([`Agent::keep_payloads`]: a live node writes them out; a simulation counts).
        payload: Option<Vec<u8>>,
    },
    /// A bundle (or fragment) reached the end of its lifetime here and was deleted.
    Expired {
        id: BundleId,
        destination: Eid,
        bytes: u64,
    },
    /// No route reaches the destination before the bundle expires: deleted here.
    NoRoute {
        id: BundleId,
        destination: Eid,
        bytes: u64,
    },
}

/// Counters of one agent.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AgentStats {
    pub bundles_created: u64,
    pub bundles_received: u64,
    pub bundles_forwarded: u64,
    pub bundles_delivered: u64,
    /// Application data units delivered whole, and their bytes.
    pub adus_delivered: u64,
    pub bytes_delivered: u64,
    pub bundles_expired: u64,
    pub bundles_no_route: u64,
    /// Bundles split to fit a contact (each split makes two fragments).
    pub fragmentations: u64,
    /// Bundles routed again (their contact ended first, or the convergence layer gave
    /// them back).
    pub reroutes: u64,
    /// Bundles received twice (a convergence layer's retry after delivery), dropped.
    pub duplicates: u64,
    pub undecodable: u64,
    /// Time bundles were stored here before leaving: in all, and at most.
    pub storage_time_total: Time,
    pub storage_time_max: Time,
    /// The most bytes stored at once.
    pub stored_bytes_max: u64,
}

struct Stored {
    bundle: Bundle,
    size: u64,
    arrived: Time,
    expires: Time,
    /// The neighbor it came from: not routed back there (ION excludes it).
    from: Option<u64>,
    /// Its first neighbor and the contact booked for it there (start, end), once routed.
    neighbor: Option<u64>,
    from_time: Time,
    until: Time,
}

/// One node's bundle agent.
pub struct Agent {
    node: u64,
    cgr: Cgr,
    plan: Arc<ContactPlan>,
    /// DTN time (ms since 2000) at time 0, for a node with a clock; None: creation time 0
    /// and the age block.
    clock_ms: Option<u64>,
    seq: u64,
    store: BTreeMap<u64, Stored>,
    next_key: u64,
    stored_bytes: u64,
    /// Bundles routed to each neighbor, waiting for its contact, in order.
    queues: BTreeMap<u64, VecDeque<u64>>,
    /// The bytes in each neighbor's queue, kept as bundles join and leave it (CGR reads
    /// them at every routing: summing the queues there was quadratic in the store).
    queued_bytes: BTreeMap<u64, u64>,
    /// Every stored bundle by (expiry, key), and every queued one by (end of its booked
    /// contact, key): the next deadline without a walk over the store.
    expiries: BTreeSet<(Time, u64)>,
    booked_ends: BTreeSet<(Time, u64)>,
    /// Per neighbor, the contact being used (its start) and the bytes handed out in it.
    released: BTreeMap<u64, (Time, u64)>,
    reassembly: HashMap<BundleId, Reassembly>,
    seen: HashSet<(BundleId, u64)>,
    events: VecDeque<AgentEvent>,
    stats: AgentStats,
    keep_payloads: bool,
}

impl Agent {
    /// The agent of `node`, routing over `plan` (shared by the network's nodes); with
    /// `clock_ms`, bundles carry creation times (DTN ms at time 0 plus the time).
    pub fn new(node: u64, plan: Arc<ContactPlan>, clock_ms: Option<u64>) -> Agent {
        Agent {
            node,
            cgr: Cgr::shared(plan.clone(), CgrSettings::default()),
            plan,
            clock_ms,
            seq: 0,
            store: BTreeMap::new(),
            next_key: 0,
            stored_bytes: 0,
            queues: BTreeMap::new(),
            queued_bytes: BTreeMap::new(),
            expiries: BTreeSet::new(),
            booked_ends: BTreeSet::new(),
            released: BTreeMap::new(),
            reassembly: HashMap::new(),
            seen: HashSet::new(),
            events: VecDeque::new(),
            stats: AgentStats::default(),
            keep_payloads: false,
        }
    }

    /// Deliver the application data itself, not only its size (a live node).
    pub fn keep_payloads(mut self) -> Self {
        self.keep_payloads = true;
        self
    }

    /// Every bundle stored here, as bytes, removed from the agent: what an orderly stop
    /// writes to disk (`restore` takes them back).
    pub fn drain_store(&mut self) -> Vec<Vec<u8>> {
        let keys: Vec<u64> = self.store.keys().copied().collect();
        keys.into_iter()
            .filter_map(|k| self.remove(k))
            .map(|mut s| s.bundle.to_bytes())
            .collect()
    }

    /// A bundle kept from before a restart: stored and routed again.
    pub fn restore(&mut self, now: Time, bytes: &[u8]) -> Result<(), crate::bundle::BundleError> {
        let b = Bundle::decode(bytes)?;
        self.admit(now, b, None);
        Ok(())
    }

    pub fn node(&self) -> u64 {
        self.node
    }

    pub fn stats(&self) -> &AgentStats {
        &self.stats
    }

    /// Bytes stored here now (waiting for a contact or a route).
    pub fn stored_bytes(&self) -> u64 {
        self.stored_bytes
    }

    pub fn poll_event(&mut self) -> Option<AgentEvent> {
        self.events.pop_front()
    }

    /// The application sends `payload` to `destination` with `lifetime`: one bundle,
    /// routed at once. Returns its ID.
    pub fn send(
        &mut self,
        now: Time,
        service: u64,
        destination: Eid,
        payload: Vec<u8>,
        lifetime: Time,
    ) -> BundleId {
        self.seq += 1;
        let created = self.clock_ms.map_or(0, |c| c + now / MS);
        let source = Eid {
            node: self.node,
            service,
        };
        let b = Bundle::new(
            source,
            destination,
            created,
            self.seq,
            lifetime / MS,
            payload,
        );
        let id = b.header.id;
        self.stats.bundles_created += 1;
        self.admit(now, b, None);
        id
    }

    /// A bundle arrived from `neighbor`'s convergence layer.
    pub fn on_bundle(&mut self, now: Time, neighbor: u64, mut bundle: Bundle) {
        self.stats.bundles_received += 1;
        // The age block counts residences; the link's light time is added as it arrives.
        if let Some(owlt) = self.plan.owlt(neighbor, self.node, now) {
            bundle.add_age(owlt / MS);
        }
        let key = (bundle.header.id, bundle.header.fragment.map_or(0, |f| f.0));
        if bundle.header.destination.node == self.node {
            if !self.seen.insert(key) {
                self.stats.duplicates += 1;
                return;
            }
            self.deliver(bundle);
            return;
        }
        self.admit(now, bundle, Some(neighbor));
    }

    /// The bytes of an LTP block from `neighbor`: every bundle in it.
    pub fn on_block(&mut self, now: Time, neighbor: u64, block: &[u8]) {
        for b in crate::bundle::split_block(block) {
            match b {
                Ok(b) => self.on_bundle(now, neighbor, b),
                Err(_) => self.stats.undecodable += 1,
            }
        }
    }

    /// Keep a bundle and route it; deleted at once if it has expired.
    fn admit(&mut self, now: Time, bundle: Bundle, from: Option<u64>) {
        let h = &bundle.header;
        let left_ms = h.lifetime_ms.saturating_sub(h.age_ms.unwrap_or(0));
        let expires = now + left_ms * MS;
        let mut bundle = bundle;
        let size = bundle.encoded_len();
        let key = self.next_key;
        self.next_key += 1;
        self.stats.stored_bytes_max = self.stats.stored_bytes_max.max(self.stored_bytes + size);
        self.keep(
            key,
            Stored {
                bundle,
                size,
                arrived: now,
                expires,
                from,
                neighbor: None,
                from_time: 0,
                until: 0,
            },
        );
        if expires <= now {
            self.expire(key);
            return;
        }
        self.route(now, key);
    }

    /// Store bundle `key` (not yet routed).
    fn keep(&mut self, key: u64, s: Stored) {
        self.stored_bytes += s.size;
        self.expiries.insert((s.expires, key));
        self.store.insert(key, s);
    }

    /// Queue stored bundle `key` for `neighbor`, booked on its contact (from_time, until).
    fn enqueue(&mut self, key: u64, neighbor: u64, from_time: Time, until: Time) {
        let s = self.store.get_mut(&key).expect("stored");
        s.neighbor = Some(neighbor);
        s.from_time = from_time;
        s.until = until;
        let size = s.size;
        self.queues.entry(neighbor).or_default().push_back(key);
        *self.queued_bytes.entry(neighbor).or_default() += size;
        self.booked_ends.insert((until, key));
    }

    fn remove(&mut self, key: u64) -> Option<Stored> {
        let s = self.store.remove(&key)?;
        self.stored_bytes -= s.size;
        self.expiries.remove(&(s.expires, key));
        if let Some(n) = s.neighbor {
            if let Some(q) = self.queues.get_mut(&n) {
                // Bundles mostly leave from the front (forwarded in order).
                let at = if q.front() == Some(&key) {
                    Some(0)
                } else {
                    q.iter().position(|&k| k == key)
                };
                if let Some(i) = at {
                    q.remove(i);
                    *self.queued_bytes.get_mut(&n).expect("queued") -= s.size;
                    self.booked_ends.remove(&(s.until, key));
                }
            }
        }
        Some(s)
    }

    fn expire(&mut self, key: u64) {
        if let Some(s) = self.remove(key) {
            self.stats.bundles_expired += 1;
            self.events.push_back(AgentEvent::Expired {
                id: s.bundle.header.id,
                destination: s.bundle.header.destination,
                bytes: s.bundle.header.payload_len,
            });
        }
    }

    /// Panics unless the indexes kept beside the store agree with a walk over it.
    #[cfg(test)]
    fn check_indexes(&self) {
        let walked: BTreeMap<u64, u64> = self
            .queues
            .iter()
            .map(|(&n, q)| (n, q.iter().map(|k| self.store[k].size).sum()))
            .collect();
        assert_eq!(self.backlog(), walked, "queued bytes per neighbor");
        let expiries: BTreeSet<(Time, u64)> =
            self.store.iter().map(|(&k, s)| (s.expires, k)).collect();
        assert_eq!(self.expiries, expiries, "expiries");
        let ends: BTreeSet<(Time, u64)> = self
            .queues
            .values()
            .flatten()
            .map(|&k| (self.store[&k].until, k))
            .collect();
        assert_eq!(self.booked_ends, ends, "ends of booked contacts");
        assert_eq!(
            self.stored_bytes,
            self.store.values().map(|s| s.size).sum::<u64>()
        );
    }

    /// When `on_timeout` next has work: the first expiry, the next opening of a contact a
    /// queue waits for, the end of an open one, or a paced release.
    pub fn poll_timeout(&self, now: Time) -> Option<Time> {
        let mut next = self.expiries.first().map(|&(t, _)| t);
        let mut at = |t: Time| next = Some(next.map_or(t, |n: Time| n.min(t)));
        for (&n, q) in &self.queues {
            let Some(&key) = q.front() else { continue };
            let booked = (self.store[&key].from_time, self.store[&key].until);
            at(booked.1);
            match self.open_contact(n, now).filter(|c| c.0 >= booked.0) {
                Some((start, _, rate)) => {
                    let sent = match self.released.get(&n) {
                        Some(&(s, b)) if s == start => b,
                        _ => 0,
                    };
                    let t = start + (sent as f64 / rate * 1e9) as Time;
                    at(t.saturating_sub(LOOKAHEAD).max(now));
                }
                None => at(booked.0.max(now)),
            }
        }
        next
    }

    /// Delete what expired; route again what waits for a contact that has ended.
    pub fn on_timeout(&mut self, now: Time) {
        // In the store's (key) order, as a walk over the store would find them.
        let mut expired: Vec<u64> = self
            .expiries
            .iter()
            .take_while(|&&(t, _)| t <= now)
            .map(|&(_, k)| k)
            .collect();
        expired.sort_unstable();
        for k in expired {
            self.expire(k);
        }
        // Bundles still queued when the contact booked for them ended: route again, in
        // the queues' order (walked only when one has).
        if !self.booked_ends.first().is_some_and(|&(t, _)| t <= now) {
            return;
        }
        let stale: Vec<u64> = self
            .queues
            .values()
            .flatten()
            .filter(|k| self.store[k].until <= now)
            .copied()
            .collect();
        for k in stale {
            if let Some(mut s) = self.remove(k) {
                self.stats.reroutes += 1;
                s.neighbor = None;
                let key = self.next_key;
                self.next_key += 1;
                self.keep(key, s);
                self.route(now, key);
            }
        }
    }
}

mod delivery;
use delivery::Reassembly;
mod forwarding;
mod routing;

#[cfg(test)]
mod tests;
