//! A `str`'s UTF-8 form without a copy.
//!
//! PyO3's `PyString::to_cow` under the `abi3-py39` feature encodes the
//! string into a fresh `bytes` object on every call (the borrowing call,
//! `PyUnicode_AsUTF8AndSize`, joined the limited API only in 3.10). That
//! encode runs with the GIL held, so two threads counting a big text spent
//! about half their time converting one after the other: on 24 MiB, 82 ms
//! for one count against 44 ms for the core alone, and two threads took
//! 1.77x one (bench/python/gil_scaling.py; docs/benchmarks.md).
//!
//! `PyUnicode_AsUTF8AndSize` is public C API since CPython 3.3 and exported
//! by every CPython this wheel loads into on ELF and Mach-O platforms, where
//! an extension's symbols are resolved against the running interpreter. It
//! returns a pointer the string object owns: the string's own data when it
//! is ASCII, otherwise a UTF-8 copy CPython makes once and caches on the
//! object (what tiktoken and every non-abi3 PyO3 module use). On Windows an
//! abi3 module links `python3.dll`, which before 3.10 does not export it, so
//! there the PyO3 path stays.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::PyString;

#[cfg(not(windows))]
extern "C" {
    fn PyUnicode_AsUTF8AndSize(
        unicode: *mut pyo3::ffi::PyObject,
        size: *mut pyo3::ffi::Py_ssize_t,
    ) -> *const std::os::raw::c_char;
}

/// The UTF-8 text of `s`, borrowed from the string object when the
/// interpreter can give it; `Err` when the string holds lone surrogates
/// (the caller replaces them), as `to_cow` would.
pub(crate) fn utf8_of<'a>(s: &'a Bound<'_, PyString>) -> PyResult<Cow<'a, str>> {
    #[cfg(not(windows))]
    {
        let mut len: pyo3::ffi::Py_ssize_t = 0;
        // SAFETY: `s` is a live `str` (the GIL is held through `Bound`);
        // the returned buffer belongs to the object and lives as long as it,
        // which the `'a` borrow of `s` enforces. CPython guarantees it is
        // valid UTF-8 of `len` bytes; NULL means an exception was set.
        let ptr = unsafe { PyUnicode_AsUTF8AndSize(s.as_ptr(), &mut len) };
        if ptr.is_null() {
            return Err(PyErr::fetch(s.py()));
        }
        let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len as usize) };
        Ok(Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(bytes) }))
    }
    #[cfg(windows)]
    {
        s.to_cow()
    }
}
