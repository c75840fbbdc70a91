//! The writer against Python's own text of the same values.

use super::*;
use std::collections::BTreeMap;

#[derive(serde::Serialize)]
enum Kind {
    Plain,
    Wrapped(u8),
    Pair(u8, f64),
    Named { z: u8, a: Option<u8> },
}

#[derive(serde::Serialize)]
struct Sample {
    zeta: Vec<f64>,
    alpha: BTreeMap<u64, &'static str>,
    kinds: Vec<Kind>,
    empty: Vec<u8>,
    none: BTreeMap<String, u8>,
    small: f32,
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped: Option<u8>,
}

/// What Python writes for serde_json's compact text of the same value (CPython 3.11:
/// `json.dumps(json.loads(text), indent=2, sort_keys=True)`).
#[test]
fn a_value_is_written_as_python_rewrites_serde_jsons_text() {
    let v = Sample {
        zeta: vec![1.5e-7, f64::NAN, 100.0, 1e16],
        alpha: [(10, "é\n"), (9, "x")].into(),
        kinds: vec![
            Kind::Plain,
            Kind::Wrapped(3),
            Kind::Pair(1, 0.5),
            Kind::Named { z: 1, a: None },
        ],
        empty: vec![],
        none: BTreeMap::new(),
        small: 0.1,
        skipped: None,
    };
    let compact = serde_json::to_string(&v).unwrap();
    assert_eq!(
        compact,
        r#"{"zeta":[1.5e-7,null,100.0,1e+16],"alpha":{"9":"x","10":"é\n"},"kinds":["Plain",{"Wrapped":3},{"Pair":[1,0.5]},{"Named":{"z":1,"a":null}}],"empty":[],"none":{},"small":0.1}"#
    );
    let python = r#"{
  "alpha": {
    "10": "\u00e9\n",
    "9": "x"
  },
  "empty": [],
  "kinds": [
    "Plain",
    {
      "Wrapped": 3
    },
    {
      "Pair": [
        1,
        0.5
      ]
    },
    {
      "Named": {
        "a": null,
        "z": 1
      }
    }
  ],
  "none": {},
  "small": 0.1,
  "zeta": [
    1.5e-07,
    null,
    100.0,
    1e+16
  ]
}"#;
    assert_eq!(to_indent2_sorted(&v).unwrap(), python);
}

#[test]
fn map_keys_are_written_as_serde_json_writes_them_or_refused() {
    let wide: BTreeMap<u128, bool> = [(1u128 << 100, true)].into();
    let text = to_indent2_sorted(&wide).unwrap();
    assert_eq!(
        serde_json::to_string(&wide).unwrap(),
        r#"{"1267650600228229401496703205376":true}"#
    );
    assert_eq!(text, "{\n  \"1267650600228229401496703205376\": true\n}");
    let floats: BTreeMap<String, f64> = [("x".into(), 0.5)].into();
    assert!(to_indent2_sorted(&floats).is_ok());
    let mut by_float = std::collections::HashMap::new();
    by_float.insert(KeyF(0.5), 1u8);
    assert!(
        to_indent2_sorted(&by_float).is_err(),
        "a float key is refused"
    );
}

#[derive(PartialEq)]
struct KeyF(f64);
impl Eq for KeyF {}
impl std::hash::Hash for KeyF {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.0.to_bits().hash(h);
    }
}
impl serde::Serialize for KeyF {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.0)
    }
}

#[derive(serde::Serialize)]
struct Row {
    z: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    m: Option<u8>,
    a: u8,
}

/// Another struct whose first field is also `z` (the same name, maybe the same pointer).
#[derive(serde::Serialize)]
struct OtherRow {
    z: u8,
    b: u8,
    y: u8,
}

#[derive(serde::Serialize)]
#[serde(untagged)]
enum AnyRow {
    Row(Row),
    Other(OtherRow),
}

/// `v` as `json.dumps(indent=2, sort_keys=True)` writes it, for integers only: serde_json's
/// pretty printer over its value with every object rebuilt in key order.
fn pretty_sorted(v: &impl serde::Serialize) -> String {
    fn sort(v: serde_json::Value) -> serde_json::Value {
        match v {
            serde_json::Value::Object(m) => {
                let sorted: BTreeMap<String, serde_json::Value> =
                    m.into_iter().map(|(k, v)| (k, sort(v))).collect();
                serde_json::Value::Object(sorted.into_iter().collect())
            }
            serde_json::Value::Array(xs) => xs.into_iter().map(sort).collect(),
            other => other,
        }
    }
    serde_json::to_string_pretty(&sort(serde_json::to_value(v).unwrap())).unwrap()
}

#[test]
fn structs_whose_fields_change_from_one_to_the_next_are_each_sorted_by_their_own_keys() {
    // The key order found for a struct is reused for the next of the same fields: a field
    // skipped in one of them, or another struct starting with the same name, must be sorted
    // again.
    let rows: Vec<AnyRow> = (0..6u8)
        .map(|i| match i % 3 {
            0 => AnyRow::Row(Row {
                z: i,
                m: Some(i),
                a: i,
            }),
            1 => AnyRow::Row(Row {
                z: i,
                m: None,
                a: i,
            }),
            _ => AnyRow::Other(OtherRow { z: i, b: i, y: i }),
        })
        .chain([AnyRow::Row(Row {
            z: 9,
            m: None,
            a: 9,
        })])
        .collect();
    let text = to_indent2_sorted(&rows).unwrap();
    assert_eq!(text, pretty_sorted(&rows));
    assert!(
        text.contains("{\n    \"a\": 1,\n    \"z\": 1\n  }"),
        "{text}"
    );
    assert!(
        text.contains("{\n    \"b\": 2,\n    \"y\": 2,\n    \"z\": 2\n  }"),
        "{text}"
    );
}

#[test]
fn a_text_written_from_its_pieces_is_the_whole_text() {
    fn written(v: &impl serde::Serialize) -> String {
        let mut file = Vec::new();
        render_indent2_sorted(v)
            .unwrap()
            .write_to(&mut file)
            .unwrap();
        String::from_utf8(file).unwrap()
    }
    let rows: Vec<Row> = (0..3)
        .map(|i| Row {
            z: i,
            m: None,
            a: i,
        })
        .collect();
    let nested: BTreeMap<&str, Vec<Row>> = [("rows", rows), ("also", vec![])].into();
    let empty: BTreeMap<String, u8> = BTreeMap::new();
    let variant = Kind::Named { z: 1, a: Some(2) };
    let struct_first = OtherRow { z: 1, b: 2, y: 3 };
    // Its first value a map, rendered from the start of the text as the outermost one is.
    let map_first: BTreeMap<&str, BTreeMap<&str, u8>> =
        [("a", [("y", 1), ("x", 2)].into()), ("b", [("w", 3)].into())].into();
    for (what, text, whole) in [
        (
            "a map of lists",
            written(&nested),
            to_indent2_sorted(&nested),
        ),
        ("an empty map", written(&empty), to_indent2_sorted(&empty)),
        ("a variant", written(&variant), to_indent2_sorted(&variant)),
        (
            "a struct",
            written(&struct_first),
            to_indent2_sorted(&struct_first),
        ),
        (
            "a list",
            written(&vec![1u8, 2]),
            to_indent2_sorted(&vec![1u8, 2]),
        ),
        (
            "a map first",
            written(&map_first),
            Ok(pretty_sorted(&map_first)),
        ),
    ] {
        assert_eq!(text, whole.unwrap(), "{what}");
    }
    assert_eq!(
        written(&struct_first),
        "{\n  \"b\": 2,\n  \"y\": 3,\n  \"z\": 1\n}"
    );
    assert_eq!(
        to_indent2_sorted(&map_first).unwrap(),
        pretty_sorted(&map_first)
    );
}
