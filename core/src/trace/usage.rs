//! What a host knows when a span ends besides its outcome: token usage (a
//! tool that calls a model), an error category (the classifier's, or the
//! host's own), and a small metadata map. Usage and categories are summed per
//! tool in the metrics; metadata stays on the span's record.
//!
//! Caps, so a tracer's memory stays bounded whatever a host sends: at most
//! [`MAX_METADATA_KEYS`] keys per span, keys 1 to [`MAX_METADATA_KEY_BYTES`]
//! bytes, values JSON scalars (string, number, bool, null) with strings up to
//! [`MAX_METADATA_VALUE_BYTES`] bytes; categories 1 to 64 bytes of
//! `[a-z0-9_]`, at most [`MAX_ERROR_CATEGORIES`] distinct ones per tool.
//! Anything over a cap is refused (`LimitExceeded` / `InvalidArgument`),
//! never cut silently.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::{Error, ErrorKind, Result};

/// Metadata keys per span.
pub const MAX_METADATA_KEYS: usize = 16;
/// Bytes of one metadata key.
pub const MAX_METADATA_KEY_BYTES: usize = 64;
/// Bytes of one string metadata value.
pub const MAX_METADATA_VALUE_BYTES: usize = 256;
/// Distinct error categories counted per tool.
pub const MAX_ERROR_CATEGORIES: usize = 64;

/// The end of a span (JSON: `{"output_bytes", "output", "error",
/// "error_category", "input_tokens", "output_tokens", "metadata"}`, every field
/// optional).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct SpanEnd {
    /// Size of the result, bytes.
    pub output_bytes: u64,
    /// Error text (kept up to 4 KiB).
    pub error: Option<String>,
    /// The tool's result as text (JSON, or what the host has): the record
    /// keeps its first `excerpt_bytes` (the tracer's option) as
    /// `output_excerpt`. Up to 64 MiB accepted.
    pub output: Option<String>,
    /// The error's category, e.g. a classification's (`rate_limited`).
    pub error_category: Option<String>,
    /// Prompt tokens the tool's model call used.
    pub input_tokens: Option<u64>,
    /// Completion tokens the tool's model call used.
    pub output_tokens: Option<u64>,
    /// Small key/value facts about the call (see the module's caps).
    pub metadata: BTreeMap<String, Value>,
}

impl SpanEnd {
    /// Parses a span's end from its JSON (the shape above; unknown fields
    /// are `InvalidJson`) and checks the caps: the one way the C ABI's
    /// callers and the bindings hand one over as text.
    pub fn from_json(text: &str) -> Result<SpanEnd> {
        let end: SpanEnd = crate::json::parse("span end", text)?;
        end.validate()?;
        Ok(end)
    }

    /// Checks the caps.
    pub fn validate(&self) -> Result<()> {
        crate::limits::check(
            "span output",
            self.output.as_ref().map_or(0, String::len),
            crate::limits::MAX_JSON_BYTES,
        )?;
        if let Some(c) = &self.error_category {
            let ok = !c.is_empty()
                && c.len() <= 64
                && c.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
            if !ok {
                return Err(Error::invalid_argument(format!(
                    "error_category '{}' must be 1 to 64 bytes of a-z, 0-9 and _",
                    crate::text::clip(c)
                )));
            }
        }
        crate::limits::check_items("span metadata keys", self.metadata.len(), MAX_METADATA_KEYS)?;
        for (k, v) in &self.metadata {
            if k.is_empty() {
                return Err(Error::invalid_argument("span metadata key is empty"));
            }
            crate::limits::check("span metadata key", k.len(), MAX_METADATA_KEY_BYTES)?;
            match v {
                Value::String(s) => crate::limits::check("span metadata value", s.len(), MAX_METADATA_VALUE_BYTES)?,
                Value::Array(_) | Value::Object(_) => {
                    return Err(Error::new(
                        ErrorKind::InvalidArgument,
                        format!("span metadata '{}' must be a string, number, bool or null", crate::text::clip(k)),
                    ))
                }
                _ => {}
            }
        }
        Ok(())
    }
}
