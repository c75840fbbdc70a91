//! Human units in scenarios: "50 ms", "5 MB", "1.5 Mb/s". Each type accepts a string with a
//! unit, or a bare number in the SI base unit (seconds, bytes, bits per second), and its error
//! says what was wrong and gives an example of what is allowed.

use crate::time::Time;
use schemars::JsonSchema;
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit()
                || c == '.'
                || ((c == 'e' || c == 'E') && i > 0)
                || ((c == '-' || c == '+') && (i == 0 || matches!(&s[i - 1..i], "e" | "E"))))
        })
        .map_or(s.len(), |(i, _)| i);
    let num: f64 = s[..end].parse().ok()?;
    Some((num, s[end..].trim()))
}

/// Parse a duration such as "50 ms", "0.01 ms", "1.5 s", "20 min", "2 h", "100 us", "3 ns".
pub fn parse_duration(s: &str) -> Result<Time, String> {
    let bad = || format!("\"{s}\" is not a duration; use e.g. \"50 ms\", \"1.5 s\" or \"20 min\"");
    let (v, unit) = split_number(s).ok_or_else(bad)?;
    let scale = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" | "sec" => 1e9,
        "min" => 60e9,
        "h" => 3600e9,
        _ => return Err(bad()),
    };
    to_time(v * scale).ok_or_else(|| format!("\"{s}\": a duration must be finite and >= 0"))
}

fn to_time(ns: f64) -> Option<Time> {
    (0.0..1.8e19).contains(&ns).then(|| ns.round() as Time)
}

/// Parse a size such as "5 MB" (10^6), "300 kB", "64 KiB" (2^10), "1040 B" or "1 GiB".
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let bad =
        || format!("\"{s}\" is not a size; use e.g. \"1040 B\", \"25 kB\", \"5 MB\" or \"64 KiB\"");
    let (v, unit) = split_number(s).ok_or_else(bad)?;
    let scale = match unit {
        "B" | "" => 1.0,
        "kB" | "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        "KiB" => 1024.0,
        "MiB" => 1048576.0,
        "GiB" => 1073741824.0,
        _ => return Err(bad()),
    };
    let b = v * scale;
    if !(0.0..1.8e19).contains(&b) {
        return Err(format!("\"{s}\": a size must be finite and >= 0"));
    }
    Ok(b.round() as u64)
}

/// Parse a rate such as "1.5 Mb/s", "5 kb/s", "10 Gbit/s", "2 Mbps", or "100 kB/s" (bytes).
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let bad = || format!("\"{s}\" is not a rate; use e.g. \"5 kb/s\", \"1.5 Mb/s\" or \"10 Gb/s\"");
    let (v, unit) = split_number(s).ok_or_else(bad)?;
    let scale = match unit {
        "b/s" | "bit/s" | "bps" => 1.0,
        "kb/s" | "kbit/s" | "kbps" => 1e3,
        "Mb/s" | "Mbit/s" | "Mbps" => 1e6,
        "Gb/s" | "Gbit/s" | "Gbps" => 1e9,
        "B/s" => 8.0,
        "kB/s" => 8e3,
        "MB/s" => 8e6,
        "GB/s" => 8e9,
        _ => return Err(bad()),
    };
    let r = v * scale;
    if !(r.is_finite() && r > 0.0) {
        return Err(format!("\"{s}\": a rate must be finite and > 0"));
    }
    Ok(r)
}

#[derive(Deserialize)]
#[serde(untagged)]
enum NumOrStr {
    Num(f64),
    Str(String),
}

macro_rules! unit_type {
    ($name:ident, $inner:ty, $doc:literal, $parse:expr, $from_num:expr, $show:expr, $example:literal) => {
        #[doc = $doc]
        #[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Default)]
        pub struct $name(pub $inner);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let v = NumOrStr::deserialize(d).map_err(|e: D::Error| {
                    let m = e.to_string();
                    if m.starts_with("missing field") {
                        e
                    } else {
                        de::Error::custom(concat!("expected a string with a unit, e.g. ", $example))
                    }
                })?;
                let parsed: Result<$inner, String> = match v {
                    NumOrStr::Str(s) => $parse(&s),
                    NumOrStr::Num(n) => $from_num(n),
                };
                parsed.map($name).map_err(de::Error::custom)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&$show(self.0))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&$show(self.0))
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> String {
                stringify!($name).to_string()
            }
            fn json_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
                let mut o = schemars::schema::SchemaObject::default();
                o.instance_type = Some(
                    vec![
                        schemars::schema::InstanceType::String,
                        schemars::schema::InstanceType::Number,
                    ]
                    .into(),
                );
                o.metadata().description = Some(concat!($doc, " Example: ", $example).into());
                o.into()
            }
        }
    };
}

unit_type!(
    Duration,
    Time,
    "A duration: a string with a unit (ns, us, ms, s, min, h) or a number of seconds.",
    parse_duration,
    |n: f64| to_time(n * 1e9).ok_or_else(|| format!("{n} is not a duration >= 0")),
    |t: Time| format!("{} s", t as f64 / 1e9),
    "\"50 ms\""
);
unit_type!(
    Bytes,
    u64,
    "A size: a string with a unit (B, kB, MB, GB, KiB, MiB, GiB) or a number of bytes.",
    parse_bytes,
    |n: f64| if n.is_finite() && n >= 0.0 && n.fract() == 0.0 {
        Ok(n as u64)
    } else {
        Err(format!("{n} is not a whole number of bytes >= 0"))
    },
    |b: u64| format!("{b} B"),
    "\"5 MB\""
);
unit_type!(
    Rate,
    f64,
    "A rate: a string with a unit (b/s, kb/s, Mb/s, Gb/s; B/s, kB/s, MB/s for bytes) or a number of bits per second.",
    parse_rate,
    |n: f64| if n.is_finite() && n > 0.0 {
        Ok(n)
    } else {
        Err(format!("{n} is not a rate > 0"))
    },
    |r: f64| format!("{r} b/s"),
    "\"1.5 Mb/s\""
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("50 ms"), Ok(50_000_000));
        assert_eq!(parse_duration("0.01 ms"), Ok(10_000));
        assert_eq!(parse_duration("20 min"), Ok(1_200_000_000_000));
        assert_eq!(parse_duration("1e-3 s"), Ok(1_000_000));
        assert!(parse_duration("50").is_err());
        assert!(parse_duration("-5 ms").is_err());
        assert!(parse_duration("5 parsecs")
            .unwrap_err()
            .contains("is not a duration"));
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_bytes("5 MB"), Ok(5_000_000));
        assert_eq!(parse_bytes("64 KiB"), Ok(65536));
        assert_eq!(parse_bytes("25 kB"), Ok(25_000));
        assert!(parse_bytes("5 Mb").is_err());
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("1.5 Mb/s"), Ok(1.5e6));
        assert_eq!(parse_rate("5 kb/s"), Ok(5e3));
        assert_eq!(parse_rate("1 kB/s"), Ok(8e3));
        let e = parse_rate("5 kbit").unwrap_err();
        assert!(
            e.contains("\"5 kbit\" is not a rate; use e.g. \"5 kb/s\""),
            "{e}"
        );
        assert!(parse_rate("-1 Mb/s").is_err());
        assert!(parse_rate("0 b/s").is_err());
    }
}
