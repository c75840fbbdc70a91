//! CGR's first route against an exhaustive search: on a few hundred generated plans, the
//! earliest best-case arrival over *every* loopless sequence of contacts (ION's rules:
//! a contact that has ended by now, or by the time the bundle reaches its sender, or has
//! no range, cannot be used) must be the first route's delivery time; and every route Yen
//! lists must be loopless, distinct, and arrive when its own contacts say.

use spacetp_dtn::{Alternatives, Bundle, Cgr, CgrSettings, Contact, ContactId, ContactPlan, Range};
use spacetp_proto::{Time, SEC};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn random_plan(rng: &mut Rng, nodes: u64) -> ContactPlan {
    let mut contacts = Vec::new();
    let mut ranges = Vec::new();
    for a in 1..=nodes {
        for b in 1..=nodes {
            if a == b || rng.below(3) == 0 {
                continue;
            }
            let mut t = rng.below(50);
            for _ in 0..rng.below(3) + 1 {
                let len = rng.below(40) + 1;
                contacts.push(Contact::new(
                    a,
                    b,
                    t * SEC,
                    (t + len) * SEC,
                    1000.0 + rng.below(5) as f64 * 500.0,
                ));
                t += len + 1 + rng.below(60);
            }
            // Most pairs get a range from the smaller node (holding both ways).
            if a < b && rng.below(6) != 0 {
                ranges.push(Range {
                    from: a,
                    to: b,
                    start: 0,
                    end: 10_000 * SEC,
                    owlt: rng.below(8) * SEC,
                });
            }
        }
    }
    ContactPlan::from_parts(contacts, ranges).unwrap()
}

/// Earliest arrival over every loopless path, by exhaustive depth-first search.
fn brute_force(
    p: &ContactPlan,
    node: u64,
    dest: u64,
    t: Time,
    now: Time,
    seen: &mut Vec<u64>,
) -> Option<Time> {
    let mut best: Option<Time> = None;
    for i in p.ids_from(node) {
        let c = p.contact(ContactId(i));
        if c.end <= now || c.end <= t || seen.contains(&c.to) {
            continue;
        }
        let Some(owlt) = p.contact_owlt(ContactId(i)) else {
            continue;
        };
        let a = c.start.max(t) + owlt;
        let candidate = if c.to == dest {
            Some(a)
        } else {
            seen.push(c.to);
            let r = brute_force(p, c.to, dest, a, now, seen);
            seen.pop();
            r
        };
        if let Some(x) = candidate {
            best = Some(best.map_or(x, |b| b.min(x)));
        }
    }
    best
}

fn arrival_along(p: &ContactPlan, hops: &[ContactId], now: Time) -> Option<Time> {
    let mut t = now;
    for &h in hops {
        let c = p.contact(h);
        if c.end <= t {
            return None;
        }
        t = c.start.max(t) + p.contact_owlt(h)?;
    }
    Some(t)
}

#[test]
fn the_first_route_is_the_earliest_of_all_paths_and_every_route_is_sound() {
    for alternatives in [Alternatives::Ion, Alternatives::Yen] {
        let settings = CgrSettings {
            owlt_margin: false,
            alternatives,
            ..CgrSettings::default()
        };
        check_generated_plans(&settings);
    }
}

fn check_generated_plans(settings: &CgrSettings) {
    let mut rng = Rng(0x5eed_cafe_f00d_0001);
    let (mut with_route, mut alternatives) = (0, 0);
    for _ in 0..300 {
        let nodes = 3 + rng.below(4);
        let p = random_plan(&mut rng, nodes);
        let (src, dst) = (1 + rng.below(nodes), 1 + rng.below(nodes));
        if src == dst {
            continue;
        }
        let now = rng.below(40) * SEC;
        let mut cgr = Cgr::with_settings(&p, settings.clone());
        let routes = cgr.routes(src, dst, now, 12);
        let oracle = brute_force(&p, src, dst, now, now, &mut vec![src]);
        assert_eq!(
            routes.first().map(|r| r.best_delivery_time),
            oracle,
            "plan:\n{}",
            p.to_ion()
        );
        for (i, r) in routes.iter().enumerate() {
            let mut visited = vec![src];
            for &h in &r.hops {
                let c = p.contact(h);
                assert_eq!(c.from, *visited.last().unwrap(), "contacts chain");
                assert!(
                    !visited.contains(&c.to),
                    "route visits {} twice:\n{}",
                    c.to,
                    p.to_ion()
                );
                visited.push(c.to);
            }
            assert_eq!(*visited.last().unwrap(), dst);
            assert_eq!(Some(r.best_delivery_time), arrival_along(&p, &r.hops, now));
            assert!(
                routes[..i].iter().all(|o| o.hops != r.hops),
                "duplicate route"
            );
            assert!(r.best_delivery_time >= routes[0].best_delivery_time);
        }
        if let Some(r) = routes.first() {
            with_route += 1;
            alternatives += routes.len() - 1;
            // A bundle's projected arrival is never before the best case.
            if let Some(f) = Cgr::with_settings(&p, settings.clone()).best_route(
                src,
                dst,
                now,
                &Bundle::new(500, 1_000_000 * SEC),
            ) {
                assert!(f.projected_arrival >= f.route.best_delivery_time);
                assert!(f.route.best_delivery_time >= r.best_delivery_time);
            }
        }
    }
    // The generator must exercise the search: many plans with routes, and alternatives.
    assert!(
        with_route > 100 && alternatives > 100,
        "{settings:?}: {with_route} plans with a route, {alternatives} alternatives"
    );
}
