//! What `spacetp emulate` prints before it starts: each direction of the link in words
//! (rate, delay, MTU, queue and which key set it, error model, outages, schedules).

use super::link_from_json;
use spacetp_proto::FieldError;
use spacetp_sim::limits::text::{bytes, rate, seconds};
use spacetp_sim::link::{LinkDir, QueueLimit};

/// A one-link scenario (JSON) between nodes a and b; `link` is the link's fields.
pub fn scenario_json(seed: u64, link: &str) -> String {
    format!(
        r#"{{"seed": {seed}, "nodes": [{{"name": "a"}}, {{"name": "b"}}],
            "links": [{{"between": ["a", "b"], {link}}}]}}"#
    )
}

/// The error model of one direction in words: the link's `errors` (both directions) or, for
/// the back one, its `errors_back` when given: "none", "BER 1e-7", "PER 0.001",
/// "Gilbert-Elliott: good->bad 1e-4, bad->good 0.1, loss good 0, bad 0.5 (mean 0.1%)",
/// "Markov slots of 120 ms: 2 states, loss 0, 0.5", "scripted drops: packets 3, 7"; a
/// schedule as its points.
fn errors_text(link: &serde_json::Value, queue_key: &str) -> String {
    use spacetp_sim::link_config::ErrorCfg;
    use spacetp_sim::schedule::Sched;
    let v = match queue_key {
        "queue_back" if link.get("errors_back").is_some_and(|e| !e.is_null()) => {
            link.get("errors_back")
        }
        _ => link.get("errors"),
    };
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return "none".into();
    };
    let Ok(e) = serde_json::from_value::<ErrorCfg>(v.clone()) else {
        return v.to_string();
    };
    let num = |x: f64| {
        if x != 0.0 && x.abs() < 1e-3 {
            format!("{x:e}")
        } else {
            format!("{x}")
        }
    };
    let sched = |s: &Sched<f64>| match s {
        Sched::Value(x) => num(*x),
        Sched::Schedule { schedule } => format!("a schedule of {} points", schedule.len()),
    };
    let at0 = |s: &Sched<f64>| match s {
        Sched::Value(x) => *x,
        Sched::Schedule { schedule } => schedule.first().map_or(0.0, |p| p.1),
    };
    if let Some(b) = &e.ber {
        format!("BER {}", sched(b))
    } else if let Some(p) = &e.per {
        format!("PER {}", sched(p))
    } else if let Some(g) = &e.gilbert_elliott {
        let (gb, bg) = (at0(&g.p_good_to_bad), at0(&g.p_bad_to_good));
        let bad = if gb + bg > 0.0 { gb / (gb + bg) } else { 0.0 };
        let mean = (1.0 - bad) * at0(&g.loss_good) + bad * at0(&g.loss_bad);
        format!(
            "Gilbert-Elliott per packet: good->bad {}, bad->good {}, loss good {}, bad {} \
             (mean loss {:.3}%)",
            sched(&g.p_good_to_bad),
            sched(&g.p_bad_to_good),
            sched(&g.loss_good),
            sched(&g.loss_bad),
            100.0 * mean
        )
    } else if let Some(m) = &e.markov_slot {
        let loss: Vec<String> = m.loss.iter().map(|&x| num(x)).collect();
        format!(
            "Markov slots of {}: {} states, loss {}",
            seconds(m.slot.0 as f64 / 1e9),
            m.loss.len(),
            loss.join(", ")
        )
    } else if let Some(d) = &e.drop {
        let d: Vec<String> = d.iter().map(|x| x.to_string()).collect();
        format!("scripted drops: packets {}", d.join(", "))
    } else {
        "none".into()
    }
}

/// The directions of a link as JSON (for the command to print before it starts): name,
/// rate, delay at time 0, mtu, queue limit.
pub fn describe(scenario_json: &str) -> Result<String, FieldError> {
    let (f, b) = link_from_json(scenario_json)?;
    // Which key set each direction's queue: `queue` is the forward one only, and the back
    // one stays at the default unless `queue_back` is given (docs/scenario.md#links).
    let link = serde_json::from_str::<serde_json::Value>(scenario_json)
        .ok()
        .and_then(|v| v.pointer("/links/0").cloned())
        .unwrap_or_default();
    let set_by = |key: &str| {
        if link.get(key).is_some_and(|q| !q.is_null()) {
            key.to_string()
        } else {
            "default".to_string()
        }
    };
    let d = |l: &LinkDir, key: &str| {
        serde_json::json!({
            "name": l.stats.name,
            "rate_bps": l.nominal_rate(),
            "delay_s": l.delay.at(0) as f64 / 1e9,
            "mtu": l.mtu,
            "queue": match l.limit {
                QueueLimit::Packets(n) => format!("{n} packets"),
                QueueLimit::Bytes(n) => bytes(n as f64),
            },
            "rate": rate(l.nominal_rate()),
            "errors": errors_text(&link, key),
            "corrupted": link.get("corrupted").and_then(|v| v.as_str()).unwrap_or("drop"),
            "queue_key": key,
            "queue_set_by": set_by(key),
            "outages": l.outages.iter().map(|&(s, e)| [s as f64 / 1e9, e as f64 / 1e9]).collect::<Vec<_>>(),
            "rate_points": l.rate.points().len(),
            "delay_points": l.delay.0.points().len(),
        })
    };
    Ok(serde_json::json!({ "directions": [d(&f, "queue"), d(&b, "queue_back")] }).to_string())
}
