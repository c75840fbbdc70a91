//! Forwarding: a bundle leaves for its first neighbor while that contact is open, at the
//! contact's rate; one the convergence layer could not deliver is routed again.

use super::*;

impl Agent {
    /// The contact from this node to `neighbor` open at `now`: (start, end, bytes/s).
    pub(super) fn open_contact(&self, neighbor: u64, now: Time) -> Option<(Time, Time, f64)> {
        self.plan
            .contacts_between(self.node, neighbor)
            .iter()
            .find(|c| c.start <= now && now < c.end)
            .map(|c| (c.start, c.end, c.rate_bytes_per_s))
    }

    /// The next bundle to hand to a neighbor's convergence layer now, as (neighbor,
    /// bytes): one whose first contact is open, at that contact's rate (a second ahead).
    pub fn poll_forward(&mut self, now: Time) -> Option<(u64, Vec<u8>)> {
        let neighbors: Vec<u64> = self
            .queues
            .iter()
            .filter(|(_, q)| !q.is_empty())
            .map(|(&n, _)| n)
            .collect();
        for n in neighbors {
            let Some((start, _, rate)) = self.open_contact(n, now) else {
                continue;
            };
            let key = *self.queues[&n].front().expect("non-empty");
            // Booked on a later contact with this neighbor: it waits for that one.
            if self.store[&key].from_time > start {
                continue;
            }
            let size = self.store[&key].size;
            let (since, sent) = match self.released.get(&n) {
                Some(&(s, b)) if s == start => (s, b),
                _ => (start, 0),
            };
            // The bundle may leave once what went before it in this contact would be sent
            // within the look-ahead at the contact's rate.
            let allowed = rate * spacetp_proto::time::secs(now - since + LOOKAHEAD);
            if sent as f64 > allowed {
                continue;
            }
            self.released.insert(n, (since, sent + size));
            let mut s = self.remove(key).expect("queued bundles are stored");
            let residence = now - s.arrived;
            self.stats.storage_time_total += residence;
            self.stats.storage_time_max = self.stats.storage_time_max.max(residence);
            let me = Eid {
                node: self.node,
                service: 0,
            };
            if !s.bundle.forwarded_by(me, residence / MS) {
                // Past its hop limit (a routing loop): deleted, as RFC 9171 4.4.3 says.
                self.stats.bundles_no_route += 1;
                continue;
            }
            self.stats.bundles_forwarded += 1;
            return Some((n, s.bundle.to_bytes()));
        }
        None
    }

    /// A convergence layer could not deliver `bytes` to `neighbor` (an LTP session
    /// canceled): the bundles in them are routed again, not back to that neighbor first.
    pub fn on_forward_failed(&mut self, now: Time, neighbor: u64, bytes: &[u8]) {
        let _ = neighbor;
        for b in crate::bundle::split_block(bytes).into_iter().flatten() {
            self.stats.reroutes += 1;
            self.admit(now, b, None);
        }
    }
}
