//! JS strings to UTF-8 in one pass, into a buffer kept per thread.
//!
//! napi-rs's `String` argument asks V8 for the UTF-8 length (a full walk of
//! the string), zero-fills a buffer of that size, then walks the string again
//! to write it. On 1 MiB of multilingual text that conversion was a quarter
//! of `countTokens` (docs/benchmarks.md, "Node.js"). [`JsText`] asks for the
//! UTF-16 length instead, which V8 knows without a walk, reserves the most
//! UTF-8 that many code units can need (3 bytes each: a surrogate pair is 4
//! bytes for 2 units, a lone surrogate becomes U+FFFD, 3 bytes), and lets V8
//! write once into the uninitialized buffer. The conversion is the same one
//! (`napi_get_value_string_utf8`: lone surrogates become U+FFFD, as tiktoken
//! does), so results do not change; only the walks do.
//!
//! The buffer is not allocated per call: each thread keeps the last one (up
//! to [`KEEP`] bytes of capacity) and the next string is written into it.
//! Where the conversion is most of a call, a repeated text the core's text
//! cache answers (20k × "a": about 2 µs, 60% of it this conversion), that
//! takes malloc and free out of the path; measured, it is small (about 250
//! instructions and 2.5% of the conversion's time on 20 KB, see
//! docs/benchmarks.md), so the bound is kept small too: texts up to about
//! 350,000 UTF-16 units (every text the text cache keeps) reuse the buffer,
//! longer ones allocate and free as before, where counting them costs
//! milliseconds anyway.
#![allow(unsafe_code)]

use std::cell::Cell;
use std::ops::Deref;
use std::ptr;

use napi::bindgen_prelude::{FromNapiValue, TypeName, ValidateNapiValue};
use napi::{sys, Status, ValueType};

/// Largest buffer a thread keeps between calls, in bytes of capacity (the
/// 3-bytes-a-unit reservation): at most this much memory per thread.
pub const KEEP: usize = 1 << 20;

thread_local! {
    /// The buffer the last [`JsText`] of this thread gave back.
    static SPARE: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// A JS string argument as UTF-8 (valid: V8 writes U+FFFD for lone
/// surrogates). Gives its buffer back to the thread when dropped.
pub struct JsText(Vec<u8>);

impl JsText {
    pub fn as_str(&self) -> &str {
        // SAFETY: V8 writes well-formed UTF-8 (REPLACE_INVALID_UTF8: a lone
        // surrogate becomes U+FFFD), exactly what napi-rs's own `String`
        // conversion relies on; the bytes are never changed after.
        unsafe { std::str::from_utf8_unchecked(&self.0) }
    }
}

impl Deref for JsText {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl Drop for JsText {
    fn drop(&mut self) {
        let buf = std::mem::take(&mut self.0);
        if buf.capacity() <= KEEP {
            // `try_with`: a thread being torn down just frees it.
            let _ = SPARE.try_with(|s| {
                let old = s.take();
                // Keep the larger of the two, should a call ever hold two
                // texts at once (each takes the spare, or a new buffer).
                s.set(if old.capacity() > buf.capacity() { old } else { buf });
            });
        }
    }
}

/// A buffer with room for `cap` bytes: this thread's spare when it is large
/// enough, else a new one (the spare is then dropped, not grown: growing
/// would copy its old contents).
fn buffer(cap: usize) -> Vec<u8> {
    let mut v = SPARE.try_with(Cell::take).unwrap_or_default();
    if v.capacity() < cap {
        v = Vec::with_capacity(cap);
    }
    v.clear();
    v
}

impl TypeName for JsText {
    fn type_name() -> &'static str {
        "string"
    }
    fn value_type() -> ValueType {
        ValueType::String
    }
}

impl ValidateNapiValue for JsText {}

impl FromNapiValue for JsText {
    unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> napi::Result<Self> {
        let not_a_string = || napi::Error::new(Status::StringExpected, "expected a string".to_owned());
        let mut units = 0usize;
        // SAFETY: `env` and `value` come from napi for this call; a null
        // buffer asks only for the length in UTF-16 code units.
        let status = unsafe { sys::napi_get_value_string_utf16(env, value, ptr::null_mut(), 0, &mut units) };
        if status != sys::Status::napi_ok {
            return Err(not_a_string());
        }
        // +1: napi always writes a terminating NUL inside the buffer.
        let cap = units.checked_mul(3).and_then(|n| n.checked_add(1)).ok_or_else(not_a_string)?;
        let mut text = JsText(buffer(cap));
        let buf = &mut text.0;
        let mut written = 0usize;
        // SAFETY: `buf` has room for `cap` bytes; napi writes at most
        // `cap - 1` bytes plus a NUL and reports how many it wrote before it.
        let status = unsafe { sys::napi_get_value_string_utf8(env, value, buf.as_mut_ptr().cast(), cap, &mut written) };
        if status != sys::Status::napi_ok {
            return Err(not_a_string());
        }
        // SAFETY: napi initialized the first `written` bytes (<= cap - 1).
        unsafe { buf.set_len(written.min(cap - 1)) };
        Ok(text)
    }
}
