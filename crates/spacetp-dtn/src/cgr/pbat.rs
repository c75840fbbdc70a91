//! The projected arrival of one bundle on one route (ION's `computePBAT`, libcgr.c; SABR
//! CCSDS 734.3-B-1's projected bundle arrival time), and ION's order among candidate
//! routes (`tryRoute`).
//!
//! The bundle waits for the first contact, then for the bytes queued ahead of it to the
//! same neighbor ("prior claims", less what earlier contacts to that neighbor carry
//! first): that is its earliest transmission opportunity. At each hop its last byte leaves
//! after its whole size at the contact's rate, arrives one light time later, and the next
//! hop starts no earlier (store and forward). The route is refused when a contact has
//! ended before the bundle's first byte, has no residual volume left for its priority, or
//! (unless the bundle may be fragmented) holds less than the bundle between the first byte
//! and the earliest end among this and the later contacts; or when the bundle would
//! arrive after it expires.
//!
//! Times are exact to the nanosecond where ION truncates transmission times to whole
//! seconds (its `time_t` arithmetic).

use super::search::Graph;
use super::{Bundle, Route};
use spacetp_proto::{time::secs, Time};

/// Nanoseconds to send `bytes` at `rate` bytes/s, rounded up.
pub(crate) fn xmit_time(bytes: f64, rate: f64) -> Time {
    (bytes * 1e9 / rate).ceil() as Time
}

pub(crate) struct Projection {
    pub arrival: Time,
    pub first_byte: Time,
    pub volume: f64,
}

/// `mtv[contact][priority]`: the residual volume of each contact for each priority.
#[allow(clippy::too_many_arguments)]
pub(crate) fn project(
    g: &Graph,
    mtv: &[[f64; 3]],
    route: &Route,
    source: u64,
    now: Time,
    bundle: &Bundle,
    consumption: u64,
    prior_claims: u64,
) -> Option<Projection> {
    let contacts = g.plan.contacts();
    let first_id = route.hops[0].0;
    let first = &contacts[first_id];
    let mut prior = prior_claims as f64;
    for id in g.plan.ids_between(source, route.neighbor) {
        let c = &contacts[id];
        if id == first_id {
            break;
        }
        if c.end <= now {
            continue;
        }
        let volume = secs(c.end - now.max(c.start)) * c.rate_bytes_per_s;
        prior = (prior - volume).max(0.0);
    }
    let size = consumption as f64;
    let start = now.max(first.start);
    let first_byte_time = start + xmit_time(prior, first.rate_bytes_per_s);
    let mut first_byte = first_byte_time;
    let mut last_byte = start + xmit_time(prior + size, first.rate_bytes_per_s);
    let mut volume = size;
    let mut acquired = 0;
    let p = bundle.priority as usize;
    for (k, hop) in route.hops.iter().enumerate() {
        let c = &contacts[hop.0];
        if c.end <= first_byte {
            return None;
        }
        acquired = last_byte + g.owlt[hop.0]?;
        if mtv[hop.0][p] <= 0.0 {
            return None;
        }
        let stop = route.hops[k..]
            .iter()
            .map(|h| contacts[h.0].end)
            .min()
            .unwrap_or(c.end);
        if stop <= first_byte {
            return None;
        }
        let limit = (secs(stop - first_byte) * c.rate_bytes_per_s).min(mtv[hop.0][p]);
        if limit < volume {
            if !bundle.fragmentable {
                return None;
            }
            volume = limit;
        }
        if let Some(next) = route.hops.get(k + 1) {
            let n = &contacts[next.0];
            first_byte = acquired.max(n.start);
            last_byte = first_byte + xmit_time(size, n.rate_bytes_per_s);
        }
    }
    if acquired > bundle.expiration {
        return None;
    }
    Some(Projection {
        arrival: acquired,
        first_byte: first_byte_time,
        volume,
    })
}

/// ION's `tryRoute` order: earlier projected arrival, then fewer hops, then the later
/// forfeit time, then the smaller neighbor number; on a full tie the newer route wins.
pub(crate) fn better(new: (&Route, Time), current: (&Route, Time)) -> bool {
    let ((n, na), (c, ca)) = (new, current);
    if na != ca {
        return na < ca;
    }
    if n.hops.len() != c.hops.len() {
        return n.hops.len() < c.hops.len();
    }
    if n.forfeit_time != c.forfeit_time {
        return n.forfeit_time > c.forfeit_time;
    }
    c.neighbor >= n.neighbor
}
