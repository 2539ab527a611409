//! Tool telemetry. A `turnfit_tracer` is internally synchronized (one mutex),
//! so every agent thread of the host may start and end spans on one shared
//! handle. Times are the caller's, in microseconds (`turnfit_clock_now_us`
//! reads the system clock for callers without one).

use std::ffi::c_char;

use turnfit_core::limits::{MAX_JSON_BYTES, MAX_KEY_BYTES};
use turnfit_core::trace::{now_us, Outcome, Overdue, OverdueSpan, SpanEnd, SpanInfo, Tracer};

use crate::args::{self, out};
use crate::boundary::guard;
use crate::error::{turnfit_error, FfiError};
use crate::status::turnfit_status;
use crate::strings::json_string;
use crate::strings::turnfit_string;

/// How a span ended (`turnfit_tracer_end`'s `outcome`).
#[repr(u32)]
pub enum turnfit_span_outcome {
    /// The tool returned a result.
    Success = 0,
    /// The tool returned an error.
    Failed = 1,
    /// The tool ran past its deadline.
    Timeout = 2,
    /// The call was abandoned.
    Cancelled = 3,
}

/// Tool-call telemetry: spans, per-tool metrics, deadlines. Thread-safe.
pub struct turnfit_tracer {
    pub(crate) inner: Tracer,
}

/// Microseconds since the Unix epoch from the system clock: the time to pass
/// to the tracer (and, divided by 1000, to the breaker) when the host has no
/// clock of its own. Never fails. Thread-safe.
#[no_mangle]
pub extern "C" fn turnfit_clock_now_us() -> u64 {
    crate::boundary::guard_value("turnfit_clock_now_us", 0, now_us)
}

/// Creates a tracer with `config_json` (`{"ring_size": 1024,
/// "default_timeout_ms": 10000, "timeouts": {"tool": ms}}`, every field
/// optional; `(NULL, 0)` for the defaults). On success `*out_tracer` owns a
/// handle to release with `turnfit_tracer_free`. Errors: `INVALID_JSON`,
/// `INVALID_ARGUMENT` (zero ring or timeout), `LIMIT_EXCEEDED` (ring over
/// 1,000,000), `INVALID_UTF8`, `NULL_ARGUMENT`. Thread-safe.
///
/// JSON: `config_json` `schemas/tracer-config.json`.
///
/// # Safety
/// `config_json` is valid for its length (or NULL with length 0);
/// `out_tracer` is valid for a write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_tracer_new(
    config_json: *const c_char,
    config_json_len: usize,
    out_tracer: *mut *mut turnfit_tracer,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_tracer_new", err, || {
        let dst = out(out_tracer, "out_tracer")?;
        // SAFETY: per the contract above.
        let text = unsafe { args::opt_text(config_json, config_json_len, "config_json", MAX_JSON_BYTES) }?;
        let inner = match text {
            Some(t) => Tracer::from_json(t)?,
            None => Tracer::new(Default::default())?,
        };
        dst.write(Box::into_raw(Box::new(turnfit_tracer { inner })));
        Ok(())
    })
}

/// Releases a tracer. `turnfit_tracer_free(NULL)` does nothing. The caller
/// must ensure no other thread still uses the handle.
///
/// # Safety
/// `tracer` is NULL or a live handle from `turnfit_tracer_new`.
#[no_mangle]
pub unsafe extern "C" fn turnfit_tracer_free(tracer: *mut turnfit_tracer) {
    crate::boundary::guard_void("turnfit_tracer_free", || {
        if !tracer.is_null() {
            // SAFETY: created by `Box::into_raw` in `turnfit_tracer_new`.
            drop(unsafe { Box::from_raw(tracer) });
        }
    })
}

/// Starts a span: `tool` was called at `now_us` with `input_bytes` of
/// arguments. `info_json` is `{"agent_id", "workflow_id", "tool_call_id",
/// "timeout_ms"}`, every field optional, or `(NULL, 0)`; give the
/// `tool_call_id` so an overdue call can be answered in the conversation.
/// `*out_span_id` receives the id to pass to `turnfit_tracer_end`. Errors:
/// `INVALID_ARGUMENT` (empty tool or id, zero timeout), `LIMIT_EXCEEDED` (a
/// name over 256 bytes, 100,000 open spans, a 1,025th tool), `INVALID_JSON`,
/// `INVALID_UTF8`, `NULL_ARGUMENT`. Thread-safe.
///
/// JSON: `info_json` `schemas/span-info.json`.
///
/// # Safety
/// `tracer` is live; text arguments are valid for their lengths (or NULL
/// with length 0); `out_span_id` is valid for a write; `err` is NULL or
/// valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_tracer_start(
    tracer: *mut turnfit_tracer,
    tool: *const c_char,
    tool_len: usize,
    info_json: *const c_char,
    info_json_len: usize,
    input_bytes: u64,
    now_us: u64,
    out_span_id: *mut u64,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_tracer_start", err, || {
        let dst = out(out_span_id, "out_span_id")?;
        // SAFETY: per the contract above.
        let (t, tool, info) = unsafe {
            (
                args::handle(tracer, "tracer")?,
                args::text(tool, tool_len, "tool", MAX_KEY_BYTES)?,
                args::opt_text(info_json, info_json_len, "info_json", MAX_JSON_BYTES)?,
            )
        };
        let info: SpanInfo = args::opt_json("info_json", info)?;
        dst.write(t.inner.start(tool, info, input_bytes, now_us)?);
        Ok(())
    })
}

/// Ends span `span_id` at `now_us` with `outcome` (a
/// `turnfit_span_outcome`), `output_bytes` of result, and `error` text
/// (`(NULL, 0)` for none; kept up to 4 KiB). Errors: `INVALID_ARGUMENT`
/// (the span is not open: never started, already ended or expired; an
/// outcome out of range), `LIMIT_EXCEEDED` (error text over 64 MiB),
/// `INVALID_UTF8`, `NULL_ARGUMENT`. Thread-safe.
///
/// # Safety
/// `tracer` is live; `error` is valid for its length (or NULL with length
/// 0); `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_tracer_end(
    tracer: *mut turnfit_tracer,
    span_id: u64,
    outcome: u32,
    output_bytes: u64,
    error: *const c_char,
    error_len: usize,
    now_us: u64,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_tracer_end", err, || {
        let outcome = outcome_of(outcome)?;
        // SAFETY: per the contract above.
        let (t, error) =
            unsafe { (args::handle(tracer, "tracer")?, args::opt_text(error, error_len, "error", MAX_JSON_BYTES)?) };
        t.inner.end(span_id, outcome, output_bytes, error, now_us)?;
        Ok(())
    })
}

/// Ends span `span_id` like `turnfit_tracer_end`, with `end_json`:
/// `{"output_bytes", "error", "error_category", "input_tokens",
/// "output_tokens", "metadata"}`, every field optional (`(NULL, 0)`: none).
/// Token usage and error categories are summed per tool in the export; the
/// metadata (at most 16 keys of 1 to 64 bytes, scalar values, strings up to
/// 256 bytes) stays on the span's record. Errors: `INVALID_ARGUMENT` (the span
/// is not open, an outcome out of range, a nested metadata value, an empty key,
/// a category that is not 1 to 64 bytes of a-z, 0-9, _), `LIMIT_EXCEEDED`
/// (a metadata cap, a tool's 65th category; the span stays open),
/// `INVALID_JSON`, `INVALID_UTF8`, `NULL_ARGUMENT`. Thread-safe.
///
/// JSON: `end_json` `schemas/span-end.json`.
///
/// # Safety
/// `tracer` is live; `end_json` is valid for its length (or NULL with length
/// 0); `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_tracer_end_with(
    tracer: *mut turnfit_tracer,
    span_id: u64,
    outcome: u32,
    end_json: *const c_char,
    end_json_len: usize,
    now_us: u64,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_tracer_end_with", err, || {
        let outcome = outcome_of(outcome)?;
        // SAFETY: per the contract above.
        let (t, end) = unsafe {
            (args::handle(tracer, "tracer")?, args::opt_text(end_json, end_json_len, "end_json", MAX_JSON_BYTES)?)
        };
        let end: SpanEnd = args::opt_json("end_json", end)?;
        t.inner.end_with(span_id, outcome, end, now_us)?;
        Ok(())
    })
}

fn outcome_of(outcome: u32) -> Result<Outcome, FfiError> {
    Ok(match outcome {
        0 => Outcome::Success,
        1 => Outcome::Failed,
        2 => Outcome::Timeout,
        3 => Outcome::Cancelled,
        o => return Err(FfiError::invalid(format!("outcome {o} is not a turnfit_span_outcome"))),
    })
}

fn overdue_json(spans: Vec<OverdueSpan>) -> Result<turnfit_string, FfiError> {
    json_string(&Overdue::of(spans))
}

/// Open spans past their deadline at `now_us`, as JSON: `{"overdue":
/// [{"span_id", "tool", "agent_id", "workflow_id", "tool_call_id",
/// "started_us", "elapsed_us", "timeout_ms"}], "interrupted_results":
/// [{"tool_call_id", "tool", "content", "reason"}]}` (docs/formats.md,
/// "Overdue spans"). The spans stay open. Thread-safe.
///
/// Errors: `NULL_ARGUMENT`.
///
/// JSON: result `schemas/tracer-overdue.json`.
///
/// # Safety
/// `tracer` is live; `out_json` is valid for a write; `err` is NULL or valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_tracer_overdue(
    tracer: *const turnfit_tracer,
    now_us: u64,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_tracer_overdue", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let t = unsafe { args::handle(tracer, "tracer") }?;
        dst.write(overdue_json(t.inner.overdue(now_us))?);
        Ok(())
    })
}

/// Like `turnfit_tracer_overdue`, and also ends each overdue span as
/// `timeout`, so it is counted and leaves the open set. Thread-safe.
///
/// Errors: `NULL_ARGUMENT`.
///
/// JSON: result `schemas/tracer-overdue.json`.
///
/// # Safety
/// `tracer` is live; `out_json` is valid for a write; `err` is NULL or valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_tracer_expire(
    tracer: *mut turnfit_tracer,
    now_us: u64,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_tracer_expire", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let t = unsafe { args::handle(tracer, "tracer") }?;
        dst.write(overdue_json(t.inner.expire(now_us))?);
        Ok(())
    })
}

/// Everything the tracer holds, as JSON (docs/formats.md, "Trace export"):
/// counters, per-tool metrics (count, errors, timeouts, latency min / max /
/// mean / p50 / p95 / p99 in µs), open spans as of `now_us`, and the recent
/// span records with repeat counts. Thread-safe.
///
/// Errors: `NULL_ARGUMENT`.
///
/// JSON: result `schemas/trace-export.json`.
///
/// # Safety
/// `tracer` is live; `out_json` is valid for a write; `err` is NULL or valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_tracer_export(
    tracer: *const turnfit_tracer,
    now_us: u64,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_tracer_export", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let t = unsafe { args::handle(tracer, "tracer") }?;
        dst.write(json_string(&t.inner.export(now_us))?);
        Ok(())
    })
}

/// The record of finished span `span_id` while it is in the tracer's ring,
/// as JSON: one element of the export's `recent` (with `input_excerpt`,
/// `output_excerpt`, `error_category`, `count`, `last_span_id`), or `null`
/// for a span that is still open, was never started, was pushed out of the
/// ring, or was a repeat folded into a record between its first and its last
/// span. Thread-safe.
///
/// Errors: `NULL_ARGUMENT`.
///
/// JSON: result `schemas/span-record.json`.
///
/// # Safety
/// `tracer` is live; `out_json` is valid for a write; `err` is NULL or valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_tracer_span(
    tracer: *const turnfit_tracer,
    span_id: u64,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_tracer_span", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let t = unsafe { args::handle(tracer, "tracer") }?;
        dst.write(json_string(&t.inner.span(span_id))?);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use std::ptr::{null, null_mut};

    use super::*;
    use crate::strings::turnfit_string_free;

    fn start(t: *mut turnfit_tracer, info: &[u8]) -> (turnfit_status, u64) {
        let mut id = 0;
        // SAFETY: live tracer, valid slices.
        let st = unsafe {
            turnfit_tracer_start(t, c"s".as_ptr(), 1, info.as_ptr().cast(), info.len(), 0, 0, &mut id, null_mut())
        };
        (st, id)
    }

    fn span(t: *mut turnfit_tracer, id: u64) -> String {
        let mut out = turnfit_string { ptr: null_mut(), len: 0 };
        // SAFETY: live tracer, valid out-pointer.
        assert_eq!(unsafe { turnfit_tracer_span(t, id, &mut out, null_mut()) }, turnfit_status::Ok);
        // SAFETY: a string turnfit filled.
        let text = unsafe { std::slice::from_raw_parts(out.ptr.cast::<u8>(), out.len) }.to_vec();
        unsafe { turnfit_string_free(&mut out) };
        String::from_utf8(text).unwrap()
    }

    #[test]
    fn excerpts_and_lookup_through_the_c_abi_and_bad_input() {
        let mut t = null_mut();
        let cfg = br#"{"excerpt_bytes": 8}"#;
        // SAFETY: valid slices and out-pointer.
        assert_eq!(
            unsafe { turnfit_tracer_new(cfg.as_ptr().cast(), cfg.len(), &mut t, null_mut()) },
            turnfit_status::Ok
        );
        let (st, id) = start(t, br#"{"input": "{\"path\": \"notes.md\"}"}"#);
        assert_eq!(st, turnfit_status::Ok);
        assert_eq!(span(t, id), "null", "an open span has no record");
        let end = br#"{"output": "line one\nline two", "error": "ToolException: disk full"}"#;
        // SAFETY: live tracer, valid slice.
        let st = unsafe { turnfit_tracer_end_with(t, id, 1, end.as_ptr().cast(), end.len(), 5, null_mut()) };
        assert_eq!(st, turnfit_status::Ok);
        let r: serde_json::Value = serde_json::from_str(&span(t, id)).unwrap();
        assert_eq!(r["input_excerpt"], "{\"pat…");
        assert_eq!(r["output_excerpt"], "line …");
        assert_eq!(r["error_category"], "tool_failed");
        assert_eq!(r["last_span_id"], id);
        assert_eq!(span(t, id + 100), "null");
        // Invalid UTF-8 in the input, or a lone surrogate escape: refused by name.
        assert_eq!(start(t, b"{\"input\": \"ab\xff\xfe\"}").0, turnfit_status::InvalidUtf8);
        assert_eq!(start(t, br#"{"input": "ab\udc80"}"#).0, turnfit_status::InvalidJson);
        // Deep JSON as the input text is text: kept cut, never parsed.
        let deep = format!(r#"{{"input": "{}"}}"#, "[".repeat(100_000));
        let (st, id) = start(t, deep.as_bytes());
        assert_eq!(st, turnfit_status::Ok);
        // SAFETY: live tracer.
        assert_eq!(unsafe { turnfit_tracer_end(t, id, 0, 0, null(), 0, 9, null_mut()) }, turnfit_status::Ok);
        let r: serde_json::Value = serde_json::from_str(&span(t, id)).unwrap();
        assert_eq!(r["input_excerpt"], "[[[[[…");
        // SAFETY: created above.
        unsafe { turnfit_tracer_free(t) };
    }
}
