//! Error recovery: provider error classification, retry backoff, and
//! circuit breakers. Classification and backoff are stateless functions;
//! a `turnfit_breaker` is a handle, internally synchronized (one mutex), so
//! one breaker may be shared by every thread of the host.

use std::ffi::c_char;

use std::collections::BTreeMap;

use turnfit_core::limits::{MAX_JSON_BYTES, MAX_KEY_BYTES};
use turnfit_core::recovery::{classify_in, BackoffPolicy, BreakerConfig, Breakers, ErrorContext, Provider};

use crate::args::{self, out};
use crate::boundary::guard;
use crate::error::{turnfit_error, FfiError};
use crate::status::turnfit_status;
use crate::strings::{json_string, turnfit_string};

/// Classifies a provider error. `provider` is `openai`, `azure`,
/// `anthropic`, `bedrock`, `gemini`, `ollama` or `other`; `status` the HTTP
/// status (0: no response arrived); `body` the response body as received
/// (JSON or text, `(NULL, 0)` for none); `headers_json` a JSON object of
/// response headers, name to value (`(NULL, 0)` for none), of which
/// `retry-after`, `retry-after-ms` and `x-amzn-ErrorType` are read.
/// `*out_json` receives the classification (docs/formats.md, "Error
/// classification"): `category`, `severity`, `retryable`, `action`
/// (`retry`, `compact`, `repair_history`, `fail`), `retry_after_ms`, ...
/// Errors: `INVALID_ARGUMENT` (unknown provider, status over 65535),
/// `INVALID_JSON` (headers), `LIMIT_EXCEEDED`, `INVALID_UTF8`,
/// `NULL_ARGUMENT`. Thread-safe.
///
/// JSON: `headers_json` `schemas/classify-headers.json`; result `schemas/classification.json`.
///
/// # Safety
/// Text arguments are valid for their lengths (or NULL with length 0);
/// `out_json` is valid for a write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_recovery_classify(
    provider: *const c_char,
    provider_len: usize,
    status: u32,
    body: *const c_char,
    body_len: usize,
    headers_json: *const c_char,
    headers_json_len: usize,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    // SAFETY: per the contract above; no context.
    unsafe {
        classify_guarded(
            "turnfit_recovery_classify",
            provider,
            provider_len,
            status,
            body,
            body_len,
            headers_json,
            headers_json_len,
            std::ptr::null(),
            0,
            out_json,
            err,
        )
    }
}

/// `turnfit_recovery_classify` with the error's context: `context_json` is
/// `{"agent_id", "workflow_id", "metadata"}` (each optional; `(NULL, 0)` for
/// none), echoed in the classification's `agent_id`, `workflow_id` and
/// `metadata` (null when not given). Errors: as for
/// `turnfit_recovery_classify`, and `INVALID_JSON` (a context that is not
/// that object), `INVALID_ARGUMENT` (an empty id), `LIMIT_EXCEEDED` (an id
/// over 256 bytes). Thread-safe.
///
/// JSON: `context_json` `schemas/error-context.json`; result `schemas/classification.json`.
///
/// # Safety
/// As for `turnfit_recovery_classify`; `context_json` is valid for its
/// length (or NULL with length 0).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn turnfit_recovery_classify_in(
    provider: *const c_char,
    provider_len: usize,
    status: u32,
    body: *const c_char,
    body_len: usize,
    headers_json: *const c_char,
    headers_json_len: usize,
    context_json: *const c_char,
    context_json_len: usize,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    // SAFETY: per the contract above.
    unsafe {
        classify_guarded(
            "turnfit_recovery_classify_in",
            provider,
            provider_len,
            status,
            body,
            body_len,
            headers_json,
            headers_json_len,
            context_json,
            context_json_len,
            out_json,
            err,
        )
    }
}

/// The body of both classify entry points, under the boundary guard named
/// `name`: one reading of the arguments, so the two cannot drift apart. A
/// `(NULL, 0)` context is the empty context, which `classify_in` echoes as
/// `classify` would.
///
/// # Safety
/// As for `turnfit_recovery_classify_in`.
#[allow(clippy::too_many_arguments)]
unsafe fn classify_guarded(
    name: &'static str,
    provider: *const c_char,
    provider_len: usize,
    status: u32,
    body: *const c_char,
    body_len: usize,
    headers_json: *const c_char,
    headers_json_len: usize,
    context_json: *const c_char,
    context_json_len: usize,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard(name, err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the callers' contracts.
        let (provider, body, headers, context) = unsafe {
            (
                args::text(provider, provider_len, "provider", MAX_KEY_BYTES)?,
                args::text(body, body_len, "body", MAX_JSON_BYTES)?,
                args::opt_text(headers_json, headers_json_len, "headers_json", MAX_JSON_BYTES)?,
                args::opt_text(context_json, context_json_len, "context_json", MAX_JSON_BYTES)?,
            )
        };
        let status =
            u16::try_from(status).map_err(|_| FfiError::invalid(format!("status {status} is not an HTTP status")))?;
        let provider = Provider::from_name(provider)?;
        let headers: BTreeMap<String, String> = args::opt_json("headers_json", headers)?;
        let context: ErrorContext = args::opt_json("context_json", context)?;
        let pairs: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        dst.write(json_string(&classify_in(provider, status, body, &pairs, context)?)?);
        Ok(())
    })
}

/// The retry decision after a failure: `request_json` is `{"policy":
/// {"base_ms", "cap_ms", "max_attempts", "honor_retry_after",
/// "max_retry_after_ms"}, "failed_attempts": n, "seed": s,
/// "retry_after_ms": hint}` (docs/formats.md, "Backoff"). `*out_json`
/// receives `{"decision": "retry", "delay_ms": n}` or `{"decision":
/// "give_up", "reason": "..."}`. Full jitter, deterministic for a given seed
/// and attempt. Errors: `INVALID_JSON`, `INVALID_ARGUMENT` (a policy with
/// `cap_ms < base_ms`, zero attempts), `LIMIT_EXCEEDED` (a request over
/// 64 MiB), `INVALID_UTF8`, `NULL_ARGUMENT`. Thread-safe.
///
/// JSON: input `schemas/backoff-request.json`; result `schemas/backoff-decision.json`.
///
/// # Safety
/// `request_json` is valid for its length; `out_json` is valid for a write;
/// `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_recovery_backoff(
    request_json: *const c_char,
    request_json_len: usize,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_recovery_backoff", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let text = unsafe { args::text(request_json, request_json_len, "request_json", MAX_JSON_BYTES) }?;
        dst.write(json_string(&BackoffPolicy::decide_json(text)?)?);
        Ok(())
    })
}

/// A set of circuit breakers, one per key. Thread-safe (one mutex).
pub struct turnfit_breaker {
    pub(crate) inner: Breakers,
}

/// Creates circuit breakers with `config_json` (`{"failure_threshold",
/// "cool_down_ms", "half_open_max_calls", "success_threshold"}`, every field
/// optional; `(NULL, 0)` for the defaults 5 / 30000 / 1 / 1). On success
/// `*out_breaker` owns a handle to release with `turnfit_breaker_free`.
/// Errors: `INVALID_JSON`, `INVALID_ARGUMENT` (a zero threshold),
/// `LIMIT_EXCEEDED` (a config over 64 MiB), `INVALID_UTF8`, `NULL_ARGUMENT`.
/// Thread-safe.
///
/// JSON: `config_json` `schemas/breaker-config.json`.
///
/// # Safety
/// `config_json` is valid for its length (or NULL with length 0);
/// `out_breaker` is valid for a write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_breaker_new(
    config_json: *const c_char,
    config_json_len: usize,
    out_breaker: *mut *mut turnfit_breaker,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_breaker_new", err, || {
        let dst = out(out_breaker, "out_breaker")?;
        // SAFETY: per the contract above.
        let text = unsafe { args::opt_text(config_json, config_json_len, "config_json", MAX_JSON_BYTES) }?;
        let config: BreakerConfig = args::opt_json("config_json", text)?;
        let inner = Breakers::new(config)?;
        dst.write(Box::into_raw(Box::new(turnfit_breaker { inner })));
        Ok(())
    })
}

/// Releases breakers. `turnfit_breaker_free(NULL)` does nothing. The caller
/// must ensure no other thread still uses the handle.
///
/// # Safety
/// `breaker` is NULL or a live handle from `turnfit_breaker_new`.
#[no_mangle]
pub unsafe extern "C" fn turnfit_breaker_free(breaker: *mut turnfit_breaker) {
    crate::boundary::guard_void("turnfit_breaker_free", || {
        if !breaker.is_null() {
            // SAFETY: created by `Box::into_raw` in `turnfit_breaker_new`.
            drop(unsafe { Box::from_raw(breaker) });
        }
    })
}

/// Whether a call under `key` may go ahead at `now_ms` (caller's clock, in
/// milliseconds; see `turnfit_clock_now_us`). `*out_allowed` is false while
/// the key's breaker is open. While half-open, true reserves one probe slot:
/// report the probe's outcome with `turnfit_breaker_record_success` or
/// `_failure`. Errors: `INVALID_ARGUMENT` (empty key), `LIMIT_EXCEEDED` (a
/// key over 256 bytes; more than 10,000 keys with failures), `INVALID_UTF8`,
/// `NULL_ARGUMENT`. Thread-safe.
///
/// # Safety
/// `breaker` is live; `key` is valid for its length; `out_allowed` is valid
/// for a write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_breaker_allow(
    breaker: *mut turnfit_breaker,
    key: *const c_char,
    key_len: usize,
    now_ms: u64,
    out_allowed: *mut bool,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_breaker_allow", err, || {
        let dst = out(out_allowed, "out_allowed")?;
        // SAFETY: per the contract above.
        let (b, key) = unsafe { (args::handle(breaker, "breaker")?, args::text(key, key_len, "key", MAX_KEY_BYTES)?) };
        dst.write(b.inner.allow(key, now_ms)?);
        Ok(())
    })
}

/// # Safety
/// As for the exported callers.
unsafe fn record(
    breaker: *const turnfit_breaker,
    key: *const c_char,
    key_len: usize,
    success: bool,
    now_ms: u64,
) -> Result<(), FfiError> {
    // SAFETY: forwarded contract.
    let (b, key) = unsafe { (args::handle(breaker, "breaker")?, args::text(key, key_len, "key", MAX_KEY_BYTES)?) };
    b.inner.record(key, success, now_ms)?;
    Ok(())
}

/// A breaker's state after a call, as `turnfit_breaker_record_*_state`
/// report it (the `state` of `turnfit_breaker_state`'s JSON). New in ABI 2.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum turnfit_breaker_phase {
    /// Calls flow.
    Closed = 0,
    /// Calls are refused.
    Open = 1,
    /// A limited number of probe calls are let through.
    HalfOpen = 2,
}

impl From<turnfit_core::recovery::BreakerState> for turnfit_breaker_phase {
    fn from(s: turnfit_core::recovery::BreakerState) -> Self {
        use turnfit_core::recovery::BreakerState as S;
        match s {
            S::Closed => turnfit_breaker_phase::Closed,
            S::Open => turnfit_breaker_phase::Open,
            S::HalfOpen => turnfit_breaker_phase::HalfOpen,
        }
    }
}

/// # Safety
/// As for `turnfit_breaker_record_success_state`.
unsafe fn record_state(
    breaker: *const turnfit_breaker,
    key: *const c_char,
    key_len: usize,
    success: bool,
    now_ms: u64,
    out_state: *mut u32,
) -> Result<(), FfiError> {
    let dst = out(out_state, "out_state")?;
    // SAFETY: forwarded contract.
    let (b, key) = unsafe { (args::handle(breaker, "breaker")?, args::text(key, key_len, "key", MAX_KEY_BYTES)?) };
    let state = b.inner.record(key, success, now_ms)?;
    dst.write(turnfit_breaker_phase::from(state) as u32);
    Ok(())
}

/// `turnfit_breaker_record_success`, also writing the breaker's state after
/// the call (a `turnfit_breaker_phase`) to `*out_state`, read under the same
/// lock as the update. Errors: as for `turnfit_breaker_allow`, and
/// `NULL_ARGUMENT` for `out_state`. Thread-safe. New in ABI 2.
///
/// # Safety
/// `breaker` is live; `key` is valid for its length; `out_state` is valid
/// for a write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_breaker_record_success_state(
    breaker: *mut turnfit_breaker,
    key: *const c_char,
    key_len: usize,
    now_ms: u64,
    out_state: *mut u32,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    // SAFETY: per the contract above.
    guard("turnfit_breaker_record_success_state", err, || unsafe {
        record_state(breaker, key, key_len, true, now_ms, out_state)
    })
}

/// `turnfit_breaker_record_failure`, also writing the breaker's state after
/// the call (a `turnfit_breaker_phase`) to `*out_state`. Errors: as for
/// `turnfit_breaker_allow`, and `NULL_ARGUMENT` for `out_state`. Thread-safe.
/// New in ABI 2.
///
/// # Safety
/// As for `turnfit_breaker_record_success_state`.
#[no_mangle]
pub unsafe extern "C" fn turnfit_breaker_record_failure_state(
    breaker: *mut turnfit_breaker,
    key: *const c_char,
    key_len: usize,
    now_ms: u64,
    out_state: *mut u32,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    // SAFETY: per the contract above.
    guard("turnfit_breaker_record_failure_state", err, || unsafe {
        record_state(breaker, key, key_len, false, now_ms, out_state)
    })
}

/// Records a successful call under `key` at `now_ms`: resets the failure
/// count, or closes a half-open breaker after enough probe successes.
/// Errors: as for `turnfit_breaker_allow`. Thread-safe.
///
/// # Safety
/// `breaker` is live; `key` is valid for its length; `err` is NULL or valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_breaker_record_success(
    breaker: *mut turnfit_breaker,
    key: *const c_char,
    key_len: usize,
    now_ms: u64,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    // SAFETY: per the contract above.
    guard("turnfit_breaker_record_success", err, || unsafe { record(breaker, key, key_len, true, now_ms) })
}

/// Records a failed call under `key` at `now_ms`: counts it, opening the
/// breaker at the threshold; a failed probe reopens a half-open breaker.
/// Errors: as for `turnfit_breaker_allow`. Thread-safe.
///
/// # Safety
/// `breaker` is live; `key` is valid for its length; `err` is NULL or valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_breaker_record_failure(
    breaker: *mut turnfit_breaker,
    key: *const c_char,
    key_len: usize,
    now_ms: u64,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    // SAFETY: per the contract above.
    guard("turnfit_breaker_record_failure", err, || unsafe { record(breaker, key, key_len, false, now_ms) })
}

/// The state of `key` at `now_ms` as JSON (docs/formats.md, "Circuit breaker
/// state"): `{"key", "state": "closed"|"open"|"half_open",
/// "consecutive_failures", "opened_at_ms", "retry_in_ms", ...}`. Errors: as
/// for `turnfit_breaker_allow`. Thread-safe.
///
/// JSON: result `schemas/breaker-state.json`.
///
/// # Safety
/// `breaker` is live; `key` is valid for its length; `out_json` is valid for
/// a write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_breaker_state(
    breaker: *const turnfit_breaker,
    key: *const c_char,
    key_len: usize,
    now_ms: u64,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_breaker_state", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let (b, key) = unsafe { (args::handle(breaker, "breaker")?, args::text(key, key_len, "key", MAX_KEY_BYTES)?) };
        dst.write(json_string(&b.inner.snapshot(key, now_ms)?)?);
        Ok(())
    })
}

/// `turnfit_breaker_record_failure_state` for a call made by an agent in a
/// workflow: `context_json` (`{"agent_id", "workflow_id", "metadata"}`, each
/// optional; `(NULL, 0)` for none) also counts the failure under its agent
/// and workflow (see `turnfit_breaker_failure_counts`). The context is
/// checked before anything is recorded. Errors: as for
/// `turnfit_breaker_record_failure_state`, and `INVALID_JSON`,
/// `INVALID_ARGUMENT` (an empty id), `LIMIT_EXCEEDED` (an id over 256 bytes)
/// for the context. Thread-safe.
///
/// JSON: `context_json` `schemas/error-context.json`.
///
/// # Safety
/// `breaker` is live; `key` and `context_json` are valid for their lengths
/// (`context_json` may be NULL with length 0); `out_state` is valid for a
/// write; `err` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_breaker_record_failure_in(
    breaker: *mut turnfit_breaker,
    key: *const c_char,
    key_len: usize,
    context_json: *const c_char,
    context_json_len: usize,
    now_ms: u64,
    out_state: *mut u32,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_breaker_record_failure_in", err, || {
        let dst = out(out_state, "out_state")?;
        // SAFETY: per the contract above.
        let (b, key, context) = unsafe {
            (
                args::handle(breaker, "breaker")?,
                args::text(key, key_len, "key", MAX_KEY_BYTES)?,
                args::opt_text(context_json, context_json_len, "context_json", MAX_JSON_BYTES)?,
            )
        };
        let context: ErrorContext = args::opt_json("context_json", context)?;
        let state = b.inner.record_in(key, false, now_ms, &context)?;
        dst.write(turnfit_breaker_phase::from(state) as u32);
        Ok(())
    })
}

/// Failures recorded with `turnfit_breaker_record_failure_in`, per agent and
/// per workflow over every key, as JSON (docs/formats.md, "Failure counts"):
/// `{"by_agent": {id: n}, "by_workflow": {id: n}, "unattributed": n}`.
/// Errors: `NULL_ARGUMENT`. Thread-safe.
///
/// JSON: result `schemas/failure-counts.json`.
///
/// # Safety
/// `breaker` is live; `out_json` is valid for a write; `err` is NULL or
/// valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_breaker_failure_counts(
    breaker: *const turnfit_breaker,
    out_json: *mut turnfit_string,
    err: *mut *mut turnfit_error,
) -> turnfit_status {
    guard("turnfit_breaker_failure_counts", err, || {
        let dst = out(out_json, "out_json")?;
        // SAFETY: per the contract above.
        let b = unsafe { args::handle(breaker, "breaker") }?;
        dst.write(json_string(&b.inner.failure_counts())?);
        Ok(())
    })
}
