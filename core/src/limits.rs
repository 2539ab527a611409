//! Documented input limits, checked before any allocation proportional to the
//! input. Exceeding one is [`crate::ErrorKind::LimitExceeded`], never an abort.
//!
//! The numbers are generous for agent workloads (a 64 MiB string is roughly
//! 16 million tokens, over ten times the largest context window shipped in the
//! model registry) while keeping a hostile caller from making ctxkit allocate
//! without bound.

use crate::{Error, ErrorKind, Result};

/// Largest text, in bytes, accepted by tokenizer operations.
pub const MAX_TEXT_BYTES: usize = 64 * 1024 * 1024;

/// Largest JSON document, in bytes, accepted by any JSON entry point.
pub const MAX_JSON_BYTES: usize = 64 * 1024 * 1024;

/// Deepest JSON nesting accepted (serde_json's own recursion guard).
pub const MAX_JSON_DEPTH: usize = 128;

/// Largest number of token ids accepted by decode.
pub const MAX_DECODE_TOKENS: usize = MAX_TEXT_BYTES;

/// Fails with `LimitExceeded` when `len` is over `limit`; `what` names the input.
pub fn check(what: &str, len: usize, limit: usize) -> Result<()> {
    if len > limit {
        return Err(Error::new(
            ErrorKind::LimitExceeded,
            format!("{what} is {len} bytes; the limit is {limit}"),
        ));
    }
    Ok(())
}

/// Like [`check`] for counts of items rather than bytes.
pub fn check_items(what: &str, n: usize, limit: usize) -> Result<()> {
    if n > limit {
        return Err(Error::new(
            ErrorKind::LimitExceeded,
            format!("{what} has {n} items; the limit is {limit}"),
        ));
    }
    Ok(())
}
