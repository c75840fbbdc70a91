//! The text `json.dumps(json.loads(serde_json::to_string(v)), indent=2, sort_keys=True)`
//! would give, written straight from a `Serialize` value (a run's summary): no Python
//! objects and no `serde_json::Value` between (its maps here hash every key: 0.12 s for
//! the summary of 10 000 flows, this writer about a third of that). What serde_json writes
//! as null (a non-finite float, `None`, a unit) is null; an `f32` is the float its shortest
//! text reads back as; maps' and structs' entries are sorted by key (UTF-8 byte order is
//! code point order, as Python sorts), each rendered in place and moved into order at the
//! end of its map. For values whose keys are unique within each map (no colliding
//! `#[serde(flatten)]`: Python would keep the last) and are strings, integers or bools
//! (serde_json also takes float keys: refused here). The summary is such a value.

use crate::pyjson::{float_repr, newline, string};
use serde::ser::{self, Serialize};
use std::borrow::Cow;
use std::fmt::{self, Display, Write};
use std::ops::Range;

#[derive(Debug)]
pub struct Error(String);

impl Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: Display>(msg: T) -> Self {
        Error(msg.to_string())
    }
}

/// `v` as `json.dumps(..., indent=2, sort_keys=True)` writes what serde_json makes of it.
pub fn to_indent2_sorted<T: Serialize + ?Sized>(v: &T) -> Result<String, Error> {
    let mut w = Writer {
        out: String::with_capacity(1 << 16),
        level: 0,
        sorted: String::new(),
    };
    v.serialize(&mut w)?;
    Ok(w.out)
}

struct Writer {
    out: String,
    /// Nesting of the value being written (its items are indented one more).
    level: usize,
    /// Where a map's entries are put in order (kept to be reused).
    sorted: String,
}

/// A sequence being written: items in order.
struct Seq<'a> {
    w: &'a mut Writer,
    items: usize,
    /// A variant's map (`{"Variant": ...}`) to close after the sequence.
    variant: bool,
}

/// A map or struct being written: each value rendered at the end of the text, then all
/// moved into key order by `finish`. Inside an enum's variant, closed twice.
struct Map<'a> {
    w: &'a mut Writer,
    start: usize,
    entries: Vec<(Cow<'static, str>, Range<usize>)>,
    key: Option<String>,
    /// A variant's map (`{"Variant": ...}`) to close after this one.
    variant: bool,
}

impl Writer {
    fn seq(&mut self, variant: Option<&'static str>) -> Seq<'_> {
        if let Some(name) = variant {
            self.open_variant(name);
        }
        self.out.push('[');
        Seq {
            w: self,
            items: 0,
            variant: variant.is_some(),
        }
    }

    fn map(&mut self, variant: Option<&'static str>) -> Map<'_> {
        if let Some(name) = variant {
            self.open_variant(name);
        }
        Map {
            start: self.out.len(),
            w: self,
            entries: Vec::new(),
            key: None,
            variant: variant.is_some(),
        }
    }

    /// `{"Variant": ` of an externally tagged variant; its value follows one level in.
    fn open_variant(&mut self, name: &str) {
        self.out.push('{');
        self.level += 1;
        newline(self.level, &mut self.out);
        string(name, &mut self.out);
        self.out.push_str(": ");
    }

    fn close_variant(&mut self) {
        self.level -= 1;
        newline(self.level, &mut self.out);
        self.out.push('}');
    }

    fn int(&mut self, v: impl Display) {
        let _ = write!(self.out, "{v}");
    }
}

impl Seq<'_> {
    fn item<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        if self.items > 0 {
            self.w.out.push(',');
        }
        self.items += 1;
        self.w.level += 1;
        newline(self.w.level, &mut self.w.out);
        let r = v.serialize(&mut *self.w);
        self.w.level -= 1;
        r
    }

    fn finish(self) {
        if self.items > 0 {
            newline(self.w.level, &mut self.w.out);
        }
        self.w.out.push(']');
        if self.variant {
            self.w.close_variant();
        }
    }
}

impl Map<'_> {
    fn entry<T: Serialize + ?Sized>(&mut self, key: Cow<'static, str>, v: &T) -> Result<(), Error> {
        let at = self.w.out.len();
        self.w.level += 1;
        let r = v.serialize(&mut *self.w);
        self.w.level -= 1;
        self.entries.push((key, at..self.w.out.len()));
        r
    }

    fn finish(mut self) {
        self.entries.sort_by(|a, b| a.0.cmp(&b.0));
        let w = self.w;
        let mut text = std::mem::take(&mut w.sorted);
        text.clear();
        if self.entries.is_empty() {
            text.push_str("{}");
        } else {
            text.push('{');
            for (i, (k, r)) in self.entries.iter().enumerate() {
                if i > 0 {
                    text.push(',');
                }
                newline(w.level + 1, &mut text);
                string(k, &mut text);
                text.push_str(": ");
                text.push_str(&w.out[r.clone()]);
            }
            newline(w.level, &mut text);
            text.push('}');
        }
        w.out.truncate(self.start);
        w.out.push_str(&text);
        w.sorted = text;
        if self.variant {
            w.close_variant();
        }
    }
}

/// Integers as their decimal text (Python's `int.__repr__`).
macro_rules! integers {
    ($($method:ident: $t:ty),*) => {$(
        fn $method(self, v: $t) -> Result<(), Error> {
            self.int(v);
            Ok(())
        }
    )*};
}

/// Integer map keys as their text, as serde_json writes them.
macro_rules! keys_as_text {
    ($($method:ident: $t:ty),*) => {$(
        fn $method(self, v: $t) -> Result<String, Error> {
            Ok(v.to_string())
        }
    )*};
}

impl<'a> ser::Serializer for &'a mut Writer {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Seq<'a>;
    type SerializeTuple = Seq<'a>;
    type SerializeTupleStruct = Seq<'a>;
    type SerializeTupleVariant = Seq<'a>;
    type SerializeMap = Map<'a>;
    type SerializeStruct = Map<'a>;
    type SerializeStructVariant = Map<'a>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.out.push_str(if v { "true" } else { "false" });
        Ok(())
    }
    integers!(
        serialize_i8: i8,
        serialize_i16: i16,
        serialize_i32: i32,
        serialize_i64: i64,
        serialize_i128: i128,
        serialize_u8: u8,
        serialize_u16: u16,
        serialize_u32: u32,
        serialize_u64: u64,
        serialize_u128: u128
    );
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        // serde_json writes an f32's shortest text; Python reads that as a double.
        let double: f64 = format!("{v:?}").parse().unwrap_or(f64::NAN);
        self.serialize_f64(if v.is_finite() { double } else { f64::NAN })
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        if v.is_finite() {
            float_repr(v, &mut self.out);
        } else {
            self.out.push_str("null"); // as serde_json writes it
        }
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        string(v.encode_utf8(&mut [0; 4]), &mut self.out);
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        string(v, &mut self.out);
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        let mut s = self.seq(None);
        for b in v {
            s.item(b)?;
        }
        s.finish();
        Ok(())
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.out.push_str("null");
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<(), Error> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        self.serialize_none()
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        name: &'static str,
    ) -> Result<(), Error> {
        self.serialize_str(name)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        name: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        self.open_variant(name);
        v.serialize(&mut *self)?;
        self.close_variant();
        Ok(())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Seq<'a>, Error> {
        Ok(self.seq(None))
    }
    fn serialize_tuple(self, _: usize) -> Result<Seq<'a>, Error> {
        Ok(self.seq(None))
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Seq<'a>, Error> {
        Ok(self.seq(None))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        name: &'static str,
        _: usize,
    ) -> Result<Seq<'a>, Error> {
        Ok(self.seq(Some(name)))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Map<'a>, Error> {
        Ok(self.map(None))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Map<'a>, Error> {
        Ok(self.map(None))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        name: &'static str,
        _: usize,
    ) -> Result<Map<'a>, Error> {
        Ok(self.map(Some(name)))
    }
}

/// Every kind of sequence serde has: items in order.
macro_rules! sequences {
    ($($kind:ident::$item:ident),*) => {$(
        impl ser::$kind for Seq<'_> {
            type Ok = ();
            type Error = Error;
            fn $item<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
                self.item(v)
            }
            fn end(self) -> Result<(), Error> {
                self.finish();
                Ok(())
            }
        }
    )*};
}

sequences!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl ser::SerializeMap for Map<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.key = Some(key.serialize(KeyText)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        let key = self
            .key
            .take()
            .ok_or_else(|| Error("a map's value came before its key".into()))?;
        self.entry(Cow::Owned(key), v)
    }
    fn end(self) -> Result<(), Error> {
        self.finish();
        Ok(())
    }
}

/// Structs, plain or a variant's: fields by name.
macro_rules! structs {
    ($($kind:ident),*) => {$(
        impl ser::$kind for Map<'_> {
            type Ok = ();
            type Error = Error;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                v: &T,
            ) -> Result<(), Error> {
                self.entry(Cow::Borrowed(key), v)
            }
            fn end(self) -> Result<(), Error> {
                self.finish();
                Ok(())
            }
        }
    )*};
}

structs!(SerializeStruct, SerializeStructVariant);

/// A map key as serde_json writes it: a string, or a number or bool as its text.
struct KeyText;

impl ser::Serializer for KeyText {
    type Ok = String;
    type Error = Error;
    type SerializeSeq = ser::Impossible<String, Error>;
    type SerializeTuple = ser::Impossible<String, Error>;
    type SerializeTupleStruct = ser::Impossible<String, Error>;
    type SerializeTupleVariant = ser::Impossible<String, Error>;
    type SerializeMap = ser::Impossible<String, Error>;
    type SerializeStruct = ser::Impossible<String, Error>;
    type SerializeStructVariant = ser::Impossible<String, Error>;

    fn serialize_bool(self, v: bool) -> Result<String, Error> {
        Ok(v.to_string())
    }
    keys_as_text!(
        serialize_i8: i8,
        serialize_i16: i16,
        serialize_i32: i32,
        serialize_i64: i64,
        serialize_i128: i128,
        serialize_u8: u8,
        serialize_u16: u16,
        serialize_u32: u32,
        serialize_u64: u64,
        serialize_u128: u128
    );
    fn serialize_f32(self, _: f32) -> Result<String, Error> {
        Err(Error("a float as a map key".into()))
    }
    fn serialize_f64(self, _: f64) -> Result<String, Error> {
        Err(Error("a float as a map key".into()))
    }
    fn serialize_char(self, v: char) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_str(self, v: &str) -> Result<String, Error> {
        Ok(v.to_owned())
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<String, Error> {
        Err(Error("bytes as a map key".into()))
    }
    fn serialize_none(self) -> Result<String, Error> {
        Err(Error("None as a map key".into()))
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<String, Error> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<String, Error> {
        Err(Error("() as a map key".into()))
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<String, Error> {
        Err(Error("a unit struct as a map key".into()))
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        name: &'static str,
    ) -> Result<String, Error> {
        Ok(name.to_owned())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<String, Error> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<String, Error> {
        Err(Error("a variant as a map key".into()))
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(Error("a sequence as a map key".into()))
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
        Err(Error("a tuple as a map key".into()))
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(Error("a tuple as a map key".into()))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(Error("a variant as a map key".into()))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(Error("a map as a map key".into()))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Error> {
        Err(Error("a struct as a map key".into()))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(Error("a variant as a map key".into()))
    }
}

#[cfg(test)]
mod tests {
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
}
