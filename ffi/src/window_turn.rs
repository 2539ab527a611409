//! A turn on a window (core `turnfit::turn::WindowTurn`): the stateful
//! form of `turnfit_turn_*`. Below its trigger the window answers from its
//! cached counts (nothing is recounted, nothing changes); over it, the
//! turn compacts, with the host's model summarizing, and the window takes
//! the result. The window is locked only while the turn starts and
//! finishes, never while the host's model runs: a summarizer may call the
//! window (push a message, read it), and the turn then applies nothing
//! and says so, rather than overwrite what the host did.

use std::ffi::{c_char, c_void};

use parking_lot::Mutex;
use turnfit_core::limits::MAX_JSON_BYTES;
use turnfit_core::turn::{FailReason, Reply, WindowTurn};

use crate::args::{self, out};
use crate::boundary::guard;
use crate::error::{turnfit_error, FfiError};
use crate::registry::{registry_or_builtin, turnfit_registry};
use crate::status::turnfit_status;
use crate::strings::{json_string, turnfit_string};
use crate::turn::{call_host, options, turnfit_summarize_fn, turnfit_turn, Kind};
use crate::window::turnfit_window;

/// Starts a turn on `window` with `options_json`, the fit options object
/// without what the window holds: `policy`, `summarizer`,
/// `trigger_messages` (`model` may repeat the window's own; its budget,
/// format and ratios were set when the window was made, and setting them
/// here is `INVALID_ARGUMENT`, never ignored). `(NULL, 0)` means the
/// defaults. `registry` (may be NULL for the built-in table) looks up
/// `summarizer.model`. On success `*out_turn` owns a handle driven like
/// `turnfit_turn_start`'s (`turnfit_turn_call`, `turnfit_turn_resume`)
/// and ended with `turnfit_window_turn_finish`. Errors: `DOES_NOT_FIT`,
/// `INVALID_JSON`, `UNKNOWN_MODEL`, `INVALID_ARGUMENT`, `LIMIT_EXCEEDED`,
/// `INVALID_UTF8`, `NULL_ARGUMENT`. Thread-safe.
///
/// JSON: `options_json` `schemas/fit-options.json`.
///
/// # Safety
/// `registry` is NULL or live; `window` is live; `options_json` is valid
/// for its length (or `(NULL, 0)`); `out_turn` is valid for a write; `err`
/// is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_window_turn_start(
    registry: *const turnfit_registry,
    window: *const turnfit_window,
    options_json: *const c_char,
    options_json_len: usize,
    out_turn: *mut *mut turnfit_turn,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_window_turn_start", err, || {
        let dst = out(out_turn, "out_turn")?;
        // SAFETY: per the contract above.
        let (w, opts, registry) = unsafe {
            (
                args::handle(window, "window")?,
                args::opt_text(options_json, options_json_len, "options_json", MAX_JSON_BYTES)?,
                registry_or_builtin(registry),
            )
        };
        let o = opts.map(options).transpose()?.unwrap_or_default();
        let t = WindowTurn::start_in(registry, &w.inner.lock(), &o)?;
        let handle = turnfit_turn { inner: Mutex::new(Some(Kind::Window(Box::new(t), ()))) };
        dst.write(Box::into_raw(Box::new(handle)));
        Ok(())
    })
}

/// Ends a window's turn: the window takes the result (when the turn
/// changed the conversation) and `*out_report` is the turn report. A
/// request still waiting is answered by the digest. `INVALID_ARGUMENT`
/// when the window changed while the turn ran, or is not the window the
/// turn started on (nothing is applied; start again), when the turn was
/// finished, or was started with `turnfit_turn_start`. A refused call does
/// not spend the turn: handed another window, it can still be finished on
/// its own. Errors:
/// `INVALID_ARGUMENT`, `NULL_ARGUMENT`. Thread-safe.
///
/// JSON: report `schemas/turn-report.json`.
///
/// # Safety
/// `window` and `turn` are live; `out_report` is valid for a write; `err`
/// is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_window_turn_finish(
    window: *mut turnfit_window,
    turn: *mut turnfit_turn,
    out_report: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_window_turn_finish", err, || {
        let dst = out(out_report, "out_report")?;
        // SAFETY: per the contract above.
        let (w, t) = unsafe { (args::handle(window, "window")?, args::handle(turn, "turn")?) };
        let t = take_window_turn(t, w)?;
        let report = t.finish(&mut w.inner.lock())?;
        dst.write(json_string(&report)?);
        Ok(())
    })
}

/// The window turn in `t`, taken when `w` is its window (unchanged); a
/// refused call leaves the turn in place (a stateless turn, or a window
/// turn handed another window: issue 48), so it can still be finished.
fn take_window_turn(t: &turnfit_turn, w: &crate::window::turnfit_window) -> Result<WindowTurn, FfiError> {
    let mut guard = t.inner.lock();
    match guard.as_ref() {
        None => return Err(FfiError::invalid("the turn was finished")),
        Some(Kind::Window(t, ())) => t.check_window(&w.inner.lock())?,
        Some(Kind::Conversation(_)) => {
            return Err(FfiError::invalid(
                "this turn was started on a conversation (turnfit_turn_start): end it with turnfit_turn_finish",
            ))
        }
    }
    match guard.take() {
        Some(Kind::Window(t, ())) => Ok(*t),
        _ => Err(FfiError::new(turnfit_status::Internal, "the window turn went while it was held")),
    }
}

/// A whole window turn with a blocking summarizer:
/// `turnfit_window_turn_start`, then `summarize(user, ...)` for each
/// request (the window unlocked meanwhile), then
/// `turnfit_window_turn_finish`; `*out_report` is the turn report.
/// `summarize` may be NULL: a span to summarize is then summarized by the
/// digest and the report says so. Errors: `DOES_NOT_FIT`, `INVALID_JSON`,
/// `UNKNOWN_MODEL`, `INVALID_ARGUMENT` (as `turnfit_window_turn_finish`
/// too), `LIMIT_EXCEEDED`, `INVALID_UTF8`, `NULL_ARGUMENT`. Thread-safe.
///
/// JSON: `options_json` `schemas/fit-options.json`; report `schemas/turn-report.json`.
///
/// # Safety
/// As `turnfit_window_turn_start` and `turnfit_window_turn_finish`;
/// `summarize`, when not NULL, follows `turnfit_summarize_fn`'s contract
/// with `user`.
#[no_mangle]
pub unsafe extern "C" fn turnfit_window_turn_run(
    registry: *const turnfit_registry,
    window: *mut turnfit_window,
    options_json: *const c_char,
    options_json_len: usize,
    summarize: turnfit_summarize_fn,
    user: *mut c_void,
    out_report: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_window_turn_run", err, || {
        let dst = out(out_report, "out_report")?;
        // SAFETY: per the contract above.
        let (w, opts, registry) = unsafe {
            (
                args::handle(window, "window")?,
                args::opt_text(options_json, options_json_len, "options_json", MAX_JSON_BYTES)?,
                registry_or_builtin(registry),
            )
        };
        let o = opts.map(options).transpose()?.unwrap_or_default();
        // The lock is taken per step, so the host's model runs unlocked
        // (core's `run_window` borrows the window for the whole loop).
        let mut t = WindowTurn::start_in(registry, &w.inner.lock(), &o)?;
        if let Some(f) = summarize {
            while let Some(call) = t.call() {
                let reply = call_host(f, user, call)
                    .unwrap_or_else(|e| Reply::Failed { reason: FailReason::Error, message: e.message });
                t.resume(reply)?;
            }
        }
        let report = t.finish(&mut w.inner.lock())?;
        dst.write(json_string(&report)?);
        Ok(())
    })
}
