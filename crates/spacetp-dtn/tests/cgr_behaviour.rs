//! CGR's choices one behaviour at a time, on plans small enough to work out by hand; the
//! rules quoted are ION 4.1.3's (bpv7/cgr/libcgr.c, bpv7/ipn/ipnfw.c).
//!
//! Unless said otherwise: bundles of 1000 bytes, no overhead estimate (`ion_overhead`
//! off, so a bundle occupies exactly its size), rates of 1000 bytes/s (1 s per bundle
//! per hop), time in seconds.

use spacetp_dtn::cgr::owlt_margin;
use spacetp_dtn::{
    Alternatives, Bundle, Cgr, CgrSettings, Conditions, ContactId, ContactPlan, Priority,
};
use spacetp_proto::{Time, MS, SEC};

fn plan(text: &str) -> ContactPlan {
    ContactPlan::parse(text).unwrap()
}

fn exact(p: &ContactPlan) -> Cgr {
    Cgr::with_settings(
        p,
        CgrSettings {
            ion_overhead: false,
            ..CgrSettings::default()
        },
    )
}

fn kb() -> Bundle {
    Bundle::new(1000, 100_000 * SEC)
}

/// The route as the nodes it visits.
fn path(p: &ContactPlan, hops: &[ContactId]) -> Vec<u64> {
    let mut v = vec![p.contact(hops[0]).from];
    v.extend(hops.iter().map(|&h| p.contact(h).to));
    v
}

#[test]
fn a_contact_too_small_for_the_bundle_is_skipped() {
    // A [100, 110) carries 10 * 1000 = 10000 bytes; B [200, 300) more. With ION's
    // overhead, 9500 bytes occupy 9500 + 9500/16 = 10093 > 10000: A is refused and the
    // bundle leaves on B: last byte 200 + 10.093, arrival 211.093 s. 9000 bytes occupy
    // 9562 and fit A: last byte 109.562, arrival 110.562 s.
    let p = plan(
        "a contact +100 +110 1 2 1000\na contact +200 +300 1 2 1000\na range +0 +1000 1 2 1\n",
    );
    let f = Cgr::new(&p)
        .best_route(1, 2, 0, &Bundle::new(9500, 1000 * SEC))
        .unwrap();
    assert_eq!(p.contact(f.route.hops[0]).start, 200 * SEC);
    assert_eq!((f.consumption, f.projected_arrival), (10_093, 211_093 * MS));
    let f = Cgr::new(&p)
        .best_route(1, 2, 0, &Bundle::new(9000, 1000 * SEC))
        .unwrap();
    assert_eq!(p.contact(f.route.hops[0]).start, 100 * SEC);
    assert_eq!((f.consumption, f.projected_arrival), (9_562, 110_562 * MS));
    // A bundle no contact can hold has no route.
    assert!(Cgr::new(&p)
        .best_route(1, 2, 0, &Bundle::new(95_000, 1000 * SEC))
        .is_none());
}

#[test]
fn booking_fills_a_contact_so_the_tenth_bundle_takes_the_later_one() {
    // A [100, 110) holds 10000 bytes; each 1000-byte bundle occupies 1000 + 62 = 1062
    // (ION: 1/16 of the size, at least 36). After 9 bookings 10000 - 9558 = 442 bytes are
    // left: less than one bundle, so the 10th goes on B [200, 300).
    let p = plan(
        "a contact +100 +110 1 2 1000\na contact +200 +300 1 2 1000\na range +0 +1000 1 2 1\n",
    );
    let mut cgr = Cgr::new(&p);
    for n in 1..=11 {
        let f = cgr.forward(1, 2, 0, &kb(), &Conditions::default()).unwrap();
        let start = p.contact(f.route.hops[0]).start / SEC;
        assert_eq!(start, if n <= 9 { 100 } else { 200 }, "bundle {n}");
    }
    assert_eq!(cgr.residual_volume(ContactId(0), Priority::Standard), 442.0);
    assert_eq!(
        cgr.residual_volume(ContactId(1), Priority::Standard),
        100_000.0 - 2.0 * 1062.0
    );
}

#[test]
fn bookings_count_for_their_priority_and_every_lower_one() {
    // ipnfw.c: "for (i = priority; i >= 0; i--) contactBuf.mtv[i] -= route->bundleECCC".
    let p = plan("a contact +0 +10 1 2 1000\na range +0 +10 1 2 1\n");
    let mut cgr = Cgr::new(&p);
    cgr.book_contact(ContactId(0), 3000.0, Priority::Standard);
    cgr.book_contact(ContactId(0), 500.0, Priority::Expedited);
    cgr.book_contact(ContactId(0), 100.0, Priority::Bulk);
    assert_eq!(
        cgr.residual_volume(ContactId(0), Priority::Bulk),
        10_000.0 - 3600.0
    );
    assert_eq!(
        cgr.residual_volume(ContactId(0), Priority::Standard),
        10_000.0 - 3500.0
    );
    assert_eq!(
        cgr.residual_volume(ContactId(0), Priority::Expedited),
        10_000.0 - 500.0
    );
    // 6400 more standard bytes leave 100 for standard (a 100-byte bundle occupies 136),
    // 0 for bulk (ION refuses a contact whose residual volume is 0 or less), 9500 for
    // expedited.
    cgr.book_contact(ContactId(0), 6400.0, Priority::Standard);
    let at = |prio| Bundle {
        priority: prio,
        ..Bundle::new(100, 100 * SEC)
    };
    assert!(cgr.best_route(1, 2, 0, &at(Priority::Standard)).is_none());
    assert!(cgr.best_route(1, 2, 0, &at(Priority::Bulk)).is_none());
    assert!(cgr.best_route(1, 2, 0, &at(Priority::Expedited)).is_some());
}

#[test]
fn the_backlog_ahead_delays_the_first_byte_and_earlier_contacts_drain_it() {
    // ION's earliest transmission opportunity: the first contact's start plus the time to
    // send what is queued ahead. One contact A [100, 200): 50000 bytes queued make the
    // first byte 150 s, the last 151, the arrival 152 s.
    let p = plan("a contact +100 +200 1 2 1000\na range +0 +1000 1 2 1\n");
    let mut cgr = exact(&p);
    let mut c = Conditions::default();
    c.backlog.insert(2, 50_000);
    let f = cgr.best_route_with(1, 2, 0, &kb(), &c).unwrap();
    assert_eq!(
        (f.first_byte_time, f.projected_arrival),
        (150 * SEC, 152 * SEC)
    );
    // 99500 queued: the first byte at 199.5 s is before the end, but only 0.5 s (500
    // bytes) remain for a 1000-byte bundle: refused (effective volume limit).
    c.backlog.insert(2, 99_500);
    assert!(cgr.best_route_with(1, 2, 0, &kb(), &c).is_none());
    // A queue for another neighbor does not matter.
    c.backlog.clear();
    c.backlog.insert(3, 99_500);
    assert_eq!(
        cgr.best_route_with(1, 2, 0, &kb(), &c)
            .unwrap()
            .first_byte_time,
        100 * SEC
    );

    // An earlier contact A0 [50, 60) carries 10000 of 15000 queued bytes before A: with
    // the bundle on A (A0's 10 s are too few once 15000 bytes are ahead: first byte 65 s
    // is after its end), 5000 remain: first byte 105, arrival 107 s.
    let p =
        plan("a contact +50 +60 1 2 1000\na contact +100 +200 1 2 1000\na range +0 +1000 1 2 1\n");
    let mut c = Conditions::default();
    c.backlog.insert(2, 15_000);
    let f = exact(&p).best_route_with(1, 2, 0, &kb(), &c).unwrap();
    assert_eq!(p.contact(f.route.hops[0]).start, 100 * SEC);
    assert_eq!(
        (f.first_byte_time, f.projected_arrival),
        (105 * SEC, 107 * SEC)
    );
}

#[test]
fn a_direct_contact_beats_a_relay_when_it_arrives_earlier_and_loses_when_it_does_not() {
    // Relay 1 -> 2 [0, 100) then 2 -> 3 [0, 500), light times 1 s: best case 1, then
    // max(0, 1) + 1 = 2 s; the bundle: 0 + 1 + 1 = 2 at node 2, 2 + 1 + 1 = 4 s at 3.
    let relay = "a contact +0 +100 1 2 1000\na contact +0 +500 2 3 1000\n\
                 a range +0 +1000 1 2 1\na range +0 +1000 2 3 1\n";
    // A direct contact at 1000 s (light time 10): best case 1010, bundle 1011 s: loses.
    let late = plan(&format!(
        "{relay}a contact +1000 +2000 1 3 1000\na range +0 +3000 1 3 10\n"
    ));
    let f = exact(&late).best_route(1, 3, 0, &kb()).unwrap();
    assert_eq!(path(&late, &f.route.hops), vec![1, 2, 3]);
    assert_eq!(f.projected_arrival, 4 * SEC);
    // A direct contact now (light time 1): best case 1, bundle 0 + 1 + 1 = 2 s: wins.
    let now = plan(&format!(
        "{relay}a contact +0 +100 1 3 1000\na range +0 +3000 1 3 1\n"
    ));
    let f = exact(&now).best_route(1, 3, 0, &kb()).unwrap();
    assert_eq!(path(&now, &f.route.hops), vec![1, 3]);
    assert_eq!(f.projected_arrival, 2 * SEC);
    // A direct contact whose best case ties the relay's (light time 2: best case 2 s):
    // Dijkstra prefers fewer hops, and the bundle arrives at 0 + 1 + 2 = 3 s.
    let tie = plan(&format!(
        "{relay}a contact +0 +100 1 3 1000\na range +0 +3000 1 3 2\n"
    ));
    let f = exact(&tie).best_route(1, 3, 0, &kb()).unwrap();
    assert_eq!(path(&tie, &f.route.hops), vec![1, 3]);
    assert_eq!(f.projected_arrival, 3 * SEC);
}

#[test]
fn alternatives_are_computed_only_while_no_known_route_qualifies() {
    // ION's loadBestRoutesList checks the routes it has and computes another only when
    // none qualifies. Direct 1 -> 3 with light time 2.5 s: best case 2.5 > the relay's 2,
    // so the relay is found first and qualifies (bundle at 4 s) although the direct
    // contact would deliver at 0 + 1 + 2.5 = 3.5 s. Once both routes are known (here by
    // asking for two), the better projection wins. (cgrfetch on the same plan with a light
    // time of 3 s, as ION reads whole seconds: one route proposed, the relay, and added.)
    let p = plan(
        "a contact +0 +100 1 2 1000\na contact +0 +500 2 3 1000\na contact +0 +100 1 3 1000\n\
         a range +0 +1000 1 2 1\na range +0 +1000 2 3 1\na range +0 +1000 1 3 2.5\n",
    );
    let mut cgr = exact(&p);
    let f = cgr.best_route(1, 3, 0, &kb()).unwrap();
    assert_eq!(
        (path(&p, &f.route.hops), f.projected_arrival),
        (vec![1, 2, 3], 4 * SEC)
    );
    assert_eq!(cgr.routes(1, 3, 0, 2).len(), 2);
    let f = cgr.best_route(1, 3, 0, &kb()).unwrap();
    assert_eq!(
        (path(&p, &f.route.hops), f.projected_arrival),
        (vec![1, 3], 3500 * MS)
    );
}

#[test]
fn equal_projections_prefer_the_later_forfeit_then_the_smaller_neighbor() {
    // Via 2: 1 -> 2 [0, 100), 2 -> 3 [0, 100); via 4: 1 -> 4 [0, 200), 4 -> 3 [0, 200);
    // light times 1 s: both best cases 2 s and both bundles at 4 s. Dijkstra takes the
    // first contact in ION's order (2 -> 3 before 4 -> 3), so a fresh router forwards
    // via 2 (cgrfetch proposed first hop 2, arrival +2); with both routes known, ION's
    // tryRoute prefers the later forfeit time (200).
    let p = plan(
        "a contact +0 +100 1 2 1000\na contact +0 +100 2 3 1000\n\
         a contact +0 +200 1 4 1000\na contact +0 +200 4 3 1000\n\
         a range +0 +1000 1 2 1\na range +0 +1000 2 3 1\na range +0 +1000 1 4 1\na range +0 +1000 3 4 1\n",
    );
    let mut cgr = exact(&p);
    assert_eq!(cgr.best_route(1, 3, 0, &kb()).unwrap().route.neighbor, 2);
    cgr.routes(1, 3, 0, 2);
    let f = cgr.best_route(1, 3, 0, &kb()).unwrap();
    assert_eq!(
        (f.route.neighbor, f.route.forfeit_time, f.projected_arrival),
        (4, 200 * SEC, 4 * SEC)
    );
    // Equal forfeit times too: the smaller neighbor (2 over 4).
    let q = plan(
        "a contact +0 +100 1 2 1000\na contact +0 +100 2 3 1000\n\
         a contact +0 +100 1 4 1000\na contact +0 +100 4 3 1000\n\
         a range +0 +1000 1 2 1\na range +0 +1000 2 3 1\na range +0 +1000 1 4 1\na range +0 +1000 3 4 1\n",
    );
    let mut cgr = exact(&q);
    cgr.routes(1, 3, 0, 2);
    assert_eq!(cgr.best_route(1, 3, 0, &kb()).unwrap().route.neighbor, 2);
}

/// Light times 1 s except 1 -> 3 (5 s); all contacts [0, 100) except 1 -> 4 [50, 100).
/// Best cases: 1-2-4: 1, 2; 1-2-3-4: 1, 2, 3; 1-3-4: 5, 6; 1-4: 51. A contact 3 -> 1
/// would let a spur from [1 -> 3] return to 1 and take 1-2-4 again.
const FOUR_ROUTES: &str = "\
a contact +0 +100 1 2 1000\na contact +0 +100 1 3 1000\na contact +50 +100 1 4 1000
a contact +0 +100 2 3 1000\na contact +0 +100 2 4 1000\na contact +0 +100 3 1 1000
a contact +0 +100 3 4 1000
a range +0 +1000 1 2 1\na range +0 +1000 1 3 5\na range +0 +1000 3 1 1\na range +0 +1000 1 4 1
a range +0 +1000 2 3 1\na range +0 +1000 2 4 1\na range +0 +1000 3 4 1
";

fn listed(p: &ContactPlan, settings: CgrSettings) -> Vec<(Vec<u64>, Time)> {
    Cgr::with_settings(p, settings)
        .routes(1, 4, 0, 10)
        .iter()
        .map(|r| (path(p, &r.hops), r.best_delivery_time / SEC))
        .collect()
}

#[test]
fn routes_in_ion_4_1_3s_order_each_start_with_a_new_contact() {
    // cgrfetch 4 on this plan (ION 4.1.3, every route too slow for the bundle so that ION
    // computes them all) proposed, in order: first hop 2 arriving +2, first hop 3 arriving
    // +6, first hop 4 arriving +51, then "NO MORE"; its spur searches from 1 -> 2 and
    // 1 -> 3 each logged "IGNORE contact ends before data arrives".
    let p = plan(FOUR_ROUTES);
    assert_eq!(
        listed(&p, CgrSettings::default()),
        vec![(vec![1, 2, 4], 2), (vec![1, 3, 4], 6), (vec![1, 4], 51)]
    );
}

#[test]
fn routes_in_yens_order_never_visit_a_node_twice() {
    // Yen (Lawler): after 1-2-4, the spur from 1 -> 2 (2 -> 4 excluded) gives 1-2-3-4 at
    // 3 s, before 1-3-4 (6 s) and 1-4 (51 s). No route passes a node twice: ION suppresses
    // only the root path's contacts, so the spur from [1 -> 3] (3 -> 4 excluded) could
    // take 3 -> 1 and 1-2-4 again; we refuse to re-enter a node of the path.
    let p = plan(FOUR_ROUTES);
    let yen = CgrSettings {
        alternatives: Alternatives::Yen,
        ..CgrSettings::default()
    };
    let routes = listed(&p, yen.clone());
    assert_eq!(
        routes,
        vec![
            (vec![1, 2, 4], 2),
            (vec![1, 2, 3, 4], 3),
            (vec![1, 3, 4], 6),
            (vec![1, 4], 51)
        ]
    );
    let all = Cgr::with_settings(&p, yen).routes(1, 4, 0, 10);
    assert_eq!(all[2].forfeit_time, 100 * SEC);
    assert_eq!(all[3].from_time, 50 * SEC);
}

#[test]
fn the_first_contact_must_be_certain_and_excluded_neighbors_are_not_used() {
    // ION's checkRoute: "Initial contact of route must be certain". Via 2 at confidence
    // 0.5 [0, 100): skipped; via 4: 1 -> 4 [10, 100) last byte 11, at node 4 12 s;
    // 4 -> 3 [0, 100) last byte 13, at node 3 14 s.
    let p = plan(
        "a contact +0 +100 1 2 1000 0.5\na contact +0 +100 2 3 1000\n\
         a contact +10 +100 1 4 1000\na contact +0 +100 4 3 1000 0.8\n\
         a range +0 +1000 1 2 1\na range +0 +1000 2 3 1\na range +0 +1000 1 4 1\na range +0 +1000 3 4 1\n",
    );
    let f = exact(&p).best_route(1, 3, 0, &kb()).unwrap();
    assert_eq!((f.route.neighbor, f.projected_arrival), (4, 14 * SEC));
    assert_eq!(
        f.route.confidence, 0.8,
        "a later uncertain contact only lowers the route's confidence"
    );
    let c = Conditions {
        excluded: vec![4],
        ..Conditions::default()
    };
    assert!(exact(&p).best_route_with(1, 3, 0, &kb(), &c).is_none());
}

#[test]
fn a_contact_without_a_range_is_unusable() {
    // ION's getApplicableRange finds no range 1 -> 3 ("3 1" implies nothing about 1 -> 3);
    // cgrfetch: "IGNORE no range for contact".
    let p = plan("a contact +0 +100 1 3 1000\na range +0 +1000 3 1 1\n");
    assert!(Cgr::new(&p).best_route(1, 3, 0, &kb()).is_none());
    let q = plan("a contact +0 +100 1 3 1000\na range +0 +1000 1 3 1\n");
    assert!(Cgr::new(&q).best_route(1, 3, 0, &kb()).is_some());
}

#[test]
fn long_light_times_carry_ions_margin_for_the_receivers_motion() {
    // libcgr.c: margin = (450000 / 3600) * owlt / 186282 whole seconds: 125 * 3000 /
    // 186282 = 2 s for 3000 s (Jupiter); 0 up to 1490 s. cgrfetch on this plan:
    // "COST ... owlt:3002", arrival +3002.
    assert_eq!(owlt_margin(3000 * SEC), 2 * SEC);
    assert_eq!(owlt_margin(1490 * SEC), 0);
    assert_eq!(owlt_margin(1491 * SEC), SEC);
    let p = plan("a contact +0 +100 1 2 1000\na range +0 +10000 1 2 3000\n");
    assert_eq!(
        Cgr::new(&p).routes(1, 2, 0, 1)[0].best_delivery_time,
        3002 * SEC
    );
    let plain = Cgr::with_settings(
        &p,
        CgrSettings {
            owlt_margin: false,
            ..CgrSettings::default()
        },
    )
    .routes(1, 2, 0, 1);
    assert_eq!(plain[0].best_delivery_time, 3000 * SEC);
}

#[test]
fn routes_expire_as_time_passes_and_the_router_moves_on() {
    let p =
        plan("a contact +0 +100 1 2 1000\na contact +200 +300 1 2 1000\na range +0 +1000 1 2 1\n");
    let mut cgr = exact(&p);
    assert_eq!(
        cgr.best_route(1, 2, 50 * SEC, &kb())
            .unwrap()
            .projected_arrival,
        52 * SEC
    );
    // At 100 s the first contact has ended: its route is dropped, the next found.
    assert_eq!(
        cgr.best_route(1, 2, 100 * SEC, &kb())
            .unwrap()
            .projected_arrival,
        202 * SEC
    );
    assert_eq!(cgr.routes(1, 2, 100 * SEC, 5).len(), 1);
    // Time going back starts afresh rather than using routes computed later.
    assert_eq!(
        cgr.best_route(1, 2, 0, &kb()).unwrap().projected_arrival,
        2 * SEC
    );
    assert!(cgr.best_route(1, 2, 300 * SEC, &kb()).is_none());
    assert!(
        cgr.best_route(1, 1, 0, &kb()).is_none(),
        "no route to oneself"
    );
    assert!(
        cgr.best_route(1, 9, 0, &kb()).is_none(),
        "no route to an unknown node"
    );
}
