//! A Mars relay: a lander (node 1) reaches Earth (node 3) only through orbiters (node 2,
//! and in one test node 4), in 10-minute UHF passes several times per sol, and an orbiter
//! reaches Earth in its own X-band windows, 8 to 20 light minutes away. Every expected
//! time below is worked out by hand from the plan's numbers, following ION's CGR
//! (libcgr.c: best-case arrival = max(contact start, arrival at its sender) + light time;
//! the bundle's projected arrival adds its transmission time at each hop).
//!
//! Numbers shared by the tests (seconds from time 0; rates in bytes per second):
//! - passes 1 -> 2 at 250000 B/s (2 Mb/s): P1 [1000, 1600), P2 [7000, 7600),
//!   P3 [13000, 13600), P4 [19000, 19600); light time 1 s;
//! - downlinks 2 -> 3 at 62500 B/s (0.5 Mb/s): E1 [5000, 6000), E2 [9000, 12000),
//!   E3 [20000, 23000); light time 480 s (8 min), or 1200 s (20 min) when Mars is far;
//! - a bundle of 1000000 bytes occupies 1000000 + 1000000/16 = 1062500 bytes of a contact
//!   (ION's estimate of convergence-layer overhead): 4.25 s on a pass, 17 s on a
//!   downlink.
//!
//! Cross-checked with ION 4.1.3's cgrfetch (same plans loaded into an ION node 1, times
//! relative to an epoch E, a bundle of 999971 payload bytes = 1000000 by ION's estimate):
//! it proposed and accepted [1 -> 2 at E+1000, 2 -> 3] arriving at E+5480 (E+6200 with
//! 1200 s of light time), and with the second orbiter [1 -> 4 at E+3000, 4 -> 3] arriving
//! at E+4480. ION does not print its projected arrival; those are checked by hand only.

use spacetp_dtn::{
    Alternatives, Bundle, Cgr, CgrSettings, Conditions, ContactId, ContactPlan, Forwarding,
};
use spacetp_proto::{Time, MS, SEC};

const SOL: u64 = 88_775;

fn plan(downlink_owlt: u64) -> ContactPlan {
    let text = format!(
        "\
# lander 1, orbiter 2, Earth 3
a contact +1000 +1600 1 2 250000
a contact +7000 +7600 1 2 250000
a contact +13000 +13600 1 2 250000
a contact +19000 +19600 1 2 250000
a contact +5000 +6000 2 3 62500
a contact +9000 +12000 2 3 62500
a contact +20000 +23000 2 3 62500
a range +0 +{SOL} 1 2 1
a range +0 +{SOL} 2 3 {downlink_owlt}
"
    );
    ContactPlan::parse(&text).unwrap()
}

fn bundle() -> Bundle {
    Bundle::new(1_000_000, SOL * SEC)
}

/// The contacts of a route as (from, to, start in s).
fn hops(p: &ContactPlan, f: &Forwarding) -> Vec<(u64, u64, u64)> {
    f.route
        .hops
        .iter()
        .map(|&id| {
            let c = p.contact(id);
            (c.from, c.to, c.start / SEC)
        })
        .collect()
}

fn s(t: Time) -> f64 {
    t as f64 / SEC as f64
}

#[test]
fn the_first_pass_feeds_the_next_downlink() {
    let p = plan(480);
    let mut cgr = Cgr::new(&p);
    let f = cgr.best_route(1, 3, 0, &bundle()).unwrap();
    assert_eq!(hops(&p, &f), vec![(1, 2, 1000), (2, 3, 5000)]);
    assert_eq!(f.route.neighbor, 2);
    // Best case: at the orbiter at 1000 + 1 = 1001 s; E1 then gives 5000 + 480 = 5480 s.
    assert_eq!(f.route.best_delivery_time, 5480 * SEC);
    // Forfeit: the earliest end among P1 (1600) and E1 (6000).
    assert_eq!(f.route.forfeit_time, 1600 * SEC);
    // The bundle: first byte 1000, last byte 1004.25, at the orbiter 1005.25; it waits
    // for E1: last byte 5000 + 17 = 5017, on Earth 5017 + 480 = 5497 s.
    assert_eq!(f.first_byte_time, 1000 * SEC);
    assert_eq!(f.projected_arrival, 5497 * SEC);
    assert_eq!(f.consumption, 1_062_500);
}

#[test]
fn when_mars_is_far_the_light_time_alone_moves_the_arrival() {
    // 20 light minutes: 5017 + 1200 = 6217 s. ION's margin for the receiver's motion is
    // 125 * 1200 / 186282 = 0 whole seconds (it starts at 1491 s of light time).
    let p = plan(1200);
    let f = Cgr::new(&p).best_route(1, 3, 0, &bundle()).unwrap();
    assert_eq!(f.route.best_delivery_time, 6200 * SEC);
    assert_eq!(f.projected_arrival, 6217 * SEC);
}

#[test]
fn a_pass_too_short_for_the_rest_of_the_bundle_gives_way_to_the_next_pass() {
    // At 1596 s P1 has 4 s left: 4 * 250000 = 1000000 bytes < 1062500, so a bundle that
    // may not be fragmented cannot use it. The next route (ION: the earliest that starts
    // with another contact than P1): P2 reaches the orbiter at 7001, after E1 has ended,
    // and E2 delivers at 9000 + 480 = 9480. The bundle on [P2, E2]: last byte 7004.25, at
    // the orbiter 7005.25, on E2 last byte 9017, on Earth 9497 s. (Yen also finds
    // [P1, E2], 9480 in the best case too, but after [P2, E2]; the choice is the same.)
    let p = plan(480);
    for alternatives in [Alternatives::Ion, Alternatives::Yen] {
        let settings = CgrSettings {
            alternatives,
            ..CgrSettings::default()
        };
        let f = Cgr::with_settings(&p, settings)
            .best_route(1, 3, 1596 * SEC, &bundle())
            .unwrap();
        assert_eq!(
            hops(&p, &f),
            vec![(1, 2, 7000), (2, 3, 9000)],
            "{alternatives:?}"
        );
        assert_eq!(f.projected_arrival, 9497 * SEC);
    }

    // A bundle that may be fragmented keeps P1: ION would send the 1000000 bytes that fit
    // (the projection is still the whole bundle's: 1596 + 4.25 + 1 at the orbiter, then
    // 5017 + 480 on Earth).
    let frag = Bundle {
        fragmentable: true,
        ..bundle()
    };
    let f = Cgr::new(&p).best_route(1, 3, 1596 * SEC, &frag).unwrap();
    assert_eq!(hops(&p, &f), vec![(1, 2, 1000), (2, 3, 5000)]);
    assert_eq!(f.volume, 1_000_000.0);
    assert_eq!(f.projected_arrival, 5497 * SEC);
}

#[test]
fn the_pass_whose_orbiter_reaches_earth_first_wins_over_an_earlier_pass() {
    // A second orbiter, node 4: a pass Q1 [3000, 3600) after P1, but its downlink F1
    // [4000, 4600) at 125000 B/s comes before orbiter 2's E1. Light time 3 <-> 4 480 s
    // ("3 4": the smaller node first, so it holds both ways).
    let text = format!(
        "{}a contact +3000 +3600 1 4 250000\na contact +4000 +4600 4 3 125000\n\
         a range +0 +{SOL} 1 4 1\na range +0 +{SOL} 3 4 480\n",
        plan(480).to_ion()
    );
    let p = ContactPlan::parse(&text).unwrap();
    let f = Cgr::new(&p).best_route(1, 3, 0, &bundle()).unwrap();
    // Best case via 4: 3000 + 1 = 3001, then 4000 + 480 = 4480 s (via 2: 5480 s).
    assert_eq!(hops(&p, &f), vec![(1, 4, 3000), (4, 3, 4000)]);
    assert_eq!(f.route.best_delivery_time, 4480 * SEC);
    // The bundle: 3004.25 + 1 at orbiter 4; F1 last byte 4000 + 1062500/125000 = 4008.5;
    // on Earth 4488.5 s.
    assert_eq!(f.projected_arrival, 4488 * SEC + 500 * MS);
    // The two best routes in Yen's order: via 4 (4480), then via 2 (5480).
    let routes = Cgr::new(&p).routes(1, 3, 0, 2);
    let best: Vec<(u64, u64)> = routes
        .iter()
        .map(|r| (r.neighbor, r.best_delivery_time / SEC))
        .collect();
    assert_eq!(best, vec![(4, 4480), (2, 5480)]);
}

#[test]
fn a_sol_of_bundles_fills_the_first_downlink_then_moves_to_the_next_pass() {
    // E1 carries 1000 s * 62500 = 62500000 bytes: 58 bundles of 1062500 (61625000); the
    // 59th finds 875000 bytes left and goes on the next route, [P2, E2].
    // The node tells CGR what it has queued for the orbiter (the bundles forwarded before,
    // which wait for P1): bundle n's first byte is 1000 + (n - 1) * 4.25 s. ION projects
    // the queue of the first hop only, so all 58 reach Earth at 5497 s in the projection.
    // For the 59th, P1's volume (600 s * 250000 = 150000000 bytes) drains the whole
    // backlog before P2, so its first byte is 7000 s, and it arrives at 9497 s.
    let p = plan(480);
    let mut cgr = Cgr::new(&p);
    let mut conditions = Conditions::default();
    for n in 1..=60u64 {
        let f = cgr.forward(1, 3, 0, &bundle(), &conditions).unwrap();
        if n <= 58 {
            assert_eq!(hops(&p, &f), vec![(1, 2, 1000), (2, 3, 5000)], "bundle {n}");
            assert_eq!(
                s(f.first_byte_time),
                1000.0 + (n - 1) as f64 * 4.25,
                "bundle {n}"
            );
            assert_eq!(f.projected_arrival, 5497 * SEC, "bundle {n}");
        } else {
            assert_eq!(hops(&p, &f), vec![(1, 2, 7000), (2, 3, 9000)], "bundle {n}");
            assert_eq!(f.first_byte_time, 7000 * SEC, "bundle {n}");
            assert_eq!(f.projected_arrival, 9497 * SEC, "bundle {n}");
        }
        *conditions.backlog.entry(2).or_default() += f.consumption;
    }
    // What is left: E1 875000 bytes; P1 150000000 - 58 * 1062500 = 88375000; P2 and E2
    // two bundles' worth less than their volumes.
    let e1 = ContactId(p.ids_between(2, 3).start);
    let p1 = ContactId(p.ids_between(1, 2).start);
    assert_eq!(
        cgr.residual_volume(e1, spacetp_dtn::Priority::Standard),
        875_000.0
    );
    assert_eq!(
        cgr.residual_volume(p1, spacetp_dtn::Priority::Standard),
        88_375_000.0
    );
}

#[test]
fn nothing_reaches_earth_after_the_last_downlink_or_before_expiry() {
    let p = plan(480);
    // After E3 has ended (23000 s) there is no route.
    assert!(Cgr::new(&p)
        .best_route(1, 3, 23_000 * SEC, &bundle())
        .is_none());
    // After P4 ended (19600 s) nothing leaves the lander, though E3 is still ahead.
    assert!(Cgr::new(&p)
        .best_route(1, 3, 19_600 * SEC, &bundle())
        .is_none());
    // A bundle that expires at 5496 s: the best case (5480) passes ION's first check but
    // the projection (5497) does not, and every other route arrives later still.
    let short = Bundle::new(1_000_000, 5496 * SEC);
    assert!(Cgr::new(&p).best_route(1, 3, 0, &short).is_none());
    let enough = Bundle::new(1_000_000, 5497 * SEC);
    assert_eq!(
        Cgr::new(&p)
            .best_route(1, 3, 0, &enough)
            .unwrap()
            .projected_arrival,
        5497 * SEC
    );
}
