//! Routing a bundle: Contact Graph Routing over the plan with the queues' backlog, the
//! route booked on its contacts, a bundle the route carries only part of fragmented.

use super::*;

impl Agent {
    /// Bytes queued to each neighbor (ION's backlog ahead of a new bundle).
    pub(super) fn backlog(&self) -> BTreeMap<u64, u64> {
        self.queues
            .keys()
            .map(|n| (*n, self.queued_bytes.get(n).copied().unwrap_or(0)))
            .collect()
    }

    /// Choose the bundle's route (fragmenting it if the route carries only part), book it,
    /// queue it to the route's first neighbor; report and delete it if no route arrives in
    /// time.
    pub(super) fn route(&mut self, now: Time, key: u64) {
        let s = &self.store[&key];
        let dest = s.bundle.header.destination.node;
        let want = cgr::Bundle {
            size: s.size,
            priority: Priority::Standard,
            expiration: s.expires,
            fragmentable: s.bundle.header.payload_len > 2 * MIN_FRAGMENT,
        };
        let conditions = Conditions {
            backlog: self.backlog(),
            excluded: s.from.into_iter().collect(),
        };
        let mut found = self
            .cgr
            .best_route_with(self.node, dest, now, &want, &conditions);
        if let Some(f) = &found {
            let payload = s.bundle.header.payload_len;
            let fit = self.fragment_fit(f, payload);
            if f.volume + 0.5 < f.consumption as f64 && fit.is_none() {
                // Too little room on the best route to be worth a fragment: the bundle
                // whole, on a route that takes it whole.
                let whole = cgr::Bundle {
                    fragmentable: false,
                    ..want.clone()
                };
                found = self
                    .cgr
                    .best_route_with(self.node, dest, now, &whole, &conditions);
            }
        }
        let Some(f) = found else {
            let s = self.remove(key).expect("routed bundles are stored");
            self.stats.bundles_no_route += 1;
            self.events.push_back(AgentEvent::NoRoute {
                id: s.bundle.header.id,
                destination: s.bundle.header.destination,
                bytes: s.bundle.header.payload_len,
            });
            return;
        };
        if f.volume + 0.5 < f.consumption as f64 {
            // The route's contacts take only part: send a fragment that fits, route the
            // rest again (RFC 9171 5.8, proactive fragmentation as ION does it).
            let payload = self.store[&key].bundle.header.payload_len;
            if let Some(fit) = self.fragment_fit(&f, payload) {
                self.split(now, key, fit);
                return;
            }
        }
        let mut booked = want.clone();
        booked.fragmentable = false;
        self.cgr.book(&f.route, &booked);
        let n = f.route.neighbor;
        let first = self.plan.contact(f.route.hops[0]);
        let (from_time, until) = (first.start, first.end);
        self.enqueue(key, n, from_time, until);
    }

    /// The payload bytes of a fragment that fits what route `f` can carry, if such a
    /// fragment is worth sending (at least `MIN_FRAGMENT`, less than the whole).
    pub(super) fn fragment_fit(&self, f: &cgr::Forwarding, payload: u64) -> Option<u64> {
        let share = f.volume / f.consumption as f64;
        let fit = ((payload as f64 * share) as u64).saturating_sub(HEADER_ESTIMATE);
        (fit >= MIN_FRAGMENT && fit < payload).then_some(fit)
    }

    /// Replace stored bundle `key` by two fragments split at `at` payload bytes, and route
    /// each.
    pub(super) fn split(&mut self, now: Time, key: u64, at: u64) {
        let s = self.remove(key).expect("stored");
        self.stats.fragmentations += 1;
        let (a, b) = s.bundle.fragment(at);
        for part in [a, b] {
            let mut part = part;
            let size = part.encoded_len();
            let k = self.next_key;
            self.next_key += 1;
            self.keep(
                k,
                Stored {
                    bundle: part,
                    size,
                    arrived: s.arrived,
                    expires: s.expires,
                    from: s.from,
                    neighbor: None,
                    from_time: 0,
                    until: 0,
                },
            );
            self.route(now, k);
        }
    }
}
