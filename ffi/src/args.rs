//! Argument conversion: C pointers and lengths to borrowed Rust values, with
//! the NULL and UTF-8 rules of the ABI applied in one place.

use std::ffi::c_char;

use turnfit_core::frontend;

use crate::error::FfiError;
use crate::status::turnfit_status;

fn null(what: &str) -> FfiError {
    FfiError::new(turnfit_status::NullArgument, format!("{what} is NULL"))
}

/// `(ptr, len)` as a slice: `(NULL, 0)` is empty; NULL with a length is
/// `NULL_ARGUMENT`; a misaligned pointer or a length no buffer can have is
/// `INVALID_ARGUMENT`.
///
/// # Safety
/// A non-NULL `ptr` is valid for reads of `len` values of `T` for the call's duration.
pub(crate) unsafe fn slice<'a, T>(ptr: *const T, len: usize, what: &str) -> Result<&'a [T], FfiError> {
    if ptr.is_null() {
        return if len == 0 {
            Ok(&[])
        } else {
            Err(FfiError::new(turnfit_status::NullArgument, format!("{what} is NULL but its length is {len}")))
        };
    }
    no_buffer_is::<T>(len, what)?;
    if !ptr.is_aligned() {
        return Err(FfiError::invalid(format!("{what} is not aligned for its element type")));
    }
    // SAFETY: non-NULL, aligned, and valid for `len` reads per the contract.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// `INVALID_ARGUMENT` for a length of `T`s no buffer can have (over
/// `PTRDIFF_MAX` bytes): the header's first length rule, before any limit.
fn no_buffer_is<T>(len: usize, what: &str) -> Result<(), FfiError> {
    if len > isize::MAX as usize / std::mem::size_of::<T>().max(1) {
        return Err(FfiError::invalid(format!("{what} length {len} is larger than any buffer can be")));
    }
    Ok(())
}

/// `(ptr, len)` as UTF-8 text no longer than `limit` bytes. Text is
/// `const char *` in C (what C and C++ strings are), read as bytes here;
/// it need not be NUL-terminated.
///
/// # Safety
/// As for [`slice`].
pub(crate) unsafe fn text<'a>(ptr: *const c_char, len: usize, what: &str, limit: usize) -> Result<&'a str, FfiError> {
    // SAFETY: forwarded contract; `c_char` and `u8` have the same size and alignment.
    let b = unsafe { bytes(ptr.cast::<u8>(), len, what, limit) }?;
    Ok(frontend::utf8(what, b)?)
}

/// `(ptr, len)` as bytes no longer than `limit`: the length is checked
/// before the slice is made, so a length over the limit is refused without
/// a byte being read (the header's promise; the caller's buffer may be
/// shorter than a refused length says, and end at an unmapped page).
///
/// # Safety
/// As for [`slice`].
pub(crate) unsafe fn bytes<'a>(ptr: *const u8, len: usize, what: &str, limit: usize) -> Result<&'a [u8], FfiError> {
    if !ptr.is_null() {
        no_buffer_is::<u8>(len, what)?;
        frontend::check_bytes(what, len, limit)?;
    }
    // SAFETY: forwarded contract.
    unsafe { slice(ptr, len, what) }
}

/// An optional text argument: `(NULL, 0)` and `("", 0)` are `None`.
///
/// # Safety
/// As for [`slice`].
pub(crate) unsafe fn opt_text<'a>(
    ptr: *const c_char,
    len: usize,
    what: &str,
    limit: usize,
) -> Result<Option<&'a str>, FfiError> {
    // SAFETY: forwarded contract.
    let t = unsafe { text(ptr, len, what, limit) }?;
    Ok((!t.is_empty()).then_some(t))
}

/// `(ptr, len)` as a name (model, encoding, skill, id): over
/// `MAX_NAME_BYTES` is core's `INVALID_ARGUMENT` from the length alone,
/// before a byte is read (the message quotes none of it: the buffer may be
/// shorter than the length says, issue 48). `label` is core's word for it
/// (`model name`).
///
/// # Safety
/// As for [`slice`].
pub(crate) unsafe fn name<'a>(ptr: *const c_char, len: usize, what: &str, label: &str) -> Result<&'a str, FfiError> {
    if !ptr.is_null() {
        no_buffer_is::<u8>(len, what)?;
        frontend::check_name_len(label, len)?;
    }
    // SAFETY: forwarded contract; `c_char` and `u8` have the same size and alignment.
    let b = unsafe { slice(ptr.cast::<u8>(), len, what) }?;
    Ok(frontend::utf8(what, b)?)
}

/// An optional name: `(NULL, 0)` and `("", 0)` are `None`.
///
/// # Safety
/// As for [`slice`].
pub(crate) unsafe fn opt_name<'a>(
    ptr: *const c_char,
    len: usize,
    what: &str,
    label: &str,
) -> Result<Option<&'a str>, FfiError> {
    // SAFETY: forwarded contract.
    let t = unsafe { name(ptr, len, what, label) }?;
    Ok((!t.is_empty()).then_some(t))
}

/// An optional JSON options argument, already read with [`opt_text`]:
/// absent (`(NULL, 0)` or empty) is `T::default()`, the core's defaults;
/// otherwise the core's strict parse, errors naming `what`.
pub(crate) fn opt_json<T: serde::de::DeserializeOwned + Default>(
    what: &str,
    text: Option<&str>,
) -> Result<T, FfiError> {
    Ok(turnfit_core::frontend::parse_options(what, text)?)
}

/// A required handle.
///
/// # Safety
/// `ptr` is NULL or a live handle of type `T` created by turnfit.
pub(crate) unsafe fn handle<'a, T>(ptr: *const T, what: &str) -> Result<&'a T, FfiError> {
    // SAFETY: per the contract.
    unsafe { ptr.as_ref() }.ok_or_else(|| null(what))
}

/// A required out-parameter, checked before any work is done so that a NULL
/// output never costs a computation and is reported as such.
pub(crate) fn out<T>(ptr: *mut T, what: &str) -> Result<Out<T>, FfiError> {
    if ptr.is_null() {
        Err(null(what))
    } else {
        Ok(Out(ptr))
    }
}

/// An optional out-parameter: NULL means the caller does not want it.
pub(crate) fn opt_out<T>(ptr: *mut T) -> Option<Out<T>> {
    (!ptr.is_null()).then_some(Out(ptr))
}

/// A checked, non-NULL out-parameter, written once on success.
pub(crate) struct Out<T>(*mut T);

impl<T> Out<T> {
    pub(crate) fn write(self, value: T) {
        // SAFETY: non-NULL by construction; every exported function documents
        // its out-parameters as valid for one write.
        unsafe { self.0.write(value) }
    }
}

/// Pointer handling without the tokenizers, cheap enough for Miri
/// (scripts/miri.sh) as well as `cargo test`.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::strings::{turnfit_string, turnfit_string_free};

    #[test]
    fn slices_follow_the_null_and_length_rules() {
        let words = [1u32, 2, 3];
        // SAFETY (all calls): the pointers are NULL or point into `words`/`bytes`.
        assert_eq!(unsafe { slice(words.as_ptr(), 3, "ids") }.unwrap(), &words);
        assert_eq!(unsafe { slice(std::ptr::null::<u32>(), 0, "ids") }.unwrap(), &[] as &[u32]);
        let e = unsafe { slice(std::ptr::null::<u32>(), 2, "ids") }.unwrap_err();
        assert_eq!(e.status, turnfit_status::NullArgument);
        let e = unsafe { slice(words.as_ptr(), usize::MAX / 2, "ids") }.unwrap_err();
        assert_eq!(e.status, turnfit_status::InvalidArgument);
        let bytes = [0u8; 8];
        let odd = bytes.as_ptr().wrapping_add(1).cast::<u32>();
        if !odd.is_aligned() {
            let e = unsafe { slice(odd, 1, "ids") }.unwrap_err();
            assert_eq!(e.status, turnfit_status::InvalidArgument);
        }
    }

    #[test]
    fn text_checks_the_limit_before_reading_and_utf8_after() {
        let s = "héllo";
        // SAFETY (all calls): pointer and length describe `s` or a prefix of it.
        assert_eq!(unsafe { text(s.as_ptr().cast(), s.len(), "text", s.len()) }.unwrap(), s);
        let e = unsafe { text(s.as_ptr().cast(), s.len(), "text", s.len() - 1) }.unwrap_err();
        assert_eq!(e.status, turnfit_status::LimitExceeded);
        let e = unsafe { text(s.as_ptr().cast(), 2, "text", 64) }.unwrap_err(); // cuts 'é'
        assert_eq!(e.status, turnfit_status::InvalidUtf8);
        assert_eq!(unsafe { opt_text(std::ptr::null(), 0, "text", 64) }.unwrap(), None);
    }

    #[test]
    fn outputs_are_written_once_and_strings_freed_twice_harmlessly() {
        assert!(out(std::ptr::null_mut::<usize>(), "out").is_err());
        let mut n = 0usize;
        out(&mut n, "out").unwrap().write(7);
        assert_eq!(n, 7);
        let mut s = turnfit_string::from_string("abc".into());
        // SAFETY: `s` was filled by turnfit; the buffer holds len + 1 bytes.
        assert_eq!(unsafe { std::slice::from_raw_parts(s.ptr.cast::<u8>(), s.len + 1) }, b"abc\0");
        unsafe { turnfit_string_free(&mut s) };
        assert!(s.ptr.is_null() && s.len == 0);
        unsafe { turnfit_string_free(&mut s) };
        unsafe { turnfit_string_free(std::ptr::null_mut()) };
    }
}
