//! The initial congestion window: a number of segments, a size, or RFC 3390's rule.

use crate::units::Bytes;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The initial congestion window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum InitialWindow {
    Segments(u32),
    Bytes(Bytes),
    /// RFC 3390: min(4 MSS, max(2 MSS, 4380 bytes)).
    Rfc3390,
}

impl InitialWindow {
    /// The initial window in bytes for segments of `mss` bytes.
    pub fn bytes(&self, mss: u64) -> u64 {
        match *self {
            InitialWindow::Segments(n) => n as u64 * mss,
            InitialWindow::Bytes(b) => b.0.max(1),
            InitialWindow::Rfc3390 => (4 * mss).min((2 * mss).max(4380)),
        }
    }
}

impl Serialize for InitialWindow {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            InitialWindow::Segments(n) => s.serialize_u32(*n),
            InitialWindow::Bytes(b) => b.serialize(s),
            InitialWindow::Rfc3390 => s.serialize_str("rfc3390"),
        }
    }
}

impl<'de> Deserialize<'de> for InitialWindow {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, Visitor};
        struct V;
        impl Visitor<'_> for V {
            type Value = InitialWindow;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number of segments, a size such as \"4380 B\", or \"rfc3390\"")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<InitialWindow, E> {
                u32::try_from(v)
                    .map(InitialWindow::Segments)
                    .map_err(|_| E::custom(format!("{v} segments is too many")))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<InitialWindow, E> {
                if v < 0 {
                    return Err(E::custom(format!("{v} segments: must be >= 1")));
                }
                self.visit_u64(v as u64)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<InitialWindow, E> {
                if v.fract() == 0.0 && v >= 0.0 {
                    return self.visit_u64(v as u64);
                }
                Err(E::custom(format!("{v} is not a whole number of segments")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<InitialWindow, E> {
                if v == "rfc3390" {
                    return Ok(InitialWindow::Rfc3390);
                }
                crate::units::parse_bytes(v).map(|b| InitialWindow::Bytes(Bytes(b))).map_err(|_| {
                    E::custom(format!(
                        "\"{v}\" is not an initial window; use a number of segments, a size such as \"4380 B\", or \"rfc3390\""
                    ))
                })
            }
        }
        d.deserialize_any(V)
    }
}

impl JsonSchema for InitialWindow {
    fn schema_name() -> String {
        "InitialWindow".into()
    }
    fn json_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        let mut o = schemars::schema::SchemaObject {
            instance_type: Some(
                vec![
                    schemars::schema::InstanceType::Integer,
                    schemars::schema::InstanceType::String,
                ]
                .into(),
            ),
            ..Default::default()
        };
        o.metadata().description =
            Some("Segments (integer), a size (\"4380 B\"), or \"rfc3390\".".into());
        o.into()
    }
}
