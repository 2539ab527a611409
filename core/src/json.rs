//! JSON parsing with ctxkit's limits and error messages, shared by every JSON
//! entry point so they all reject oversized or malformed input the same way.

use serde::de::DeserializeOwned;

use crate::limits::{self, MAX_JSON_BYTES};
use crate::{Error, ErrorKind, Result};

/// Marks a deserializer's custom error as a limit (see [`limit_error`]).
const LIMIT_MARK: &str = "\u{0}ctxkit-limit\u{0}";

/// A custom serde error that [`parse`] reports as `LimitExceeded` (with
/// `msg` as the message), for deserializers that enforce a limit while
/// reading, such as the conversation reader's message count. The mark
/// contains NUL, which no serde_json message built from input can start
/// with.
pub(crate) fn limit_error<E: serde::de::Error>(msg: impl std::fmt::Display) -> E {
    E::custom(format!("{LIMIT_MARK}{msg}"))
}

/// Parses `text` as `T`. Size is checked first; nesting deeper than
/// [`crate::limits::MAX_JSON_DEPTH`] is rejected by serde_json's recursion
/// guard and reported as `LimitExceeded`, as is a limit a deserializer
/// enforces through [`limit_error`]; everything else malformed is
/// `InvalidJson` with the line and column.
pub fn parse<T: DeserializeOwned>(what: &str, text: &str) -> Result<T> {
    limits::check(what, text.len(), MAX_JSON_BYTES)?;
    serde_json::from_str(text).map_err(|e| {
        let msg = e.to_string();
        if let Some(rest) = msg.strip_prefix(LIMIT_MARK) {
            return Error::new(ErrorKind::LimitExceeded, format!("{what}: {rest}"));
        }
        let kind =
            if msg.starts_with("recursion limit exceeded") { ErrorKind::LimitExceeded } else { ErrorKind::InvalidJson };
        Error::new(kind, format!("{what}: {msg}"))
    })
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

    #[test]
    fn malformed_json_names_line_and_column() {
        let err = parse::<serde_json::Value>("doc", "{\n  \"a\": ,\n}").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidJson);
        assert!(err.message().contains("line 2"), "{err}");
    }
}
