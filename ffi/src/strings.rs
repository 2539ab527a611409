//! Owned buffers handed to the caller: strings and token arrays.

/// An owned UTF-8 string returned by ctxkit. `ptr` points to `len` bytes
/// followed by a NUL (a courtesy for C; the text itself may contain NULs only
/// where the input did). Release it with `ctxkit_string_free`, never `free()`.
#[repr(C)]
#[derive(Debug)]
pub struct ctxkit_string {
    /// The bytes; never NULL in a string ctxkit returned.
    pub ptr: *mut u8,
    /// Length in bytes, excluding the trailing NUL.
    pub len: usize,
}

impl ctxkit_string {
    pub(crate) fn from_string(s: String) -> ctxkit_string {
        let mut bytes = s.into_bytes();
        bytes.push(0);
        let len = bytes.len() - 1;
        let ptr = Box::into_raw(bytes.into_boxed_slice()).cast::<u8>();
        ctxkit_string { ptr, len }
    }
}

/// Releases the buffer of `s` and resets it to `{NULL, 0}`, so freeing twice
/// is harmless. `ctxkit_string_free(NULL)` and freeing `{NULL, 0}` do nothing.
///
/// # Safety
/// `s` is NULL or points to a `ctxkit_string` that ctxkit filled (or that is
/// `{NULL, 0}`), whose fields the caller has not changed.
#[no_mangle]
pub unsafe extern "C" fn ctxkit_string_free(s: *mut ctxkit_string) {
    crate::boundary::guard_void("ctxkit_string_free", || {
        // SAFETY: per the contract.
        let Some(s) = (unsafe { s.as_mut() }) else { return };
        if !s.ptr.is_null() {
            let slice = std::ptr::slice_from_raw_parts_mut(s.ptr, s.len + 1);
            // SAFETY: allocated in `from_string` as a boxed slice of len + 1.
            drop(unsafe { Box::from_raw(slice) });
        }
        s.ptr = std::ptr::null_mut();
        s.len = 0;
    })
}

/// An owned array of token ids returned by ctxkit. `ptr` is NULL when `len`
/// is 0. Release it with `ctxkit_tokens_free`.
#[repr(C)]
#[derive(Debug)]
pub struct ctxkit_tokens {
    /// The ids, or NULL for an empty array.
    pub ptr: *mut u32,
    /// Number of ids.
    pub len: usize,
}

impl ctxkit_tokens {
    pub(crate) fn from_vec(v: Vec<u32>) -> ctxkit_tokens {
        if v.is_empty() {
            return ctxkit_tokens { ptr: std::ptr::null_mut(), len: 0 };
        }
        let len = v.len();
        let ptr = Box::into_raw(v.into_boxed_slice()).cast::<u32>();
        ctxkit_tokens { ptr, len }
    }
}

/// Releases the array of `t` and resets it to `{NULL, 0}`.
/// `ctxkit_tokens_free(NULL)` and freeing `{NULL, 0}` do nothing.
///
/// # Safety
/// `t` is NULL or points to a `ctxkit_tokens` that ctxkit filled (or that is
/// `{NULL, 0}`), whose fields the caller has not changed.
#[no_mangle]
pub unsafe extern "C" fn ctxkit_tokens_free(t: *mut ctxkit_tokens) {
    crate::boundary::guard_void("ctxkit_tokens_free", || {
        // SAFETY: per the contract.
        let Some(t) = (unsafe { t.as_mut() }) else { return };
        if !t.ptr.is_null() {
            let slice = std::ptr::slice_from_raw_parts_mut(t.ptr, t.len);
            // SAFETY: allocated in `from_vec` as a boxed slice of `len`.
            drop(unsafe { Box::from_raw(slice) });
        }
        t.ptr = std::ptr::null_mut();
        t.len = 0;
    })
}
