//! Owned error objects. No thread-local "last error": Haskell and Node move
//! green threads between OS threads, so an error must travel with the call.

use std::ffi::{c_char, CString};

use crate::status::turnfit_status;

/// A failure description: a status code and a UTF-8 message. Created by turnfit
/// when a call fails and the caller passed a non-NULL `err`; owned by the
/// caller and released with `turnfit_error_free`. Immutable, so it may be read
/// from any thread.
pub struct turnfit_error {
    code: turnfit_status,
    message: CString,
}

/// The in-crate form of an error before it crosses the boundary.
#[derive(Debug)]
pub(crate) struct FfiError {
    pub(crate) status: turnfit_status,
    pub(crate) message: String,
}

impl FfiError {
    pub(crate) fn new(status: turnfit_status, message: impl Into<String>) -> Self {
        FfiError { status, message: message.into() }
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Self::new(turnfit_status::InvalidArgument, message)
    }
}

impl From<turnfit_core::Error> for FfiError {
    fn from(e: turnfit_core::Error) -> Self {
        FfiError { status: e.kind().into(), message: e.message().to_owned() }
    }
}

/// Writes `e` to `*err` when `err` is not NULL. Any previous value of `*err`
/// is overwritten, not freed: callers pass a pointer to a NULL `turnfit_error*`.
///
/// # Safety
/// `err` is NULL or valid for one pointer write.
pub(crate) unsafe fn store(err: *mut *mut turnfit_error, function: &str, e: FfiError) {
    if err.is_null() {
        return;
    }
    let text = format!("{function}: {}", e.message).replace('\0', "\u{FFFD}");
    let message = CString::new(text).unwrap_or_default();
    let boxed = Box::new(turnfit_error { code: e.status, message });
    // SAFETY: the caller guarantees `err` is valid for writes.
    unsafe { err.write(Box::into_raw(boxed)) };
}

/// The status code carried by `err`, or `TURNFIT_STATUS_NULL_ARGUMENT` when
/// `err` is NULL. Thread-safe.
///
/// # Safety
/// `err` is NULL or a live error created by turnfit.
#[no_mangle]
pub unsafe extern "C" fn turnfit_error_code(err: *const turnfit_error) -> turnfit_status {
    crate::boundary::guard_value("turnfit_error_code", turnfit_status::Panic, || {
        // SAFETY: per the contract above.
        unsafe { err.as_ref() }.map_or(turnfit_status::NullArgument, |e| e.code)
    })
}

/// The error's message: NUL-terminated UTF-8 that starts with the name of the
/// function that failed. The pointer is borrowed from `err` and stays valid
/// until `turnfit_error_free(err)`. When `out_len` is not NULL it receives the
/// length in bytes, without the terminating NUL. Returns NULL (and a length
/// of 0) when `err` is NULL. Thread-safe.
///
/// # Safety
/// `err` is NULL or a live error; `out_len` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn turnfit_error_message(err: *const turnfit_error, out_len: *mut usize) -> *const c_char {
    crate::boundary::guard_value("turnfit_error_message", std::ptr::null(), || {
        // SAFETY: per the contract above.
        let e = unsafe { err.as_ref() };
        let (ptr, len) = e.map_or((std::ptr::null(), 0), |e| (e.message.as_ptr(), e.message.as_bytes().len()));
        if !out_len.is_null() {
            // SAFETY: non-NULL `out_len` is valid for a write.
            unsafe { out_len.write(len) };
        }
        ptr
    })
}

/// Releases an error. `turnfit_error_free(NULL)` does nothing.
///
/// # Safety
/// `err` is NULL or an error from turnfit that has not been freed.
#[no_mangle]
pub unsafe extern "C" fn turnfit_error_free(err: *mut turnfit_error) {
    crate::boundary::guard_void("turnfit_error_free", || {
        if !err.is_null() {
            // SAFETY: `err` came from `Box::into_raw` in `store`.
            drop(unsafe { Box::from_raw(err) });
        }
    })
}
