//! What a scenario's links become, for people and other tools: every direction's schedules
//! as the world will read them (`spacetp schedule`), and the scenario's links as an ION
//! contact plan.

use crate::build;
use crate::config::Scenario;
use crate::contacts::{plan_of_links, PlanLink};
use crate::link::LinkDir;
use crate::schedule::Shape;
use serde_json::{json, Value};
use spacetp_proto::{FieldError, Time};
use std::collections::HashMap;

fn built(mut sc: Scenario) -> Result<(Scenario, build::Built), FieldError> {
    let origins = build::expand_topology(&mut sc)?;
    let idx = build::node_index(&sc)?;
    let b = build::build_links(&sc, &idx, 1500, &origins)?;
    Ok((sc, b))
}

fn secs(t: Time) -> Value {
    if t == Time::MAX {
        Value::Null
    } else {
        json!(t as f64 / 1e9)
    }
}

fn direction(d: &LinkDir) -> Value {
    let pts = |s: &crate::schedule::Schedule, scale: f64| -> Vec<Value> {
        s.points()
            .iter()
            .map(|&(t, v)| json!([t as f64 / 1e9, v * scale]))
            .collect()
    };
    json!({
        "name": d.stats.name,
        "rate_bps": pts(&d.rate, 1.0),
        "delay_s": pts(&d.delay.0, 1e-9),
        "delay_linear": d.delay.0.shape() == Shape::Linear,
        "down": d.outages.iter().map(|&(s, e)| json!([secs(s), secs(e)])).collect::<Vec<_>>(),
    })
}

/// Every link direction's rate (b/s, steps), delay (s, linear) and down intervals (s; an
/// open end is null), as JSON: `{"links": [{"index", "between", "directions": [fwd,
/// back]}]}`.
pub fn link_schedules(sc: Scenario) -> Result<Value, FieldError> {
    let (sc, b) = built(sc)?;
    let links: Vec<Value> = sc
        .links
        .iter()
        .enumerate()
        .map(|(i, l)| {
            json!({
                "index": i,
                "between": l.between,
                "directions": [direction(&b.links[2 * i]), direction(&b.links[2 * i + 1])],
            })
        })
        .collect();
    Ok(json!({ "links": links }))
}

/// The scenario's links over `[0, horizon)` as an ION contact plan (text): `numbers` gives
/// nodes their ION numbers (default: position in `nodes` + 1); a link is in the plan when
/// both its ends have one. `epoch`: POSIX seconds of time 0 (the plan's `@` line).
pub fn contact_plan(
    sc: Scenario,
    numbers: &[(String, u64)],
    horizon: Time,
    epoch: Option<i64>,
) -> Result<String, FieldError> {
    let (sc, b) = built(sc)?;
    let mut num: HashMap<&str, u64> = if numbers.is_empty() {
        sc.nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.as_str(), i as u64 + 1))
            .collect()
    } else {
        HashMap::new()
    };
    for (name, n) in numbers {
        if !sc.nodes.iter().any(|x| &x.name == name) {
            return Err(FieldError::new(
                format!("--node {name}={n}"),
                format!("no node \"{name}\" in the scenario"),
            ));
        }
        if *n == 0 {
            return Err(FieldError::new(
                format!("--node {name}={n}"),
                "ION node numbers start at 1",
            ));
        }
        num.insert(name.as_str(), *n);
    }
    let links: Vec<PlanLink> = sc
        .links
        .iter()
        .enumerate()
        .filter_map(|(i, l)| {
            let a = *num.get(l.between[0].as_str())?;
            let bn = *num.get(l.between[1].as_str())?;
            Some(PlanLink {
                a,
                b: bn,
                fwd: &b.links[2 * i],
                back: &b.links[2 * i + 1],
            })
        })
        .collect();
    if links.is_empty() {
        return Err(FieldError::new(
            "--node",
            "no link has ION numbers at both ends",
        ));
    }
    let plan = plan_of_links(&links, horizon, epoch)
        .map_err(|e| FieldError::new("links", e.to_string()))?;
    Ok(plan.to_ion())
}
