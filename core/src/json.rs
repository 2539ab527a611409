//! JSON parsing with turnfit's limits and error messages, shared by every JSON
//! entry point so they all reject oversized or malformed input the same way.

use serde::de::DeserializeOwned;

use crate::limits::{self, MAX_JSON_BYTES};
use crate::{Error, ErrorKind, Result};

mod strict;

/// Marks a deserializer's custom error as a limit (see [`limit_error`]).
pub(crate) const LIMIT_MARK: &str = "\u{0}turnfit-limit\u{0}";

/// A custom serde error that [`parse`] reports as `LimitExceeded` (with
/// `msg` as the message), for deserializers that enforce a limit while
/// reading, such as the conversation reader's message count. The mark
/// contains NUL, which no serde_json message built from input can start
/// with.
pub(crate) fn limit_error<E: serde::de::Error>(msg: impl std::fmt::Display) -> E {
    E::custom(format!("{LIMIT_MARK}{msg}"))
}

/// Parses `text` as `T`: turnfit's one JSON reader, which every JSON
/// input of every front end goes through. Size is checked first; nesting
/// deeper than [`crate::limits::MAX_JSON_DEPTH`] is rejected by
/// serde_json's recursion guard and reported as `LimitExceeded`, as is a
/// limit a deserializer enforces through [`limit_error`]; everything else
/// malformed is `InvalidJson` with the line and column, including what
/// serde accepts and turnfit does not (see [`strict`]): an array in place
/// of an object, and a key given twice in one object, at any depth.
pub fn parse<T: DeserializeOwned>(what: &str, text: &str) -> Result<T> {
    limits::check(what, text.len(), MAX_JSON_BYTES)?;
    let mut de = serde_json::Deserializer::from_str(text);
    T::deserialize(strict::StrictDe(&mut de)).and_then(|v| de.end().map(|()| v)).map_err(|e| json_error(what, e))
}

/// Reads `T` from an already parsed value with [`parse`]'s rules (an
/// array is not an object), for documents read in two steps; errors are
/// `InvalidJson` naming `what`.
pub(crate) fn from_value<T: DeserializeOwned>(what: &str, value: serde_json::Value) -> Result<T> {
    T::deserialize(strict::StrictDe(value)).map_err(|e| json_error(what, e))
}

/// A serde_json error as turnfit's: a marked limit or the recursion guard
/// is `LimitExceeded`, anything else `InvalidJson`.
fn json_error(what: &str, e: serde_json::Error) -> Error {
    {
        let msg = e.to_string();
        if let Some(rest) = msg.strip_prefix(LIMIT_MARK) {
            return Error::new(ErrorKind::LimitExceeded, format!("{what}: {rest}"));
        }
        let kind =
            if msg.starts_with("recursion limit exceeded") { ErrorKind::LimitExceeded } else { ErrorKind::InvalidJson };
        Error::new(kind, format!("{what}: {msg}"))
    }
}

/// Parses `text` as a JSON value under the same limits as [`parse`], with
/// the one rule every turnfit JSON object follows: a key given twice in one
/// object is `InvalidJson` (serde's derived structs already refuse repeated
/// fields; free-form objects such as model profiles, handoffs and messages
/// now refuse them too, instead of keeping the last). Numbers are kept as
/// written (`arbitrary_precision`), so an untouched value round-trips.
pub fn parse_value(what: &str, text: &str) -> Result<serde_json::Value> {
    parse::<Strict>(what, text).map(|s| s.0)
}

/// A JSON value whose objects may not repeat a key (see [`parse_value`]).
/// Use it as a field or element type to apply the rule inside a larger
/// document.
#[derive(Debug, Clone, PartialEq)]
pub struct Strict(pub serde_json::Value);

/// serde_json's private key for a number kept as text (arbitrary_precision):
/// a number reaches a `deserialize_any` visitor as a one-entry map with it.
pub(crate) const NUMBER_TOKEN: &str = "$serde_json::private::Number";

impl<'de> serde::Deserialize<'de> for Strict {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

/// Builds a `serde_json::Value`, refusing repeated keys.
pub(crate) struct StrictVisitor;

impl<'de> serde::de::Visitor<'de> for StrictVisitor {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(serde_json::Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> std::result::Result<Self::Value, A::Error> {
        visit_strict_map(map, |_, map| map.next_value::<Strict>().map(|s| s.0))
    }
    fn visit_bool<E>(self, v: bool) -> std::result::Result<Self::Value, E> {
        Ok(serde_json::Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> std::result::Result<Self::Value, E> {
        Ok(serde_json::Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> std::result::Result<Self::Value, E> {
        Ok(serde_json::Value::Number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> std::result::Result<Self::Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, serde_json::Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> std::result::Result<Self::Value, E> {
        Ok(serde_json::Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> std::result::Result<Self::Value, E> {
        Ok(serde_json::Value::String(v))
    }
    fn visit_unit<E>(self) -> std::result::Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }
    fn visit_none<E>(self) -> std::result::Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }
}

/// Reads an object (or a number serde_json hands over as a map, see
/// [`NUMBER_TOKEN`]) refusing repeated keys; `value` reads each member's
/// value given its key, so a caller can read some members differently.
pub(crate) fn visit_strict_map<'de, A: serde::de::MapAccess<'de>>(
    mut map: A,
    mut value: impl FnMut(&str, &mut A) -> std::result::Result<serde_json::Value, A::Error>,
) -> std::result::Result<serde_json::Value, A::Error> {
    use serde::de::Error as _;
    let mut out = serde_json::Map::new();
    while let Some(key) = map.next_key::<String>()? {
        if key == NUMBER_TOKEN && out.is_empty() {
            let text: String = map.next_value()?;
            let n: serde_json::Number = text.parse().map_err(A::Error::custom)?;
            return Ok(serde_json::Value::Number(n));
        }
        let v = value(&key, &mut map)?;
        // One lookup (SipHash, serde_json's map) per key, not two.
        match out.entry(key) {
            serde_json::map::Entry::Occupied(e) => {
                return Err(A::Error::custom(format!("duplicate key `{}`", crate::text::clip(e.key()))));
            }
            serde_json::map::Entry::Vacant(e) => {
                e.insert(v);
            }
        }
    }
    Ok(serde_json::Value::Object(out))
}

/// Serializes `value` to compact JSON.
pub fn to_string<T: serde::Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(|e| Error::internal(format!("serializing JSON: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::MAX_JSON_DEPTH;

    #[test]
    fn deep_nesting_is_a_limit_not_a_stack_overflow() {
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        let err = parse::<serde_json::Value>("doc", &deep).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::LimitExceeded, "{err}");
    }

    /// `[[...]]` nested `depth` levels deep.
    fn nested(depth: usize) -> String {
        "[".repeat(depth) + &"]".repeat(depth)
    }

    #[test]
    fn depth_limit_at_and_one_past() {
        parse::<serde_json::Value>("doc", &nested(MAX_JSON_DEPTH)).unwrap();
        let err = parse::<serde_json::Value>("doc", &nested(MAX_JSON_DEPTH + 1)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::LimitExceeded, "{err}");
        assert!(err.message().starts_with("doc: recursion limit exceeded"), "{err}");
    }

    #[test]
    fn size_limit_at_and_one_past() {
        // Whitespace around an empty array: valid JSON of any length.
        let mut text = " ".repeat(MAX_JSON_BYTES - 2);
        text.push_str("[]");
        assert_eq!(text.len(), MAX_JSON_BYTES);
        parse::<serde_json::Value>("doc", &text).unwrap();
        text.push(' ');
        let err = parse::<serde_json::Value>("doc", &text).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::LimitExceeded, "{err}");
        assert_eq!(err.message(), format!("doc is {} bytes; the limit is {MAX_JSON_BYTES}", MAX_JSON_BYTES + 1));
    }

    #[test]
    fn a_marked_custom_error_is_a_limit_and_loses_the_mark() {
        #[derive(Debug)]
        struct Refuse;
        impl<'de> serde::Deserialize<'de> for Refuse {
            fn deserialize<D: serde::Deserializer<'de>>(_: D) -> std::result::Result<Self, D::Error> {
                Err(limit_error("too many things; the limit is 3"))
            }
        }
        let err = parse::<Refuse>("doc", "[]").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::LimitExceeded, "{err}");
        assert!(err.message().starts_with("doc: too many things; the limit is 3"), "{err}");
        assert!(!err.message().contains('\u{0}'), "{err}");
        // An unmarked custom error stays a JSON error.
        let err = parse::<Vec<u8>>("doc", "[300]").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidJson, "{err}");
    }

    /// docs/formats.md, "Numbers keep their digits": digits as read, the
    /// exponent spelled `e` with its sign.
    #[test]
    fn numbers_keep_their_digits_and_normalize_the_exponent() {
        for (input, output) in [
            ("-0", "-0"),
            ("0.10", "0.10"),
            ("123456789012345678901234567890", "123456789012345678901234567890"),
            ("1e-400", "1e-400"),
            ("1E5", "1e+5"),
            ("1e5", "1e+5"),
            ("1E+5", "1e+5"),
            ("2.5E-3", "2.5e-3"),
        ] {
            let v = parse_value("doc", &format!("[{input}]")).unwrap();
            assert_eq!(to_string(&v).unwrap(), format!("[{output}]"), "{input}");
        }
    }

    #[test]
    fn arrays_for_objects_and_repeated_keys_are_refused_at_any_depth() {
        #[derive(Debug, Default, serde::Deserialize)]
        #[serde(default, deny_unknown_fields)]
        struct Inner {
            n: u32,
            map: std::collections::BTreeMap<String, serde_json::Value>,
        }
        #[derive(Debug, Default, serde::Deserialize)]
        #[serde(default, deny_unknown_fields)]
        struct Outer {
            inner: Inner,
            list: Vec<Inner>,
            free: serde_json::Value,
        }
        let ok: Outer = parse("o", r#"{"inner":{"n":1,"map":{"a":[1,{"b":2}]}},"list":[{"n":2}],"free":[1]}"#).unwrap();
        assert_eq!((ok.inner.n, ok.list[0].n), (1, 2));
        for (text, want) in [
            ("[]", "invalid type: array, expected an object"),
            (r#"{"inner":[5]}"#, "invalid type: array, expected an object"),
            (r#"{"list":[[5]]}"#, "invalid type: array, expected an object"),
            (r#"{"inner":{"map":[1]}}"#, "expected a map"),
            (r#"{"inner":{"n":1,"n":1}}"#, "duplicate key `n`"),
            (r#"{"inner":{"map":{"k":1,"k":2}}}"#, "duplicate key `k`"),
            (r#"{"free":{"x":{"k":1,"k":2}}}"#, "duplicate key `k`"),
            (r#"{"inner":{},"inner":{}}"#, "duplicate key `inner`"),
            (r#"{"inner":{"zz":1}}"#, "unknown field `zz`"),
        ] {
            let err = parse::<Outer>("o", text).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidJson, "{text}: {err}");
            assert!(err.message().starts_with("o: ") && err.message().contains(want), "{text}: {err}");
            assert!(err.message().contains("line 1 column"), "{text}: {err}");
        }
        // Two-step reads follow the same rules.
        let err = from_value::<Inner>("v", serde_json::json!([1])).unwrap_err();
        assert!(err.message().contains("expected an object"), "{err}");
    }

    #[test]
    fn malformed_json_names_line_and_column() {
        let err = parse::<serde_json::Value>("doc", "{\n  \"a\": ,\n}").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidJson);
        assert!(err.message().contains("line 2"), "{err}");
    }
}
