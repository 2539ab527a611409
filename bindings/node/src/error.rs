//! Errors and the panic boundary.
//!
//! A core error becomes a JS `Error` whose message is
//! `turnfit:<kind>: <core message>`, `<kind>` being [`turnfit::ErrorKind::as_str`]
//! (the spelling tests/vectors use). The same text works for sync calls and
//! for async tasks (whose `compute` can only return a napi `Status`), and the
//! facade parses it in one place. A panic inside a call is caught here and
//! becomes kind `internal` with the panic's message: it never unwinds into V8.

use std::panic::{catch_unwind, AssertUnwindSafe};

use turnfit::{Error, ErrorKind};

/// The prefix the facade looks for (`index.js`, `toTurnfitError`).
pub const PREFIX: &str = "turnfit:";

/// A core error as a napi error.
pub fn to_napi(e: &Error) -> napi::Error {
    napi::Error::new(napi::Status::GenericFailure, format!("{PREFIX}{}: {}", e.kind().as_str(), e.message()))
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic payload".to_owned()
    }
}

/// `invalid_argument` when called from inside a host counter (see
/// `registerModel`, src/registry.rs): the counter runs while turnfit holds
/// the window or turn it counts for, so a call back in (the same window's
/// lock, on the same thread) could wait forever. Every entry point checks
/// it: [`guard`] does, and the calls that start async work call it first.
pub fn not_counting(what: &str) -> napi::Result<()> {
    turnfit::models::check_not_counting(what).map_err(|e| to_napi(&e))
}

/// Runs `f`, mapping a core error to [`to_napi`] and a panic to kind
/// `internal`; refused from inside a host counter ([`not_counting`]).
pub fn guard<T>(what: &str, f: impl FnOnce() -> turnfit::Result<T>) -> napi::Result<T> {
    not_counting(what)?;
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(to_napi(&e)),
        Err(p) => Err(to_napi(&Error::new(
            ErrorKind::Internal,
            format!("{what}: panic inside turnfit (a bug, please report it): {}", panic_message(&*p)),
        ))),
    }
}

/// Bytes from JS (`Uint8Array`) as UTF-8, with the core's message on failure.
pub fn utf8<'a>(what: &str, bytes: &'a [u8]) -> turnfit::Result<&'a str> {
    turnfit::frontend::utf8(what, bytes)
}

/// A JS number (already checked by the facade to be a non-negative integer)
/// as a `usize`, saturating: a limit beyond the address space is no limit.
pub fn to_usize(x: f64) -> usize {
    if x.is_nan() || x <= 0.0 {
        0
    } else if x >= usize::MAX as f64 {
        usize::MAX
    } else {
        x as usize
    }
}

/// A JS number as a `u64`, saturating like [`to_usize`].
pub fn to_u64(x: f64) -> u64 {
    if x.is_nan() || x <= 0.0 {
        0
    } else if x >= u64::MAX as f64 {
        u64::MAX
    } else {
        x as u64
    }
}

/// Any serializable core value as JSON text.
pub fn json<T: serde::Serialize>(v: &T) -> turnfit::Result<String> {
    turnfit::frontend::to_json(v)
}

/// Test hook: a call that panics inside the boundary, so the tests can check
/// that a panic surfaces as `code: 'internal'` instead of aborting Node.
#[napi_derive::napi(js_name = "__panicForTest")]
pub fn panic_for_test(message: String) -> napi::Result<()> {
    guard("__panicForTest", || -> turnfit::Result<()> { panic!("{message}") })
}
