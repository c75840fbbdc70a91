//! A contact plan derived from link descriptions (the simulator's scenario links).

use spacetp_dtn::{from_links, Contact, LinkWindows};
use spacetp_proto::{MS, SEC};

#[test]
fn a_link_with_outages_gives_contacts_both_ways_in_its_up_windows_and_one_range() {
    // A 1.5 Mb/s forward, 5 kb/s back GEO-like link (rates in bytes/s: 187500 and 625),
    // 270 ms one way, up over [0, 600 s) except [100 s, 160 s) and [400 s, 420 s).
    let link = LinkWindows {
        a: 1,
        b: 2,
        rate_a_to_b: 187_500.0,
        rate_b_to_a: 625.0,
        owlt: 270 * MS,
        start: 0,
        end: 600 * SEC,
        outages: vec![(400 * SEC, 420 * SEC), (100 * SEC, 160 * SEC)],
    };
    let p = from_links(&[link]).unwrap();
    let windows = [
        (0, 100 * SEC),
        (160 * SEC, 400 * SEC),
        (420 * SEC, 600 * SEC),
    ];
    assert_eq!(p.up_intervals(1, 2), windows.to_vec());
    assert_eq!(p.up_intervals(2, 1), windows.to_vec());
    assert!(p
        .contacts_between(1, 2)
        .iter()
        .all(|c| c.rate_bytes_per_s == 187_500.0 && c.confidence == 1.0));
    assert!(p
        .contacts_between(2, 1)
        .iter()
        .all(|c| c.rate_bytes_per_s == 625.0));
    assert_eq!(
        p.owlt(1, 2, 130 * SEC),
        Some(270 * MS),
        "the range spans outages too"
    );
    assert_eq!(p.owlt(2, 1, 599 * SEC), Some(270 * MS));
    assert!(!p.is_up(1, 2, 100 * SEC) && p.is_up(1, 2, 99 * SEC) && p.is_up(2, 1, 160 * SEC));
}

#[test]
fn a_simplex_link_has_contacts_one_way_only_and_node_order_does_not_matter() {
    let mut l = LinkWindows::always_up(5, 3, 1000.0, SEC, 10 * SEC, 20 * SEC);
    l.rate_b_to_a = 0.0;
    let p = from_links(&[l]).unwrap();
    assert_eq!(
        p.contacts(),
        &[Contact::new(5, 3, 10 * SEC, 20 * SEC, 1000.0)]
    );
    assert_eq!(
        p.range_table()[0].range.from,
        3,
        "asserted from the smaller node"
    );
    assert_eq!(p.owlt(5, 3, 15 * SEC), Some(SEC));
}

#[test]
fn bad_links_are_refused_with_their_path() {
    let ok = LinkWindows::always_up(1, 2, 1000.0, SEC, 0, 100 * SEC);
    let cases: Vec<(LinkWindows, &str)> = vec![
        (
            LinkWindows { b: 1, ..ok.clone() },
            "links[1].b: a link joins two different nodes, not 1 to itself",
        ),
        (
            LinkWindows { a: 0, ..ok.clone() },
            "links[1].a: node numbers start at 1",
        ),
        (
            LinkWindows {
                rate_a_to_b: -1.0,
                ..ok.clone()
            },
            "links[1].rate_a_to_b: -1 bytes/s: a rate is finite and 0 or more",
        ),
        (
            LinkWindows {
                rate_a_to_b: 0.0,
                rate_b_to_a: 0.0,
                ..ok.clone()
            },
            "links[1].rate_a_to_b: both rates are 0: the link would never carry data",
        ),
        (
            LinkWindows {
                end: 0,
                ..ok.clone()
            },
            "links[1].end: the horizon's end must be after its start",
        ),
        (
            LinkWindows {
                outages: vec![(0, SEC), (50 * SEC, 40 * SEC)],
                ..ok.clone()
            },
            "links[1].outages[1]: ends at 40 s, not after it starts at 50 s",
        ),
    ];
    let other = LinkWindows::always_up(3, 4, 1.0, SEC, 0, SEC);
    for (bad, message) in cases {
        let e = from_links(&[other.clone(), bad]).unwrap_err();
        assert_eq!(e.to_string(), message);
    }
}

#[test]
fn two_links_between_the_same_nodes_at_the_same_time_are_refused() {
    let a = LinkWindows::always_up(1, 2, 1000.0, SEC, 0, 100 * SEC);
    let b = LinkWindows::always_up(2, 1, 500.0, SEC, 50 * SEC, 200 * SEC);
    let e = from_links(&[a.clone(), b]).unwrap_err().to_string();
    assert!(
        e.starts_with(
            "links[1]: contact 2 -> 1 from +50 to +200: overlaps the contact of links[0]"
        ),
        "{e}"
    );
    // One after the other, with a gap, is two contact windows of one pair and two ranges.
    let c = LinkWindows::always_up(2, 1, 500.0, 2 * SEC, 150 * SEC, 200 * SEC);
    let p = from_links(&[a, c]).unwrap();
    assert_eq!(
        p.up_intervals(1, 2),
        vec![(0, 100 * SEC), (150 * SEC, 200 * SEC)]
    );
    assert_eq!(p.owlt(2, 1, 160 * SEC), Some(2 * SEC));
}
