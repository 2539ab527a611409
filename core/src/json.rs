//! JSON parsing with ctxkit's limits and error messages, shared by every JSON
//! entry point so they all reject oversized or malformed input the same way.

use serde::de::DeserializeOwned;

use crate::limits::{self, MAX_JSON_BYTES};
use crate::{Error, ErrorKind, Result};

/// Parses `text` as `T`. Size is checked first; nesting deeper than
/// [`crate::limits::MAX_JSON_DEPTH`] is rejected by serde_json's recursion
/// guard and reported as `LimitExceeded`; everything else malformed is
/// `InvalidJson` with the line and column.
pub fn parse<T: DeserializeOwned>(what: &str, text: &str) -> Result<T> {
    limits::check(what, text.len(), MAX_JSON_BYTES)?;
    serde_json::from_str(text).map_err(|e| {
        let msg = e.to_string();
        let kind = if msg.starts_with("recursion limit exceeded") {
            ErrorKind::LimitExceeded
        } else {
            ErrorKind::InvalidJson
        };
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

    #[test]
    fn deep_nesting_is_a_limit_not_a_stack_overflow() {
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        let err = parse::<serde_json::Value>("doc", &deep).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::LimitExceeded, "{err}");
    }

    #[test]
    fn malformed_json_names_line_and_column() {
        let err = parse::<serde_json::Value>("doc", "{\n  \"a\": ,\n}").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidJson);
        assert!(err.message().contains("line 2"), "{err}");
    }
}
