//! Handoffs between agents: validation, rendering and conversation
//! filtering. Stateless; every function is thread-safe.

use std::ffi::c_char;

use turnfit_core::handoff::{filter_json, Handoff, RenderOptions};
use turnfit_core::limits::{MAX_HANDOFF_BYTES, MAX_JSON_BYTES};

use crate::args::{self, out};
use crate::boundary::guard;
use crate::error::turnfit_error;
use crate::registry::{registry_or_builtin, turnfit_registry};
use crate::status::turnfit_status;
use crate::strings::{json_string, turnfit_string};

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
pub unsafe extern "C" fn turnfit_handoff_validate(
    handoff_json: *const c_char,
    handoff_json_len: usize,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_handoff_validate", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let text = unsafe { args::text(handoff_json, handoff_json_len, "handoff_json", MAX_HANDOFF_BYTES)? };
        dst.write(turnfit_string::from_string(Handoff::parse(text)?.to_json()?));
        Ok(())
    })
}

/// Renders a handoff as a delimited prompt block. `options_json` is
/// `{"budget", "model", "encoding", "include_custom_fields", "format"}`
/// (`format`: `"block"`, the default, or `"prompt_text"`, the Haskell
/// design's `toPromptText` layout)
/// (`(NULL, 0)` for no budget, cl100k_base). The result is JSON `{"text",
/// "tokens", "budget", "shortened": [{"index", "original_tokens",
/// "tokens"}], "omitted": [index, ...], "omitted_custom_fields": [name,
/// ...]}`; under a budget, custom fields are left out first (last first),
/// then key outputs are shortened or omitted, all listed. Errors: as for `turnfit_handoff_validate`,
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
pub unsafe extern "C" fn turnfit_handoff_render(
    handoff_json: *const c_char,
    handoff_json_len: usize,
    options_json: *const c_char,
    options_json_len: usize,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    // SAFETY: forwarded contract; a NULL registry is the built-in table.
    unsafe {
        render(
            "turnfit_handoff_render",
            std::ptr::null(),
            handoff_json,
            handoff_json_len,
            options_json,
            options_json_len,
            out_json,
            err,
        )
    }
}

/// As `turnfit_handoff_render`, with an options `model` looked up in
/// `registry` (NULL: the built-in table), so a model registered on a
/// registry handle counts the block (new, no ABI bump). Errors: as for
/// `turnfit_handoff_render`.
///
/// # Safety
/// `registry` is NULL or live; the rest as for `turnfit_handoff_render`.
#[no_mangle]
pub unsafe extern "C" fn turnfit_handoff_render_in(
    registry: *const turnfit_registry,
    handoff_json: *const c_char,
    handoff_json_len: usize,
    options_json: *const c_char,
    options_json_len: usize,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    // SAFETY: forwarded contract.
    unsafe {
        render(
            "turnfit_handoff_render_in",
            registry,
            handoff_json,
            handoff_json_len,
            options_json,
            options_json_len,
            out_json,
            err,
        )
    }
}

/// The body of both render functions, inside the boundary named `function`.
///
/// # Safety
/// As for `turnfit_handoff_render_in`.
#[allow(clippy::too_many_arguments)]
unsafe fn render(
    function: &'static str,
    registry: *const turnfit_registry,
    handoff_json: *const c_char,
    handoff_json_len: usize,
    options_json: *const c_char,
    options_json_len: usize,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard(function, err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let (registry, text, options) = unsafe {
            (
                registry_or_builtin(registry),
                args::text(handoff_json, handoff_json_len, "handoff_json", MAX_HANDOFF_BYTES)?,
                args::opt_text(options_json, options_json_len, "options_json", MAX_JSON_BYTES)?,
            )
        };
        let options: RenderOptions = args::opt_json("options_json", options)?;
        let h = Handoff::parse(text)?;
        dst.write(json_string(&h.render_in(registry, &options)?)?);
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
pub unsafe extern "C" fn turnfit_handoff_filter(
    conversation_json: *const c_char,
    conversation_json_len: usize,
    options_json: *const c_char,
    options_json_len: usize,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_handoff_filter", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let (text, options) = unsafe {
            (
                args::text(conversation_json, conversation_json_len, "conversation_json", MAX_JSON_BYTES)?,
                args::opt_text(options_json, options_json_len, "options_json", MAX_JSON_BYTES)?,
            )
        };
        dst.write(json_string(&filter_json(text, options)?)?);
        Ok(())
    })
}
