//! For turnfit's own front ends (the C ABI, the CLI and the language
//! bindings); no semver promise. Hidden from the documentation and free to
//! change in any release, like `serde`'s `__private` module: applications
//! use the typed API, which already applies all of this.
//!
//! Front ends take bytes and JSON text from their callers and must reject
//! them exactly as core does (same `ErrorKind`, same message, same byte
//! offset), so they call these instead of re-implementing the checks. The
//! module only forwards to core's own helpers and nothing in core imports
//! it, so it sits at the top of the module graph.

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::Result;

/// Parses `text` as `T` under turnfit's JSON limits: size first, then
/// nesting (`LimitExceeded`); anything malformed is `InvalidJson` with the
/// line and column, as is an array where an object is expected and a key
/// given twice in one object. `what` names the input in the message.
pub fn parse_json<T: DeserializeOwned>(what: &str, text: &str) -> Result<T> {
    crate::json::parse(what, text)
}

/// An optional JSON options argument (a budget, a policy, a config...):
/// absent is `T::default()`, the core's defaults; given, it is read by
/// [`parse_json`], which refuses an array in place of an object, a key
/// given twice and (for every options type) an unknown field, as
/// `InvalidJson`. Every front end reads options through this.
pub fn parse_options<T: DeserializeOwned + Default>(what: &str, text: Option<&str>) -> Result<T> {
    text.map(|t| parse_json(what, t)).transpose().map(Option::unwrap_or_default)
}

/// Serializes `value` to compact JSON, as every turnfit output is written.
pub fn to_json<T: Serialize>(value: &T) -> Result<String> {
    crate::json::to_string(value)
}

/// Borrows `bytes` as UTF-8 text, or fails with `InvalidUtf8` naming the
/// offset of the first invalid byte.
pub fn utf8<'a>(what: &str, bytes: &'a [u8]) -> Result<&'a str> {
    crate::text::utf8(what, bytes)
}

/// `LimitExceeded` when an input of `len` bytes is over `limit` (one of the
/// constants in [`crate::limits`]), checked before the input is copied.
pub fn check_bytes(what: &str, len: usize, limit: usize) -> Result<()> {
    crate::limits::check(what, len, limit)
}

/// `InvalidArgument` when a name (model, encoding, skill, summary id) of
/// `len` bytes is over [`crate::limits::MAX_NAME_BYTES`], from its length
/// alone: a front end holding a pointer and a length refuses it before a
/// byte is read, and the message quotes none of it.
pub fn check_name_len(what: &str, len: usize) -> Result<()> {
    crate::text::check_name_len(what, len)
}
