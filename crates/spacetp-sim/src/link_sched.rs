//! From one `[[links]]` entry to the schedules of its two directions: rate, delay and the
//! intervals each is down (the link's `outages`, the direction's `up`, or a contact plan's
//! gaps). Every check names the scenario path it refers to.

use crate::contacts;
use crate::link::{Delay, DirSched};
use crate::link_config::LinkCfg;
use crate::schedule::{merge_intervals, RateValue, Sched, Schedule, Shape};
use spacetp_proto::units::Duration;
use spacetp_proto::{FieldError, Time};

/// The forward and back schedules of link `l` (at scenario path `p`).
pub fn directions(l: &LinkCfg, p: &str) -> Result<[DirSched; 2], FieldError> {
    for (given, field, what) in [
        (l.orbit.is_some(), "orbit", "an orbit"),
        (l.ephemeris.is_some(), "ephemeris", "an ephemeris"),
        (l.trace.is_some(), "trace", "a trace"),
    ] {
        if given {
            return Err(FieldError::new(
                format!("{p}.{field}"),
                format!(
                    "{what} is turned into schedules by the Python front before the run \
                     (spacetp run, spacetp.run, sweeps, spacetp emulate; orbits need \
                     `pip install spacetp[orbits]`); this core takes explicit schedules"
                ),
            ));
        }
    }
    let outages = outages(&l.outages, &format!("{p}.outages"))?;
    if let Some(c) = &l.contacts {
        for (given, field) in [
            (l.rate.is_some(), "rate"),
            (l.rate_back.is_some(), "rate_back"),
            (l.delay.is_some(), "delay"),
            (l.delay_back.is_some(), "delay_back"),
            (l.up.is_some(), "up"),
            (l.up_back.is_some(), "up_back"),
        ] {
            if given {
                return Err(FieldError::new(
                    format!("{p}.{field}"),
                    "the contact plan (`contacts`) sets it; give one or the other",
                ));
            }
        }
        let [fwd, back] = contacts::directions(c, &format!("{p}.contacts"))?;
        return Ok([fwd, back].map(|mut d| {
            d.down = merge_intervals(d.down.into_iter().chain(outages.iter().copied()).collect());
            d
        }));
    }
    let Some(rate) = &l.rate else {
        return Err(FieldError::new(
            format!("{p}.rate"),
            "required: give a rate (or `contacts`, `orbit.modcod` or `trace.mahimahi`)",
        ));
    };
    let Some(delay) = &l.delay else {
        return Err(FieldError::new(
            format!("{p}.delay"),
            "required: give a delay (or `contacts`, `orbit`, `ephemeris` or `trace.delay_csv`)",
        ));
    };
    let mut out = Vec::with_capacity(2);
    for dir in 0..2 {
        let suffix = if dir == 0 { "" } else { "_back" };
        let r = if dir == 0 {
            rate
        } else {
            l.rate_back.as_ref().unwrap_or(rate)
        };
        let r_path = if dir == 1 && l.rate_back.is_some() {
            format!("{p}.rate_back")
        } else {
            format!("{p}.rate")
        };
        let d = if dir == 0 {
            delay
        } else {
            l.delay_back.as_ref().unwrap_or(delay)
        };
        let d_path = if dir == 1 && l.delay_back.is_some() {
            format!("{p}.delay_back")
        } else {
            format!("{p}.delay")
        };
        let up = if dir == 0 {
            l.up.as_ref()
        } else {
            l.up_back.as_ref().or(l.up.as_ref())
        };
        let up_path = format!(
            "{p}.up{}",
            if dir == 1 && l.up_back.is_some() {
                suffix
            } else {
                ""
            }
        );
        let mut down = outages.clone();
        if let Some(u) = up {
            let s = Schedule::from_cfg(u, &up_path, Shape::Step, |_| Ok(()))?;
            down = merge_intervals(down.into_iter().chain(s.zero_intervals()).collect());
        }
        out.push(DirSched {
            rate: rate_schedule(r, &r_path)?,
            delay: delay_schedule(d, &d_path)?,
            down,
        });
    }
    let back = out.pop().expect("two directions");
    let fwd = out.pop().expect("two directions");
    Ok([fwd, back])
}

/// A rate: above 0 when constant; inside a schedule 0 is allowed, but not as the last value
/// (the transmitter would never finish its packet).
pub fn rate_schedule(cfg: &Sched<RateValue>, path: &str) -> Result<Schedule, FieldError> {
    let s = Schedule::from_cfg(cfg, path, Shape::Step, |r| {
        if r.is_finite() && r >= 0.0 {
            Ok(())
        } else {
            Err(format!("{r} b/s: a rate is finite and 0 or more"))
        }
    })?;
    let last = s.points().last().map_or(0.0, |p| p.1);
    if last <= 0.0 {
        let at = match cfg {
            Sched::Value(_) => path.to_string(),
            Sched::Schedule { schedule } => format!("{path}.schedule[{}]", schedule.len() - 1),
        };
        return Err(FieldError::new(
            at,
            "the last (or only) rate must be above 0: a transmitter at 0 b/s never finishes \
             its packet; make the link go down with `up` instead",
        ));
    }
    Ok(s)
}

pub fn delay_schedule(cfg: &Sched<Duration>, path: &str) -> Result<Delay, FieldError> {
    Ok(Delay(Schedule::from_cfg(cfg, path, Shape::Linear, |_| {
        Ok(())
    })?))
}

fn outages(list: &[(Duration, Duration)], path: &str) -> Result<Vec<(Time, Time)>, FieldError> {
    let mut v = Vec::new();
    for (i, (s, e)) in list.iter().enumerate() {
        if e.0 <= s.0 {
            return Err(FieldError::new(
                format!("{path}[{i}]"),
                format!("end {e} must be after start {s}"),
            ));
        }
        v.push((s.0, e.0));
    }
    Ok(merge_intervals(v))
}

/// The intervals when either direction of a link is down: what its ground stations
/// announce to the transports that listen for link state.
pub fn either_down(a: &[(Time, Time)], b: &[(Time, Time)]) -> Vec<(Time, Time)> {
    merge_intervals(a.iter().chain(b).copied().collect())
}
