//! Handoffs between agents: validation, rendering and conversation
//! filtering. Stateless; every function is thread-safe.

use std::ffi::c_char;

use ctxkit_core::handoff::{filter_json, Handoff, RenderOptions};
use ctxkit_core::json;
use ctxkit_core::limits::{MAX_HANDOFF_BYTES, MAX_JSON_BYTES};

use crate::args::{self, out};
use crate::boundary::guard;
use crate::error::ctxkit_error;
use crate::status::ctxkit_status;
use crate::strings::ctxkit_string;

/// Validates a handoff (docs/formats.md, "Handoff") and returns it
/// normalized: snake_case names (camelCase `taskSummary`, `keyOutputs`,
/// `customFields`, `fromAgent`, ... are read too), `version` (default
/// "1.0"), fixed field order, `custom_fields` always present, custom
/// fields and extra metadata fields kept as given. Errors: `INVALID_JSON`
/// naming the field (missing, mistyped, unknown, given under both
/// spellings, an unsupported `version`, a `created_at` that is not RFC 3339), `LIMIT_EXCEEDED` (over 1 MiB),
/// `INVALID_UTF8`, `NULL_ARGUMENT`. Thread-safe.
///
/// JSON: result `schemas/handoff.json`.
///
/// # Safety
/// `handoff_json` is valid for its length; `out_json` is valid for a write;
/// `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ctxkit_handoff_validate(
    handoff_json: *const c_char,
    handoff_json_len: usize,
    out_json: *mut ctxkit_string,
    err: *mut *mut ctxkit_error,
) -> ctxkit_status {
    guard("ctxkit_handoff_validate", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let text = unsafe { args::text(handoff_json, handoff_json_len, "handoff_json", MAX_HANDOFF_BYTES)? };
        dst.write(ctxkit_string::from_string(Handoff::parse(text)?.to_json()?));
        Ok(())
    })
}

/// Renders a handoff as a delimited prompt block. `options_json` is
/// `{"budget", "model", "encoding", "include_custom_fields"}`
/// (`(NULL, 0)` for no budget, cl100k_base). The result is JSON `{"text",
/// "tokens", "budget", "shortened": [{"index", "original_tokens",
/// "tokens"}], "omitted": [index, ...], "omitted_custom_fields": [name,
/// ...]}`; under a budget, custom fields are left out first (last first),
/// then key outputs are shortened or omitted, all listed. Errors: as for `ctxkit_handoff_validate`,
/// plus `DOES_NOT_FIT` (the task summary and metadata alone exceed the
/// budget), `UNKNOWN_MODEL`, `UNKNOWN_ENCODING`. Thread-safe.
///
/// JSON: `options_json` `schemas/handoff-render-options.json`; result `schemas/handoff-render-result.json`.
///
/// # Safety
/// Text arguments are valid for their lengths (options may be NULL with
/// length 0); `out_json` is valid for a write; `err` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn ctxkit_handoff_render(
    handoff_json: *const c_char,
    handoff_json_len: usize,
    options_json: *const c_char,
    options_json_len: usize,
    out_json: *mut ctxkit_string,
    err: *mut *mut ctxkit_error,
) -> ctxkit_status {
    guard("ctxkit_handoff_render", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let (text, options) = unsafe {
            (
                args::text(handoff_json, handoff_json_len, "handoff_json", MAX_HANDOFF_BYTES)?,
                args::opt_text(options_json, options_json_len, "options_json", MAX_JSON_BYTES)?,
            )
        };
        let options: RenderOptions = options.map(|o| json::parse("options_json", o)).transpose()?.unwrap_or_default();
        let h = Handoff::parse(text)?;
        dst.write(ctxkit_string::from_string(json::to_string(&h.render(&options)?)?));
        Ok(())
    })
}

/// Filters the conversation handed over with a handoff (OpenAI or Anthropic
/// shape, detected). `options_json` is `{"mode": "drop_tools"|"nest",
/// "header"}` (`(NULL, 0)` for `drop_tools`). The result is JSON
/// `{"conversation", "changes", "removed_tools"}` with the conversation in
/// the input's shape. Errors: `INVALID_JSON`, `LIMIT_EXCEEDED`,
/// `INVALID_UTF8`, `NULL_ARGUMENT`. Thread-safe.
///
/// JSON: conversation `schemas/conversation.json`; `options_json` `schemas/handoff-filter-options.json`; result `schemas/handoff-filter-result.json`.
///
/// # Safety
/// Text arguments are valid for their lengths (options may be NULL with
/// length 0); `out_json` is valid for a write; `err` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn ctxkit_handoff_filter(
    conversation_json: *const c_char,
    conversation_json_len: usize,
    options_json: *const c_char,
    options_json_len: usize,
    out_json: *mut ctxkit_string,
    err: *mut *mut ctxkit_error,
) -> ctxkit_status {
    guard("ctxkit_handoff_filter", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let (text, options) = unsafe {
            (
                args::text(conversation_json, conversation_json_len, "conversation_json", MAX_JSON_BYTES)?,
                args::opt_text(options_json, options_json_len, "options_json", MAX_JSON_BYTES)?,
            )
        };
        dst.write(ctxkit_string::from_string(json::to_string(&filter_json(text, options)?)?));
        Ok(())
    })
}
