//! A plan written back as `ionrc` text, relative times, in an order ION 4.1.3 loads as
//! intended.
//!
//! Order matters because of a defect of ION 4.1.3, seen with ionadmin: an asserted range
//! B -> A (B > A) that should replace the range A -> B implies is refused ("Overlapping
//! start of range") *and the implied range is lost* when the pair B -> A has a later range
//! in the table. Written before the ranges that imply anything, an asserted B -> A range
//! meets no implied range, and `insertRXref` then implies nothing from A -> B at that start.
//! A range A -> B whose implied reverse was deleted (`d range`) is written with the same
//! deletion after it.

use super::numbers::{format_number, format_seconds, format_utc, ION_MAX_POSIX_TIME, ION_MAX_RATE};
use super::ContactPlan;
use crate::error::PlanError;
use spacetp_proto::{FieldError, Time, SEC};
use std::fmt::Write;

fn rel(t: Time) -> String {
    format!("+{}", format_seconds(t))
}

impl ContactPlan {
    /// The plan as `ionrc` commands (comments of at most 9 words, which ionadmin reads
    /// without complaint): `@` with the epoch when known, registrations,
    /// hypothetical contacts, scheduled contacts, ranges. Values ION cannot hold exactly
    /// (sub-second times and light times, fractional rates) are written with decimals,
    /// which [`ContactPlan::parse`] reads back exactly and ION would truncate; see
    /// [`ContactPlan::to_ion_strict`].
    pub fn to_ion(&self) -> String {
        let mut s = String::from("# ION contact plan, written by spacetp-dtn\n");
        match self.epoch {
            Some(e) => {
                let _ = writeln!(
                    s,
                    "# relative times count from the @ line\n@ {}",
                    format_utc(e)
                );
            }
            None => s.push_str("# relative times count from when ionadmin reads this\n"),
        }
        for n in &self.registrations {
            let _ = writeln!(s, "a contact -1 -1 {n} {n} 0");
        }
        for (a, b) in &self.hypothetical {
            let _ = writeln!(s, "a contact 0 0 {a} {b} 0");
        }
        for c in &self.contacts {
            let _ = write!(
                s,
                "a contact {} {} {} {} {}",
                rel(c.start),
                rel(c.end),
                c.from,
                c.to,
                format_number(c.rate_bytes_per_s)
            );
            if c.confidence != 1.0 {
                let _ = write!(s, " {}", format_number(c.confidence));
            }
            s.push('\n');
        }
        let (canonical, reverse): (Vec<&super::Range>, Vec<&super::Range>) =
            self.asserted_ranges().partition(|r| r.from < r.to);
        for r in reverse.iter().chain(&canonical) {
            let _ = writeln!(
                s,
                "a range {} {} {} {} {}",
                rel(r.start),
                rel(r.end),
                r.from,
                r.to,
                format_seconds(r.owlt)
            );
        }
        for r in &canonical {
            let reverse = self
                .range_table()
                .iter()
                .any(|e| e.range.from == r.to && e.range.to == r.from && e.range.start == r.start);
            if !reverse {
                let _ = writeln!(s, "d range {} {} {}", rel(r.start), r.to, r.from);
            }
        }
        s
    }

    /// [`ContactPlan::to_ion`], refusing any value that ION 4.1.3 would read differently:
    /// times and light times that are not whole seconds, rates that are not whole bytes
    /// per second or exceed 32 bits, and (when the epoch is known) times after
    /// 2038/01/19-03:14:07.
    pub fn to_ion_strict(&self) -> Result<String, PlanError> {
        let whole = |t: Time, path: String, what: &str| -> Result<(), FieldError> {
            if t % SEC != 0 {
                return Err(FieldError::new(
                    path,
                    format!(
                        "{what} {} s is not a whole number of seconds (ION reads whole seconds)",
                        format_seconds(t)
                    ),
                ));
            }
            if let Some(e) = self.epoch {
                if e + (t / SEC) as i64 > ION_MAX_POSIX_TIME && what != "light time" {
                    return Err(FieldError::new(
                        path,
                        format!(
                            "{what} {} is after 2038/01/19-03:14:07, the last time ION 4.1.3 holds",
                            format_utc(e + (t / SEC) as i64)
                        ),
                    ));
                }
            }
            Ok(())
        };
        for (i, c) in self.contacts.iter().enumerate() {
            whole(c.start, format!("contacts[{i}].start"), "start")?;
            whole(c.end, format!("contacts[{i}].end"), "end")?;
            let r = c.rate_bytes_per_s;
            if r.fract() != 0.0 || r > ION_MAX_RATE {
                return Err(FieldError::new(
                    format!("contacts[{i}].rate_bytes_per_s"),
                    format!(
                        "{} bytes/s: ION holds a rate as a whole number below 2^32",
                        format_number(r)
                    ),
                )
                .into());
            }
        }
        for (i, r) in self.asserted_ranges().enumerate() {
            whole(r.start, format!("ranges[{i}].start"), "start")?;
            whole(r.end, format!("ranges[{i}].end"), "end")?;
            whole(r.owlt, format!("ranges[{i}].owlt"), "light time")?;
        }
        Ok(self.to_ion())
    }
}
