//! Links and ION contact plans, both ways, through `spacetp-dtn`'s [`ContactPlan`] (one
//! reader and one writer of `ionrc` text in the project): a plan drives a link's two
//! directions ([`directions`]), and the links of a built scenario become a plan
//! ([`plan_of_links`]) — e.g. the visibility an orbit gave them.

use crate::link::{Delay, DirSched, LinkDir};
use crate::schedule::{merge_intervals, Schedule, Shape};
use crate::sources::ContactsCfg;
use spacetp_dtn::{Contact, ContactId, ContactPlan, ParseOptions, PlanError, Range};
use spacetp_proto::{FieldError, Time};

/// A UTC instant as ION writes it (`2026/01/01-00:00:00`), from that form or ISO 8601
/// (`2026-01-01T00:00:00Z`), as POSIX seconds.
pub fn utc_seconds(s: &str) -> Result<i64, String> {
    let t = s.trim();
    let ion = match t.split_once('T') {
        Some((date, clock)) => {
            let clock = clock.trim_end_matches('Z').trim_end_matches("+00:00");
            format!("{}-{clock}", date.replace('-', "/"))
        }
        None => t.to_string(),
    };
    spacetp_dtn::contact_plan::parse_utc(&ion)
}

/// The forward (`nodes[0]` -> `nodes[1]`) and back schedules a contact plan gives a link:
/// up during each contact, at its rate (bytes/s x 8), with the one-way light time of the
/// plan's ranges; down between contacts.
pub fn directions(c: &ContactsCfg, path: &str) -> Result<[DirSched; 2], FieldError> {
    let text = match (&c.plan, &c.file) {
        (Some(_), Some(_)) => {
            return Err(FieldError::new(
                path.to_string(),
                "give `plan` or `file`, not both",
            ))
        }
        (Some(t), None) => t,
        (None, Some(_)) => {
            return Err(FieldError::new(
                format!("{path}.file"),
                "a plan file is read by the Python front (spacetp run, spacetp.run); this \
                 core takes the plan's text in `plan`",
            ))
        }
        (None, None) => {
            return Err(FieldError::new(
                path.to_string(),
                "give the plan: `plan` or `file`",
            ))
        }
    };
    let (a, b) = c.nodes;
    if a == 0 || b == 0 || a == b {
        return Err(FieldError::new(
            format!("{path}.nodes"),
            format!("[{a}, {b}]: two different ION node numbers, from 1"),
        ));
    }
    let epoch = match &c.start {
        Some(s) => Some(utc_seconds(s).map_err(|m| FieldError::new(format!("{path}.start"), m))?),
        None => None,
    };
    let opts = ParseOptions { epoch, nodes: None };
    let plan = ContactPlan::parse_with(text, &opts)
        .map_err(|e| FieldError::new(format!("{path}.plan"), e.to_string()))?;
    if plan.contacts_between(a, b).is_empty() && plan.contacts_between(b, a).is_empty() {
        return Err(FieldError::new(
            format!("{path}.nodes"),
            format!("the plan has no contact between nodes {a} and {b}"),
        ));
    }
    let one = |x: u64, y: u64| -> Result<DirSched, FieldError> {
        let ids = plan.ids_between(x, y);
        if ids.is_empty() {
            return Ok(DirSched {
                rate: Schedule::constant(1.0),
                delay: Delay::constant(0),
                down: vec![(0, Time::MAX)],
            });
        }
        let mut rate = Vec::new();
        let mut down = Vec::new();
        let mut cursor = 0;
        for id in ids.clone() {
            let k = plan.contact(ContactId(id));
            if plan.contact_owlt(ContactId(id)).is_none() {
                return Err(FieldError::new(
                    format!("{path}.plan"),
                    format!(
                        "the contact {x} -> {y} from {} s has no range (no light time): ION's \
                         CGR cannot use it either; add an `a range` line",
                        k.start as f64 / 1e9
                    ),
                ));
            }
            rate.push((k.start, k.rate_bytes_per_s * 8.0));
            if k.start > cursor {
                down.push((cursor, k.start));
            }
            cursor = k.end;
        }
        down.push((cursor, Time::MAX));
        let mut delay: Vec<(Time, f64)> = Vec::new();
        for e in plan.range_table() {
            let r = &e.range;
            if (r.from, r.to) != (x, y) {
                continue;
            }
            if delay.last().is_some_and(|&(t, _)| t >= r.start) {
                continue;
            }
            delay.push((r.start, r.owlt as f64));
            if r.end.saturating_sub(1) > r.start {
                delay.push((r.end - 1, r.owlt as f64));
            }
        }
        Ok(DirSched {
            rate: Schedule::from_points(rate, Shape::Step),
            delay: Delay(Schedule::from_points(delay, Shape::Linear)),
            down: merge_intervals(down),
        })
    };
    Ok([one(a, b)?, one(b, a)?])
}

/// One link of a built world for a plan: its ION node numbers and its two directions.
pub struct PlanLink<'a> {
    pub a: u64,
    pub b: u64,
    pub fwd: &'a LinkDir,
    pub back: &'a LinkDir,
}

/// The up windows of a direction within `[0, horizon)`.
fn up_windows(down: &[(Time, Time)], horizon: Time) -> Vec<(Time, Time)> {
    let mut up = Vec::new();
    let mut cursor = 0;
    for &(s, e) in down {
        if s > cursor && cursor < horizon {
            up.push((cursor, s.min(horizon)));
        }
        cursor = cursor.max(e);
    }
    if cursor < horizon {
        up.push((cursor, horizon));
    }
    up
}

/// Bits a step rate schedule carries over `[s, e)`.
fn bits_over(rate: &Schedule, s: Time, e: Time) -> f64 {
    let pts = rate.points();
    let mut bits = 0.0;
    let mut t = s;
    let mut i = pts.partition_point(|p| p.0 <= s);
    while t < e {
        let next = pts.get(i).map_or(e, |p| p.0.min(e));
        bits += rate.at(t) * (next - t) as f64 / 1e9;
        t = next;
        i += 1;
    }
    bits
}

/// The largest delay of a direction over `[s, e)` (a linear schedule peaks at its points
/// or at the interval's ends).
fn max_delay(d: &Delay, s: Time, e: Time) -> Time {
    let inner = d.0.points().iter().filter(|p| p.0 > s && p.0 < e);
    inner
        .map(|p| p.1.round() as Time)
        .chain([d.at(s), d.at(e.saturating_sub(1))])
        .max()
        .unwrap_or(0)
}

/// A contact plan of `links` over `[0, horizon)`: a contact for each up window of each
/// direction, at the window's mean rate in whole bytes per second (the volume the link
/// carries in it), and a range from the smaller node to the larger for each window during
/// which either direction is up, at the largest one-way delay of the two directions in it
/// (ION's rule makes it hold both ways). `epoch`: the POSIX instant of time 0, written as
/// the plan's `@` line.
pub fn plan_of_links(
    links: &[PlanLink],
    horizon: Time,
    epoch: Option<i64>,
) -> Result<ContactPlan, PlanError> {
    let mut contacts = Vec::new();
    let mut ranges = Vec::new();
    for l in links {
        for (x, y, d) in [(l.a, l.b, l.fwd), (l.b, l.a, l.back)] {
            for (s, e) in up_windows(&d.outages, horizon) {
                let rate = (bits_over(&d.rate, s, e) / 8.0 / ((e - s) as f64 / 1e9)).round();
                if rate >= 1.0 {
                    contacts.push(Contact::new(x, y, s, e, rate));
                }
            }
        }
        let mut either_up = up_windows(&l.fwd.outages, horizon);
        either_up.extend(up_windows(&l.back.outages, horizon));
        let either_up = merge_intervals(either_up);
        for (s, e) in either_up {
            let owlt = max_delay(&l.fwd.delay, s, e).max(max_delay(&l.back.delay, s, e));
            ranges.push(Range {
                from: l.a.min(l.b),
                to: l.a.max(l.b),
                start: s,
                end: e,
                owlt,
            });
        }
    }
    Ok(ContactPlan::from_parts(contacts, ranges)?.with_epoch(epoch))
}

#[cfg(test)]
mod tests {
    use super::*;
    use spacetp_proto::SEC;

    fn cfg(plan: &str) -> ContactsCfg {
        ContactsCfg {
            plan: Some(plan.into()),
            file: None,
            nodes: (1, 2),
            start: None,
        }
    }

    #[test]
    fn a_plan_sets_up_rate_and_light_time_of_each_direction() {
        let plan = "a contact +10 +70 1 2 1000\na contact +100 +160 1 2 2000\n\
                    a contact +10 +70 2 1 125\na range +0 +200 1 2 5\n";
        let [f, b] = directions(&cfg(plan), "links[0].contacts").unwrap();
        assert_eq!(
            f.down,
            vec![(0, 10 * SEC), (70 * SEC, 100 * SEC), (160 * SEC, Time::MAX)]
        );
        assert_eq!(f.rate.at(20 * SEC), 8000.0);
        assert_eq!(f.rate.at(120 * SEC), 16000.0);
        assert_eq!(f.delay.at(50 * SEC), 5 * SEC);
        assert_eq!(b.rate.at(20 * SEC), 1000.0);
        assert_eq!(
            b.delay.at(50 * SEC),
            5 * SEC,
            "ION's rule: 1 -> 2 holds both ways"
        );
        assert_eq!(b.down, vec![(0, 10 * SEC), (70 * SEC, Time::MAX)]);
    }

    #[test]
    fn a_contact_without_a_range_and_bad_lines_are_named() {
        let e = directions(&cfg("a contact +0 +10 1 2 100\n"), "links[0].contacts").unwrap_err();
        assert!(e
            .to_string()
            .starts_with("links[0].contacts.plan: the contact 1 -> 2"));
        let e = directions(&cfg("a contact +10 +0 1 2 100\n"), "links[0].contacts").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("links[0].contacts.plan: line 1: "),
            "{e}"
        );
        let mut c = cfg("a contact +0 +10 3 4 100\na range +0 +10 3 4 1\n");
        let e = directions(&c, "x").unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.nodes: the plan has no contact between nodes 1 and 2"
        );
        c.nodes = (2, 2);
        assert!(directions(&c, "x")
            .unwrap_err()
            .to_string()
            .starts_with("x.nodes: [2, 2]"));
    }

    #[test]
    fn absolute_times_read_against_the_start_instant() {
        let mut c = cfg(
            "a contact 2026/01/01-00:01:00 2026/01/01-00:02:00 1 2 100\n\
                         a range 2026/01/01-00:00:30 2026/01/01-01:00:00 1 2 1\n",
        );
        c.start = Some("2026-01-01T00:00:30Z".into());
        let [f, _] = directions(&c, "x").unwrap();
        assert_eq!(f.down[0], (0, 30 * SEC));
        assert_eq!(utc_seconds("2026-01-01T00:00:00Z"), Ok(1_767_225_600));
        assert!(utc_seconds("yesterday").is_err());
    }

    #[test]
    fn up_windows_and_volumes_make_a_plan_that_reads_back() {
        assert_eq!(
            up_windows(&[(0, 5), (8, 9), (20, Time::MAX)], 30),
            vec![(5, 8), (9, 20)]
        );
        let r = Schedule::from_points(vec![(0, 8000.0), (5 * SEC, 16000.0)], Shape::Step);
        assert_eq!(bits_over(&r, 0, 10 * SEC), 8000.0 * 5.0 + 16000.0 * 5.0);
        let d = Delay(Schedule::from_points(
            vec![(0, 1e9), (5 * SEC, 3e9), (10 * SEC, 2e9)],
            Shape::Linear,
        ));
        assert_eq!(max_delay(&d, 0, 10 * SEC), 3 * SEC);
        assert_eq!(max_delay(&d, 0, 2 * SEC), 1_800_000_000);
    }
}
