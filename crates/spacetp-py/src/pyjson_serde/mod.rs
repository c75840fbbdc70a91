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

mod keys;
#[cfg(test)]
mod tests;

use crate::pyjson::{float_repr, newline, string};
use keys::KeyText;
use serde::ser::{self, Serialize};
use std::borrow::Cow;
use std::collections::HashMap;
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
    let mut w = Writer::new(false);
    v.serialize(&mut w)?;
    Ok(w.out)
}

/// The same text, to be written to a file: the outermost map's entries are left where
/// they were rendered and written from there in key order (no second text of the whole:
/// 16 MB for 10 000 flows, whose fresh pages cost more than the copy).
pub fn render_indent2_sorted<T: Serialize + ?Sized>(v: &T) -> Result<Rendered, Error> {
    let mut w = Writer::new(true);
    v.serialize(&mut w)?;
    Ok(Rendered {
        out: w.out,
        outermost: w.outermost,
    })
}

/// A rendered text: `out` itself, or the outermost map's pieces of it in key order.
pub struct Rendered {
    out: String,
    outermost: Option<Vec<Piece>>,
}

/// A piece of the outermost map: text between its values, or a value rendered in `out`.
enum Piece {
    Text(String),
    Out(Range<usize>),
}

impl Rendered {
    pub fn write_to(&self, sink: &mut impl std::io::Write) -> std::io::Result<()> {
        let Some(pieces) = &self.outermost else {
            return sink.write_all(self.out.as_bytes());
        };
        for piece in pieces {
            match piece {
                Piece::Text(t) => sink.write_all(t.as_bytes())?,
                Piece::Out(r) => sink.write_all(&self.out.as_bytes()[r.clone()])?,
            }
        }
        Ok(())
    }
}

struct Writer {
    out: String,
    /// Nesting of the value being written (its items are indented one more).
    level: usize,
    /// Where a map's entries are put in order (kept to be reused).
    sorted: String,
    /// The key order last found for a struct's fields, by its first field's name: the same
    /// struct comes 10 000 times in a summary, and its names are the same `&'static str`s.
    orders: HashMap<(*const u8, usize), FieldOrder>,
    /// Leave the outermost map in place and say its pieces' order in `outermost`.
    defer_outermost: bool,
    outermost: Option<Vec<Piece>>,
}

/// A struct's field names (where each is, its length) in the order serialized, and that
/// order sorted.
#[derive(Default)]
struct FieldOrder {
    names: Vec<(*const u8, usize)>,
    sorted: Vec<u32>,
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
    fn new(defer_outermost: bool) -> Self {
        Writer {
            out: String::with_capacity(1 << 16),
            level: 0,
            sorted: String::new(),
            orders: HashMap::new(),
            defer_outermost,
            outermost: None,
        }
    }

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

    /// The entries' indices in key order. A struct's (every key a field name) is looked up
    /// among the orders found before, and sorted only when its fields differ (a field
    /// skipped, another struct with the same first field).
    fn sorted_order(&mut self, entries: &[(Cow<'static, str>, Range<usize>)]) -> Vec<u32> {
        let by_key = |a: &u32, b: &u32| entries[*a as usize].0.cmp(&entries[*b as usize].0);
        let mut order: Vec<u32> = (0..entries.len() as u32).collect();
        let fields = entries.iter().all(|(k, _)| matches!(k, Cow::Borrowed(_)));
        if !fields || entries.is_empty() {
            order.sort_by(by_key);
            return order;
        }
        let names = entries.iter().map(|(k, _)| (k.as_ptr(), k.len()));
        let first = &entries[0].0;
        let known = self
            .orders
            .entry((first.as_ptr(), first.len()))
            .or_default();
        if !known.names.iter().copied().eq(names.clone()) {
            order.sort_by(by_key);
            known.names.clear();
            known.names.extend(names);
            known.sorted.clone_from(&order);
            return order;
        }
        order.clone_from(&known.sorted);
        order
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

    fn finish(self) {
        let order = self.w.sorted_order(&self.entries);
        let outermost = self.w.level == 0; // (a variant's map is one level in)
        if outermost && self.w.defer_outermost && !self.entries.is_empty() {
            return self.defer(&order);
        }
        let w = self.w;
        let mut text = std::mem::take(&mut w.sorted);
        text.clear();
        if outermost {
            // The outermost value: written into a text of its own size, which becomes the
            // output (no copy back). Each entry adds `,\n  "key": ` to its value's text.
            let keys: usize = self.entries.iter().map(|(k, _)| k.len() + 8).sum();
            text.reserve(w.out.len() + keys + 4);
        }
        if self.entries.is_empty() {
            text.push_str("{}");
        } else {
            text.push('{');
            for (i, &at) in order.iter().enumerate() {
                let (k, r) = &self.entries[at as usize];
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
        if outermost {
            std::mem::swap(&mut w.out, &mut text);
            text.clear();
        } else {
            w.out.truncate(self.start);
            w.out.push_str(&text);
        }
        w.sorted = text;
        if self.variant {
            w.close_variant();
        }
    }
}

impl Map<'_> {
    /// The outermost map's text as pieces in key order, its values left where rendered.
    fn defer(self, order: &[u32]) {
        debug_assert!(!self.variant, "a variant's map is never the outermost");
        let w = self.w;
        let mut pieces = Vec::with_capacity(2 * order.len() + 1);
        for (i, &at) in order.iter().enumerate() {
            let (k, r) = &self.entries[at as usize];
            let mut text = String::from(if i == 0 { "{" } else { "," });
            newline(w.level + 1, &mut text);
            string(k, &mut text);
            text.push_str(": ");
            pieces.push(Piece::Text(text));
            pieces.push(Piece::Out(r.clone()));
        }
        let mut close = String::new();
        newline(w.level, &mut close);
        close.push('}');
        pieces.push(Piece::Text(close));
        w.outermost = Some(pieces);
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
