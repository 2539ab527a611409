//! The tokenizer's byte-level and special-token functions, the rest of what
//! tiktoken users reach for: token bytes, single-token lookup, encoding bytes
//! that need not be UTF-8, decoding with character offsets, special tokens
//! allowed and refused by set, and the list of special tokens.
//!
//! Raw bytes out (token bytes) come back in a `turnfit_string`, which is then
//! not necessarily UTF-8 (its length is exact; the trailing NUL is still there).

use std::ffi::c_char;

use turnfit_core::limits::{MAX_JSON_BYTES, MAX_TEXT_BYTES};
use turnfit_core::SpecialPolicy;

use crate::args::{self, out};
use crate::boundary::guard;
use crate::error::turnfit_error;
use crate::status::turnfit_status;
use crate::strings::{turnfit_string, turnfit_tokens};
use crate::tokenizer::turnfit_tokenizer;

/// The bytes of one token, ordinary or special (tiktoken's
/// `decode_single_token_bytes`), in `*out_bytes`: raw bytes, not
/// necessarily UTF-8 (a token can be part of a character). Release with
/// `turnfit_string_free`. Thread-safe.
///
/// Errors: `UNKNOWN_TOKEN` (an id not in the vocabulary, named with the
/// valid range), `NULL_ARGUMENT`.
///
/// # Safety
/// `tokenizer` is a live handle; `out_bytes` is valid for a write; `err` is
/// NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_tokenizer_token_bytes(
    tokenizer: *const turnfit_tokenizer,
    id: u32,
    out_bytes: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_tokenizer_token_bytes", err, || {
        let dst = out(out_bytes, "out_bytes")?;
        // SAFETY: per the contract above.
        let t = unsafe { args::handle(tokenizer, "tokenizer") }?;
        dst.write(turnfit_string::from_bytes(t.inner().token_bytes(id)?.to_vec()));
        Ok(())
    })
}

/// The bytes of `ids` concatenated (tiktoken's `decode_bytes`), raw: no
/// UTF-8 requirement. `(NULL, 0)` gives no bytes. Release with
/// `turnfit_string_free`. Thread-safe.
///
/// Errors: `UNKNOWN_TOKEN` (names the id and its index), `LIMIT_EXCEEDED`
/// (more ids than the limit, or bytes over 64 MiB), `NULL_ARGUMENT`,
/// `INVALID_ARGUMENT` (a misaligned `ids`).
///
/// # Safety
/// `tokenizer` is a live handle; `ids` is valid for `ids_len` aligned
/// `uint32_t` reads (or NULL with length 0); `out_bytes` is valid for a
/// write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_tokenizer_decode_bytes(
    tokenizer: *const turnfit_tokenizer,
    ids: *const u32,
    ids_len: usize,
    out_bytes: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_tokenizer_decode_bytes", err, || {
        let dst = out(out_bytes, "out_bytes")?;
        // SAFETY: per the contract above.
        let (t, ids) = unsafe { (args::handle(tokenizer, "tokenizer")?, args::slice(ids, ids_len, "ids")?) };
        dst.write(turnfit_string::from_bytes(t.inner().decode_bytes(ids)?));
        Ok(())
    })
}

/// The id of the single token whose bytes are exactly `bytes` (any bytes,
/// not checked as UTF-8): an ordinary token, or a special token's text
/// (tiktoken's `encode_single_token`). Thread-safe.
///
/// Errors: `UNKNOWN_TOKEN` (no token has these bytes), `NULL_ARGUMENT`.
///
/// # Safety
/// `tokenizer` is a live handle; `bytes` is valid for `bytes_len` bytes (or
/// NULL with length 0); `out_id` is valid for a write; `err` is NULL or
/// valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_tokenizer_token_id(
    tokenizer: *const turnfit_tokenizer,
    bytes: *const u8,
    bytes_len: usize,
    out_id: *mut u32,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_tokenizer_token_id", err, || {
        let dst = out(out_id, "out_id")?;
        // SAFETY: per the contract above.
        let (t, bytes) = unsafe { (args::handle(tokenizer, "tokenizer")?, args::slice(bytes, bytes_len, "bytes")?) };
        dst.write(t.inner().token_id(bytes)?);
        Ok(())
    })
}

/// Encodes bytes that need not be UTF-8, exactly as tiktoken's
/// `_encode_bytes`: valid UTF-8 is encoded ordinarily; otherwise the valid
/// prefix is, and its last piece plus every byte after it are merged as one
/// piece (docs/tokenizer.md). Special-token text is ordinary text whatever
/// the handle's flags. Decoding the ids gives the bytes back. Release with
/// `turnfit_tokens_free`. Thread-safe.
///
/// Errors: `LIMIT_EXCEEDED` (over 64 MiB), `NULL_ARGUMENT`.
///
/// # Safety
/// `tokenizer` is a live handle; `bytes` is valid for `bytes_len` bytes (or
/// NULL with length 0); `out_tokens` is valid for a write; `err` is NULL or
/// valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_tokenizer_encode_bytes(
    tokenizer: *const turnfit_tokenizer,
    bytes: *const u8,
    bytes_len: usize,
    out_tokens: *mut turnfit_tokens,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_tokenizer_encode_bytes", err, || {
        let dst = out(out_tokens, "out_tokens")?;
        // SAFETY: per the contract above.
        let (t, bytes) = unsafe { (args::handle(tokenizer, "tokenizer")?, args::slice(bytes, bytes_len, "bytes")?) };
        turnfit_core::frontend::check_bytes("bytes", bytes.len(), MAX_TEXT_BYTES)?;
        dst.write(turnfit_tokens::from_vec(t.inner().encode_bytes(bytes)?));
        Ok(())
    })
}

/// Decodes `ids` to text (which must be valid UTF-8) and gives, per token,
/// the offset in characters (Unicode scalar values, not bytes) where it
/// starts, in `*out_offsets` (`uint32_t` values, one per id; release with
/// `turnfit_tokens_free`). A token that starts inside a character gets that
/// character's offset (tiktoken's `decode_with_offsets`). Both outputs are
/// written only on success. Thread-safe.
///
/// Errors: `INVALID_UTF8` (the bytes are not UTF-8: offset and token
/// index), `UNKNOWN_TOKEN`, `LIMIT_EXCEEDED`, `NULL_ARGUMENT`,
/// `INVALID_ARGUMENT` (a misaligned `ids`).
///
/// # Safety
/// As for `turnfit_tokenizer_decode_bytes`; `out_text` and `out_offsets` are
/// valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_tokenizer_decode_with_offsets(
    tokenizer: *const turnfit_tokenizer,
    ids: *const u32,
    ids_len: usize,
    out_text: *mut turnfit_string,
    out_offsets: *mut turnfit_tokens,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_tokenizer_decode_with_offsets", err, || {
        let dst_text = out(out_text, "out_text")?;
        let dst_offsets = out(out_offsets, "out_offsets")?;
        // SAFETY: per the contract above.
        let (t, ids) = unsafe { (args::handle(tokenizer, "tokenizer")?, args::slice(ids, ids_len, "ids")?) };
        let (text, offsets) = t.inner().decode_with_offsets(ids)?;
        // The text is at most 64 MiB, so every offset fits in 32 bits.
        let offsets = offsets.into_iter().map(|o| u32::try_from(o).unwrap_or(u32::MAX)).collect();
        dst_text.write(turnfit_string::from_string(text));
        dst_offsets.write(turnfit_tokens::from_vec(offsets));
        Ok(())
    })
}

/// Encodes `text` with tiktoken's special-token rules, given as JSON
/// `{"allowed_special": "all" | [strings], "disallowed_special": "all" |
/// [strings]}` (a missing field, or an empty `policy_json`, takes tiktoken's
/// default: `[]` and `"all"`). Allowed special tokens become their ids;
/// text matching a disallowed string fails, naming it and its byte offset.
/// The handle's `TURNFIT_TOKENIZER_RECOGNIZE_SPECIAL` flag is not used.
/// Release with `turnfit_tokens_free`. Thread-safe.
///
/// Errors: `INVALID_ARGUMENT` (the text contains a disallowed string),
/// `INVALID_JSON`, `LIMIT_EXCEEDED` (text over 64 MiB, a set over 4096 names
/// or a name over 256 bytes), `INVALID_UTF8`, `NULL_ARGUMENT`.
///
/// JSON: `policy_json` `schemas/special-policy.json`.
///
/// # Safety
/// `tokenizer` is a live handle; `text` and `policy_json` are valid for
/// their lengths (or NULL with length 0); `out_tokens` is valid for a write;
/// `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_tokenizer_encode_special(
    tokenizer: *const turnfit_tokenizer,
    text: *const c_char,
    text_len: usize,
    policy_json: *const c_char,
    policy_json_len: usize,
    out_tokens: *mut turnfit_tokens,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_tokenizer_encode_special", err, || {
        let dst = out(out_tokens, "out_tokens")?;
        // SAFETY: per the contract above.
        let (t, text, policy) = unsafe {
            (
                args::handle(tokenizer, "tokenizer")?,
                args::text(text, text_len, "text", MAX_TEXT_BYTES)?,
                args::opt_text(policy_json, policy_json_len, "policy_json", MAX_JSON_BYTES)?,
            )
        };
        let policy = policy.map(SpecialPolicy::from_json).transpose()?.unwrap_or_default();
        dst.write(turnfit_tokens::from_vec(t.inner().encode_with(text, &policy)?));
        Ok(())
    })
}

/// The encoding's special tokens as a JSON array of `{"token", "id"}`, in
/// the encoding's order (`o200k_harmony` has 1,091; two share id 200018).
/// Release with `turnfit_string_free`. Thread-safe.
///
/// Errors: `NULL_ARGUMENT`.
///
/// JSON: result `schemas/special-tokens.json`.
///
/// # Safety
/// `tokenizer` is a live handle; `out_json` is valid for a write; `err` is
/// NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_tokenizer_special_tokens(
    tokenizer: *const turnfit_tokenizer,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_tokenizer_special_tokens", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let t = unsafe { args::handle(tokenizer, "tokenizer") }?;
        dst.write(turnfit_string::from_string(t.inner().special_tokens_json()?));
        Ok(())
    })
}
