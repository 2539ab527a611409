//! Tokenizer handles: exact token counting, encoding, decoding and truncation.
//!
//! Every `turnfit_tokenizer` is immutable after creation and may be used from
//! any number of threads at once without locking.

use std::ffi::c_char;

use turnfit_core::limits::{MAX_JSON_BYTES, MAX_TEXT_BYTES};
use turnfit_core::{DecodeMode, Encoding, SpecialTokens, Tokenizer, TruncateSide};

use crate::args::{self, out};
use crate::boundary::guard;
use crate::error::{turnfit_error, FfiError};
use crate::registry::{registry_or_builtin, turnfit_registry};
use crate::status::turnfit_status;
use crate::strings::{json_string, turnfit_string, turnfit_tokens};

/// Flag for `turnfit_tokenizer_new*`: recognize special tokens such as
/// `<|endoftext|>` in input text as their single ids. Without it (the
/// default, and the safe choice for untrusted text) they count as ordinary text.
pub const TURNFIT_TOKENIZER_RECOGNIZE_SPECIAL: u32 = 1;

/// Flag OR'ed into the `side` of `turnfit_tokenizer_truncate`: use no marker
/// at all for `TURNFIT_TRUNCATE_SIDE_BOTH` (the `marker` argument must then
/// be empty). Without it an empty marker selects the default marker, as
/// before; this is the one way to ask for none. New in ABI 2.
pub const TURNFIT_TRUNCATE_NO_MARKER: u32 = 0x100;

/// How `turnfit_tokenizer_decode` treats bytes that are not valid UTF-8.
#[repr(u32)]
pub enum turnfit_decode_mode {
    /// Replace invalid sequences with U+FFFD (what tiktoken's `decode` does).
    Replace = 0,
    /// Fail with `TURNFIT_STATUS_INVALID_UTF8`, naming the offset and token index.
    Strict = 1,
    /// Drop the bytes that are not part of a valid character (Python's
    /// `errors="ignore"`). Refused with `INVALID_ARGUMENT` before this release.
    Ignore = 2,
}

/// Which part of the text `turnfit_tokenizer_truncate` keeps.
#[repr(u32)]
pub enum turnfit_truncate_side {
    /// Keep the beginning.
    Head = 0,
    /// Keep the end.
    Tail = 1,
    /// Keep both ends, joined by a marker that says how many tokens were removed.
    Both = 2,
}

/// An exact tokenizer for one encoding. Immutable; safe to share across threads.
pub struct turnfit_tokenizer {
    inner: Tokenizer,
    model: Option<turnfit_core::ModelInfo>,
}

impl turnfit_tokenizer {
    /// The core tokenizer (for the functions in `token_bytes.rs`).
    pub(crate) fn inner(&self) -> &Tokenizer {
        &self.inner
    }
}

pub(crate) fn special_from_flags(flags: u32) -> Result<SpecialTokens, FfiError> {
    if flags & !TURNFIT_TOKENIZER_RECOGNIZE_SPECIAL != 0 {
        return Err(FfiError::invalid(format!(
            "unknown flag bits {:#x}",
            flags & !TURNFIT_TOKENIZER_RECOGNIZE_SPECIAL
        )));
    }
    Ok(if flags & TURNFIT_TOKENIZER_RECOGNIZE_SPECIAL != 0 {
        SpecialTokens::Recognize
    } else {
        SpecialTokens::Ordinary
    })
}

fn boxed(t: turnfit_tokenizer) -> *mut turnfit_tokenizer {
    Box::into_raw(Box::new(t))
}

/// Creates a tokenizer for an encoding by name, as tiktoken names them:
/// `cl100k_base`, `o200k_base`, `p50k_base`, `r50k_base`, `o200k_harmony`,
/// `p50k_edit`, `gpt2`; surrounding spaces and case are ignored. `flags` is 0 or
/// `TURNFIT_TOKENIZER_RECOGNIZE_SPECIAL`. The first tokenizer of an encoding in
/// a process parses its embedded vocabulary; later ones share it.
///
/// Errors: `UNKNOWN_ENCODING` (the message names close matches),
/// `INVALID_ARGUMENT` for unknown flag bits or a name over 256 bytes (refused
/// from its length, before it is read), `NULL_ARGUMENT`, `INVALID_UTF8`.
/// On success `*out_tokenizer` owns a handle to release with
/// `turnfit_tokenizer_free`.
/// Thread-safe.
///
/// # Safety
/// `encoding` is valid for `encoding_len` bytes (or NULL with length 0);
/// `out` is valid for a write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_tokenizer_new(
    encoding: *const c_char,
    encoding_len: usize,
    flags: u32,
    out_tokenizer: *mut *mut turnfit_tokenizer,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_tokenizer_new", err, || {
        let dst = out(out_tokenizer, "out_tokenizer")?;
        // SAFETY: per the contract above.
        let name = unsafe { args::name(encoding, encoding_len, "encoding", "encoding name") }?;
        let special = special_from_flags(flags)?;
        let inner = Tokenizer::from_name(name)?.with_special_tokens(special);
        dst.write(boxed(turnfit_tokenizer { inner, model: None }));
        Ok(())
    })
}

/// Creates a tokenizer for a model name (matched case-insensitively; see
/// `turnfit_registry_lookup`), using the encoding the registry gives for it.
/// `registry` may be NULL for the built-in table. On success
/// `*out_tokenizer` owns a handle to release with `turnfit_tokenizer_free`. When the
/// model is unknown and `fallback_encoding` is not empty, that encoding is
/// used (and `turnfit_tokenizer_info` reports `"exact": false`); otherwise
/// the call fails with `UNKNOWN_MODEL`, naming close matches.
///
/// A fallback that names no encoding is an error even when the model is
/// known, so a typo cannot hide until the day a model goes missing.
///
/// Errors: `UNKNOWN_MODEL`, `UNKNOWN_ENCODING` (bad fallback),
/// `INVALID_ARGUMENT` (flags, a name over 256 bytes, refused from its
/// length), `NULL_ARGUMENT`, `INVALID_UTF8`. Thread-safe.
///
/// # Safety
/// Text arguments are valid for their lengths (or NULL with length 0);
/// `registry` is NULL or a live registry; `out_tokenizer` is valid for a
/// write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_tokenizer_new_for_model(
    registry: *const turnfit_registry,
    model: *const c_char,
    model_len: usize,
    fallback_encoding: *const c_char,
    fallback_encoding_len: usize,
    flags: u32,
    out_tokenizer: *mut *mut turnfit_tokenizer,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_tokenizer_new_for_model", err, || {
        let dst = out(out_tokenizer, "out_tokenizer")?;
        // SAFETY: per the contract above.
        let (model, fallback) = unsafe {
            (
                args::name(model, model_len, "model", "model name")?,
                args::opt_name(fallback_encoding, fallback_encoding_len, "fallback_encoding", "encoding name")?,
            )
        };
        let special = special_from_flags(flags)?;
        let fallback = fallback.map(Encoding::from_name).transpose()?;
        // SAFETY: NULL or a live registry.
        let registry = unsafe { registry_or_builtin(registry) };
        let (inner, info) = registry.tokenizer(model, fallback)?;
        dst.write(boxed(turnfit_tokenizer { inner: inner.with_special_tokens(special), model: Some(info) }));
        Ok(())
    })
}

/// Releases a tokenizer. `turnfit_tokenizer_free(NULL)` does nothing. The
/// caller must ensure no other thread is still using the handle.
///
/// # Safety
/// `tokenizer` is NULL or a live handle from `turnfit_tokenizer_new*`.
#[no_mangle]
pub unsafe extern "C" fn turnfit_tokenizer_free(tokenizer: *mut turnfit_tokenizer) {
    crate::boundary::guard_void("turnfit_tokenizer_free", || {
        if !tokenizer.is_null() {
            // SAFETY: created by `boxed`.
            drop(unsafe { Box::from_raw(tokenizer) });
        }
    })
}

/// Describes the tokenizer as JSON: `{"encoding", "special_tokens":
/// "ordinary"|"recognize", "vocab_size", "memory_bytes", "model"}` where
/// `model` is the registry lookup (see `turnfit_registry_lookup`) for
/// tokenizers made from a model name, else null. Thread-safe.
///
/// Errors: `NULL_ARGUMENT`.
///
/// JSON: result `schemas/tokenizer-info.json`.
///
/// # Safety
/// `tokenizer` is a live handle; `out_json` is valid for a write; `err` is
/// NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_tokenizer_info(
    tokenizer: *const turnfit_tokenizer,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_tokenizer_info", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let t = unsafe { args::handle(tokenizer, "tokenizer") }?;
        let info = t.inner.info(t.model.as_ref());
        dst.write(json_string(&info)?);
        Ok(())
    })
}

/// Counts the tokens of `text`. Exact: equal to the length of OpenAI
/// tiktoken's encoding of the same text. Thread-safe.
///
/// Errors: `NULL_ARGUMENT`, `INVALID_UTF8` (with the byte offset),
/// `LIMIT_EXCEEDED` (text over 64 MiB).
///
/// # Safety
/// `tokenizer` is a live handle; `text` is valid for `text_len` bytes (or
/// NULL with length 0); `out_count` is valid for a write; `err` is NULL or
/// valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_tokenizer_count(
    tokenizer: *const turnfit_tokenizer,
    text: *const c_char,
    text_len: usize,
    out_count: *mut usize,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_tokenizer_count", err, || {
        let dst = out(out_count, "out_count")?;
        // SAFETY: per the contract above.
        let (t, text) =
            unsafe { (args::handle(tokenizer, "tokenizer")?, args::text(text, text_len, "text", MAX_TEXT_BYTES)?) };
        dst.write(t.inner.count(text)?);
        Ok(())
    })
}

/// Counts tokens but stops once the count passes `limit`, so the work is
/// proportional to the limit. `*out_exceeded` says whether the text has more
/// than `limit` tokens; `*out_count` is then the count where counting stopped
/// (greater than `limit`, at most the true count), else the exact count.
/// Thread-safe.
///
/// Errors: `INVALID_UTF8`, `LIMIT_EXCEEDED` (text over 64 MiB), `NULL_ARGUMENT`.
///
/// # Safety
/// As for `turnfit_tokenizer_count`; `out_exceeded` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_tokenizer_count_until_limit(
    tokenizer: *const turnfit_tokenizer,
    text: *const c_char,
    text_len: usize,
    limit: usize,
    out_count: *mut usize,
    out_exceeded: *mut bool,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_tokenizer_count_until_limit", err, || {
        let dst_count = out(out_count, "out_count")?;
        let dst_exceeded = out(out_exceeded, "out_exceeded")?;
        // SAFETY: per the contract above.
        let (t, text) =
            unsafe { (args::handle(tokenizer, "tokenizer")?, args::text(text, text_len, "text", MAX_TEXT_BYTES)?) };
        let r = t.inner.count_until_limit(text, limit)?;
        dst_count.write(r.tokens);
        dst_exceeded.write(r.exceeded);
        Ok(())
    })
}

/// Encodes `text` into token ids (tiktoken-identical). On success `*out_tokens`
/// owns an array to release with `turnfit_tokens_free`. Thread-safe.
///
/// Errors: `INVALID_UTF8`, `LIMIT_EXCEEDED` (text over 64 MiB), `NULL_ARGUMENT`.
///
/// # Safety
/// As for `turnfit_tokenizer_count`; `out_tokens` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_tokenizer_encode(
    tokenizer: *const turnfit_tokenizer,
    text: *const c_char,
    text_len: usize,
    out_tokens: *mut turnfit_tokens,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_tokenizer_encode", err, || {
        let dst = out(out_tokens, "out_tokens")?;
        // SAFETY: per the contract above.
        let (t, text) =
            unsafe { (args::handle(tokenizer, "tokenizer")?, args::text(text, text_len, "text", MAX_TEXT_BYTES)?) };
        dst.write(turnfit_tokens::from_vec(t.inner.encode(text)?));
        Ok(())
    })
}

/// Decodes token ids to text. A token can hold part of a multi-byte
/// character, so an arbitrary slice of ids may not be valid UTF-8: `mode`
/// (a `turnfit_decode_mode`) chooses U+FFFD replacement, dropping the
/// invalid bytes, or an `INVALID_UTF8` error. An id outside the vocabulary is `UNKNOWN_TOKEN`.
/// `(NULL, 0)` decodes to the empty string. Thread-safe.
///
/// Errors: `UNKNOWN_TOKEN`, `INVALID_UTF8` (strict mode), `INVALID_ARGUMENT` (unknown mode), `LIMIT_EXCEEDED` (more ids than the limit, or decoded text over 64 MiB), `NULL_ARGUMENT`.
///
/// # Safety
/// `tokenizer` is a live handle; `ids` is valid for `ids_len` aligned
/// `uint32_t` reads (or NULL with length 0); `out_text` is valid for a write;
/// `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_tokenizer_decode(
    tokenizer: *const turnfit_tokenizer,
    ids: *const u32,
    ids_len: usize,
    mode: u32,
    out_text: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_tokenizer_decode", err, || {
        let dst = out(out_text, "out_text")?;
        // SAFETY: per the contract above.
        let (t, ids) = unsafe { (args::handle(tokenizer, "tokenizer")?, args::slice(ids, ids_len, "ids")?) };
        let mode = match mode {
            0 => DecodeMode::Replace,
            1 => DecodeMode::Strict,
            2 => DecodeMode::Ignore,
            m => return Err(FfiError::invalid(format!("mode {m} is not a turnfit_decode_mode"))),
        };
        dst.write(turnfit_string::from_string(t.inner.decode(ids, mode)?));
        Ok(())
    })
}

/// Truncates `text` to at most `max_tokens` tokens, cutting only on token
/// and UTF-8 boundaries; the result, counted again, is within the budget.
/// `side` is a `turnfit_truncate_side`. For `TURNFIT_TRUNCATE_SIDE_BOTH`,
/// `marker` is a template in which `{removed}` becomes the number of removed
/// tokens; an empty marker selects the default
/// `"\n[... {removed} tokens truncated ...]\n"`, and the marker's own tokens
/// count against the budget (a budget too small for it is
/// `INVALID_ARGUMENT`). `side | TURNFIT_TRUNCATE_NO_MARKER` asks for no
/// marker. Text that already fits is returned unchanged. `*out_tokens`
/// receives the result's token count and `*out_removed` the number of input
/// tokens that are not in the result; either may be NULL when not wanted.
/// Errors: `NULL_ARGUMENT` (tokenizer, text with a length, out_text),
/// `INVALID_UTF8`, `INVALID_ARGUMENT` (unknown side or flag, a marker with
/// `TURNFIT_TRUNCATE_NO_MARKER`, a budget too small for the marker),
/// `LIMIT_EXCEEDED` (text over 64 MiB). Thread-safe.
///
/// # Safety
/// As for `turnfit_tokenizer_count`; `marker` is valid for `marker_len` bytes
/// (or NULL with length 0); `out_text` is valid for a write, and
/// `out_tokens` / `out_removed` are NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_tokenizer_truncate(
    tokenizer: *const turnfit_tokenizer,
    text: *const c_char,
    text_len: usize,
    max_tokens: usize,
    side: u32,
    marker: *const c_char,
    marker_len: usize,
    out_text: *mut turnfit_string,
    out_tokens: *mut usize,
    out_removed: *mut usize,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_tokenizer_truncate", err, || {
        let dst_text = out(out_text, "out_text")?;
        let dst_tokens = args::opt_out(out_tokens);
        let dst_removed = args::opt_out(out_removed);
        // SAFETY: per the contract above.
        let (t, text, marker) = unsafe {
            (
                args::handle(tokenizer, "tokenizer")?,
                args::text(text, text_len, "text", MAX_TEXT_BYTES)?,
                args::opt_text(marker, marker_len, "marker", MAX_TEXT_BYTES)?,
            )
        };
        let no_marker = side & TURNFIT_TRUNCATE_NO_MARKER != 0;
        let side = match side & !TURNFIT_TRUNCATE_NO_MARKER {
            0 => TruncateSide::Head,
            1 => TruncateSide::Tail,
            2 => TruncateSide::Both,
            s => return Err(FfiError::invalid(format!("side {s} is not a turnfit_truncate_side"))),
        };
        let marker = match (no_marker, marker) {
            (true, Some(_)) => {
                return Err(FfiError::invalid("TURNFIT_TRUNCATE_NO_MARKER was given with a non-empty marker"))
            }
            (true, None) => Some(""),
            (false, m) => m,
        };
        let r = t.inner.truncate(text, max_tokens, side, marker)?;
        if let Some(d) = dst_tokens {
            d.write(r.tokens);
        }
        if let Some(d) = dst_removed {
            d.write(r.removed_tokens);
        }
        dst_text.write(turnfit_string::from_string(r.text));
        Ok(())
    })
}

/// Assembles a prompt from prioritized sections under a token budget,
/// counting with `tokenizer`. `request_json` is `{"preset", "template",
/// "templates", "budget", "depth", "depth_limits", "history_section",
/// "events_section", "sections": [{"name", "text", "priority",
/// "min_tokens", "max_tokens", "required"}], "context", "history",
/// "events"}` (docs/formats.md; `text` and `context` values may be any
/// JSON, `template` may be `auto`); the result is `{"text", "tokens",
/// "budget", "template", "sections": [{"name", "status",
/// "original_tokens", "tokens"}]}`. Errors: `INVALID_ARGUMENT` (unknown
/// template, a missing required section, named; no template fits with
/// `auto`; a section given twice), `DOES_NOT_FIT` (a required section
/// cannot fit), `INVALID_JSON`, `LIMIT_EXCEEDED` (a request over 64 MiB),
/// `NULL_ARGUMENT`, `INVALID_UTF8`. Thread-safe.
///
/// JSON: request `schemas/assemble-request.json`; result `schemas/assemble-result.json`.
///
/// # Safety
/// `tokenizer` is a live handle; `request_json` is valid for its length;
/// `out_json` is valid for a write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_assemble(
    tokenizer: *const turnfit_tokenizer,
    request_json: *const c_char,
    request_json_len: usize,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_assemble", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let (t, text) = unsafe {
            (
                args::handle(tokenizer, "tokenizer")?,
                args::text(request_json, request_json_len, "request_json", MAX_JSON_BYTES)?,
            )
        };
        dst.write(turnfit_string::from_string(turnfit_core::assemble::assemble_json(text, &t.inner)?));
        Ok(())
    })
}
