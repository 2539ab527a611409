//! Context windows and the stateless `turnfit_fit`. A `turnfit_window` holds a
//! conversation bound to one model and budget; it is internally synchronized
//! (one mutex per handle), so it may be shared by threads, and calls on one
//! handle are serialized.

use std::ffi::c_char;

use turnfit_core::chat::Conversation;
use turnfit_core::limits::{MAX_JSON_BYTES, MAX_SYNTHETIC_RESULT_BYTES};
use turnfit_core::window::{fit_json_in, Budget, Policy, Window};

use crate::args::{self, out};
use crate::boundary::guard;
use crate::error::turnfit_error;
use crate::registry::{registry_or_builtin, turnfit_registry};
use crate::status::turnfit_status;
use crate::strings::{json_string, turnfit_string};

/// A conversation bound to a model and a token budget, with cached
/// per-message counts. Thread-safe (calls on one handle are serialized).
pub struct turnfit_window {
    pub(crate) inner: crate::events::ObservedWindow,
}

/// Creates an empty window for `model` (see `turnfit_registry_lookup`;
/// `registry` may be NULL for the built-in table). `budget_json` is
/// `{"context_window", "reserved_output", "trigger_ratio", "target_ratio",
/// "multi_scale", ...}` (docs/formats.md), every field optional; `(NULL, 0)`
/// means all defaults. With `multi_scale` (tier budgets),
/// `turnfit_window_compact` folds the tiers instead of compacting.
/// On success `*out_window` owns a handle to release with
/// `turnfit_window_free`. Errors: `UNKNOWN_MODEL`, `INVALID_JSON`,
/// `INVALID_ARGUMENT` (ratios, a reserve that leaves no room, a model with
/// no known window and no `context_window`, tier budgets that are not
/// positive or pass the window), `LIMIT_EXCEEDED` (an argument
/// over 64 MiB), `INVALID_UTF8`, `NULL_ARGUMENT`. Thread-safe.
///
/// JSON: `budget_json` `schemas/window-budget.json`.
///
/// # Safety
/// Text arguments are valid for their lengths (or NULL with length 0);
/// `registry` is NULL or live; `out_window` is valid for a write; `err` is
/// NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_window_new(
    registry: *const turnfit_registry,
    model: *const c_char,
    model_len: usize,
    budget_json: *const c_char,
    budget_json_len: usize,
    out_window: *mut *mut turnfit_window,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_window_new", err, || {
        let dst = out(out_window, "out_window")?;
        // SAFETY: per the contract above.
        let (model, budget, registry) = unsafe {
            (
                args::name(model, model_len, "model", "model name")?,
                args::opt_text(budget_json, budget_json_len, "budget_json", MAX_JSON_BYTES)?,
                registry_or_builtin(registry),
            )
        };
        let budget: Budget = args::opt_json("budget_json", budget)?;
        let w = Window::for_model(registry, model, budget)?;
        dst.write(Box::into_raw(Box::new(turnfit_window { inner: crate::events::ObservedWindow::new(w) })));
        Ok(())
    })
}

/// Releases a window. `turnfit_window_free(NULL)` does nothing. The caller
/// must ensure no other thread still uses the handle.
///
/// # Safety
/// `window` is NULL or a live handle from `turnfit_window_new`.
#[no_mangle]
pub unsafe extern "C" fn turnfit_window_free(window: *mut turnfit_window) {
    crate::boundary::guard_void("turnfit_window_free", || {
        if !window.is_null() {
            // SAFETY: created by `Box::into_raw` in `turnfit_window_new`.
            drop(unsafe { Box::from_raw(window) });
        }
    })
}

/// Replaces the window's conversation with `conversation_json` (OpenAI or
/// Anthropic shape, detected), counting every message once. Errors:
/// `INVALID_JSON` (with the location), `LIMIT_EXCEEDED`, `INVALID_UTF8`,
/// `NULL_ARGUMENT`. On failure the window is unchanged. Thread-safe.
///
/// JSON: input `schemas/conversation.json`.
///
/// # Safety
/// `window` is live; `conversation_json` is valid for its length; `err` is
/// NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_window_load(
    window: *mut turnfit_window,
    conversation_json: *const c_char,
    conversation_json_len: usize,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_window_load", err, || {
        // SAFETY: per the contract above.
        let (w, text) = unsafe {
            (
                args::handle(window, "window")?,
                args::text(conversation_json, conversation_json_len, "conversation_json", MAX_JSON_BYTES)?,
            )
        };
        let c = Conversation::parse(text, None)?;
        w.inner.lock().load(c)?;
        Ok(())
    })
}

/// Appends one message (JSON in the window's format), counting only it;
/// `*out_tokens` receives its token count. A message carrying another
/// format's marks (a Gemini `parts` message pushed to a Chat Completions
/// window) is refused, never read as an empty message. Thread-safe.
///
/// Errors: `INVALID_ARGUMENT` (a message in another format), `INVALID_JSON`, `LIMIT_EXCEEDED` (message count or size), `INVALID_UTF8`, `NULL_ARGUMENT`.
///
/// JSON: input one element of `schemas/conversation.json`'s messages.
///
/// # Safety
/// `window` is live; `message_json` is valid for its length; `out_tokens` is
/// valid for a write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_window_push(
    window: *mut turnfit_window,
    message_json: *const c_char,
    message_json_len: usize,
    out_tokens: *mut usize,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_window_push", err, || {
        let dst = out(out_tokens, "out_tokens")?;
        // SAFETY: per the contract above.
        let (w, text) = unsafe {
            (
                args::handle(window, "window")?,
                args::text(message_json, message_json_len, "message_json", MAX_JSON_BYTES)?,
            )
        };
        dst.write(w.inner.lock().push_json(text)?);
        Ok(())
    })
}

/// The pre-flight report as JSON (docs/formats.md): totals by component,
/// limit, remaining, utilization and a verdict (`fits`, `should_compact`,
/// `overflow`). `new_input_json` is a message about to be sent, or
/// `(NULL, 0)` for none. Thread-safe.
///
/// Errors: `INVALID_JSON` (the new input), `LIMIT_EXCEEDED`, `INVALID_UTF8`, `NULL_ARGUMENT`.
///
/// JSON: result `schemas/preflight-report.json`.
///
/// # Safety
/// `window` is live; `new_input_json` is valid for its length (or NULL with
/// length 0); `out_json` is valid for a write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_window_preflight(
    window: *const turnfit_window,
    new_input_json: *const c_char,
    new_input_json_len: usize,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_window_preflight", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let (w, input) = unsafe {
            (
                args::handle(window, "window")?,
                args::opt_text(new_input_json, new_input_json_len, "new_input_json", MAX_JSON_BYTES)?,
            )
        };
        let w = w.inner.lock();
        let message = input.map(|t| w.conversation().parse_message(t)).transpose()?;
        dst.write(json_string(&w.preflight(message.as_ref())?)?);
        Ok(())
    })
}

/// Records the prompt tokens the provider billed for the window's current
/// conversation (`usage.prompt_tokens` / `input_tokens`) and writes the
/// factor reported / counted to `*out_factor`. For an estimated model
/// (`exact: false`) later pre-flights scale by it; an exact model keeps 1.0
/// and the factor is only the discrepancy. Thread-safe.
///
/// Errors: `INVALID_ARGUMENT` (an empty conversation, a zero count, a factor
/// outside 0.25..4 that says it was another conversation), `NULL_ARGUMENT`.
///
/// # Safety
/// `window` is live; `out_factor` is valid for a write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_window_calibrate(
    window: *mut turnfit_window,
    reported_prompt_tokens: u64,
    out_factor: *mut f64,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_window_calibrate", err, || {
        let dst = out(out_factor, "out_factor")?;
        // SAFETY: per the contract above.
        let w = unsafe { args::handle(window, "window") }?;
        let reported = usize::try_from(reported_prompt_tokens).unwrap_or(usize::MAX);
        dst.write(w.inner.lock().calibrate(reported)?);
        Ok(())
    })
}

/// Structural issues of the window's conversation as a JSON array
/// (docs/formats.md, "Validation issues"); `[]` when there are none.
/// Thread-safe.
///
/// Errors: `NULL_ARGUMENT`.
///
/// JSON: result `schemas/validation-issues.json`.
///
/// # Safety
/// `window` is live; `out_json` is valid for a write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_window_validate(
    window: *const turnfit_window,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_window_validate", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let w = unsafe { args::handle(window, "window") }?;
        dst.write(json_string(&w.inner.lock().validate())?);
        Ok(())
    })
}

/// Repairs the window's conversation in place and returns the manifest as a
/// JSON array of changes (docs/formats.md). `synthetic_result` is the text of
/// inserted results; `(NULL, 0)` selects the default. Thread-safe.
///
/// Errors: `LIMIT_EXCEEDED` (synthetic text over 64 KiB as JSON, escapes included, and refused from its length alone when its raw bytes are over it; more than 16 MiB of synthetic results as JSON; or a repaired conversation over 64 MiB, which loading it back would refuse), `INVALID_UTF8`, `NULL_ARGUMENT`.
///
/// JSON: result `schemas/repair-changes.json`.
///
/// # Safety
/// `window` is live; `synthetic_result` is valid for its length (or NULL
/// with length 0); `out_json` is valid for a write; `err` is NULL or valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_window_repair(
    window: *mut turnfit_window,
    synthetic_result: *const c_char,
    synthetic_result_len: usize,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_window_repair", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let (w, text) = unsafe {
            (
                args::handle(window, "window")?,
                args::opt_text(synthetic_result, synthetic_result_len, "synthetic_result", MAX_SYNTHETIC_RESULT_BYTES)?,
            )
        };
        dst.write(json_string(&w.inner.lock().repair(text)?)?);
        Ok(())
    })
}

/// The window's conversation as JSON, in the format it was loaded in.
/// Thread-safe.
///
/// Errors: `NULL_ARGUMENT`.
///
/// JSON: result `schemas/conversation.json`.
///
/// # Safety
/// `window` is live; `out_json` is valid for a write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_window_conversation(
    window: *const turnfit_window,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_window_conversation", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let w = unsafe { args::handle(window, "window") }?;
        dst.write(turnfit_string::from_string(w.inner.lock().conversation().to_json()?));
        Ok(())
    })
}

/// Compacts the window's conversation under `policy_json` (docs/formats.md,
/// "Compaction policy"; `(NULL, 0)` means the defaults: recency, the
/// window's target and limit). The result is JSON: `{"status": "done",
/// "report": {...}}` when the conversation was compacted in place, or
/// `{"status": "needs_summary", "request": {"id", "messages", "prompt",
/// "max_summary_tokens", ...}}` for the summarize strategy: send `prompt` to
/// your model, then call `turnfit_window_apply_summary` with `id`. Errors:
/// `DOES_NOT_FIT` (what must be kept is too big), `INVALID_JSON`,
/// `INVALID_ARGUMENT`, `LIMIT_EXCEEDED` (a policy over 64 MiB),
/// `INVALID_UTF8`, `NULL_ARGUMENT`. Thread-safe.
///
/// JSON: `policy_json` `schemas/compaction-policy.json`; result `schemas/compact-result.json`.
///
/// # Safety
/// `window` is live; `policy_json` is valid for its length (or NULL with
/// length 0); `out_json` is valid for a write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_window_compact(
    window: *mut turnfit_window,
    policy_json: *const c_char,
    policy_json_len: usize,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_window_compact", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let (w, policy) = unsafe {
            (
                args::handle(window, "window")?,
                args::opt_text(policy_json, policy_json_len, "policy_json", MAX_JSON_BYTES)?,
            )
        };
        let policy: Policy = args::opt_json("policy_json", policy)?;
        dst.write(json_string(&w.inner.lock().compact(&policy)?)?);
        Ok(())
    })
}

/// Completes a pending summarize compaction: replaces the requested messages
/// with `summary` (cut to the request's `max_summary_tokens` if longer) and
/// returns the report as JSON (`{"tokens_before", "tokens_after",
/// "target_tokens", "limit_tokens", "within_target", "insufficient",
/// "changes"}`). A wrong `id` is `INVALID_ARGUMENT` and leaves the request
/// pending; no pending request (or one discarded by a later load or push)
/// is `INVALID_ARGUMENT` too. Thread-safe.
///
/// Errors: `INVALID_ARGUMENT` (no pending summary, or another id), `LIMIT_EXCEEDED`, `INVALID_UTF8`, `NULL_ARGUMENT`.
///
/// JSON: result `schemas/compact-report.json`.
///
/// # Safety
/// `window` is live; text arguments are valid for their lengths; `out_json`
/// is valid for a write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_window_apply_summary(
    window: *mut turnfit_window,
    id: *const c_char,
    id_len: usize,
    summary: *const c_char,
    summary_len: usize,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_window_apply_summary", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let (w, id, summary) = unsafe {
            (
                args::handle(window, "window")?,
                args::name(id, id_len, "id", "summary id")?,
                args::text(summary, summary_len, "summary", MAX_JSON_BYTES)?,
            )
        };
        dst.write(json_string(&w.inner.lock().apply_summary(id, summary)?)?);
        Ok(())
    })
}

/// Makes a conversation fit a budget, statelessly: repairs it, cuts long
/// tool outputs, and drops whole turns (never splitting a tool call from its
/// result; keeping the system prompt, the latest user turn and pinned
/// messages). `options_json` is the fit options object (docs/formats.md;
/// `model` required). On success `*out_conversation` is the result in the
/// input's shape and `*out_report` the report with before/after figures and
/// the manifest. `registry` may be NULL for the built-in model table; with a
/// handle, models registered on it work here as in `turnfit_window_new`
/// (new in ABI 2). A `format` in the options that the document contradicts
/// (Gemini forced on a request with `messages`, OpenAI on one with
/// `tool_use` blocks) is `INVALID_ARGUMENT` naming the format and what the
/// document looks like. Errors: `DOES_NOT_FIT` (what must be kept is too
/// big; the message gives the figures), `INVALID_JSON`, `UNKNOWN_MODEL`,
/// `INVALID_ARGUMENT`, `LIMIT_EXCEEDED`, `INVALID_UTF8`, `NULL_ARGUMENT`.
/// Thread-safe.
///
/// JSON: conversation `schemas/conversation.json`; `options_json` `schemas/fit-options.json`; report `schemas/fit-report.json`.
///
/// # Safety
/// `registry` is NULL or live; text arguments are valid for their lengths;
/// both out-parameters are valid for a write; `err` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_fit(
    registry: *const turnfit_registry,
    conversation_json: *const c_char,
    conversation_json_len: usize,
    options_json: *const c_char,
    options_json_len: usize,
    out_conversation: *mut turnfit_string,
    out_report: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_fit", err, || {
        let dst_c = out(out_conversation, "out_conversation")?;
        let dst_r = out(out_report, "out_report")?;
        // SAFETY: per the contract above.
        let (conversation, options, registry) = unsafe {
            (
                args::text(conversation_json, conversation_json_len, "conversation_json", MAX_JSON_BYTES)?,
                args::text(options_json, options_json_len, "options_json", MAX_JSON_BYTES)?,
                registry_or_builtin(registry),
            )
        };
        let (c, report) = fit_json_in(registry, conversation, options)?;
        let report = json_string(&report)?;
        dst_c.write(turnfit_string::from_string(c));
        dst_r.write(report);
        Ok(())
    })
}
