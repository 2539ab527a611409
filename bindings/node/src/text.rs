//! JS strings to UTF-8 in one pass.
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
#![allow(unsafe_code)]

use std::ptr;

use napi::bindgen_prelude::{FromNapiValue, TypeName, ValidateNapiValue};
use napi::{sys, Status, ValueType};

/// A JS string argument as UTF-8.
pub struct JsText(pub String);

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
        let mut buf: Vec<u8> = Vec::with_capacity(cap);
        let mut written = 0usize;
        // SAFETY: `buf` has room for `cap` bytes; napi writes at most
        // `cap - 1` bytes plus a NUL and reports how many it wrote before it.
        let status = unsafe { sys::napi_get_value_string_utf8(env, value, buf.as_mut_ptr().cast(), cap, &mut written) };
        if status != sys::Status::napi_ok {
            return Err(not_a_string());
        }
        // SAFETY: napi initialized the first `written` bytes (<= cap - 1).
        unsafe { buf.set_len(written.min(cap - 1)) };
        // SAFETY: V8 writes well-formed UTF-8 (REPLACE_INVALID_UTF8: a lone
        // surrogate becomes U+FFFD), exactly what napi-rs's own `String`
        // conversion relies on.
        Ok(JsText(unsafe { String::from_utf8_unchecked(buf) }))
    }
}
