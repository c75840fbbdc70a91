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
