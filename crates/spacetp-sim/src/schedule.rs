//! One schedule type for every link property that can change over a run: rate, delay,
//! up/down, bit and packet error rates and the Gilbert-Elliott parameters, each per
//! direction.
//!
//! In a scenario a property is one value or `{ schedule = [[time, value], ...] }` ([`Sched`],
//! the same syntax and the same errors for all of them). In the world it is a [`Schedule`]:
//! points in strictly increasing time, read piecewise-linearly (delay, which moves with the
//! geometry) or piecewise-constantly (everything else, which switches: a MODCOD, a rate
//! bin, a contact), and constant before the first point and after the last.

use schemars::JsonSchema;
use serde::de::{self, value, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use spacetp_proto::time::round_to_time;
use spacetp_proto::units::{parse_rate, Duration};
use spacetp_proto::{FieldError, Time};
use std::marker::PhantomData;

/// A link property: one value, or a schedule over simulated time.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Sched<T> {
    Value(T),
    Schedule {
        /// `[[time, value], ...]` in strictly increasing time. Delay is linear between
        /// points; every other property holds each value until the next point. Before the
        /// first point the first value holds, after the last the last.
        schedule: Vec<(Duration, T)>,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScheduleOnly<T> {
    schedule: Vec<(Duration, T)>,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Sched<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Sched<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a value such as \"50 ms\", or { schedule = [[time, value], ...] }")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Sched<T>, E> {
                T::deserialize(value::StrDeserializer::<E>::new(s)).map(Sched::Value)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Sched<T>, E> {
                T::deserialize(value::F64Deserializer::<E>::new(v)).map(Sched::Value)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Sched<T>, E> {
                self.visit_f64(v as f64)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Sched<T>, E> {
                self.visit_f64(v as f64)
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Sched<T>, E> {
                T::deserialize(value::BoolDeserializer::<E>::new(v)).map(Sched::Value)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, m: A) -> Result<Sched<T>, A::Error> {
                let s = ScheduleOnly::deserialize(value::MapAccessDeserializer::new(m))?;
                Ok(Sched::Schedule {
                    schedule: s.schedule,
                })
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

impl<T> From<T> for Sched<T> {
    fn from(v: T) -> Self {
        Sched::Value(v)
    }
}

/// A rate in a link's `rate` field: as a [`spacetp_proto::units::Rate`], and 0 is allowed
/// inside a schedule (nothing is serialised while it lasts; a packet on the wire waits).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RateValue(pub f64);

impl<'de> Deserialize<'de> for RateValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum NumOrStr {
            Num(f64),
            Str(String),
        }
        let v = NumOrStr::deserialize(d).map_err(|_: D::Error| {
            de::Error::custom("expected a string with a unit, e.g. \"1.5 Mb/s\"")
        })?;
        match v {
            NumOrStr::Num(n) if n.is_finite() && n >= 0.0 => Ok(RateValue(n)),
            NumOrStr::Num(n) => Err(de::Error::custom(format!("{n} is not a rate >= 0"))),
            NumOrStr::Str(s) => parse_rate(&s).map(RateValue).or_else(|e| {
                // "0 b/s": a zero with a rate's unit.
                let t = s.trim();
                let digits = t.trim_start_matches(['0', '.']);
                let unit_ok = t.len() > digits.len() && parse_rate(&format!("1{digits}")).is_ok();
                if unit_ok && !digits.starts_with(|c: char| c.is_ascii_digit()) {
                    Ok(RateValue(0.0))
                } else {
                    Err(de::Error::custom(e))
                }
            }),
        }
    }
}

impl JsonSchema for RateValue {
    fn schema_name() -> String {
        "Rate".into()
    }
    fn json_schema(g: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        spacetp_proto::units::Rate::json_schema(g)
    }
}

/// A property's value as the world reads it.
pub trait SchedValue {
    fn number(&self) -> f64;
}
impl SchedValue for Duration {
    fn number(&self) -> f64 {
        self.0 as f64
    }
}
impl SchedValue for RateValue {
    fn number(&self) -> f64 {
        self.0
    }
}
impl SchedValue for f64 {
    fn number(&self) -> f64 {
        *self
    }
}
impl SchedValue for bool {
    fn number(&self) -> f64 {
        if *self {
            1.0
        } else {
            0.0
        }
    }
}

/// How a schedule reads between its points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Each value holds until the next point.
    Step,
    /// Linear between points.
    Linear,
}

/// A property over simulated time: at least one point, times strictly increasing.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    pts: Vec<(Time, f64)>,
    shape: Shape,
}

impl Schedule {
    pub fn constant(v: f64) -> Self {
        Schedule {
            pts: vec![(0, v)],
            shape: Shape::Step,
        }
    }

    /// From points already checked (times strictly increasing, at least one).
    pub fn from_points(pts: Vec<(Time, f64)>, shape: Shape) -> Self {
        debug_assert!(!pts.is_empty() && pts.windows(2).all(|w| w[0].0 < w[1].0));
        Schedule { pts, shape }
    }

    /// Read `cfg` (at scenario path `path`), checking that its times increase strictly and
    /// that `check` accepts every value (its message is the rule; the error names the point).
    pub fn from_cfg<T: SchedValue + std::fmt::Debug>(
        cfg: &Sched<T>,
        path: &str,
        shape: Shape,
        check: impl Fn(f64) -> Result<(), String>,
    ) -> Result<Self, FieldError> {
        match cfg {
            Sched::Value(v) => {
                let x = v.number();
                check(x).map_err(|m| FieldError::new(path.to_string(), m))?;
                Ok(Schedule::constant(x))
            }
            Sched::Schedule { schedule } => {
                if schedule.is_empty() {
                    return Err(FieldError::new(
                        format!("{path}.schedule"),
                        "needs at least one [time, value] point",
                    ));
                }
                let mut pts: Vec<(Time, f64)> = Vec::with_capacity(schedule.len());
                for (i, (t, v)) in schedule.iter().enumerate() {
                    let at = format!("{path}.schedule[{i}]");
                    if let Some(&(prev, _)) = pts.last() {
                        if t.0 <= prev {
                            return Err(FieldError::new(
                                at,
                                format!(
                                    "time {t} is not after the previous point's {}; times must \
                                     be strictly increasing",
                                    Duration(prev)
                                ),
                            ));
                        }
                    }
                    let x = v.number();
                    check(x).map_err(|m| FieldError::new(at, m))?;
                    pts.push((t.0, x));
                }
                Ok(Schedule { pts, shape })
            }
        }
    }

    pub fn is_constant(&self) -> bool {
        self.pts.len() == 1
    }

    pub fn points(&self) -> &[(Time, f64)] {
        &self.pts
    }

    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// The value at `t`.
    #[inline]
    pub fn at(&self, t: Time) -> f64 {
        if self.pts.len() == 1 {
            return self.pts[0].1;
        }
        let i = self.pts.partition_point(|&(pt, _)| pt <= t);
        if i == 0 {
            return self.pts[0].1;
        }
        if i == self.pts.len() || self.shape == Shape::Step {
            return self.pts[i - 1].1;
        }
        let (t0, v0) = self.pts[i - 1];
        let (t1, v1) = self.pts[i];
        let f = (t - t0) as f64 / (t1 - t0) as f64;
        v0 + f * (v1 - v0)
    }

    pub fn max(&self) -> f64 {
        self.pts
            .iter()
            .map(|p| p.1)
            .fold(f64::NEG_INFINITY, f64::max)
    }

    pub fn min(&self) -> f64 {
        self.pts.iter().map(|p| p.1).fold(f64::INFINITY, f64::min)
    }

    /// The intervals `[start, end)` during which a step schedule of 0/1 is 0 (`end` is
    /// `Time::MAX` when it stays 0).
    pub fn zero_intervals(&self) -> Vec<(Time, Time)> {
        let mut out: Vec<(Time, Time)> = Vec::new();
        let mut open: Option<Time> = None;
        for (i, &(t, v)) in self.pts.iter().enumerate() {
            let from = if i == 0 { 0 } else { t };
            match (v == 0.0, open) {
                (true, None) => open = Some(from),
                (false, Some(s)) => {
                    if from > s {
                        out.push((s, from));
                    }
                    open = None;
                }
                _ => {}
            }
        }
        if let Some(s) = open {
            out.push((s, Time::MAX));
        }
        out
    }

    /// How long a step rate schedule (bits per second) takes to serialise `bits` starting
    /// at `start`, following every rate change during the transmission. The schedule's
    /// last rate must be above 0.
    pub fn serialise(&self, bits: f64, start: Time) -> Time {
        if self.pts.len() == 1 {
            return round_to_time(bits / self.pts[0].1 * 1e9);
        }
        let mut i = self.pts.partition_point(|&(pt, _)| pt <= start);
        let mut rate = self.pts[i.saturating_sub(1)].1;
        let (mut now, mut left) = (start as f64, bits);
        loop {
            let end = self.pts.get(i).map(|p| p.0 as f64);
            if rate > 0.0 {
                let need = left / rate * 1e9;
                if end.is_none_or(|e| now + need <= e) {
                    return round_to_time(now + need - start as f64);
                }
            }
            let Some(e) = end else {
                // Unreachable for a checked rate schedule (its last rate is above 0).
                return Time::MAX / 4;
            };
            left -= (e - now) * rate / 1e9;
            now = e;
            rate = self.pts[i].1;
            i += 1;
        }
    }
}

/// Merge `[start, end)` intervals (sorted or not) into sorted disjoint ones.
pub fn merge_intervals(mut v: Vec<(Time, Time)>) -> Vec<(Time, Time)> {
    v.sort_unstable();
    let mut merged: Vec<(Time, Time)> = Vec::new();
    for (s, e) in v {
        match merged.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use spacetp_proto::SEC;

    fn sched<T: for<'de> Deserialize<'de>>(toml_value: &str) -> Result<Sched<T>, String> {
        #[derive(Deserialize)]
        struct W<T> {
            v: Sched<T>,
        }
        toml::from_str::<W<T>>(&format!("v = {toml_value}"))
            .map(|w| w.v)
            .map_err(|e| e.message().to_string())
    }

    #[test]
    fn a_linear_schedule_interpolates_and_holds_its_ends() {
        let s = Schedule::from_points(
            vec![(0, 100.0), (1000, 200.0), (2000, 200.0)],
            Shape::Linear,
        );
        assert_eq!(s.at(0), 100.0);
        assert_eq!(s.at(500), 150.0);
        assert_eq!(s.at(1500), 200.0);
        assert_eq!(s.at(5000), 200.0);
        assert_eq!(s.max(), 200.0);
    }

    #[test]
    fn a_step_schedule_holds_each_value_until_the_next_point() {
        let s = Schedule::from_points(vec![(10, 1.0), (20, 2.0)], Shape::Step);
        assert_eq!(s.at(0), 1.0, "before the first point: the first value");
        assert_eq!(s.at(19), 1.0);
        assert_eq!(s.at(20), 2.0);
        assert_eq!(s.at(1_000_000), 2.0);
    }

    #[test]
    fn every_value_type_reads_one_value_or_a_schedule() {
        assert_eq!(
            sched::<Duration>("\"50 ms\"").unwrap(),
            Sched::Value(Duration(50_000_000))
        );
        assert_eq!(sched::<f64>("1e-3").unwrap(), Sched::Value(1e-3));
        assert_eq!(sched::<f64>("0").unwrap(), Sched::Value(0.0));
        assert_eq!(sched::<bool>("false").unwrap(), Sched::Value(false));
        assert_eq!(
            sched::<RateValue>(
                "{ schedule = [[\"0 s\", \"1 Mb/s\"], [\"1 s\", \"0 b/s\"], [2, 5]] }"
            )
            .unwrap(),
            Sched::Schedule {
                schedule: vec![
                    (Duration(0), RateValue(1e6)),
                    (Duration(SEC), RateValue(0.0)),
                    (Duration(2 * SEC), RateValue(5.0))
                ]
            }
        );
        assert!(sched::<RateValue>("\"5 kbit\"")
            .unwrap_err()
            .contains("\"5 kbit\" is not a rate"));
        assert!(sched::<RateValue>("\"0 kbit\"").is_err());
        assert!(sched::<f64>("{ schedul = [] }")
            .unwrap_err()
            .contains("unknown field `schedul`"));
    }

    #[test]
    fn times_that_go_backwards_are_named_by_their_point() {
        let cfg: Sched<f64> =
            sched("{ schedule = [[\"0 s\", 0.1], [\"5 s\", 0.2], [\"3 s\", 0.3]] }").unwrap();
        let e =
            Schedule::from_cfg(&cfg, "links[0].errors.per", Shape::Step, |_| Ok(())).unwrap_err();
        assert_eq!(
            e.to_string(),
            "links[0].errors.per.schedule[2]: time 3 s is not after the previous point's 5 s; \
             times must be strictly increasing"
        );
        let e = Schedule::from_cfg(&cfg, "p", Shape::Step, |v| {
            if v < 0.25 {
                Ok(())
            } else {
                Err(format!("{v} is too big"))
            }
        });
        assert!(e.is_err());
    }

    #[test]
    fn serialisation_follows_rate_changes_during_a_packet() {
        // 1000 bits at 1000 b/s for 0.5 s (500 bits), then nothing for 1 s, then 500 b/s.
        let s = Schedule::from_points(
            vec![(0, 1000.0), (SEC / 2, 0.0), (3 * SEC / 2, 500.0)],
            Shape::Step,
        );
        assert_eq!(s.serialise(1000.0, 0), 5 * SEC / 2);
        assert_eq!(s.serialise(400.0, 0), 4 * SEC / 10);
        assert_eq!(s.serialise(500.0, SEC), SEC / 2 + SEC);
        assert_eq!(Schedule::constant(8e6).serialise(8000.0, 77), 1_000_000);
    }

    #[test]
    fn zero_intervals_of_an_up_schedule_are_its_down_times() {
        let s = Schedule::from_points(vec![(10, 0.0), (20, 1.0), (30, 0.0)], Shape::Step);
        assert_eq!(s.zero_intervals(), vec![(0, 20), (30, Time::MAX)]);
        assert!(Schedule::constant(1.0).zero_intervals().is_empty());
        assert_eq!(
            merge_intervals(vec![(5, 9), (0, 6), (20, 30)]),
            vec![(0, 9), (20, 30)]
        );
    }
}
