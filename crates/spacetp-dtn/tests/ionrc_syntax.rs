//! Every form of `ionrc` text the reader takes, and every error with its line. The
//! external truth is ION 4.1.3: ionrc(5), ionadmin.c, rfx.c, and what ionadmin did with
//! the same lines (loaded in a private IPC namespace, `l contact` / `l range` and ion.log
//! read back; quoted in the comments).

use spacetp_dtn::contact_plan::parse_utc;
use spacetp_dtn::{Contact, ContactPlan, ParseOptions, PlanError, Range};
use spacetp_proto::SEC;

fn err(text: &str) -> String {
    ContactPlan::parse(text).unwrap_err().to_string()
}

fn err_line(text: &str) -> (Option<usize>, String) {
    let e = ContactPlan::parse(text).unwrap_err();
    (e.line_number(), e.to_string())
}

#[test]
fn a_real_ionrc_file_is_read_and_its_other_commands_counted() {
    // /work/ion/cfg/node1.ionrc, the file ION 4.1.3 ran with in the two-node tests.
    let text = "\
# ionadmin commands for node 1
1 1 node1.ionconfig
s
m clocksync 1
a contact +0 +86400 1 2 1250000
a contact +0 +86400 2 1 1250000
a range +0 +86400 1 2 1
m production 1250000
m consumption 1250000
";
    let p = ContactPlan::parse(text).unwrap();
    assert_eq!(
        p.contacts(),
        &[
            Contact::new(1, 2, 0, 86_400 * SEC, 1_250_000.0),
            Contact::new(2, 1, 0, 86_400 * SEC, 1_250_000.0)
        ]
    );
    assert_eq!(p.owlt(1, 2, 0), Some(SEC));
    assert_eq!(
        p.owlt(2, 1, 86_399 * SEC),
        Some(SEC),
        "1 < 2: the range holds both ways"
    );
    assert_eq!(
        p.ignored_commands(),
        5,
        "1, s, m clocksync, m production, m consumption"
    );
    assert_eq!(p.local_node(), Some(1));
    assert_eq!(p.epoch(), None);
}

#[test]
fn contacts_take_an_optional_confidence_and_comments_and_blank_lines_are_skipped() {
    let p = ContactPlan::parse(
        "\n   # indented comment\n#no space\na contact +10 +20 3 4 500 0.25\n\n\
         a contact +30 +40.5 3 4 100.5\n",
    )
    .unwrap();
    let c = p.contacts_between(3, 4);
    assert_eq!(c.len(), 2);
    assert_eq!(
        (c[0].start, c[0].end, c[0].confidence),
        (10 * SEC, 20 * SEC, 0.25)
    );
    // Decimals are our extension (ION's strtol would read 40.5 as 40 and 100.5 as 100).
    assert_eq!(
        (c[1].end, c[1].rate_bytes_per_s, c[1].confidence),
        (40 * SEC + SEC / 2, 100.5, 1.0)
    );
}

#[test]
fn ranges_follow_ions_asymmetric_rule() {
    // ionrc(5): "a range" with the smaller node first implies the reverse unless a
    // reverse range is asserted; with the larger node first it implies nothing.
    // ionadmin's `l range` after these four lines (t2.ionrc, same values):
    //   1 -> 2 5 s, 2 -> 1 7 s, 5 -> 6 3 s, 6 -> 5 4 s, and for "4 1" alone 4 -> 1 only.
    let p = ContactPlan::parse(
        "a range +100 +200 1 2 5\na range +100 +200 2 1 7\n\
         a range +100 +200 6 5 4\na range +100 +200 5 6 3\na range +0 +50 4 1 9\n",
    )
    .unwrap();
    let at = 150 * SEC;
    assert_eq!(p.owlt(1, 2, at), Some(5 * SEC));
    assert_eq!(
        p.owlt(2, 1, at),
        Some(7 * SEC),
        "the asserted reverse replaces the implied one"
    );
    assert_eq!(p.owlt(5, 6, at), Some(3 * SEC));
    assert_eq!(
        p.owlt(6, 5, at),
        Some(4 * SEC),
        "asserted first, so 5 6 implies nothing"
    );
    assert_eq!(p.owlt(4, 1, 0), Some(9 * SEC));
    assert_eq!(
        p.owlt(1, 4, 0),
        None,
        "4 > 1: the range implies nothing about 1 -> 4"
    );
    assert_eq!(p.owlt(1, 2, 99 * SEC), None);
    assert_eq!(p.asserted_ranges().count(), 5);
    assert_eq!(
        p.range_table().len(),
        5,
        "only 1 -> 2 and 5 -> 6 could imply, and both were overridden"
    );
}

#[test]
fn absolute_times_use_the_callers_epoch() {
    let epoch = parse_utc("2025/03/01-00:00:00").unwrap();
    let opts = ParseOptions {
        epoch: Some(epoch),
        nodes: None,
    };
    let p = ContactPlan::parse_with(
        "a contact 2025/03/01-00:10:00 2025/03/01-00:20:00 1 2 1000\n\
         a contact +1800 2025/03/01-01:00:00 1 2 1000\n",
        &opts,
    )
    .unwrap();
    assert_eq!(
        p.up_intervals(1, 2),
        vec![(600 * SEC, 1200 * SEC), (1800 * SEC, 3600 * SEC)]
    );
    assert_eq!(p.epoch(), Some(epoch));
}

#[test]
fn the_first_at_line_sets_the_epoch_and_later_ones_move_the_reference() {
    // ionrc(5) `@`: sets the reference time of relative times; "the new reference time can
    // be a relative time, i.e., an offset beyond the current reference time"; `@ 0` is now.
    let p = ContactPlan::parse(
        "a contact +5 +10 1 2 1\n\
         @ 2025/03/01-12:00:00\n\
         a contact +100 +200 1 2 1\n\
         @ +1000\n\
         a contact +100 +200 1 2 1\n\
         @ 2025/03/01-13:00:00\n\
         a contact +0 +60 1 2 1\n\
         a contact 2025/03/01-12:00:20 2025/03/01-12:00:30 1 2 1\n\
         @ 0\n\
         a contact +50 +60 1 2 1\n",
    )
    .unwrap();
    assert_eq!(p.epoch(), parse_utc("2025/03/01-12:00:00").ok());
    assert_eq!(
        p.up_intervals(1, 2),
        vec![
            (5 * SEC, 10 * SEC),
            (20 * SEC, 30 * SEC),
            (50 * SEC, 60 * SEC),
            (100 * SEC, 200 * SEC),
            (1100 * SEC, 1200 * SEC),
            (3600 * SEC, 3660 * SEC),
        ]
    );
}

#[test]
fn registration_and_hypothetical_contacts_are_kept_apart_from_scheduled_ones() {
    // ionrc(5): start -1 is a registration (one node, no rate), start 0 a hypothetical
    // contact (rate 0, confidence 0, one of the nodes the local one).
    let p = ContactPlan::parse(
        "1 7 ''\na contact -1 -1 7 7 0\na contact 0 0 7 9 0\na contact 0 0 9 7 0\n",
    )
    .unwrap();
    assert_eq!(p.registrations(), &[7]);
    assert_eq!(p.hypothetical_contacts(), &[(7, 9), (9, 7)]);
    assert!(p.contacts().is_empty());
    let (line, e) = err_line("1 7\na contact 0 0 8 9 0\n");
    assert_eq!(line, Some(2));
    assert!(
        e.contains("one of the two nodes must be the local node 7"),
        "{e}"
    );
    assert!(err("a contact -1 -1 7 8 0").contains("names one node twice"));
    assert!(
        err("a contact -1 -1 7 7 0\na contact -1 -1 7 7 0").contains("already registered (line 1)")
    );
}

#[test]
fn change_and_delete_commands_edit_the_plan() {
    let p = ContactPlan::parse(
        "a contact +0 +10 1 2 100\na contact +20 +30 1 2 100\na contact +0 +10 2 1 100\n\
         c contact +20 1 2 300 0.5\n\
         d contact +0 1 2\n\
         a range +0 +100 1 2 3\na range +200 +300 1 2 3\na range +0 +100 3 4 1\n\
         d range +200 1 2\n\
         d range * 3 4\n\
         a contact -1 -1 5 5 0\nd contact -1 5 5\n",
    )
    .unwrap();
    assert_eq!(
        p.contacts_between(1, 2),
        &[Contact {
            confidence: 0.5,
            ..Contact::new(1, 2, 20 * SEC, 30 * SEC, 300.0)
        }]
    );
    assert_eq!(p.contacts_between(2, 1).len(), 1);
    assert_eq!(
        p.owlt(2, 1, 250 * SEC),
        None,
        "deleting 1 -> 2 deletes the 2 -> 1 it implied"
    );
    assert_eq!(p.owlt(2, 1, 50 * SEC), Some(3 * SEC));
    assert_eq!(p.owlt(4, 3, 0), None);
    assert!(p.registrations().is_empty());
    // rfx_remove_range: deleting the implied range alone leaves the asserted one.
    let q = ContactPlan::parse("a range +0 +100 1 2 3\nd range +0 2 1\n").unwrap();
    assert_eq!((q.owlt(1, 2, 0), q.owlt(2, 1, 0)), (Some(3 * SEC), None));
    // ... and deleting the canonical range keeps an asserted reverse.
    let q = ContactPlan::parse("a range +0 +100 1 2 3\na range +0 +100 2 1 4\nd range +0 1 2\n")
        .unwrap();
    assert_eq!((q.owlt(1, 2, 0), q.owlt(2, 1, 0)), (None, Some(4 * SEC)));
}

#[test]
fn a_node_may_have_contacts_and_a_range_to_itself() {
    // ION's own test configuration tests/1021.dynamic-ep-valgrind/config/host1.rc has
    // "a contact +1 +3600 1 1 100000" and "a range +1 +3600 1 1 1" (loopback delivery).
    let p = ContactPlan::parse("a contact +1 +3600 1 1 100000\na range +1 +3600 1 1 1\n").unwrap();
    assert!(p.is_up(1, 1, 1800 * SEC));
    assert_eq!(p.owlt(1, 1, 1800 * SEC), Some(SEC));
    assert_eq!(
        p.range_table().len(),
        1,
        "a range from a node to itself implies nothing more"
    );
}

#[test]
fn q_ends_the_text_as_ionadmin_stops_reading() {
    let p = ContactPlan::parse(
        "a contact +0 +10 1 2 100\nq\na contact +20 +30 1 2 100\nthis is not read\n",
    )
    .unwrap();
    assert_eq!(p.contacts().len(), 1);
}

#[test]
fn an_end_before_the_start_names_the_line_and_the_rule() {
    let text = "# plan\n\n1 1\na contact +0 +600 1 2 1000\na contact +0 +600 2 3 1000\ns\n\
                a contact +600 +300 2 3 1000\n";
    assert_eq!(
        err(text),
        "line 7: contact 2 -> 3 from +600 to +300: its end is before its start"
    );
    assert!(err("a contact +5 +5 1 2 1").contains("it ends when it starts"));
}

#[test]
fn a_node_outside_the_callers_list_is_refused() {
    let opts = ParseOptions {
        epoch: None,
        nodes: Some(vec![1, 2, 3]),
    };
    let e = ContactPlan::parse_with("a contact +0 +10 1 2 5\na range +0 +10 2 4 1\n", &opts)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "line 2: range 2 -> 4 from +0 to +10: node 4 is not one of the plan's nodes (1, 2, 3)"
    );
    assert!(err("a contact +0 +10 0 2 5").contains("node number 0 is not a node"));
}

#[test]
fn rates_must_be_above_zero_and_numbers_well_formed() {
    let (line, e) = err_line("a contact +0 +10 1 2 5\na contact +20 +30 1 2 0\n");
    assert_eq!(line, Some(2));
    assert!(
        e.ends_with(
            "rate 0 bytes/s: a scheduled contact needs a rate above 0 (ION refuses rate 0)"
        ),
        "{e}"
    );
    assert!(err("a contact +0 +10 1 2 -5").ends_with("rate \"-5\" is negative"));
    assert!(err("a contact +0 +10 1 2 12a").contains("rate \"12a\" is not a number"));
    // ionadmin read "010" as 8 bytes/s: `l contact` printed "is 8 bytes/sec".
    assert_eq!(
        err("a contact +0 +10 1 2 010"),
        "line 1: \"010\": ION reads a whole number that starts with 0 as octal (8); write it without the leading 0"
    );
    assert!(err("a contact +0x10 +20 1 2 5").contains("start \"0x10\" is not a number"));
    assert!(err("a contact +0 +10 1 x 5").contains("node number \"x\""));
    assert!(err("a contact +0 +10 1 2 5 2").contains("confidence 2 is outside [0, 1]"));
}

#[test]
fn a_trailing_comment_is_refused_because_ion_reads_it_as_a_value() {
    // ionadmin took `a contact +500 +600 1 2 1000 #` as confidence atof("#") = 0
    // (`l contact`: "confidence 0.000000"), and refuses longer comments as too many tokens.
    assert_eq!(
        err("a contact +0 +10 1 2 1000 #"),
        "line 1: confidence \"#\" is not a number (ION's atof would read it as 0; ION has no end-of-line comments)"
    );
    assert!(err("a contact +0 +10 1 2 1000 # main link").starts_with("line 1: 10 tokens"));
    assert!(err("a range +0 +10 1 2 1 # x").contains("`a range` takes"));
    assert!(err("a range +0 +10 1 2 1 #").contains("ION would ignore the sixth value \"#\""));
    assert!(err("a contact +0 +10 1 2 1 # a b c")
        .starts_with("line 1: 11 tokens: ionadmin reads at most 9"));
}

#[test]
fn overlapping_and_touching_contacts_of_one_pair_are_refused() {
    // ion.log after t1.ionrc: "[?] Overlapping contact ignored: ... 1->2" for a contact
    // starting at +200 after one ending at +200 (rfx.c treats the intervals as closed).
    assert_eq!(
        err("a contact +100 +200 1 2 1000\na contact +200 +300 1 2 1000\n"),
        "line 2: contact 1 -> 2 from +200 to +300: touches the contact of line 1 (+100 to +200); \
         ION ignores a contact that overlaps or touches another between the same two nodes in the same direction"
    );
    assert!(
        err("a contact +100 +200 1 2 1000\na contact +150 +160 1 2 1000\n")
            .contains("overlaps the contact of line 1")
    );
    // The other direction and other pairs are independent.
    assert!(ContactPlan::parse(
        "a contact +100 +200 1 2 1\na contact +100 +200 2 1 1\na contact +200 +300 1 3 1\n"
    )
    .is_ok());
}

#[test]
fn ranges_refuse_negative_light_times_overlaps_and_repeats() {
    assert_eq!(
        err("a range +0 +10 1 2 -1"),
        "line 1: light time \"-1\" is negative"
    );
    // ion.log: "[?] Overlapping start of range" (rfx_insert_range's neighbour checks are
    // half-open: touching ranges are accepted, as `l range` showed for +100..+200, +200..+300).
    assert!(ContactPlan::parse("a range +100 +200 1 2 5\na range +200 +300 1 2 5\n").is_ok());
    let e = err("a range +100 +200 1 2 5\na range +150 +250 1 2 5\n");
    assert!(e.starts_with("line 2: range 1 -> 2 from +150 to +250: overlaps the range 1 -> 2 from +100 to +200 of line 1"), "{e}");
    let e = err("a range +0 +100 1 2 5\na range +50 +150 2 1 5\n");
    assert!(
        e.contains(
            "overlaps the range 2 -> 1 from +0 to +100 implied by the range 1 -> 2 of line 1"
        ),
        "{e}"
    );
    let e = err("a range +50 +150 2 1 5\na range +0 +100 1 2 5\n");
    assert!(
        e.starts_with("line 2: range 1 -> 2 from +0 to +100: implies the range 2 -> 1"),
        "{e}"
    );
    assert!(
        err("a range +0 +10 1 2 5\na range +0 +10 1 2 5").contains("repeats the range of line 1")
    );
    assert!(
        err("a range +0 +10 1 2 5\na range +0 +20 1 2 6").contains("restates with other values")
    );
}

#[test]
fn absolute_times_need_an_epoch_and_may_not_precede_it() {
    assert!(err("a contact 2025/01/01-00:00:00 +10 1 2 5")
        .contains("absolute but the plan's epoch is unknown"));
    let e = err("@ 2025/01/01-00:00:00\na contact 2024/12/31-23:59:00 +10 1 2 5\n");
    assert_eq!(
        e,
        "line 2: start 2024/12/31-23:59:00 is before the plan's time 0 (2025/01/01-00:00:00)"
    );
    // readTimestamp fails on a bare number and returns 0, so ION would take "600" as 0.
    assert!(err("a contact 600 +700 1 2 5").contains("neither +seconds nor yyyy/mm/dd-hh:mm:ss"));
    assert!(err("a contact 2025/13/01-00:00:00 +10 1 2 5").contains("has no day"));
}

#[test]
fn other_errors_name_their_line() {
    let cases: &[(&str, usize, &str)] = &[
        ("s\nz what\n", 2, "\"z\" is not an ionadmin command"),
        (
            "a contact +0 +10 1 2\n",
            1,
            "`a contact` takes: start end from to rate [confidence] (4 given)",
        ),
        (
            "\na link +0 +10 1 2 3\n",
            2,
            "`a` adds a `contact` or a `range`",
        ),
        (
            "a contact +0 +10 1 2 5\nd contact +5 1 2\n",
            2,
            "no contact 1 -> 2 starts at +5",
        ),
        ("d range * 1 2\n", 1, "there is no range 1 -> 2 to delete"),
        (
            "c contact +0 1 2 5\n",
            1,
            "Attempt to revise a nonexistent contact",
        ),
        ("^ 2\na contact +0 +10 1 2 5\n", 2, "contacts of region 2"),
        ("@\n", 1, "@ takes one time"),
    ];
    for (text, line, part) in cases {
        let e: PlanError = ContactPlan::parse(text).unwrap_err();
        assert_eq!(e.line_number(), Some(*line), "{text:?}: {e}");
        assert!(e.to_string().contains(part), "{text:?}: {e}");
    }
}

#[test]
fn a_plan_from_values_obeys_the_same_rules_as_a_text() {
    let e = ContactPlan::from_parts(
        vec![],
        vec![
            Range {
                from: 1,
                to: 2,
                start: 0,
                end: 10 * SEC,
                owlt: SEC,
            },
            Range {
                from: 2,
                to: 1,
                start: 5 * SEC,
                end: 20 * SEC,
                owlt: SEC,
            },
        ],
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("ranges[1]: range 2 -> 1 from +5 to +20: overlaps"),
        "{e}"
    );
}
