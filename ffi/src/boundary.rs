//! The panic boundary. Every exported function body runs inside one of these
//! wrappers, so a Rust panic never unwinds into a C frame (undefined
//! behaviour) and never aborts the host: it becomes `TURNFIT_STATUS_PANIC`
//! with the panic message. The workspace keeps `panic = "unwind"` in every
//! profile for this reason.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::{self, turnfit_error, FfiError};
use crate::status::turnfit_status;

/// Runs a fallible body; maps its error (or panic) to a status and, when
/// `err` is not NULL, an owned error object naming `function`. Called from
/// inside a host counter, it refuses with `INVALID_ARGUMENT` without
/// running the body.
pub(crate) fn guard(
    function: &'static str,
    err: *mut *mut turnfit_error,
    body: impl FnOnce() -> Result<(), FfiError>,
) -> turnfit_status {
    let failure = match catch_unwind(AssertUnwindSafe(|| {
        inject::point(function);
        // A call from inside a host counter (`turnfit_count_fn`) is refused
        // before it runs: the counter runs while turnfit holds the window or
        // turn it counts for, so the call could wait on that lock forever.
        turnfit_core::models::check_not_counting(function)?;
        body()
    })) {
        Ok(Ok(())) => return turnfit_status::Ok,
        Ok(Err(e)) => e,
        Err(payload) => FfiError::new(turnfit_status::Panic, format!("panicked: {}", panic_message(&payload))),
    };
    let status = failure.status;
    // Building the error allocates; if even that panics, the status alone
    // still reaches the caller.
    // SAFETY: every exported function documents `err` as NULL or writable.
    let _ = catch_unwind(AssertUnwindSafe(|| unsafe { error::store(err, function, failure) }));
    status
}

/// Runs an infallible body that returns nothing (the `_free` functions).
/// `function` names the exported function for panic injection.
pub(crate) fn guard_void(function: &'static str, body: impl FnOnce()) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        inject::point(function);
        body()
    }));
}

/// Runs an infallible body that returns a value, with a value for the
/// unreachable-in-practice panic case.
pub(crate) fn guard_value<T>(function: &'static str, on_panic: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(|| {
        inject::point(function);
        body()
    }))
    .unwrap_or(on_panic)
}

/// Panic injection (test-only feature `panic-inject`): a thread that
/// selected an exported function's name makes that function panic inside its
/// boundary, first thing, so ffi/tests/panic_injection.rs can prove every
/// entry point turns a panic into `TURNFIT_STATUS_PANIC` (or, for functions
/// with no status, returns normally) instead of unwinding into C. The
/// selection is per thread so parallel tests do not see it. Without the
/// feature `point` is an empty inline function: no cost, no behaviour.
#[cfg(feature = "panic-inject")]
pub(crate) mod inject {
    use std::cell::Cell;

    thread_local! {
        static SELECTED: Cell<Option<&'static str>> = const { Cell::new(None) };
        static FIRED: Cell<usize> = const { Cell::new(0) };
    }

    /// Selects the function that panics on this thread (None: none).
    #[allow(dead_code)]
    pub(crate) fn select(function: Option<&'static str>) {
        SELECTED.with(|s| s.set(function));
    }

    /// How many injected panics this thread has raised.
    #[allow(dead_code)]
    pub(crate) fn fired() -> usize {
        FIRED.with(Cell::get)
    }

    #[inline]
    pub(crate) fn point(function: &'static str) {
        if SELECTED.with(Cell::get) == Some(function) {
            FIRED.with(|f| f.set(f.get() + 1));
            panic!("injected panic in {function}");
        }
    }
}

#[cfg(not(feature = "panic-inject"))]
pub(crate) mod inject {
    #[inline(always)]
    pub(crate) fn point(_function: &'static str) {}
}

fn panic_message(payload: &Box<dyn Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_a_status_and_an_error_object() {
        let mut err: *mut turnfit_error = std::ptr::null_mut();
        let status = guard("turnfit_test", &mut err, || panic!("boom {}", 42));
        assert_eq!(status, turnfit_status::Panic);
        let mut len = 0usize;
        let msg = unsafe { crate::error::turnfit_error_message(err, &mut len) };
        let msg = unsafe { std::ffi::CStr::from_ptr(msg) }.to_str().unwrap();
        assert_eq!(msg, "turnfit_test: panicked: boom 42");
        assert_eq!(len, msg.len());
        // SAFETY: `err` was just written by the boundary.
        assert_eq!(unsafe { crate::error::turnfit_error_code(err) }, turnfit_status::Panic);
        unsafe { crate::error::turnfit_error_free(err) };
    }

    #[test]
    fn null_err_pointer_still_returns_status() {
        let status = guard("f", std::ptr::null_mut(), || Err(FfiError::invalid("x")));
        assert_eq!(status, turnfit_status::InvalidArgument);
    }
}
