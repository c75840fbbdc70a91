//! A contact plan from link descriptions, as the simulator's scenario links give them: two
//! nodes, a rate each way, a one-way delay, and outages over a horizon. The link is up
//! whenever it is not in an outage; each maximal up interval is a contact in each
//! direction that has a rate, and the delay is one range from the smaller node to the
//! larger (which, by ION's rule, also holds the other way).

use super::table::{Builder, Origin};
use super::{Contact, ContactPlan, Range};
use crate::error::PlanError;
use spacetp_proto::{FieldError, Time};

/// One link between nodes `a` and `b` over [`start`, `end`).
///
/// Rates are in **bytes** per second (ION's unit; a scenario's "1.5 Mb/s" is 187500). A
/// direction of rate 0 never carries data (a simplex link); a rate must be finite and not
/// negative, and at least one direction must have one. `owlt` is the one-way propagation
/// delay, the same both ways. `outages` are intervals [from, to) during which the link
/// carries nothing either way; they may overlap one another and extend past the horizon
/// (only their part inside it matters), but each must end after it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkWindows {
    pub a: u64,
    pub b: u64,
    pub rate_a_to_b: f64,
    pub rate_b_to_a: f64,
    pub owlt: Time,
    pub start: Time,
    pub end: Time,
    pub outages: Vec<(Time, Time)>,
}

impl LinkWindows {
    /// A link always up over [`start`, `end`), the same rate both ways.
    pub fn always_up(
        a: u64,
        b: u64,
        rate_bytes_per_s: f64,
        owlt: Time,
        start: Time,
        end: Time,
    ) -> Self {
        LinkWindows {
            a,
            b,
            rate_a_to_b: rate_bytes_per_s,
            rate_b_to_a: rate_bytes_per_s,
            owlt,
            start,
            end,
            outages: Vec::new(),
        }
    }

    fn validate(&self) -> Result<(), FieldError> {
        if self.a == 0 || self.b == 0 {
            let f = if self.a == 0 { "a" } else { "b" };
            return Err(FieldError::new(f, "node numbers start at 1"));
        }
        if self.a == self.b {
            return Err(FieldError::new(
                "b",
                format!("a link joins two different nodes, not {} to itself", self.a),
            ));
        }
        for (f, r) in [
            ("rate_a_to_b", self.rate_a_to_b),
            ("rate_b_to_a", self.rate_b_to_a),
        ] {
            if !(r.is_finite() && r >= 0.0) {
                return Err(FieldError::new(
                    f,
                    format!("{r} bytes/s: a rate is finite and 0 or more"),
                ));
            }
        }
        if self.rate_a_to_b == 0.0 && self.rate_b_to_a == 0.0 {
            return Err(FieldError::new(
                "rate_a_to_b",
                "both rates are 0: the link would never carry data",
            ));
        }
        if self.end <= self.start {
            return Err(FieldError::new(
                "end",
                "the horizon's end must be after its start",
            ));
        }
        for (i, (from, to)) in self.outages.iter().enumerate() {
            if to <= from {
                return Err(FieldError::new(
                    format!("outages[{i}]"),
                    format!(
                        "ends at {} s, not after it starts at {} s",
                        spacetp_proto::time::secs(*to),
                        spacetp_proto::time::secs(*from)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The maximal intervals of [`start`, `end`) outside every outage, in order.
    pub fn up_windows(&self) -> Vec<(Time, Time)> {
        let mut outages = self.outages.clone();
        outages.sort_unstable();
        let mut up = Vec::new();
        let mut cursor = self.start;
        for (from, to) in outages {
            if from > cursor && cursor < self.end {
                up.push((cursor, from.min(self.end)));
            }
            cursor = cursor.max(to);
        }
        if cursor < self.end {
            up.push((cursor, self.end));
        }
        up
    }
}

/// The contact plan of a set of links: contacts for every up window in each direction
/// with a rate, one range per link. Errors name `links[i]`; two links between the same
/// two nodes whose windows overlap or touch are refused, as ION refuses their contacts.
pub fn from_links(links: &[LinkWindows]) -> Result<ContactPlan, PlanError> {
    let mut b = Builder::new(None);
    for (i, l) in links.iter().enumerate() {
        let at = format!("links[{i}]");
        l.validate().map_err(|e| e.within(&at))?;
        for (from, to) in l.up_windows() {
            for (x, y, rate) in [(l.a, l.b, l.rate_a_to_b), (l.b, l.a, l.rate_b_to_a)] {
                if rate > 0.0 {
                    b.add_contact(Contact::new(x, y, from, to, rate), Origin::Path(at.clone()))
                        .map_err(|m| FieldError::new(at.clone(), m))?;
                }
            }
        }
        let range = Range {
            from: l.a.min(l.b),
            to: l.a.max(l.b),
            start: l.start,
            end: l.end,
            owlt: l.owlt,
        };
        b.add_range(range, Origin::Path(at.clone()))
            .map_err(|m| FieldError::new(at, m))?;
    }
    Ok(b.finish(None, 0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use spacetp_proto::SEC;

    #[test]
    fn up_windows_are_the_complement_of_the_union_of_outages_within_the_horizon() {
        let mut l = LinkWindows::always_up(1, 2, 100.0, SEC, 0, 100 * SEC);
        l.outages = vec![
            (50 * SEC, 60 * SEC),
            (10 * SEC, 20 * SEC),
            (15 * SEC, 30 * SEC),
            (90 * SEC, 200 * SEC),
        ];
        assert_eq!(
            l.up_windows(),
            vec![(0, 10 * SEC), (30 * SEC, 50 * SEC), (60 * SEC, 90 * SEC)]
        );
        l.outages = vec![(0, 5 * SEC)];
        assert_eq!(l.up_windows(), vec![(5 * SEC, 100 * SEC)]);
        l.outages = vec![(0, 100 * SEC)];
        assert!(l.up_windows().is_empty());
        l.outages = vec![(200 * SEC, 300 * SEC)];
        assert_eq!(l.up_windows(), vec![(0, 100 * SEC)]);
    }
}
