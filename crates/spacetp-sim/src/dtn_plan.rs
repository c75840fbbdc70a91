//! The scenario's delay-tolerant network as the run uses it: the contact plan (the `[dtn]`
//! table's, or one derived from the scenario's links), the nodes' ipn numbers, and a `bp`
//! flow's settings checked. [`prepare`] reads them before the links are built: with
//! `drive_links`, a link between two nodes of the plan is up only during their contacts
//! and its delay is the plan's light time.

use crate::config::Scenario;
use crate::dtn_schema::DtnCfg;
use crate::schedule::{RateValue, Sched};
use spacetp_dtn::{ContactPlan, LinkWindows, ParseOptions};
use spacetp_proto::units::Duration;
use spacetp_proto::{FieldError, Time, SEC};
use std::sync::Arc;

/// The horizon of a plan derived from the links when the run has no stop time: 30 days.
const DEFAULT_HORIZON: Time = 30 * 86_400 * SEC;

/// The network as the run uses it: the plan, every node's ipn number (by node index) and
/// the hops' LTP settings.
pub struct DtnPlan {
    pub plan: Arc<ContactPlan>,
    pub numbers: Vec<u64>,
    pub ltp: Option<serde_json::Map<String, serde_json::Value>>,
    /// The agents keep delivered payloads (a flow's entities read them).
    pub keep_payloads: bool,
}

pub use crate::transport::bp::BP;

/// Whether the scenario uses a delay-tolerant network (a `[dtn]` table or a bp flow).
pub fn wanted(sc: &Scenario) -> bool {
    sc.dtn.is_some()
        || sc
            .flows
            .iter()
            .any(|f| f.protocol == BP || crate::transport::cfdp::entry::carried_by_bundles(f))
}

/// Whether a flow's packets are bundles whose payloads the agents must keep (CFDP over BP
/// hands them to its entities).
pub fn keeps_payloads(sc: &Scenario) -> bool {
    sc.flows
        .iter()
        .any(crate::transport::cfdp::entry::carried_by_bundles)
}

/// Read the plan, number the nodes, and (with `drive_links`) make the links follow the
/// plan; errors name the field (a plan's, its line).
pub fn prepare(sc: &mut Scenario) -> Result<Option<DtnPlan>, FieldError> {
    if !wanted(sc) {
        return Ok(None);
    }
    let cfg = sc.dtn.clone().unwrap_or_default();
    let numbers = numbers(sc)?;
    let text = match (&cfg.contact_plan, &cfg.contact_plan_file) {
        (Some(_), Some(_)) => {
            return Err(FieldError::new(
                "dtn",
                "give contact_plan or contact_plan_file, not both",
            ))
        }
        (Some(t), None) => Some(("dtn.contact_plan".to_string(), t.clone())),
        (None, Some(f)) => Some((
            "dtn.contact_plan_file".to_string(),
            std::fs::read_to_string(f).map_err(|e| {
                FieldError::new("dtn.contact_plan_file", format!("{f}: cannot read it: {e}"))
            })?,
        )),
        (None, None) => None,
    };
    let plan = match text {
        Some((path, text)) => {
            let opts = ParseOptions {
                epoch: None,
                nodes: Some(numbers.clone()),
            };
            let plan = ContactPlan::parse_with(&text, &opts)
                .map_err(|e| FieldError::new(path, e.to_string()))?;
            if plan.contacts().is_empty() {
                return Err(FieldError::new(
                    "dtn.contact_plan",
                    "has no contact (`a contact +t0 +t1 FROM TO RATE`)",
                ));
            }
            plan
        }
        None => from_links(sc, &numbers, &cfg)?,
    };
    if cfg.drive_links && (cfg.contact_plan.is_some() || cfg.contact_plan_file.is_some()) {
        drive_links(sc, &plan, &numbers)?;
    }
    Ok(Some(DtnPlan {
        plan: Arc::new(plan),
        numbers,
        ltp: cfg.ltp,
        keep_payloads: keeps_payloads(sc),
    }))
}

/// Every node's ipn number: its `dtn_node`, or its index + 1; distinct and not 0.
fn numbers(sc: &Scenario) -> Result<Vec<u64>, FieldError> {
    let mut seen = std::collections::HashMap::new();
    let mut out = Vec::with_capacity(sc.nodes.len());
    for (i, n) in sc.nodes.iter().enumerate() {
        let num = n.dtn_node.unwrap_or(i as u64 + 1);
        if num == 0 {
            return Err(FieldError::new(
                format!("nodes[{i}].dtn_node"),
                "ipn node numbers start at 1",
            ));
        }
        if let Some(j) = seen.insert(num, i) {
            return Err(FieldError::new(
                format!("nodes[{i}].dtn_node"),
                format!("{num} is nodes[{j}]'s number too; each node needs its own"),
            ));
        }
        out.push(num);
    }
    Ok(out)
}

/// The plan the links describe, over the horizon.
fn from_links(sc: &Scenario, numbers: &[u64], cfg: &DtnCfg) -> Result<ContactPlan, FieldError> {
    let end = cfg
        .horizon
        .map(|d| d.0)
        .or(sc.stop.map(|d| d.0))
        .unwrap_or(DEFAULT_HORIZON);
    let index = |name: &str| sc.nodes.iter().position(|n| n.name == name);
    let mut windows = Vec::new();
    for l in &sc.links {
        let (Some(a), Some(b)) = (index(&l.between[0]), index(&l.between[1])) else {
            continue; // unknown nodes are reported when the links are built
        };
        // A schedule's first delay and largest rate: the plan is the agents' belief, the
        // link's own schedules stay what the packets see.
        let delay = match &l.delay {
            Some(Sched::Value(d)) => d.0,
            Some(Sched::Schedule { schedule }) => schedule.first().map_or(0, |p| p.1 .0),
            None => 0,
        };
        let rate = |r: &Option<Sched<RateValue>>| match r {
            Some(Sched::Value(v)) => Some(v.0),
            Some(Sched::Schedule { schedule }) => schedule.iter().map(|p| p.1 .0).reduce(f64::max),
            None => None,
        };
        let Some(fwd) = rate(&l.rate) else {
            continue; // a rate only a contact plan of its own gives: not in this plan
        };
        let back = rate(&l.rate_back).unwrap_or(fwd);
        windows.push(LinkWindows {
            a: numbers[a],
            b: numbers[b],
            rate_a_to_b: fwd / 8.0,
            rate_b_to_a: back / 8.0,
            owlt: delay,
            start: 0,
            end,
            outages: l.outages.iter().map(|(s, e)| (s.0, e.0)).collect(),
        });
    }
    spacetp_dtn::from_links(&windows).map_err(|e| FieldError::new("links", e.to_string()))
}

/// Links between two nodes of the plan follow it: down outside the contacts of either
/// direction (added to the link's own outages), the delay the plan's light time (a
/// schedule of steps where ranges change).
fn drive_links(sc: &mut Scenario, plan: &ContactPlan, numbers: &[u64]) -> Result<(), FieldError> {
    let horizon = plan.horizon();
    let names: Vec<String> = sc.nodes.iter().map(|n| n.name.clone()).collect();
    for (i, l) in sc.links.iter_mut().enumerate() {
        let num = |name: &str| names.iter().position(|n| n == name).map(|j| numbers[j]);
        let (Some(a), Some(b)) = (num(&l.between[0]), num(&l.between[1])) else {
            continue;
        };
        if l.contacts.is_some() {
            continue; // driven by a contact plan of its own (`links[i].contacts`)
        }
        let mut up: Vec<(Time, Time)> = plan.up_intervals(a, b);
        up.extend(plan.up_intervals(b, a));
        if up.is_empty() {
            continue; // no contact: the plan says nothing of this link
        }
        up.sort();
        let mut merged: Vec<(Time, Time)> = Vec::new();
        for (s, e) in up {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        let mut t = 0;
        for (s, e) in merged {
            if s > t {
                l.outages.push((Duration(t), Duration(s)));
            }
            t = e;
        }
        if t < horizon {
            l.outages.push((Duration(t), Duration(horizon.max(t + 1))));
        }
        // The light time of each range, as the link's delay (steps at the ranges' edges).
        let mut points: Vec<(Time, Time)> = Vec::new();
        for r in plan
            .range_table()
            .iter()
            .map(|e| &e.range)
            .filter(|r| r.from == a && r.to == b)
        {
            points.push((r.start, r.owlt));
            points.push((r.end.saturating_sub(1), r.owlt));
        }
        points.sort();
        points.dedup_by_key(|p| p.0);
        match points.len() {
            0 => {}
            1 | 2 if points.iter().all(|p| p.1 == points[0].1) => {
                l.delay = Some(Sched::Value(Duration(points[0].1)));
            }
            _ => {
                l.delay = Some(Sched::Schedule {
                    schedule: points
                        .into_iter()
                        .map(|(t, d)| (Duration(t), Duration(d)))
                        .collect(),
                })
            }
        }
        if l.outages.iter().any(|(s, e)| e.0 <= s.0) {
            return Err(FieldError::new(
                format!("links[{i}].outages"),
                "an outage the contact plan makes is empty (a bug: please report it)",
            ));
        }
    }
    Ok(())
}
