//! Turns: one call per model turn, with the host's model summarizing
//! (core `turnfit::turn`). Two forms over one core:
//!
//! - a handle the host drives (`turnfit_turn_start`, `_call`, `_resume`,
//!   `_finish`), for hosts whose model call is asynchronous (an event
//!   loop, a coroutine): nothing is called back, so nothing re-enters;
//! - `turnfit_turn_run`, the same loop here with a C function pointer for
//!   hosts whose model call blocks.
//!
//! The summarizer's failures are not errors: a failed, late, empty,
//! oversized or non-UTF-8 reply makes the turn summarize with the
//! deterministic digest, and the report says why (`summary.fallback`).

use std::ffi::{c_char, c_void};

use parking_lot::Mutex;
use turnfit_core::limits::MAX_JSON_BYTES;
use turnfit_core::turn::{AnyTurn, FailReason, Reply, SummarizerCall, Turn};
use turnfit_core::window::FitOptions;

use crate::args::{self, out};
use crate::boundary::guard;
use crate::error::{turnfit_error, FfiError};
use crate::registry::{registry_or_builtin, turnfit_registry};
use crate::status::turnfit_status;
use crate::strings::{json_string, turnfit_string};

/// A turn in progress: a summarizer request may be waiting for the host's
/// reply. Thread-safe (calls on one handle are serialized).
pub struct turnfit_turn {
    pub(crate) inner: Mutex<Option<Kind>>,
}

/// A stateless turn or a window's turn (see `window_turn.rs`): the same
/// `_call` and `_resume`, each its own `_finish`. The window is handed to
/// `turnfit_window_turn_finish`, so nothing is kept beside the turn.
pub(crate) type Kind = AnyTurn;

/// The summarizer's reply was its text (`turnfit_turn_resume`'s `failure`).
pub const TURNFIT_SUMMARY_OK: u32 = 0;
/// The summarizer raised or returned an error.
pub const TURNFIT_SUMMARY_ERROR: u32 = 1;
/// The summarizer timed out (the host cancelled it).
pub const TURNFIT_SUMMARY_TIMEOUT: u32 = 2;
/// The summarizer replied with something other than text (a tool call).
pub const TURNFIT_SUMMARY_NOT_TEXT: u32 = 3;

/// The reply from the host's `failure` code and text; text that is not
/// UTF-8 is a failed reply (`invalid_utf8`), not an error: the turn still
/// fits.
pub(crate) fn reply(failure: u32, text: &[u8], message: &str) -> Result<Reply, FfiError> {
    let reason = match failure {
        TURNFIT_SUMMARY_OK => {
            return Ok(match std::str::from_utf8(text) {
                Ok(t) => Reply::Summary(t.to_owned()),
                Err(e) => Reply::Failed {
                    reason: FailReason::InvalidUtf8,
                    message: format!("the summary is not valid UTF-8 at byte offset {}", e.valid_up_to()),
                },
            })
        }
        TURNFIT_SUMMARY_ERROR => FailReason::Error,
        TURNFIT_SUMMARY_TIMEOUT => FailReason::Timeout,
        TURNFIT_SUMMARY_NOT_TEXT => FailReason::NotText,
        n => return Err(FfiError::invalid(format!("failure {n} is not a TURNFIT_SUMMARY_* code (0 to 3)"))),
    };
    Ok(Reply::Failed { reason, message: message.to_owned() })
}

pub(crate) fn options(options_json: &str) -> Result<FitOptions, FfiError> {
    Ok(turnfit_core::frontend::parse_options("options_json", Some(options_json))?)
}

/// Starts a turn on `conversation_json` (any of the six formats) with
/// `options_json`, the fit options object (`model` required; `policy`,
/// `summarizer`, `trigger_messages`, ...). On success `*out_turn` owns a
/// handle: while `turnfit_turn_call` says a summarizer request waits, send
/// its prompt to your model and hand the reply to `turnfit_turn_resume`;
/// then `turnfit_turn_finish`. `registry` may be NULL for the built-in
/// table. Errors: `DOES_NOT_FIT` (the system prompt, tools, task, newest
/// user message and pins alone exceed the budget; each is named with its
/// cost), `INVALID_JSON`, `UNKNOWN_MODEL`, `INVALID_ARGUMENT`,
/// `LIMIT_EXCEEDED`, `INVALID_UTF8`, `NULL_ARGUMENT`. Thread-safe.
///
/// JSON: conversation `schemas/conversation.json`; `options_json` `schemas/fit-options.json`.
///
/// # Safety
/// `registry` is NULL or live; text arguments are valid for their lengths;
/// `out_turn` is valid for a write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_turn_start(
    registry: *const turnfit_registry,
    conversation_json: *const c_char,
    conversation_json_len: usize,
    options_json: *const c_char,
    options_json_len: usize,
    out_turn: *mut *mut turnfit_turn,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_turn_start", err, || {
        let dst = out(out_turn, "out_turn")?;
        // SAFETY: per the contract above.
        let (conversation, opts, registry) = unsafe {
            (
                args::text(conversation_json, conversation_json_len, "conversation_json", MAX_JSON_BYTES)?,
                args::text(options_json, options_json_len, "options_json", MAX_JSON_BYTES)?,
                registry_or_builtin(registry),
            )
        };
        let t = Turn::start(registry, conversation, &options(opts)?)?;
        dst.write(Box::into_raw(Box::new(turnfit_turn {
            inner: Mutex::new(Some(AnyTurn::Conversation(Box::new(t)))),
        })));
        Ok(())
    })
}

/// The summarizer request waiting for a reply: `*out_waiting` is true and
/// `*out_call_json` the request (`{"id", "piece", "pieces", "model",
/// "prompt", "prompt_tokens", "max_prompt_tokens", "max_summary_tokens",
/// "messages", "folds_previous", "timeout_ms"}`); or false and an empty
/// string when none waits. Errors: `INVALID_ARGUMENT` (the turn was
/// finished), `NULL_ARGUMENT`. Thread-safe.
///
/// JSON: result `schemas/summarizer-call.json`.
///
/// # Safety
/// `turn` is live; out-parameters are valid for writes; `err` is NULL or
/// valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_turn_call(
    turn: *const turnfit_turn,
    out_waiting: *mut bool,
    out_call_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_turn_call", err, || {
        let dst_w = out(out_waiting, "out_waiting")?;
        let dst = out(out_call_json, "out_call_json")?;
        // SAFETY: per the contract above.
        let t = unsafe { args::handle(turn, "turn")? };
        let guard = t.inner.lock();
        let t = guard.as_ref().ok_or_else(|| FfiError::invalid("the turn was finished"))?;
        match t.call() {
            Some(c) => {
                dst.write(json_string(c)?);
                dst_w.write(true);
            }
            None => {
                dst.write(turnfit_string::from_string(String::new()));
                dst_w.write(false);
            }
        }
        Ok(())
    })
}

/// Hands the host's reply to the waiting request. `failure` is
/// `TURNFIT_SUMMARY_OK` with the model's text in `summary` (not UTF-8: the
/// digest is used, as for any failure), or `TURNFIT_SUMMARY_ERROR`,
/// `_TIMEOUT` or `_NOT_TEXT` with the host's words in `message` (may be
/// `(NULL, 0)`). A failed or unusable reply ends the summarizing with the
/// digest; the report says why. Errors: `INVALID_ARGUMENT` (no request
/// waits, the turn was finished, an unknown `failure`), `LIMIT_EXCEEDED`,
/// `INVALID_UTF8` (`message`), `NULL_ARGUMENT`. Thread-safe.
///
/// # Safety
/// `turn` is live; text arguments are valid for their lengths; `err` is
/// NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_turn_resume(
    turn: *mut turnfit_turn,
    failure: u32,
    summary: *const c_char,
    summary_len: usize,
    message: *const c_char,
    message_len: usize,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_turn_resume", err, || {
        // SAFETY: per the contract above.
        let (t, text, message) = unsafe {
            (
                args::handle(turn, "turn")?,
                args::bytes(summary.cast::<u8>(), summary_len, "summary", MAX_JSON_BYTES)?,
                args::opt_text(message, message_len, "message", MAX_JSON_BYTES)?,
            )
        };
        let r = reply(failure, text, message.unwrap_or(""))?;
        let mut guard = t.inner.lock();
        let t = guard.as_mut().ok_or_else(|| FfiError::invalid("the turn was finished"))?;
        t.resume(r)?;
        Ok(())
    })
}

/// Ends the turn: `*out_conversation` is the request to send, in the
/// input's shape, and `*out_report` the report (the fit report with
/// `fired`, `changed`, `summary` and `cache`). A request still waiting is
/// answered by the digest (`fallback.reason: "no_summarizer"`). The handle
/// stays to be freed; any further call on it but `turnfit_turn_free` is
/// `INVALID_ARGUMENT`. Errors: `INVALID_ARGUMENT`, `NULL_ARGUMENT`.
/// Thread-safe.
///
/// JSON: conversation `schemas/conversation.json`; report `schemas/turn-report.json`.
///
/// # Safety
/// `turn` is live; out-parameters are valid for writes; `err` is NULL or
/// valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_turn_finish(
    turn: *mut turnfit_turn,
    out_conversation: *mut turnfit_string,
    out_report: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_turn_finish", err, || {
        let dst_c = out(out_conversation, "out_conversation")?;
        let dst_r = out(out_report, "out_report")?;
        // SAFETY: per the contract above.
        let t = unsafe { args::handle(turn, "turn")? };
        let mut guard = t.inner.lock();
        let t = match guard.take() {
            None => return Err(FfiError::invalid("the turn was finished")),
            Some(AnyTurn::Conversation(t)) => t,
            Some(w @ AnyTurn::Window(..)) => {
                *guard = Some(w);
                return Err(FfiError::invalid(
                    "this turn was started on a window (turnfit_window_turn_start): end it with \
                     turnfit_window_turn_finish",
                ));
            }
        };
        drop(guard);
        let (c, report) = t.finish()?;
        let report = json_string(&report)?;
        dst_c.write(turnfit_string::from_string(c.to_json()?));
        dst_r.write(report);
        Ok(())
    })
}

/// Releases a turn. `turnfit_turn_free(NULL)` does nothing.
///
/// # Safety
/// `turn` is NULL or a live handle from `turnfit_turn_start`.
#[no_mangle]
pub unsafe extern "C" fn turnfit_turn_free(turn: *mut turnfit_turn) {
    crate::boundary::guard_void("turnfit_turn_free", || {
        if !turn.is_null() {
            // SAFETY: created by `Box::into_raw` in `turnfit_turn_start`.
            drop(unsafe { Box::from_raw(turn) });
        }
    })
}

/// A blocking summarizer: gets the request as JSON (see
/// `turnfit_turn_call`) and either sets `*out_text`/`*out_len` to the
/// model's text and returns `TURNFIT_SUMMARY_OK`, or returns a failure code
/// (`TURNFIT_SUMMARY_ERROR`, `_TIMEOUT`, `_NOT_TEXT`) and may set the text
/// to its error message. The text stays owned by the host and must remain
/// valid until the callback is called again or `turnfit_turn_run` returns.
/// It may call turnfit (no turnfit lock is held while it runs).
pub type turnfit_summarize_fn = Option<
    unsafe extern "C" fn(
        user: *mut c_void,
        call_json: *const c_char,
        call_json_len: usize,
        out_text: *mut *const c_char,
        out_len: *mut usize,
    ) -> u32,
>;

/// A whole turn with a blocking summarizer: `turnfit_turn_start`, then
/// `summarize(user, ...)` for each request, then `turnfit_turn_finish`.
/// `summarize` may be NULL: a span to summarize is then summarized by the
/// digest and the report says so. Errors: as `turnfit_turn_start`.
/// Thread-safe.
///
/// JSON: conversation `schemas/conversation.json`; `options_json` `schemas/fit-options.json`; report `schemas/turn-report.json`.
///
/// # Safety
/// As `turnfit_turn_start` and `turnfit_turn_finish`; `summarize`, when not
/// NULL, follows `turnfit_summarize_fn`'s contract with `user`.
#[no_mangle]
pub unsafe extern "C" fn turnfit_turn_run(
    registry: *const turnfit_registry,
    conversation_json: *const c_char,
    conversation_json_len: usize,
    options_json: *const c_char,
    options_json_len: usize,
    summarize: turnfit_summarize_fn,
    user: *mut c_void,
    out_conversation: *mut turnfit_string,
    out_report: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_turn_run", err, || {
        let dst_c = out(out_conversation, "out_conversation")?;
        let dst_r = out(out_report, "out_report")?;
        // SAFETY: per the contract above.
        let (conversation, opts, registry) = unsafe {
            (
                args::text(conversation_json, conversation_json_len, "conversation_json", MAX_JSON_BYTES)?,
                args::text(options_json, options_json_len, "options_json", MAX_JSON_BYTES)?,
                registry_or_builtin(registry),
            )
        };
        // The core's loop; a request that cannot be handed over is a failed
        // reply (the digest stands in), never a lost turn.
        let mut host = summarize.map(|f| {
            move |call: &SummarizerCall| {
                call_host(f, user, call)
                    .unwrap_or_else(|e| Reply::Failed { reason: FailReason::Error, message: e.message })
            }
        });
        let host = host.as_mut().map(|h| h as &mut dyn FnMut(&SummarizerCall) -> Reply);
        let (c, report) = turnfit_core::turn::run(registry, conversation, &options(opts)?, host)?;
        let report = json_string(&report)?;
        dst_c.write(turnfit_string::from_string(c.to_json()?));
        dst_r.write(report);
        Ok(())
    })
}

pub(crate) type SummarizeFn =
    unsafe extern "C" fn(*mut c_void, *const c_char, usize, *mut *const c_char, *mut usize) -> u32;

/// One call of the host's summarizer, its answer read into a [`Reply`].
pub(crate) fn call_host(f: SummarizeFn, user: *mut c_void, call: &SummarizerCall) -> Result<Reply, FfiError> {
    let json = serde_json::to_string(call)
        .map_err(|e| FfiError::new(turnfit_status::Internal, format!("summarizer call: {e}")))?;
    let (mut text, mut len): (*const c_char, usize) = (std::ptr::null(), 0);
    // SAFETY: `f` follows `turnfit_summarize_fn`'s contract; the JSON lives
    // across the call.
    let code = unsafe { f(user, json.as_ptr().cast(), json.len(), &mut text, &mut len) };
    // SAFETY: the host keeps the text valid until it is called again; over
    // the limit is refused from the length, before a byte is read.
    let bytes = unsafe { args::bytes(text.cast::<u8>(), len, "the summarizer's text", MAX_JSON_BYTES) };
    let bytes = match bytes {
        Ok(b) => b,
        Err(e) => {
            return Ok(Reply::Failed {
                reason: FailReason::Error,
                message: format!("the summarizer's reply: {}", e.message),
            })
        }
    };
    if code == TURNFIT_SUMMARY_OK {
        return reply(code, bytes, "");
    }
    let message = String::from_utf8_lossy(bytes).into_owned();
    match reply(code, &[], &message) {
        Ok(r) => Ok(r),
        Err(_) => Ok(Reply::Failed {
            reason: FailReason::Error,
            message: format!("the summarizer returned {code}, not a TURNFIT_SUMMARY_* code: {message}"),
        }),
    }
}
