//! The Kotlin fast path for `countTokens`: one plain C function taking only
//! primitives, so the JVM crosses it through JNA direct mapping with no JNA
//! `Structure`.
//!
//! Why: every uniffi call from Kotlin allocates JNA `Structure`s (a
//! `UniffiRustCallStatus` per call, plus the handle clone and the
//! `RustBuffer` of the string, each with its own status). Each one is a
//! `com.sun.jna.Memory` registered in JNA's global map and freed by its
//! cleaner thread; a JFR profile of `countTokens("")` put ~95% of the time
//! there, 50-100 µs per call on the shared machine (docs/benchmarks.md).
//! This function is conversion only, like the rest of the crate: the count
//! is the core's, and any failure is reported as a negative value, after
//! which the Kotlin facade repeats the call through uniffi to raise the
//! proper `TurnfitException` with the core's message.

use crate::Tokenizer;

/// The text was not valid UTF-8 or the core refused it.
pub const FAST_ERROR: i64 = -1;
/// A panic was caught (never crosses the boundary).
pub const FAST_PANIC: i64 = -2;
/// A null handle or a null pointer with a non-zero length.
pub const FAST_BAD_ARGUMENT: i64 = -3;

/// The number of tokens of the UTF-8 bytes `ptr[..len]`, counted by the
/// tokenizer behind `handle`; a negative `FAST_*` value on failure.
///
/// `handle` is the uniffi handle of a `Tokenizer` (uniffi 0.32 lowers an
/// object as `Arc::into_raw`; `handle_is_arc_pointer` below checks it). The
/// handle is borrowed, not consumed: the caller keeps the object alive for
/// the call (the facade holds the generated class's call counter).
///
/// # Safety
/// `handle` must be a live `Tokenizer` handle and `ptr` must point to `len`
/// readable bytes (or be null with `len == 0`).
#[no_mangle]
pub unsafe extern "C" fn turnfit_uniffi_fast_count_tokens(handle: u64, ptr: *const u8, len: u64) -> i64 {
    if handle == 0 || (ptr.is_null() && len != 0) {
        return FAST_BAD_ARGUMENT;
    }
    let Ok(len) = usize::try_from(len) else { return FAST_BAD_ARGUMENT };
    // SAFETY: the caller guarantees a live Tokenizer handle (an Arc pointer
    // uniffi made) and `len` readable bytes at `ptr`.
    let (tokenizer, bytes) = unsafe {
        let t = &*(handle as usize as *const Tokenizer);
        let b = if len == 0 { &[][..] } else { std::slice::from_raw_parts(ptr, len) };
        (t, b)
    };
    std::panic::catch_unwind(|| count(tokenizer, bytes)).unwrap_or(FAST_PANIC)
}

fn count(t: &Tokenizer, bytes: &[u8]) -> i64 {
    let Ok(text) = turnfit::frontend::utf8("text", bytes) else { return FAST_ERROR };
    match t.inner.count(text) {
        Ok(n) => i64::try_from(n).unwrap_or(FAST_ERROR),
        Err(_) => FAST_ERROR,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Encoding;
    use std::sync::Arc;

    /// A handle made by uniffi's own lowering, as the Kotlin object holds it.
    fn handle_of(t: Arc<Tokenizer>) -> u64 {
        <Arc<Tokenizer> as uniffi::Lower<crate::UniFfiTag>>::lower(t).as_raw()
    }

    fn free(h: u64) {
        // SAFETY: `h` came from `handle_of` and is released once.
        drop(unsafe { uniffi::Handle::from_raw_unchecked(h).into_arc::<Tokenizer>() });
    }

    #[test]
    fn handle_is_arc_pointer() {
        let t = Tokenizer::new(Encoding::O200kBase, None).unwrap();
        let h = handle_of(t.clone());
        assert_eq!(h, Arc::as_ptr(&t) as usize as u64);
        free(h);
    }

    #[test]
    fn counts_as_the_uniffi_method_does() {
        let t = Tokenizer::new(Encoding::O200kBase, None).unwrap();
        let h = handle_of(t.clone());
        for s in ["", "Hello, world!", "<|endoftext|> héllo 世界 🎉", &"a".repeat(10_000)] {
            let want = t.count_tokens(crate::Text(s.to_owned())).unwrap() as i64;
            let got = unsafe { turnfit_uniffi_fast_count_tokens(h, s.as_ptr(), s.len() as u64) };
            assert_eq!(got, want, "{s:?}");
        }
        free(h);
    }

    #[test]
    fn bad_input_is_a_negative_status() {
        let t = Tokenizer::new(Encoding::Cl100kBase, None).unwrap();
        let h = handle_of(t);
        let bad = [b'a', 0xff, b'b'];
        unsafe {
            assert_eq!(turnfit_uniffi_fast_count_tokens(h, bad.as_ptr(), 3), FAST_ERROR);
            assert_eq!(turnfit_uniffi_fast_count_tokens(h, std::ptr::null(), 0), 0);
            assert_eq!(turnfit_uniffi_fast_count_tokens(h, std::ptr::null(), 5), FAST_BAD_ARGUMENT);
            assert_eq!(turnfit_uniffi_fast_count_tokens(0, bad.as_ptr(), 1), FAST_BAD_ARGUMENT);
        }
        free(h);
    }
}
