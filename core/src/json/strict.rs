//! The strict reading every turnfit JSON input gets, as a deserializer
//! adapter: [`StrictDe`] wraps serde_json's deserializer (or a
//! `serde_json::Value`) and passes everything through, at every depth,
//! except two things serde accepts and turnfit's formats do not:
//!
//! - **an array where an object is expected**: a derived struct also
//!   accepts its fields by position (`[5]` for `{"ring_size": 5}`), which
//!   skips the names and the unknown-field check. Refused as
//!   `invalid type: array, expected an object`.
//! - **a key given twice in one object**, in structs (serde's derive says
//!   `duplicate field`, but not for fields it ignores) and in maps (a
//!   `BTreeMap` or `serde_json::Value` keeps the last). Refused as
//!   `duplicate key `k``.
//!
//! Unknown fields stay each type's business (`deny_unknown_fields`);
//! `ffi/tests/options.rs` walks every options schema to check they are
//! refused.
//!
//! The adapter sits between the deserializer and every visitor, so a type
//! cannot opt out by accident: its nested values are read through the
//! adapter too. Types that buffer input through serde's private `Content`
//! (untagged enums, `flatten`) see duplicates refused while buffering, and
//! read arrays from the buffer; turnfit's options types use neither for
//! an object-valued field.

use std::fmt;

use rustc_hash::FxHashSet;

use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor};

/// The message for an array given where an object is expected.
const ARRAY_FOR_OBJECT: &str = "invalid type: array, expected an object (fields are named, not positional)";

/// A deserializer read strictly (see the module documentation).
pub(crate) struct StrictDe<D>(pub(crate) D);

/// A visitor whose nested values are read through [`StrictDe`].
struct Wrap<V>(V);

/// The visitor of a struct or a map: as [`Wrap`], but an array is refused
/// (with one message for both; serde's map visitors already refuse one).
struct Struct<V>(V);

/// Forwards a `deserialize_*` method, wrapping the visitor.
macro_rules! forward {
    ($($name:ident ( $($arg:ident : $ty:ty),* )),* $(,)?) => {
        $(
            fn $name<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
                self.0.$name($($arg,)* Wrap(visitor))
            }
        )*
    };
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for StrictDe<D> {
    type Error = D::Error;

    forward!(
        deserialize_any(),
        deserialize_bool(),
        deserialize_i8(),
        deserialize_i16(),
        deserialize_i32(),
        deserialize_i64(),
        deserialize_i128(),
        deserialize_u8(),
        deserialize_u16(),
        deserialize_u32(),
        deserialize_u64(),
        deserialize_u128(),
        deserialize_f32(),
        deserialize_f64(),
        deserialize_char(),
        deserialize_str(),
        deserialize_string(),
        deserialize_bytes(),
        deserialize_byte_buf(),
        deserialize_option(),
        deserialize_unit(),
        deserialize_unit_struct(name: &'static str),
        deserialize_newtype_struct(name: &'static str),
        deserialize_seq(),
        deserialize_tuple(len: usize),
        deserialize_tuple_struct(name: &'static str, len: usize),
        deserialize_enum(name: &'static str, variants: &'static [&'static str]),
        deserialize_identifier(),
        deserialize_ignored_any(),
    );

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(Struct(visitor))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_struct(name, fields, Struct(visitor))
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

/// Forwards the `visit_*` methods that carry no nested value.
macro_rules! visit_scalars {
    () => {
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<V::Value, E> {
            self.0.visit_bool(v)
        }
        fn visit_i8<E: de::Error>(self, v: i8) -> Result<V::Value, E> {
            self.0.visit_i8(v)
        }
        fn visit_i16<E: de::Error>(self, v: i16) -> Result<V::Value, E> {
            self.0.visit_i16(v)
        }
        fn visit_i32<E: de::Error>(self, v: i32) -> Result<V::Value, E> {
            self.0.visit_i32(v)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<V::Value, E> {
            self.0.visit_i64(v)
        }
        fn visit_i128<E: de::Error>(self, v: i128) -> Result<V::Value, E> {
            self.0.visit_i128(v)
        }
        fn visit_u8<E: de::Error>(self, v: u8) -> Result<V::Value, E> {
            self.0.visit_u8(v)
        }
        fn visit_u16<E: de::Error>(self, v: u16) -> Result<V::Value, E> {
            self.0.visit_u16(v)
        }
        fn visit_u32<E: de::Error>(self, v: u32) -> Result<V::Value, E> {
            self.0.visit_u32(v)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<V::Value, E> {
            self.0.visit_u64(v)
        }
        fn visit_u128<E: de::Error>(self, v: u128) -> Result<V::Value, E> {
            self.0.visit_u128(v)
        }
        fn visit_f32<E: de::Error>(self, v: f32) -> Result<V::Value, E> {
            self.0.visit_f32(v)
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<V::Value, E> {
            self.0.visit_f64(v)
        }
        fn visit_char<E: de::Error>(self, v: char) -> Result<V::Value, E> {
            self.0.visit_char(v)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<V::Value, E> {
            self.0.visit_str(v)
        }
        fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<V::Value, E> {
            self.0.visit_borrowed_str(v)
        }
        fn visit_string<E: de::Error>(self, v: String) -> Result<V::Value, E> {
            self.0.visit_string(v)
        }
        fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<V::Value, E> {
            self.0.visit_bytes(v)
        }
        fn visit_borrowed_bytes<E: de::Error>(self, v: &'de [u8]) -> Result<V::Value, E> {
            self.0.visit_borrowed_bytes(v)
        }
        fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<V::Value, E> {
            self.0.visit_byte_buf(v)
        }
        fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
            self.0.visit_none()
        }
        fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
            self.0.visit_unit()
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
            self.0.visit_some(StrictDe(d))
        }
        fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
            self.0.visit_newtype_struct(StrictDe(d))
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
            self.0.visit_map(Keys::new(map))
        }
        fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
            self.0.visit_enum(Enum(data))
        }
    };
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.0.expecting(f)
    }
    visit_scalars!();
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.0.visit_seq(Seq(seq))
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Struct<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.0.expecting(f)
    }
    visit_scalars!();
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<V::Value, A::Error> {
        Err(de::Error::custom(ARRAY_FOR_OBJECT))
    }
}

/// A seed whose deserializer is read strictly.
struct Seed<S>(S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Seed<S> {
    type Value = S::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(StrictDe(d))
    }
}

struct Seq<A>(A);

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Seq<A> {
    type Error = A::Error;
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, A::Error> {
        self.0.next_element_seed(Seed(seed))
    }
    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

/// A map or object whose keys are checked for repeats. Keys are recorded
/// as the key deserializer hands them to its visitor (strings, or the
/// numbers serde_json parses out of a key for an integer-keyed map).
struct Keys<A> {
    map: A,
    seen: FxHashSet<String>,
}

impl<A> Keys<A> {
    fn new(map: A) -> Self {
        Keys { map, seen: FxHashSet::default() }
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Keys<A> {
    type Error = A::Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        let mut key = None;
        let out = self.map.next_key_seed(KeySeed { seed, key: &mut key })?;
        if let Some(k) = key {
            // serde_json hands a number kept as text (arbitrary_precision)
            // over as a one-entry map with this key: nothing to track.
            if k == super::NUMBER_TOKEN && self.seen.is_empty() {
                return Ok(out);
            }
            if self.seen.contains(&k) {
                return Err(de::Error::custom(format!("duplicate key `{}`", crate::text::clip(&k))));
            }
            self.seen.insert(k);
        }
        Ok(out)
    }
    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.map.next_value_seed(Seed(seed))
    }
    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

/// Reads a key, noting its text in `key`.
struct KeySeed<'k, S> {
    seed: S,
    key: &'k mut Option<String>,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for KeySeed<'_, S> {
    type Value = S::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.seed.deserialize(KeyDe { de: d, key: self.key })
    }
}

/// A key's deserializer: forwards everything, noting the key's text.
struct KeyDe<'k, D> {
    de: D,
    key: &'k mut Option<String>,
}

/// The visitor of a key: forwards everything, noting the key's text.
struct KeyVisitor<'k, V> {
    inner: V,
    key: &'k mut Option<String>,
}

macro_rules! forward_key {
    ($($name:ident ( $($arg:ident : $ty:ty),* )),* $(,)?) => {
        $(
            fn $name<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
                self.de.$name($($arg,)* KeyVisitor { inner: visitor, key: self.key })
            }
        )*
    };
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for KeyDe<'_, D> {
    type Error = D::Error;

    forward_key!(
        deserialize_any(),
        deserialize_bool(),
        deserialize_i8(),
        deserialize_i16(),
        deserialize_i32(),
        deserialize_i64(),
        deserialize_i128(),
        deserialize_u8(),
        deserialize_u16(),
        deserialize_u32(),
        deserialize_u64(),
        deserialize_u128(),
        deserialize_f32(),
        deserialize_f64(),
        deserialize_char(),
        deserialize_str(),
        deserialize_string(),
        deserialize_bytes(),
        deserialize_byte_buf(),
        deserialize_option(),
        deserialize_unit(),
        deserialize_unit_struct(name: &'static str),
        deserialize_newtype_struct(name: &'static str),
        deserialize_seq(),
        deserialize_tuple(len: usize),
        deserialize_tuple_struct(name: &'static str, len: usize),
        deserialize_map(),
        deserialize_struct(name: &'static str, fields: &'static [&'static str]),
        deserialize_enum(name: &'static str, variants: &'static [&'static str]),
        deserialize_identifier(),
        deserialize_ignored_any(),
    );

    fn is_human_readable(&self) -> bool {
        self.de.is_human_readable()
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for KeyVisitor<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.inner.expecting(f)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<V::Value, E> {
        *self.key = Some(v.to_owned());
        self.inner.visit_str(v)
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<V::Value, E> {
        *self.key = Some(v.to_owned());
        self.inner.visit_borrowed_str(v)
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<V::Value, E> {
        *self.key = Some(v.clone());
        self.inner.visit_string(v)
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<V::Value, E> {
        *self.key = Some(String::from_utf8_lossy(v).into_owned());
        self.inner.visit_bytes(v)
    }
    fn visit_borrowed_bytes<E: de::Error>(self, v: &'de [u8]) -> Result<V::Value, E> {
        *self.key = Some(String::from_utf8_lossy(v).into_owned());
        self.inner.visit_borrowed_bytes(v)
    }
    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<V::Value, E> {
        *self.key = Some(String::from_utf8_lossy(&v).into_owned());
        self.inner.visit_byte_buf(v)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<V::Value, E> {
        *self.key = Some(v.to_string());
        self.inner.visit_i64(v)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<V::Value, E> {
        *self.key = Some(v.to_string());
        self.inner.visit_u64(v)
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<V::Value, E> {
        *self.key = Some(v.to_string());
        self.inner.visit_i128(v)
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<V::Value, E> {
        *self.key = Some(v.to_string());
        self.inner.visit_u128(v)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<V::Value, E> {
        *self.key = Some(v.to_string());
        self.inner.visit_bool(v)
    }
    fn visit_i8<E: de::Error>(self, v: i8) -> Result<V::Value, E> {
        self.visit_i64(v.into())
    }
    fn visit_i16<E: de::Error>(self, v: i16) -> Result<V::Value, E> {
        self.visit_i64(v.into())
    }
    fn visit_i32<E: de::Error>(self, v: i32) -> Result<V::Value, E> {
        self.visit_i64(v.into())
    }
    fn visit_u8<E: de::Error>(self, v: u8) -> Result<V::Value, E> {
        self.visit_u64(v.into())
    }
    fn visit_u16<E: de::Error>(self, v: u16) -> Result<V::Value, E> {
        self.visit_u64(v.into())
    }
    fn visit_u32<E: de::Error>(self, v: u32) -> Result<V::Value, E> {
        self.visit_u64(v.into())
    }
    fn visit_f32<E: de::Error>(self, v: f32) -> Result<V::Value, E> {
        self.inner.visit_f32(v)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<V::Value, E> {
        self.inner.visit_f64(v)
    }
    fn visit_char<E: de::Error>(self, v: char) -> Result<V::Value, E> {
        *self.key = Some(v.to_string());
        self.inner.visit_char(v)
    }
    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_none()
    }
    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_unit()
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.inner.visit_some(KeyDe { de: d, key: self.key })
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.inner.visit_newtype_struct(KeyDe { de: d, key: self.key })
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.inner.visit_seq(Seq(seq))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.inner.visit_map(Keys::new(map))
    }
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.inner.visit_enum(Enum(data))
    }
}

struct Enum<A>(A);

impl<'de, A: EnumAccess<'de>> EnumAccess<'de> for Enum<A> {
    type Error = A::Error;
    type Variant = Variant<A::Variant>;
    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Self::Variant), A::Error> {
        self.0.variant_seed(Seed(seed)).map(|(v, rest)| (v, Variant(rest)))
    }
}

struct Variant<A>(A);

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Variant<A> {
    type Error = A::Error;
    fn unit_variant(self) -> Result<(), A::Error> {
        self.0.unit_variant()
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.0.newtype_variant_seed(Seed(seed))
    }
    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        self.0.tuple_variant(len, Wrap(visitor))
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        self.0.struct_variant(fields, Struct(visitor))
    }
}
