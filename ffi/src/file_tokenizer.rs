//! Tokenizers loaded from a model's own file (core `pipeline::FileTokenizer`):
//! an HF `tokenizer.json`, a tiktoken-format file with a split pattern, or a
//! GGUF (metadata only, read by seeking). A handle of its own, beside
//! `turnfit_tokenizer`: the OpenAI encodings are embedded and carry
//! truncation and byte-level extras these files do not all support.
//!
//! Immutable after creation; one handle serves any number of threads.

use std::ffi::c_char;

use turnfit_core::limits::{MAX_TEXT_BYTES, MAX_TOKENIZER_FILE_BYTES};
use turnfit_core::pipeline::{FileTokenizer, LoadOptions};

use crate::args::{self, out};
use crate::boundary::guard;
use crate::error::{turnfit_error, FfiError};
use crate::status::turnfit_status;
use crate::strings::{json_string, turnfit_string, turnfit_tokens};
use crate::tokenizer::special_from_flags;

/// Flag for `turnfit_file_tokenizer_encode`: put the file's special tokens
/// around the ids (its post-processor: Llama 3's `<|begin_of_text|>`,
/// Gemma's `<bos>`), as HF's `add_special_tokens=True`. Without it the ids
/// are the text's alone, which is what counts use.
pub const TURNFIT_FILE_TOKENIZER_ADD_SPECIAL: u32 = 1;

/// The longest path accepted, in bytes (Linux's `PATH_MAX`).
const MAX_PATH_BYTES: usize = 4096;

/// A tokenizer loaded from a model's file. Immutable; safe to share across threads.
pub struct turnfit_file_tokenizer {
    inner: FileTokenizer,
}

fn options(pattern: Option<&str>) -> LoadOptions {
    LoadOptions::with_pattern(pattern.map(str::to_string))
}

fn boxed(inner: FileTokenizer, flags: u32) -> Result<*mut turnfit_file_tokenizer, FfiError> {
    let inner = inner.with_special_tokens(special_from_flags(flags)?);
    Ok(Box::into_raw(Box::new(turnfit_file_tokenizer { inner })))
}

/// Loads a tokenizer from the file at `path` (bytes of a path; on Unix any
/// bytes but NUL, elsewhere UTF-8). `pattern` names the split rules of a
/// tiktoken-format file, which has none: a preset (`llama3`, `qwen2`,
/// `deepseek-v3`, `gpt-4o`, ...; it brings the family's normalization and
/// special tokens) or a regex; `(NULL, 0)` for a file that declares its own
/// (giving one then is `INVALID_ARGUMENT`). `flags` is 0 or
/// `TURNFIT_TOKENIZER_RECOGNIZE_SPECIAL`: without it special-token text in
/// the input counts as ordinary text (safe for untrusted text); with it, as
/// HF `tokenizers` does by default, it becomes the token's id.
///
/// Errors: `IO` (the file cannot be read), `LIMIT_EXCEEDED` (a
/// JSON/tiktoken file over 256 MiB, a path over 4096 bytes; a GGUF may be of
/// any size), `INVALID_JSON` (malformed JSON), `INVALID_ARGUMENT` (not a
/// regular file, another malformed file, declared counts or lengths past
/// the file's end, what turnfit does not implement exactly such as a
/// Unigram model, a pattern that does not compile, unknown flag bits, an
/// empty path or one with a NUL), `INVALID_UTF8` (the pattern; the path
/// off Unix), `NULL_ARGUMENT`; each message names the file. On success
/// `*out_tokenizer` owns a handle to release
/// with `turnfit_file_tokenizer_free`. Thread-safe.
///
/// # Safety
/// `path` and `pattern` are valid for their lengths (or NULL with length
/// 0); `out_tokenizer` is valid for a write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_file_tokenizer_open(
    path: *const c_char,
    path_len: usize,
    pattern: *const c_char,
    pattern_len: usize,
    flags: u32,
    out_tokenizer: *mut *mut turnfit_file_tokenizer,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_file_tokenizer_open", err, || {
        let dst = out(out_tokenizer, "out_tokenizer")?;
        // SAFETY: per the contract above.
        let (path, pattern) = unsafe {
            (
                args::bytes(path.cast(), path_len, "path", MAX_PATH_BYTES)?,
                args::opt_text(pattern, pattern_len, "pattern", MAX_TEXT_BYTES)?,
            )
        };
        if path.is_empty() {
            return Err(FfiError::invalid("path is empty".to_string()));
        }
        if path.contains(&0) {
            return Err(FfiError::invalid("path contains a NUL byte".to_string()));
        }
        let path = path_from_bytes(path)?;
        let t = FileTokenizer::from_file_with(path, &options(pattern))?;
        dst.write(boxed(t, flags)?);
        Ok(())
    })
}

#[cfg(unix)]
fn path_from_bytes(bytes: &[u8]) -> Result<std::path::PathBuf, FfiError> {
    use std::os::unix::ffi::OsStrExt;
    Ok(std::ffi::OsStr::from_bytes(bytes).into())
}

#[cfg(not(unix))]
fn path_from_bytes(bytes: &[u8]) -> Result<std::path::PathBuf, FfiError> {
    Ok(turnfit_core::frontend::utf8("path", bytes)?.into())
}

/// Loads a tokenizer from the bytes of a file (a `tokenizer.json`, a
/// tiktoken-format file, or a whole GGUF held in memory); `name` stands for
/// the file in errors and in `turnfit_file_tokenizer_info` (`(NULL, 0)`:
/// `"<bytes>"`). `pattern` and `flags` as for `turnfit_file_tokenizer_open`.
/// Errors: `LIMIT_EXCEEDED` (bytes over 256 MiB), `INVALID_JSON`,
/// `INVALID_ARGUMENT` (as for `turnfit_file_tokenizer_open`; a name over 256
/// bytes), `INVALID_UTF8` (name, pattern), `NULL_ARGUMENT`; each message
/// names the file. Thread-safe.
///
/// # Safety
/// `bytes`, `name` and `pattern` are valid for their lengths (or NULL with
/// length 0); `out_tokenizer` is valid for a write; `err` is NULL or valid
/// for a write.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn turnfit_file_tokenizer_from_bytes(
    bytes: *const u8,
    bytes_len: usize,
    name: *const c_char,
    name_len: usize,
    pattern: *const c_char,
    pattern_len: usize,
    flags: u32,
    out_tokenizer: *mut *mut turnfit_file_tokenizer,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_file_tokenizer_from_bytes", err, || {
        let dst = out(out_tokenizer, "out_tokenizer")?;
        // SAFETY: per the contract above.
        let (bytes, name, pattern) = unsafe {
            (
                args::bytes(bytes, bytes_len, "bytes", MAX_TOKENIZER_FILE_BYTES)?,
                args::opt_name(name, name_len, "name", "file name")?,
                args::opt_text(pattern, pattern_len, "pattern", MAX_TEXT_BYTES)?,
            )
        };
        let t = FileTokenizer::from_bytes_with(bytes, name.unwrap_or("<bytes>"), &options(pattern))?;
        dst.write(boxed(t, flags)?);
        Ok(())
    })
}

/// Releases a file tokenizer. `turnfit_file_tokenizer_free(NULL)` does
/// nothing. The caller must ensure no other thread is still using the handle.
///
/// # Safety
/// `tokenizer` is NULL or a live handle from `turnfit_file_tokenizer_open`
/// or `turnfit_file_tokenizer_from_bytes`.
#[no_mangle]
pub unsafe extern "C" fn turnfit_file_tokenizer_free(tokenizer: *mut turnfit_file_tokenizer) {
    crate::boundary::guard_void("turnfit_file_tokenizer_free", || {
        if !tokenizer.is_null() {
            // SAFETY: created by `boxed`.
            drop(unsafe { Box::from_raw(tokenizer) });
        }
    })
}

/// Describes the tokenizer as JSON: `{"name", "vocab_size",
/// "special_tokens": "ordinary"|"recognize", "add_special",
/// "context_length", "pre", "has_chat_template"}` (the last three from a
/// GGUF's metadata, else null/false). Errors: `NULL_ARGUMENT`. Thread-safe.
///
/// JSON: result `schemas/file-tokenizer-info.json`.
///
/// # Safety
/// `tokenizer` is a live handle; `out_json` is valid for a write; `err` is
/// NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_file_tokenizer_info(
    tokenizer: *const turnfit_file_tokenizer,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_file_tokenizer_info", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let t = unsafe { args::handle(tokenizer, "tokenizer") }?;
        dst.write(json_string(&t.inner.describe())?);
        Ok(())
    })
}

/// Counts the tokens of `text`, without BOS/EOS: the length of HF
/// `tokenizers`' `encode(text, add_special_tokens=False)` for a
/// `tokenizer.json`, of llama.cpp's tokenization for a GGUF. Thread-safe.
///
/// Errors: `NULL_ARGUMENT`, `INVALID_UTF8` (with the byte offset),
/// `LIMIT_EXCEEDED` (text over 64 MiB).
///
/// # Safety
/// `tokenizer` is a live handle; `text` is valid for `text_len` bytes (or
/// NULL with length 0); `out_count` is valid for a write; `err` is NULL or
/// valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_file_tokenizer_count(
    tokenizer: *const turnfit_file_tokenizer,
    text: *const c_char,
    text_len: usize,
    out_count: *mut usize,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_file_tokenizer_count", err, || {
        let dst = out(out_count, "out_count")?;
        // SAFETY: per the contract above.
        let (t, text) =
            unsafe { (args::handle(tokenizer, "tokenizer")?, args::text(text, text_len, "text", MAX_TEXT_BYTES)?) };
        dst.write(t.inner.count(text)?);
        Ok(())
    })
}

/// Encodes `text` into the file's token ids; `flags` is 0 or
/// `TURNFIT_FILE_TOKENIZER_ADD_SPECIAL`. On success `*out_tokens` owns an
/// array to release with `turnfit_tokens_free`. Thread-safe.
///
/// Errors: `INVALID_UTF8`, `LIMIT_EXCEEDED` (text over 64 MiB),
/// `INVALID_ARGUMENT` (unknown flag bits; `ADD_SPECIAL` for a file whose
/// post-processor turnfit does not apply: the message says why),
/// `NULL_ARGUMENT`.
///
/// # Safety
/// As for `turnfit_file_tokenizer_count`; `out_tokens` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_file_tokenizer_encode(
    tokenizer: *const turnfit_file_tokenizer,
    text: *const c_char,
    text_len: usize,
    flags: u32,
    out_tokens: *mut turnfit_tokens,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_file_tokenizer_encode", err, || {
        let dst = out(out_tokens, "out_tokens")?;
        let unknown = flags & !TURNFIT_FILE_TOKENIZER_ADD_SPECIAL;
        if unknown != 0 {
            return Err(FfiError::invalid(format!("unknown flag bits {unknown:#x}")));
        }
        // SAFETY: per the contract above.
        let (t, text) =
            unsafe { (args::handle(tokenizer, "tokenizer")?, args::text(text, text_len, "text", MAX_TEXT_BYTES)?) };
        let add = flags & TURNFIT_FILE_TOKENIZER_ADD_SPECIAL != 0;
        dst.write(turnfit_tokens::from_vec(t.inner.encode_with_special(text, add)?));
        Ok(())
    })
}

/// Decodes ids to text through the file's decoder (bytes that are not valid
/// UTF-8 become U+FFFD, as HF's `decode` does). `(NULL, 0)` decodes to the
/// empty string. Thread-safe.
///
/// Errors: `UNKNOWN_TOKEN` (an id the file does not define),
/// `LIMIT_EXCEEDED` (more ids than the limit), `NULL_ARGUMENT`.
///
/// # Safety
/// `tokenizer` is a live handle; `ids` is valid for `ids_len` aligned
/// `uint32_t` reads (or NULL with length 0); `out_text` is valid for a
/// write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_file_tokenizer_decode(
    tokenizer: *const turnfit_file_tokenizer,
    ids: *const u32,
    ids_len: usize,
    out_text: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_file_tokenizer_decode", err, || {
        let dst = out(out_text, "out_text")?;
        // SAFETY: per the contract above.
        let (t, ids) = unsafe { (args::handle(tokenizer, "tokenizer")?, args::slice(ids, ids_len, "ids")?) };
        dst.write(turnfit_string::from_string(t.inner.decode(ids)?));
        Ok(())
    })
}
