//! The rules by which contacts and ranges enter (and leave) a plan: ION's `rfx.c`
//! (`rfx_insert_contact`, `rfx_insert_range`, `insertRXref`, `rfx_remove_range`),
//! except that where ION writes a warning to its log and ignores the command, we refuse
//! the plan and say why. One builder serves the `ionrc` reader, `ContactPlan::from_parts`
//! and `from_links`, so a plan obeys the same rules however it was made.

use super::numbers::format_seconds;
use super::{Contact, ContactPlan, Range, RangeEntry};
use spacetp_proto::Time;
use std::collections::BTreeSet;
use std::fmt;

/// Where an item came from, for messages that point at the other party of a conflict.
#[derive(Clone, Debug)]
pub(crate) enum Origin {
    Line(usize),
    Path(String),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Line(n) => write!(f, "line {n}"),
            Origin::Path(p) => f.write_str(p),
        }
    }
}

/// `+600`: a plan time as the relative time `ionadmin` would read.
pub(crate) fn t(time: Time) -> String {
    format!("+{}", format_seconds(time))
}

pub(crate) fn describe_contact(c: &Contact) -> String {
    format!(
        "contact {} -> {} from {} to {}",
        c.from,
        c.to,
        t(c.start),
        t(c.end)
    )
}

pub(crate) fn describe_range(r: &Range) -> String {
    format!(
        "range {} -> {} from {} to {}",
        r.from,
        r.to,
        t(r.start),
        t(r.end)
    )
}

/// Closed intervals, as ION compares contacts: a contact that starts when the other ends
/// overlaps it (rfx_insert_contact: "contact->toTime < fromTime" is the only way past).
fn touch_or_overlap(a: &Contact, b: &Contact) -> bool {
    a.start <= b.end && b.start <= a.end
}

/// Half-open intervals, as ION compares ranges (rfx_insert_range's neighbour checks).
fn overlap(a: &Range, b: &Range) -> bool {
    a.start < b.end && b.start < a.end
}

/// `*` (None) matches every start time.
fn matches_start(wanted: Option<Time>, start: Time) -> bool {
    match wanted {
        Some(w) => w == start,
        None => true,
    }
}

/// The checks of one scheduled contact on its own.
pub(crate) fn check_contact(c: &Contact) -> Result<(), String> {
    let what = describe_contact(c);
    if c.from == 0 || c.to == 0 {
        return Err(format!(
            "{what}: node numbers start at 1 (ION refuses node 0)"
        ));
    }
    if c.end < c.start {
        return Err(format!("{what}: its end is before its start"));
    }
    if c.end == c.start {
        return Err(format!(
            "{what}: it ends when it starts; ION needs the end later than the start"
        ));
    }
    if !(c.rate_bytes_per_s.is_finite() && c.rate_bytes_per_s > 0.0) {
        return Err(format!(
            "{what}: rate {} bytes/s: a scheduled contact needs a rate above 0 (ION refuses rate 0)",
            c.rate_bytes_per_s
        ));
    }
    if !(0.0..=1.0).contains(&c.confidence) {
        return Err(format!(
            "{what}: confidence {} is outside [0, 1]",
            c.confidence
        ));
    }
    Ok(())
}

pub(crate) fn check_range(r: &Range) -> Result<(), String> {
    let what = describe_range(r);
    if r.from == 0 || r.to == 0 {
        return Err(format!("{what}: node numbers start at 1"));
    }
    if r.end <= r.start {
        return Err(format!("{what}: its end is not after its start"));
    }
    Ok(())
}

#[derive(Default)]
pub(crate) struct Builder {
    contacts: Vec<(Contact, Origin)>,
    ranges: Vec<(RangeEntry, Origin)>,
    registrations: Vec<(u64, Origin)>,
    hypothetical: Vec<(u64, u64)>,
    nodes: Option<BTreeSet<u64>>,
    pub local_node: Option<u64>,
}

impl Builder {
    pub fn new(nodes: Option<&[u64]>) -> Self {
        Builder {
            nodes: nodes.map(|n| n.iter().copied().collect()),
            ..Builder::default()
        }
    }

    fn check_nodes(&self, what: &str, nodes: &[u64]) -> Result<(), String> {
        if let Some(known) = &self.nodes {
            if let Some(n) = nodes.iter().find(|n| !known.contains(n)) {
                let list: Vec<String> = known.iter().map(u64::to_string).collect();
                return Err(format!(
                    "{what}: node {n} is not one of the plan's nodes ({})",
                    list.join(", ")
                ));
            }
        }
        Ok(())
    }

    fn pair_contacts(&self, from: u64, to: u64) -> std::ops::Range<usize> {
        let lo = self
            .contacts
            .partition_point(|(c, _)| (c.from, c.to) < (from, to));
        let hi = self
            .contacts
            .partition_point(|(c, _)| (c.from, c.to) <= (from, to));
        lo..hi
    }

    fn pair_ranges(&self, from: u64, to: u64) -> std::ops::Range<usize> {
        let lo = self
            .ranges
            .partition_point(|(e, _)| (e.range.from, e.range.to) < (from, to));
        let hi = self
            .ranges
            .partition_point(|(e, _)| (e.range.from, e.range.to) <= (from, to));
        lo..hi
    }

    /// `a contact` of a scheduled contact.
    pub fn add_contact(&mut self, c: Contact, origin: Origin) -> Result<(), String> {
        check_contact(&c)?;
        let what = describe_contact(&c);
        self.check_nodes(&what, &[c.from, c.to])?;
        let pair = self.pair_contacts(c.from, c.to);
        if let Some((other, at)) = self.contacts[pair.clone()]
            .iter()
            .find(|(o, _)| touch_or_overlap(o, &c))
        {
            let how = if other.end == c.start || c.end == other.start {
                "touches"
            } else {
                "overlaps"
            };
            return Err(format!(
                "{what}: {how} the contact of {at} ({} to {}); ION ignores a contact that \
                 overlaps or touches another between the same two nodes in the same direction",
                t(other.start),
                t(other.end)
            ));
        }
        let i = pair.start + self.contacts[pair].partition_point(|(o, _)| o.start < c.start);
        self.contacts.insert(i, (c, origin));
        Ok(())
    }

    /// `a contact -1 ... n n`: the node's registration in the region.
    pub fn add_registration(&mut self, node: u64, origin: Origin) -> Result<(), String> {
        let what = format!("registration contact of node {node}");
        self.check_nodes(&what, &[node])?;
        if let Some((_, at)) = self.registrations.iter().find(|(n, _)| *n == node) {
            return Err(format!("{what}: node {node} is already registered ({at})"));
        }
        self.registrations.push((node, origin));
        Ok(())
    }

    /// `a contact 0 ... a b`: a hypothetical contact (discovery). A new one replaces an
    /// existing one of the same pair, as in ION; both are the same.
    pub fn add_hypothetical(&mut self, from: u64, to: u64) -> Result<(), String> {
        let what = format!("hypothetical contact {from} -> {to}");
        if from == to {
            return Err(format!("{what}: the two nodes must differ"));
        }
        if let Some(own) = self.local_node {
            if from != own && to != own {
                return Err(format!(
                    "{what}: one of the two nodes must be the local node {own} (ionadmin's rule)"
                ));
            }
        }
        self.check_nodes(&what, &[from, to])?;
        if !self.hypothetical.contains(&(from, to)) {
            self.hypothetical.push((from, to));
            self.hypothetical.sort_unstable();
        }
        Ok(())
    }

    /// `c contact start from to rate [confidence]`.
    pub fn change_contact(
        &mut self,
        from: u64,
        to: u64,
        start: Time,
        rate: f64,
        confidence: Option<f64>,
    ) -> Result<(), String> {
        let pair = self.pair_contacts(from, to);
        let Some(i) = self.contacts[pair.clone()]
            .iter()
            .position(|(c, _)| c.start == start)
        else {
            return Err(format!(
                "no contact {from} -> {to} starts at {} (ION: \"Attempt to revise a \
                 nonexistent contact\")",
                t(start)
            ));
        };
        let c = &mut self.contacts[pair.start + i].0;
        let mut changed = c.clone();
        changed.rate_bytes_per_s = rate;
        if let Some(conf) = confidence {
            changed.confidence = conf;
        }
        check_contact(&changed)?;
        *c = changed;
        Ok(())
    }

    /// `d contact start|* from to` (scheduled contacts).
    pub fn delete_contacts(
        &mut self,
        from: u64,
        to: u64,
        start: Option<Time>,
    ) -> Result<(), String> {
        let pair = self.pair_contacts(from, to);
        let before = self.contacts.len();
        let mut i = pair.start;
        let mut end = pair.end;
        while i < end {
            if matches_start(start, self.contacts[i].0.start) {
                self.contacts.remove(i);
                end -= 1;
            } else {
                i += 1;
            }
        }
        let hypothetical = start.is_none() && self.hypothetical.contains(&(from, to));
        self.hypothetical
            .retain(|&p| !(start.is_none() && p == (from, to)));
        if self.contacts.len() == before && !hypothetical {
            return Err(match start {
                Some(s) => format!("no contact {from} -> {to} starts at {}", t(s)),
                None => format!("there is no contact {from} -> {to} to delete"),
            });
        }
        Ok(())
    }

    pub fn delete_registration(&mut self, node: u64) -> Result<(), String> {
        let before = self.registrations.len();
        self.registrations.retain(|(n, _)| *n != node);
        if before == self.registrations.len() {
            return Err(format!("node {node} has no registration contact to delete"));
        }
        Ok(())
    }

    pub fn delete_hypothetical(&mut self, from: u64, to: u64) -> Result<(), String> {
        let before = self.hypothetical.len();
        self.hypothetical.retain(|&p| p != (from, to));
        if before == self.hypothetical.len() {
            return Err(format!(
                "there is no hypothetical contact {from} -> {to} to delete"
            ));
        }
        Ok(())
    }

    fn insert_range(&mut self, entry: RangeEntry, origin: Origin) {
        let r = &entry.range;
        let pair = self.pair_ranges(r.from, r.to);
        let i = pair.start + self.ranges[pair].partition_point(|(e, _)| e.range.start < r.start);
        self.ranges.insert(i, (entry, origin));
    }

    fn find_range(&self, from: u64, to: u64, start: Time) -> Option<usize> {
        let pair = self.pair_ranges(from, to);
        self.ranges[pair.clone()]
            .iter()
            .position(|(e, _)| e.range.start == start)
            .map(|i| pair.start + i)
    }

    fn overlapping_range(&self, r: &Range) -> Option<&(RangeEntry, Origin)> {
        self.ranges[self.pair_ranges(r.from, r.to)]
            .iter()
            .find(|(e, _)| overlap(&e.range, r))
    }

    /// `a range`: the assertion, and the reverse range it implies when its first node is
    /// the smaller one and no reverse range is asserted from the same time (ionrc(5),
    /// rfx.c insertRXref). An asserted reverse range replaces an implied one that starts
    /// at the same time.
    pub fn add_range(&mut self, r: Range, origin: Origin) -> Result<(), String> {
        check_range(&r)?;
        let what = describe_range(&r);
        self.check_nodes(&what, &[r.from, r.to])?;
        if let Some(i) = self.find_range(r.from, r.to, r.start) {
            let (existing, at) = &self.ranges[i];
            if existing.asserted {
                let how = if existing.range.owlt == r.owlt && existing.range.end == r.end {
                    "repeats"
                } else {
                    "restates with other values"
                };
                return Err(format!(
                    "{what}: {how} the range of {at} (ION keeps the first: \"Range OWLT not \
                     revised\" / \"already asserted\")"
                ));
            }
            self.ranges.remove(i);
        }
        if let Some((other, at)) = self.overlapping_range(&r) {
            let whose = if other.asserted {
                format!("of {at}")
            } else {
                format!(
                    "implied by the range {} -> {} of {at}",
                    other.range.to, other.range.from
                )
            };
            return Err(format!(
                "{what}: overlaps the range {} -> {} from {} to {} {whose}; ION refuses \
                 overlapping ranges between the same two nodes in the same direction",
                other.range.from,
                other.range.to,
                t(other.range.start),
                t(other.range.end),
            ));
        }
        if r.from < r.to && self.find_range(r.to, r.from, r.start).is_none() {
            let reverse = Range {
                from: r.to,
                to: r.from,
                ..r.clone()
            };
            if let Some((other, at)) = self.overlapping_range(&reverse) {
                return Err(format!(
                    "{what}: implies the range {} -> {} over the same time (a range whose \
                     first node is the smaller one holds both ways), which overlaps the range \
                     {} -> {} from {} to {} of {at}; assert the reverse range from the same \
                     start time to override it",
                    r.to,
                    r.from,
                    other.range.from,
                    other.range.to,
                    t(other.range.start),
                    t(other.range.end),
                ));
            }
            self.insert_range(
                RangeEntry {
                    range: reverse,
                    asserted: false,
                },
                origin.clone(),
            );
        }
        self.insert_range(
            RangeEntry {
                range: r,
                asserted: true,
            },
            origin,
        );
        Ok(())
    }

    /// `d range start|* a b`: deletes the ranges a -> b (asserted or implied) and, when a
    /// is the smaller node, the ranges b -> a they implied (rfx_remove_range).
    pub fn delete_ranges(&mut self, from: u64, to: u64, start: Option<Time>) -> Result<(), String> {
        let hit = |e: &RangeEntry, f: u64, tt: u64| {
            e.range.from == f && e.range.to == tt && matches_start(start, e.range.start)
        };
        let before = self.ranges.len();
        self.ranges.retain(|(e, _)| !hit(e, from, to));
        if before == self.ranges.len() {
            return Err(match start {
                Some(s) => format!("no range {from} -> {to} starts at {}", t(s)),
                None => format!("there is no range {from} -> {to} to delete"),
            });
        }
        if from < to {
            self.ranges.retain(|(e, _)| e.asserted || !hit(e, to, from));
        }
        Ok(())
    }

    pub fn finish(self, epoch: Option<i64>, ignored_commands: usize) -> ContactPlan {
        ContactPlan {
            epoch,
            local_node: self.local_node,
            contacts: self.contacts.into_iter().map(|(c, _)| c).collect(),
            ranges: self.ranges.into_iter().map(|(r, _)| r).collect(),
            registrations: {
                let mut r: Vec<u64> = self.registrations.into_iter().map(|(n, _)| n).collect();
                r.sort_unstable();
                r
            },
            hypothetical: self.hypothetical,
            ignored_commands,
        }
    }
}
