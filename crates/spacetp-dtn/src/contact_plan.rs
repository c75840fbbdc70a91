//! A contact plan as NASA ION holds one: scheduled contacts (who can send to whom, when, at
//! what rate) and ranges (the one-way light time between two nodes over an interval).
//!
//! Sources: ION 4.1.3's `ionrc(5)` manual page (ici/doc/pod5/ionrc.pod: `a contact`,
//! `a range`, `@`, time forms), `ionadmin.c` (how each token is read) and `rfx.c` (what
//! enters the plan: `rfx_insert_contact`, `rfx_insert_range`, `insertRXref`,
//! `rfx_remove_range`). What ION does with each rule was checked by loading plans into
//! ionadmin 4.1.3 (see the tests' comments).
//!
//! Times are [`Time`] (nanoseconds) since the plan's time 0: the moment the plan is loaded,
//! which ION's relative times `+ss` count from. When the absolute instant of time 0 is
//! known (an epoch given to the reader, or the first `@ yyyy/mm/dd-hh:mm:ss` line) it is
//! kept as [`ContactPlan::epoch`] and absolute times can be read.
//!
//! Ranges follow ION's rule, which is asymmetric: a range `a range t0 t1 A B owlt` whose
//! first node A is *numerically smaller* than B also holds from B to A, unless a range
//! from B to A is asserted from the same start time; a range whose first node is the
//! larger one implies nothing about the reverse direction (ionrc(5), `a range`). The plan
//! keeps ION's table of directed ranges, asserted and implied ([`RangeEntry`]).
//!
//! Submodules: `numbers` (ION's number and time syntax), `table` (the rules of insertion
//! and deletion), `ionrc` (the reader), `write` (the writer), `links` (a plan from link
//! descriptions).

mod ionrc;
mod links;
pub(crate) mod numbers;
mod table;
mod write;

pub use ionrc::ParseOptions;
pub use links::{from_links, LinkWindows};
pub use numbers::{format_utc, utc as parse_utc};

use crate::error::PlanError;
use spacetp_proto::{FieldError, Time};
use std::collections::BTreeSet;
use table::{Builder, Origin};

/// A scheduled period during which `from` can transmit to `to` (ION `a contact`).
#[derive(Clone, Debug, PartialEq)]
pub struct Contact {
    /// Sending node (ipn node number).
    pub from: u64,
    /// Receiving node (ipn node number).
    pub to: u64,
    /// First instant of transmission.
    pub start: Time,
    /// End of transmission (exclusive for transmission; ION's overlap rule treats it as
    /// closed: a contact of the same pair may not start at this instant).
    pub end: Time,
    /// Transmission rate, bytes per second (ION's unit, not bits).
    pub rate_bytes_per_s: f64,
    /// Confidence that the contact occurs, in [0, 1]; 1 for a scheduled contact.
    pub confidence: f64,
}

impl Contact {
    /// A contact of confidence 1.
    pub fn new(from: u64, to: u64, start: Time, end: Time, rate_bytes_per_s: f64) -> Self {
        Contact {
            from,
            to,
            start,
            end,
            rate_bytes_per_s,
            confidence: 1.0,
        }
    }

    /// Bytes the contact can carry: rate x duration (ION's contact volume).
    pub fn volume(&self) -> f64 {
        self.rate_bytes_per_s * spacetp_proto::time::secs(self.end - self.start)
    }
}

/// The one-way light time from `from` to `to` during [`start`, `end`) (ION `a range`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Range {
    pub from: u64,
    pub to: u64,
    pub start: Time,
    pub end: Time,
    /// One-way light time (ION: whole seconds).
    pub owlt: Time,
}

/// One directed range of ION's range table: asserted by a command, or implied by the
/// asserted range in the other direction whose first node is the smaller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeEntry {
    pub range: Range,
    pub asserted: bool,
}

/// Index of a contact in [`ContactPlan::contacts`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ContactId(pub usize);

/// Contacts and ranges, validated by ION's rules.
///
/// Contacts are kept in ION's index order (sending node, receiving node, start): the
/// order in which ION's CGR breaks ties.
#[derive(Clone, Debug, Default)]
pub struct ContactPlan {
    pub(crate) epoch: Option<i64>,
    pub(crate) local_node: Option<u64>,
    pub(crate) contacts: Vec<Contact>,
    pub(crate) ranges: Vec<RangeEntry>,
    pub(crate) registrations: Vec<u64>,
    pub(crate) hypothetical: Vec<(u64, u64)>,
    pub(crate) ignored_commands: usize,
}

/// Two plans are equal when they hold the same epoch, contacts, ranges (asserted and
/// implied), registrations and hypothetical contacts; which other commands a text held
/// and which node it initialized are not part of the plan.
impl PartialEq for ContactPlan {
    fn eq(&self, other: &Self) -> bool {
        self.epoch == other.epoch
            && self.contacts == other.contacts
            && self.ranges == other.ranges
            && self.registrations == other.registrations
            && self.hypothetical == other.hypothetical
    }
}

impl ContactPlan {
    /// Reads an `ionrc` text (see [`ParseOptions`] for absolute times and a node list).
    pub fn parse(text: &str) -> Result<ContactPlan, PlanError> {
        ionrc::parse(text, &ParseOptions::default())
    }

    /// Reads an `ionrc` text with an epoch and/or the list of the plan's nodes.
    pub fn parse_with(text: &str, options: &ParseOptions) -> Result<ContactPlan, PlanError> {
        ionrc::parse(text, options)
    }

    /// A plan from values, by the same rules as a text; errors name `contacts[i]` or
    /// `ranges[i]`. Ranges are asserted ranges (ION's rule adds the implied reverses).
    pub fn from_parts(
        contacts: Vec<Contact>,
        ranges: Vec<Range>,
    ) -> Result<ContactPlan, PlanError> {
        let mut b = Builder::new(None);
        for (i, c) in contacts.into_iter().enumerate() {
            let at = format!("contacts[{i}]");
            b.add_contact(c, Origin::Path(at.clone()))
                .map_err(|m| FieldError::new(at, m))?;
        }
        for (i, r) in ranges.into_iter().enumerate() {
            let at = format!("ranges[{i}]");
            b.add_range(r, Origin::Path(at.clone()))
                .map_err(|m| FieldError::new(at, m))?;
        }
        Ok(b.finish(None, 0))
    }

    /// The same plan, with the absolute instant of its time 0 (POSIX seconds, UTC).
    pub fn with_epoch(mut self, epoch: Option<i64>) -> ContactPlan {
        self.epoch = epoch;
        self
    }

    /// Scheduled contacts in ION's index order (from, to, start).
    pub fn contacts(&self) -> &[Contact] {
        &self.contacts
    }

    pub fn contact(&self, id: ContactId) -> &Contact {
        &self.contacts[id.0]
    }

    /// The indices of the contacts from `from` to `to`, in start order.
    pub fn ids_between(&self, from: u64, to: u64) -> std::ops::Range<usize> {
        let lo = self
            .contacts
            .partition_point(|c| (c.from, c.to) < (from, to));
        let hi = self
            .contacts
            .partition_point(|c| (c.from, c.to) <= (from, to));
        lo..hi
    }

    /// The indices of the contacts from `node`, by receiving node then start.
    pub fn ids_from(&self, node: u64) -> std::ops::Range<usize> {
        let lo = self.contacts.partition_point(|c| c.from < node);
        let hi = self.contacts.partition_point(|c| c.from <= node);
        lo..hi
    }

    /// The contacts from `node`, by receiving node then start.
    pub fn contacts_from(&self, node: u64) -> &[Contact] {
        &self.contacts[self.ids_from(node)]
    }

    /// The contacts from `from` to `to`, in start order.
    pub fn contacts_between(&self, from: u64, to: u64) -> &[Contact] {
        &self.contacts[self.ids_between(from, to)]
    }

    /// Whether a contact from `from` to `to` is in progress at `at` (start <= at < end).
    pub fn is_up(&self, from: u64, to: u64, at: Time) -> bool {
        self.contacts_between(from, to)
            .iter()
            .any(|c| c.start <= at && at < c.end)
    }

    /// The intervals [start, end) during which `from` can send to `to`, in order.
    pub fn up_intervals(&self, from: u64, to: u64) -> Vec<(Time, Time)> {
        self.contacts_between(from, to)
            .iter()
            .map(|c| (c.start, c.end))
            .collect()
    }

    /// ION's range table: every directed range, asserted or implied, by (from, to, start).
    pub fn range_table(&self) -> &[RangeEntry] {
        &self.ranges
    }

    /// The ranges asserted by commands (what [`ContactPlan::to_ion`] writes).
    pub fn asserted_ranges(&self) -> impl Iterator<Item = &Range> {
        self.ranges.iter().filter(|e| e.asserted).map(|e| &e.range)
    }

    fn pair_ranges(&self, from: u64, to: u64) -> &[RangeEntry] {
        let lo = self
            .ranges
            .partition_point(|e| (e.range.from, e.range.to) < (from, to));
        let hi = self
            .ranges
            .partition_point(|e| (e.range.from, e.range.to) <= (from, to));
        &self.ranges[lo..hi]
    }

    /// The one-way light time from `from` to `to` at `at`: the directed range (asserted,
    /// or implied by ION's rule) with start <= at < end; None when no range covers `at`.
    pub fn owlt(&self, from: u64, to: u64, at: Time) -> Option<Time> {
        self.pair_ranges(from, to)
            .iter()
            .find(|e| e.range.start <= at && at < e.range.end)
            .map(|e| e.range.owlt)
    }

    /// The light time CGR uses for a contact, found as ION's `getApplicableRange` finds
    /// it (libcgr.c): the first range of the pair, in start order, that has not ended
    /// before the contact starts (its end may equal the contact's start, and it may start
    /// after the contact does). None: ION's CGR cannot use the contact.
    pub fn contact_owlt(&self, id: ContactId) -> Option<Time> {
        let c = &self.contacts[id.0];
        self.pair_ranges(c.from, c.to)
            .iter()
            .find(|e| e.range.end >= c.start)
            .map(|e| e.range.owlt)
    }

    /// Every node named by a contact, a range, a registration or a hypothetical contact.
    pub fn nodes(&self) -> BTreeSet<u64> {
        let mut n: BTreeSet<u64> = self.contacts.iter().flat_map(|c| [c.from, c.to]).collect();
        n.extend(self.ranges.iter().flat_map(|e| [e.range.from, e.range.to]));
        n.extend(self.registrations.iter().copied());
        n.extend(self.hypothetical.iter().flat_map(|&(a, b)| [a, b]));
        n
    }

    /// The absolute instant of time 0 (POSIX seconds, UTC), when known.
    pub fn epoch(&self) -> Option<i64> {
        self.epoch
    }

    /// The node the text initialized with ionadmin's `1` command, if any.
    pub fn local_node(&self) -> Option<u64> {
        self.local_node
    }

    /// Nodes with a registration contact (`a contact -1 ...`), which carries no data.
    pub fn registrations(&self) -> &[u64] {
        &self.registrations
    }

    /// Hypothetical contacts (`a contact 0 0 a b ...`): discovery opportunities of unknown
    /// time and rate, which carry nothing until discovered; CGR does not use them.
    pub fn hypothetical_contacts(&self) -> &[(u64, u64)] {
        &self.hypothetical
    }

    /// How many other ionadmin commands (`1`, `s`, `m ...`, `!`, ...) the text held; they
    /// do not change the plan and were not applied.
    pub fn ignored_commands(&self) -> usize {
        self.ignored_commands
    }

    /// The end of the last contact (0 for a plan without contacts).
    pub fn horizon(&self) -> Time {
        self.contacts.iter().map(|c| c.end).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spacetp_proto::SEC;

    fn plan() -> ContactPlan {
        ContactPlan::from_parts(
            vec![
                Contact::new(2, 1, 0, 100 * SEC, 1000.0),
                Contact::new(1, 2, 200 * SEC, 300 * SEC, 1000.0),
                Contact::new(1, 2, 0, 100 * SEC, 1000.0),
                Contact::new(1, 3, 50 * SEC, 60 * SEC, 10.0),
            ],
            vec![
                Range {
                    from: 1,
                    to: 2,
                    start: 0,
                    end: 150 * SEC,
                    owlt: 5 * SEC,
                },
                Range {
                    from: 3,
                    to: 1,
                    start: 0,
                    end: 150 * SEC,
                    owlt: 7 * SEC,
                },
            ],
        )
        .unwrap()
    }

    #[test]
    fn contacts_are_kept_in_ions_index_order_and_queried_by_node_and_pair() {
        let p = plan();
        let order: Vec<(u64, u64, Time)> = p
            .contacts()
            .iter()
            .map(|c| (c.from, c.to, c.start))
            .collect();
        assert_eq!(
            order,
            vec![(1, 2, 0), (1, 2, 200 * SEC), (1, 3, 50 * SEC), (2, 1, 0)]
        );
        assert_eq!(p.contacts_from(1).len(), 3);
        assert_eq!(p.contacts_from(3).len(), 0);
        assert_eq!(
            p.up_intervals(1, 2),
            vec![(0, 100 * SEC), (200 * SEC, 300 * SEC)]
        );
        assert!(p.is_up(1, 2, 0));
        assert!(
            !p.is_up(1, 2, 100 * SEC),
            "the end is exclusive for transmission"
        );
        assert!(p.is_up(1, 2, 299 * SEC));
        assert!(!p.is_up(2, 3, 0));
        assert_eq!(p.horizon(), 300 * SEC);
        assert_eq!(p.nodes().into_iter().collect::<Vec<_>>(), vec![1, 2, 3]);
        assert_eq!(p.contact(ContactId(2)).volume(), 100.0);
    }

    #[test]
    fn a_range_from_the_smaller_node_holds_both_ways_and_from_the_larger_only_its_own() {
        // ionrc(5), `a range`: "1 2" implies 2 -> 1; "3 1" implies nothing about 1 -> 3.
        let p = plan();
        assert_eq!(p.owlt(1, 2, 10 * SEC), Some(5 * SEC));
        assert_eq!(p.owlt(2, 1, 10 * SEC), Some(5 * SEC));
        assert_eq!(p.owlt(3, 1, 10 * SEC), Some(7 * SEC));
        assert_eq!(p.owlt(1, 3, 10 * SEC), None);
        assert_eq!(
            p.owlt(1, 2, 150 * SEC),
            None,
            "the range's end is exclusive"
        );
        assert_eq!(p.asserted_ranges().count(), 2);
        assert_eq!(p.range_table().len(), 3);
    }

    #[test]
    fn cgr_finds_a_contacts_range_as_ions_get_applicable_range_does() {
        let p = plan();
        // 1 -> 2 from 0: the range [0, 150) applies.
        assert_eq!(p.contact_owlt(ContactId(0)), Some(5 * SEC));
        // 1 -> 2 from 200: no range has an end >= 200.
        assert_eq!(p.contact_owlt(ContactId(1)), None);
        // 1 -> 3: no range 1 -> 3 at all (3 -> 1 implies nothing).
        assert_eq!(p.contact_owlt(ContactId(2)), None);
        // ION's quirk: a range that ends exactly when the contact starts still applies
        // (cgrfetch: a contact at +200 with a range +100..+200 of 7 s, "COST ... owlt:7").
        let q = ContactPlan::from_parts(
            vec![Contact::new(1, 2, 100 * SEC, 200 * SEC, 1.0)],
            vec![Range {
                from: 1,
                to: 2,
                start: 0,
                end: 100 * SEC,
                owlt: 3 * SEC,
            }],
        )
        .unwrap();
        assert_eq!(q.contact_owlt(ContactId(0)), Some(3 * SEC));
        assert_eq!(q.owlt(1, 2, 100 * SEC), None);
    }

    #[test]
    fn plans_from_values_name_the_offending_element() {
        let e = ContactPlan::from_parts(
            vec![
                Contact::new(1, 2, 0, 10 * SEC, 1.0),
                Contact::new(1, 2, 5 * SEC, 20 * SEC, 1.0),
            ],
            vec![],
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "contacts[1]: contact 1 -> 2 from +5 to +20: overlaps the contact of contacts[0] \
             (+0 to +10); ION ignores a contact that overlaps or touches another between the \
             same two nodes in the same direction"
        );
        let e = ContactPlan::from_parts(vec![Contact::new(1, 2, 0, 10 * SEC, 0.0)], vec![])
            .unwrap_err();
        assert!(e
            .to_string()
            .starts_with("contacts[0]: contact 1 -> 2 from +0 to +10: rate 0"));
    }
}
