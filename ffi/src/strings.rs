//! Owned buffers handed to the caller: strings and token arrays.

use std::ffi::c_char;

/// An owned UTF-8 string returned by turnfit. `ptr` points to `len` bytes
/// followed by a NUL (a courtesy for C; the text itself may contain NULs only
/// where the input did). Release it with `turnfit_string_free`, never `free()`.
/// The functions that return token bytes (`turnfit_tokenizer_token_bytes`,
/// `turnfit_tokenizer_decode_bytes`) use it for raw bytes, which need not be
/// UTF-8 (a `char` buffer holding bytes, as libgit2's `git_buf` does: one
/// string type, and results such as JSON go back in as text without a cast).
#[repr(C)]
#[derive(Debug)]
pub struct turnfit_string {
    /// The bytes; never NULL in a string turnfit returned.
    pub ptr: *mut c_char,
    /// Length in bytes, excluding the trailing NUL.
    pub len: usize,
}

impl turnfit_string {
    pub(crate) fn from_string(s: String) -> turnfit_string {
        turnfit_string::from_bytes(s.into_bytes())
    }

    /// Raw bytes (token bytes), not necessarily UTF-8, in the same layout.
    pub(crate) fn from_bytes(mut bytes: Vec<u8>) -> turnfit_string {
        bytes.push(0);
        let len = bytes.len() - 1;
        let ptr = Box::into_raw(bytes.into_boxed_slice()).cast::<c_char>();
        turnfit_string { ptr, len }
    }
}

/// `v` serialized as JSON in an owned string: how every JSON result leaves
/// the ABI (the one place, for every object's functions).
pub(crate) fn json_string<T: serde::Serialize>(v: &T) -> Result<turnfit_string, crate::error::FfiError> {
    Ok(turnfit_string::from_string(turnfit_core::frontend::to_json(v)?))
}

/// Releases the buffer of `s` and resets it to `{NULL, 0}`, so freeing twice
/// is harmless. `turnfit_string_free(NULL)` and freeing `{NULL, 0}` do nothing.
///
/// # Safety
/// `s` is NULL or points to a `turnfit_string` that turnfit filled (or that is
/// `{NULL, 0}`), whose fields the caller has not changed.
#[no_mangle]
pub unsafe extern "C" fn turnfit_string_free(s: *mut turnfit_string) {
    crate::boundary::guard_void("turnfit_string_free", || {
        // SAFETY: per the contract.
        let Some(s) = (unsafe { s.as_mut() }) else { return };
        if !s.ptr.is_null() {
            let slice = std::ptr::slice_from_raw_parts_mut(s.ptr.cast::<u8>(), s.len + 1);
            // SAFETY: allocated in `from_string` as a boxed slice of len + 1.
            drop(unsafe { Box::from_raw(slice) });
        }
        s.ptr = std::ptr::null_mut();
        s.len = 0;
    })
}

/// Releases a string buffer given its two fields, for hosts whose finalizer
/// holds a pointer and a length rather than the struct (a ByteString, a Node
/// Buffer or a Swift Data adopting the bytes without a copy). `ptr` and
/// `len` are exactly the fields of a `turnfit_string` turnfit filled; after
/// this call the caller must not use them again (nor call
/// `turnfit_string_free` on that struct). `ptr == NULL` does nothing. New in
/// ABI 2.
///
/// # Safety
/// `ptr` is NULL, or the `ptr` of a `turnfit_string` turnfit filled whose `len`
/// is `len`, not yet freed.
#[no_mangle]
pub unsafe extern "C" fn turnfit_string_free_parts(ptr: *mut c_char, len: usize) {
    crate::boundary::guard_void("turnfit_string_free_parts", || {
        let mut s = turnfit_string { ptr, len };
        // SAFETY: per the contract, `s` is a string turnfit filled.
        unsafe { turnfit_string_free(&mut s) };
    })
}

/// An owned array of token ids returned by turnfit (or of character offsets,
/// from `turnfit_tokenizer_decode_with_offsets`). `ptr` is never NULL in
/// an array turnfit returned, even when `len` is 0 (since ABI 2, as for
/// `turnfit_string`). Release it with `turnfit_tokens_free`.
#[repr(C)]
#[derive(Debug)]
pub struct turnfit_tokens {
    /// The ids; never NULL in an array turnfit returned.
    pub ptr: *mut u32,
    /// Number of ids.
    pub len: usize,
}

impl turnfit_tokens {
    pub(crate) fn from_vec(mut v: Vec<u32>) -> turnfit_tokens {
        // One trailing 0 after the ids, as strings carry a NUL: the pointer
        // is never NULL, even for an empty array.
        let len = v.len();
        v.push(0);
        let ptr = Box::into_raw(v.into_boxed_slice()).cast::<u32>();
        turnfit_tokens { ptr, len }
    }
}

/// Releases the array of `t` and resets it to `{NULL, 0}`.
/// `turnfit_tokens_free(NULL)` and freeing `{NULL, 0}` do nothing.
///
/// # Safety
/// `t` is NULL or points to a `turnfit_tokens` that turnfit filled (or that is
/// `{NULL, 0}`), whose fields the caller has not changed.
#[no_mangle]
pub unsafe extern "C" fn turnfit_tokens_free(t: *mut turnfit_tokens) {
    crate::boundary::guard_void("turnfit_tokens_free", || {
        // SAFETY: per the contract.
        let Some(t) = (unsafe { t.as_mut() }) else { return };
        if !t.ptr.is_null() {
            let slice = std::ptr::slice_from_raw_parts_mut(t.ptr, t.len + 1);
            // SAFETY: allocated in `from_vec` as a boxed slice of `len + 1`.
            drop(unsafe { Box::from_raw(slice) });
        }
        t.ptr = std::ptr::null_mut();
        t.len = 0;
    })
}
