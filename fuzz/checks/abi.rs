//! Target `abi`: every C ABI entry point that takes text or JSON, fed the
//! fuzzer's bytes as they are (invalid UTF-8 and NUL included), through the
//! ffi crate as a Rust dependency. Input: one byte picks the function (and
//! for two-input functions whether the bytes go to the first or the second
//! input, the other getting a valid value), the rest is the bytes. Every
//! call returns a status the library defines, never `TURNFIT_STATUS_PANIC`;
//! on failure `*err` is an error object whose code is that status and whose
//! message is a non-empty C string; on success every output is set and
//! every owned output is freed here (ASan and valgrind see any leak or
//! double free when the harness runs under them).
//!
//! Included by the fuzz crate (where `super::ffi` is `turnfit_ffi`) and by
//! the ffi crate's corpus replay test (where it is the crate itself).

use std::ffi::{c_char, c_void};
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::common::Knobs;
use super::ffi::*;

/// Every (function, status) pair a call returned, for the ffi crate's
/// check that each function's `Errors:` list in the header names every
/// status it returns (ffi/tests/errors_lists.rs). Bounded: one entry per
/// pair.
pub static SEEN: std::sync::Mutex<std::collections::BTreeSet<(&'static str, u32)>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// Checks a returned status and the error object that goes with it.
fn check_status(function: &'static str, status: turnfit_status, err: *mut turnfit_error) -> bool {
    let n = status as u32;
    SEEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert((function, n));
    let name = unsafe { std::ffi::CStr::from_ptr(turnfit_status_name(n)) }.to_str().unwrap();
    assert_ne!(name, "TURNFIT_STATUS_UNRECOGNIZED", "{function} returned undefined status {n}");
    if status == turnfit_status::Ok {
        assert!(err.is_null(), "{function} succeeded but wrote an error object");
        return true;
    }
    assert!(!err.is_null(), "{function} failed with {name} but wrote no error object");
    let code = unsafe { turnfit_error_code(err) };
    let mut len = 0usize;
    let msg = unsafe { turnfit_error_message(err, &mut len) };
    assert!(!msg.is_null(), "{function}: error message is NULL");
    let text = unsafe { std::ffi::CStr::from_ptr(msg) }.to_string_lossy().into_owned();
    assert_eq!(text.len(), len, "{function}: message length");
    assert_eq!(code, status, "{function}: error code {code:?} differs from status {status:?} ({text})");
    assert_ne!(status, turnfit_status::Panic, "{function} panicked: {text}");
    assert!(text.starts_with(function), "{function}: message does not name the function: {text}");
    unsafe { turnfit_error_free(err) };
    false
}

/// Takes an output string: set on success, valid UTF-8 (JSON when `json`),
/// then freed.
fn take_string(function: &str, mut s: turnfit_string, json: bool) {
    assert!(!s.ptr.is_null(), "{function}: success with a NULL string");
    let bytes = unsafe { std::slice::from_raw_parts(s.ptr.cast::<u8>(), s.len) };
    let text = std::str::from_utf8(bytes).unwrap_or_else(|_| panic!("{function}: output is not UTF-8"));
    assert_eq!(unsafe { *s.ptr.add(s.len) }, 0, "{function}: output not NUL terminated");
    if json {
        serde_json::from_str::<serde_json::Value>(text)
            .unwrap_or_else(|e| panic!("{function}: output is not JSON: {e}"));
    }
    unsafe { turnfit_string_free(&mut s) };
    assert!(s.ptr.is_null(), "{function}: string_free did not reset the string");
}

/// A host counter for `turnfit_registry_register_counter`: 1 token a 4
/// bytes, rounded up.
unsafe extern "C" fn quarter(
    _user: *mut c_void,
    _text: *const c_char,
    len: usize,
    out_tokens: *mut usize,
    _message: *mut c_char,
    _capacity: usize,
) -> i32 {
    unsafe { out_tokens.write(len.div_ceil(4)) };
    0
}

/// Its `free_user_data`: `user` is an `Arc<AtomicUsize>` counting the calls.
unsafe extern "C" fn release(user: *mut c_void) {
    let frees = unsafe { Arc::from_raw(user.cast_const().cast::<AtomicUsize>()) };
    frees.fetch_add(1, Ordering::Relaxed);
}

/// A byte string as a C text argument (`const char *`).
fn txt(b: &[u8]) -> *const c_char {
    b.as_ptr().cast()
}

const EMPTY: turnfit_string = turnfit_string { ptr: null_mut(), len: 0 };

const CONVERSATION: &str = r#"{"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"},{"role":"user","content":"again"}]}"#;
const FIT_OPTIONS: &str = r#"{"model":"gpt-4o","max_tokens":60,"policy":{"strategy":"recency"}}"#;
const HANDOFF: &str = r#"{"version":"1.0","task_summary":"Fix the flaky parser test.","key_outputs":[],"metadata":{"from_agent":"planner","to_agent":"coder","created_at":"2026-03-01T12:00:00Z"}}"#;

struct Handles {
    registry: *mut turnfit_registry,
    tokenizer: *mut turnfit_tokenizer,
    window: *mut turnfit_window,
    breaker: *mut turnfit_breaker,
    tracer: *mut turnfit_tracer,
    stack: *mut turnfit_callstack,
}

impl Handles {
    fn new() -> Handles {
        let mut h = Handles {
            registry: null_mut(),
            tokenizer: null_mut(),
            window: null_mut(),
            breaker: null_mut(),
            tracer: null_mut(),
            stack: null_mut(),
        };
        let e = null_mut();
        unsafe {
            assert_eq!(turnfit_registry_new(&mut h.registry, e), turnfit_status::Ok);
            let enc = b"cl100k_base";
            assert_eq!(turnfit_tokenizer_new(txt(enc), enc.len(), 0, &mut h.tokenizer, e), turnfit_status::Ok);
            let model = b"gpt-4o";
            assert_eq!(
                turnfit_window_new(h.registry, txt(model), model.len(), null(), 0, &mut h.window, e),
                turnfit_status::Ok
            );
            assert_eq!(turnfit_breaker_new(null(), 0, &mut h.breaker, e), turnfit_status::Ok);
            assert_eq!(turnfit_tracer_new(null(), 0, &mut h.tracer, e), turnfit_status::Ok);
            assert_eq!(turnfit_callstack_new(8, &mut h.stack, e), turnfit_status::Ok);
        }
        h
    }
}

impl Drop for Handles {
    fn drop(&mut self) {
        unsafe {
            turnfit_callstack_free(self.stack);
            turnfit_tracer_free(self.tracer);
            turnfit_breaker_free(self.breaker);
            turnfit_window_free(self.window);
            turnfit_tokenizer_free(self.tokenizer);
            turnfit_registry_free(self.registry);
        }
    }
}

/// How many selector values `check` distinguishes.
pub const FUNCTIONS: u8 = 35;

pub fn check(data: &[u8]) {
    let mut k = Knobs::new(data);
    let which = k.byte() % FUNCTIONS;
    let bytes = k.rest();
    // Text parameters are `const char *`, byte parameters `const uint8_t *`.
    let (p, pb, n) = (txt(bytes), bytes.as_ptr(), bytes.len());
    let h = Handles::new();
    let mut s = EMPTY;
    macro_rules! call {
        ($f:ident, $json:expr, $($arg:expr),*) => {{
            let mut err: *mut turnfit_error = null_mut();
            let status = $f($($arg,)* &mut err);
            let ok = check_status(stringify!($f), status, err);
            if let (true, Some(json)) = (ok, $json) {
                take_string(stringify!($f), std::mem::replace(&mut s, EMPTY), json);
            }
            ok
        }};
    }
    let none: Option<bool> = None;
    let (c, fo, ho) = (CONVERSATION.as_bytes(), FIT_OPTIONS.as_bytes(), HANDOFF.as_bytes());
    unsafe {
        match which {
            0 => {
                let mut t = null_mut();
                if call!(turnfit_tokenizer_new, none, p, n, 0, &mut t) {
                    turnfit_tokenizer_free(t);
                }
            }
            1 => {
                let mut t = null_mut();
                if call!(turnfit_tokenizer_new_for_model, none, h.registry, p, n, null(), 0, 0, &mut t) {
                    turnfit_tokenizer_free(t);
                }
            }
            2 => {
                let mut count = usize::MAX;
                if call!(turnfit_tokenizer_count, none, h.tokenizer, p, n, &mut count) {
                    assert!(count <= n, "more tokens than bytes");
                }
            }
            3 => {
                let (mut count, mut exceeded) = (0usize, false);
                call!(turnfit_tokenizer_count_until_limit, none, h.tokenizer, p, n, n / 3, &mut count, &mut exceeded);
            }
            4 => {
                // Any bytes: encode_bytes round-trips them through decode_bytes.
                let mut t = turnfit_tokens { ptr: null_mut(), len: 0 };
                if call!(turnfit_tokenizer_encode_bytes, none, h.tokenizer, pb, n, &mut t) {
                    let mut out = EMPTY;
                    let st = turnfit_tokenizer_decode_bytes(h.tokenizer, t.ptr, t.len, &mut out, null_mut());
                    assert_eq!(st, turnfit_status::Ok);
                    assert_eq!(
                        std::slice::from_raw_parts(out.ptr.cast::<u8>(), out.len),
                        bytes,
                        "decode_bytes(encode_bytes(x)) != x"
                    );
                    turnfit_string_free(&mut out);
                    turnfit_tokens_free(&mut t);
                }
                let mut id = 0u32;
                call!(turnfit_tokenizer_token_id, none, h.tokenizer, pb, n, &mut id);
                // The input as text and as a special-token policy.
                let policy = br#"{"allowed_special": ["<|endoftext|>"]}"#;
                if call!(turnfit_tokenizer_encode_special, none, h.tokenizer, p, n, txt(policy), policy.len(), &mut t) {
                    turnfit_tokens_free(&mut t);
                }
                if call!(turnfit_tokenizer_encode_special, none, h.tokenizer, p, 0, p, n, &mut t) {
                    turnfit_tokens_free(&mut t);
                }
                let mut t = turnfit_tokens { ptr: null_mut(), len: 0 };
                if call!(turnfit_tokenizer_encode, none, h.tokenizer, p, n, &mut t) {
                    let text = std::str::from_utf8(bytes).expect("encode accepted invalid UTF-8");
                    let mut out = EMPTY;
                    let st = turnfit_tokenizer_decode(h.tokenizer, t.ptr, t.len, 0, &mut out, null_mut());
                    assert_eq!(st, turnfit_status::Ok);
                    assert_eq!(
                        std::slice::from_raw_parts(out.ptr.cast::<u8>(), out.len),
                        text.as_bytes(),
                        "decode(encode(x)) != x"
                    );
                    turnfit_string_free(&mut out);
                    turnfit_tokens_free(&mut t);
                }
            }
            5 | 6 => {
                let ids: Vec<u32> =
                    bytes.chunks(3).map(|c| c.iter().fold(0u32, |a, &b| a << 8 | u32::from(b))).collect();
                let mut raw = EMPTY;
                if call!(turnfit_tokenizer_decode_bytes, none, h.tokenizer, ids.as_ptr(), ids.len(), &mut raw) {
                    turnfit_string_free(&mut raw);
                }
                call!(
                    turnfit_tokenizer_decode,
                    Some(false),
                    h.tokenizer,
                    ids.as_ptr(),
                    ids.len(),
                    u32::from(which == 6),
                    &mut s
                );
            }
            7 => {
                let (mut tokens, mut removed) = (0usize, 0usize);
                let m = b"[...]";
                call!(
                    turnfit_tokenizer_truncate,
                    Some(false),
                    h.tokenizer,
                    p,
                    n,
                    n / 4,
                    (n % 3) as u32,
                    txt(m),
                    m.len(),
                    &mut s,
                    &mut tokens,
                    &mut removed
                );
            }
            8 => {
                let (mut tokens, mut removed) = (0usize, 0usize);
                let t = b"some text to cut at a token boundary";
                call!(
                    turnfit_tokenizer_truncate,
                    Some(false),
                    h.tokenizer,
                    txt(t),
                    t.len(),
                    3,
                    0,
                    p,
                    n,
                    &mut s,
                    &mut tokens,
                    &mut removed
                );
            }
            9 => {
                call!(turnfit_assemble, Some(true), h.tokenizer, p, n, &mut s);
            }
            10 => {
                let mut report = EMPTY;
                if call!(turnfit_fit, Some(true), h.registry, p, n, txt(fo), fo.len(), &mut s, &mut report) {
                    take_string("turnfit_fit", report, true);
                }
                // The same bytes as a turn's conversation (no summarizer: the digest).
                let mut report = EMPTY;
                if call!(
                    turnfit_turn_run,
                    Some(true),
                    h.registry,
                    p,
                    n,
                    txt(fo),
                    fo.len(),
                    None,
                    null_mut(),
                    &mut s,
                    &mut report
                ) {
                    take_string("turnfit_turn_run", report, true);
                }
                let mut t = null_mut();
                if call!(turnfit_turn_start, none, h.registry, p, n, txt(fo), fo.len(), &mut t) {
                    let mut report = EMPTY;
                    if call!(turnfit_turn_finish, Some(true), t, &mut s, &mut report) {
                        take_string("turnfit_turn_finish", report, true);
                    }
                    turnfit_turn_free(t);
                }
            }
            11 => {
                let mut report = EMPTY;
                if call!(turnfit_fit, Some(true), h.registry, txt(c), c.len(), p, n, &mut s, &mut report) {
                    take_string("turnfit_fit", report, true);
                }
                // The same bytes as a window turn's options, on a loaded window.
                assert_eq!(turnfit_window_load(h.window, txt(c), c.len(), null_mut()), turnfit_status::Ok);
                call!(turnfit_window_turn_run, Some(true), h.registry, h.window, p, n, None, null_mut(), &mut s);
                let mut t = null_mut();
                if call!(turnfit_window_turn_start, none, h.registry, h.window, p, n, &mut t) {
                    call!(turnfit_window_turn_finish, Some(true), h.window, t, &mut s);
                    turnfit_turn_free(t);
                }
            }
            12 => {
                let mut w = null_mut();
                if call!(turnfit_window_new, none, h.registry, p, n, null(), 0, &mut w) {
                    turnfit_window_free(w);
                }
            }
            13 => {
                let mut w = null_mut();
                let m = b"gpt-4o";
                if call!(turnfit_window_new, none, h.registry, txt(m), m.len(), p, n, &mut w) {
                    turnfit_window_free(w);
                }
            }
            14 => {
                if call!(turnfit_window_load, none, h.window, p, n) {
                    call!(turnfit_window_validate, Some(true), h.window, &mut s);
                    call!(turnfit_window_conversation, Some(true), h.window, &mut s);
                    let policy = br#"{"target_tokens":40,"limit_tokens":60}"#;
                    call!(turnfit_window_compact, Some(true), h.window, txt(policy), policy.len(), &mut s);
                }
            }
            15 => {
                let mut tokens = 0usize;
                call!(turnfit_window_push, none, h.window, p, n, &mut tokens);
            }
            16 => {
                call!(turnfit_window_preflight, Some(true), h.window, p, n, &mut s);
            }
            17 => {
                assert_eq!(turnfit_window_load(h.window, txt(c), c.len(), null_mut()), turnfit_status::Ok);
                call!(turnfit_window_repair, Some(true), h.window, p, n, &mut s);
            }
            18 => {
                assert_eq!(turnfit_window_load(h.window, txt(c), c.len(), null_mut()), turnfit_status::Ok);
                call!(turnfit_window_compact, Some(true), h.window, p, n, &mut s);
            }
            19 => {
                let sum = b"summary";
                call!(turnfit_window_apply_summary, Some(true), h.window, p, n, txt(sum), sum.len(), &mut s);
            }
            20 => {
                call!(turnfit_handoff_validate, Some(true), p, n, &mut s);
            }
            21 => {
                call!(turnfit_handoff_render, Some(true), p, n, null(), 0, &mut s);
            }
            22 => {
                call!(turnfit_handoff_render, Some(true), txt(ho), ho.len(), p, n, &mut s);
                call!(turnfit_handoff_render_in, Some(true), h.registry, txt(ho), ho.len(), p, n, &mut s);
            }
            23 => {
                call!(turnfit_handoff_filter, Some(true), p, n, null(), 0, &mut s);
            }
            24 => {
                call!(turnfit_handoff_filter, Some(true), txt(c), c.len(), p, n, &mut s);
            }
            25 => {
                let prov = b"openai";
                let status = u32::from(bytes.first().copied().unwrap_or(0)) * 2;
                call!(turnfit_recovery_classify, Some(true), txt(prov), prov.len(), status, p, n, null(), 0, &mut s);
            }
            26 => {
                let prov = b"anthropic";
                call!(turnfit_recovery_classify, Some(true), null(), 0, 429, null(), 0, p, n, &mut s);
                call!(turnfit_recovery_classify, Some(true), p, n, 500, txt(prov), prov.len(), null(), 0, &mut s);
                call!(
                    turnfit_recovery_classify_in,
                    Some(true),
                    txt(prov),
                    prov.len(),
                    500,
                    null(),
                    0,
                    null(),
                    0,
                    p,
                    n,
                    &mut s
                );
            }
            27 => {
                call!(turnfit_recovery_backoff, Some(true), p, n, &mut s);
            }
            28 => {
                let mut b = null_mut();
                if call!(turnfit_breaker_new, none, p, n, &mut b) {
                    turnfit_breaker_free(b);
                }
                let mut allowed = false;
                call!(turnfit_breaker_allow, none, h.breaker, p, n, 1000, &mut allowed);
                call!(turnfit_breaker_record_failure, none, h.breaker, p, n, 1001);
                call!(turnfit_breaker_record_success, none, h.breaker, p, n, 1002);
                let mut phase = 0u32;
                call!(turnfit_breaker_record_failure_state, none, h.breaker, p, n, 1002, &mut phase);
                call!(turnfit_breaker_record_success_state, none, h.breaker, p, n, 1002, &mut phase);
                call!(turnfit_breaker_state, Some(true), h.breaker, p, n, 1003, &mut s);
                call!(turnfit_breaker_record_failure_in, none, h.breaker, txt(b"k"), 1, p, n, 1004, &mut phase);
                call!(turnfit_breaker_failure_counts, Some(true), h.breaker, &mut s);
            }
            29 => {
                let mut st = null_mut();
                if call!(turnfit_callstack_from_json, none, p, n, &mut st) {
                    call!(turnfit_callstack_to_json, Some(true), st, &mut s);
                    turnfit_callstack_free(st);
                }
                let mut st = null_mut();
                if call!(turnfit_callstack_enter, none, h.stack, p, n, &mut st) {
                    turnfit_callstack_free(st);
                }
            }
            30 => {
                let mut registered = 0usize;
                call!(turnfit_registry_register, none, h.registry, p, n, &mut registered);
                call!(turnfit_registry_lookup, Some(true), h.registry, p, n, null(), 0, &mut s);
                // A model by its files, the fuzzed spec with its tokenizer
                // path pointed nowhere (a fuzzed path could name a FIFO): the
                // spec's checks run, then the file is refused as missing.
                let spec = match serde_json::from_slice::<serde_json::Value>(bytes) {
                    Ok(serde_json::Value::Object(mut o)) => {
                        o.insert("tokenizer".into(), "/nonexistent-turnfit-fuzz/tokenizer.json".into());
                        serde_json::Value::Object(o).to_string().into_bytes()
                    }
                    _ => bytes.to_vec(),
                };
                let _ = call!(
                    turnfit_registry_register_model_files,
                    Some(true),
                    h.registry,
                    txt(&spec),
                    spec.len(),
                    &mut s
                );
                let m = b"no-such-model";
                call!(turnfit_registry_lookup, Some(true), h.registry, txt(m), m.len(), p, n, &mut s);
                // A host counter with the fuzzed profile. Registered, it
                // counts a fit for its model; replacing the entry releases
                // it, exactly once; a failed registration never releases.
                let frees = Arc::new(AtomicUsize::new(0));
                let user = Arc::into_raw(frees.clone()).cast_mut().cast::<c_void>();
                if call!(turnfit_registry_register_counter, none, h.registry, p, n, Some(quarter), user, Some(release))
                {
                    let name = serde_json::from_slice::<serde_json::Value>(bytes)
                        .ok()
                        .and_then(|v| v["name"].as_str().map(str::to_owned));
                    let name = name.expect("a registered profile has a name");
                    if !name.ends_with('*') {
                        let opts = serde_json::json!({ "model": name }).to_string();
                        let mut r = EMPTY;
                        if call!(
                            turnfit_fit,
                            Some(true),
                            h.registry,
                            txt(c),
                            c.len(),
                            txt(opts.as_bytes()),
                            opts.len(),
                            &mut s,
                            &mut r
                        ) {
                            take_string("turnfit_fit", r, true);
                        }
                    }
                    let plain =
                        serde_json::json!({ "name": name, "encoding": "cl100k_base", "exact": false }).to_string();
                    let mut registered = 0usize;
                    call!(
                        turnfit_registry_register,
                        none,
                        h.registry,
                        txt(plain.as_bytes()),
                        plain.len(),
                        &mut registered
                    );
                    assert_eq!(frees.load(Ordering::Relaxed), 1, "free_user_data after the entry was replaced");
                } else {
                    // Not kept: the reference passed in is still the caller's.
                    assert_eq!(frees.load(Ordering::Relaxed), 0, "free_user_data ran for a failed registration");
                    drop(Arc::from_raw(user.cast::<AtomicUsize>()));
                }
            }
            31 => {
                call!(turnfit_toolset_report, Some(true), h.registry, p, n, &mut s);
                call!(turnfit_toolset_select, Some(true), p, n, null(), 0, &mut s);
            }
            32 => {
                let mut t = null_mut();
                if call!(turnfit_tracer_new, none, p, n, &mut t) {
                    turnfit_tracer_free(t);
                }
                let mut span = 0u64;
                if call!(turnfit_tracer_start, none, h.tracer, p, n, p, n, n as u64, 10, &mut span) {
                    call!(
                        turnfit_tracer_end,
                        none,
                        h.tracer,
                        span,
                        u32::from(bytes.first().copied().unwrap_or(0)),
                        5,
                        p,
                        n,
                        20
                    );
                }
                // The same bytes as an end object (usage, category, metadata).
                if call!(turnfit_tracer_start, none, h.tracer, p, n, null(), 0, 0, 10, &mut span) {
                    let outcome = u32::from(bytes.last().copied().unwrap_or(0) % 5);
                    if !call!(turnfit_tracer_end_with, none, h.tracer, span, outcome, p, n, 20) {
                        call!(turnfit_tracer_end, none, h.tracer, span, 0, 0, null(), 0, 20);
                    }
                }
                // The same bytes as an end's error text.
                if call!(turnfit_tracer_start, none, h.tracer, txt(b"t"), 1, null(), 0, 0, 10, &mut span) {
                    call!(turnfit_tracer_end, none, h.tracer, span, 1, 0, p, n, 20);
                }
                call!(turnfit_tracer_export, Some(true), h.tracer, 30, &mut s);
            }
            34 => {
                // The bytes as a whole tokenizer file: from memory, and from
                // a file on disk (a GGUF is read by seeking there).
                let mut t = null_mut();
                if call!(turnfit_file_tokenizer_from_bytes, none, pb, n, null(), 0, null(), 0, 0, &mut t) {
                    call!(turnfit_file_tokenizer_info, Some(true), t, &mut s);
                    turnfit_file_tokenizer_free(t);
                }
                let path = std::env::temp_dir().join(format!(
                    "turnfit-fuzz-file-{}-{:?}.bin",
                    std::process::id(),
                    std::thread::current().id()
                ));
                std::fs::write(&path, bytes).unwrap();
                let name = path.to_str().unwrap().as_bytes();
                let mut t = null_mut();
                if call!(turnfit_file_tokenizer_open, none, txt(name), name.len(), null(), 0, 0, &mut t) {
                    turnfit_file_tokenizer_free(t);
                }
                // The bytes as a tiktoken file's pattern (a regex that may not compile).
                let tik = b"IQ== 0\nIg== 1\n";
                let mut t = null_mut();
                if call!(turnfit_file_tokenizer_from_bytes, none, tik.as_ptr(), tik.len(), null(), 0, p, n, 0, &mut t) {
                    turnfit_file_tokenizer_free(t);
                }
                std::fs::remove_file(&path).ok();
                // The bytes as text and as ids for a small real file.
                let tiny = include_bytes!("../../tests/vectors/files/tiny-byte-level.tokenizer.json");
                let mut t = null_mut();
                let flags = u32::from(bytes.first().copied().unwrap_or(0) & 1);
                let st = turnfit_file_tokenizer_from_bytes(
                    tiny.as_ptr(),
                    tiny.len(),
                    null(),
                    0,
                    null(),
                    0,
                    flags,
                    &mut t,
                    null_mut(),
                );
                assert_eq!(st, turnfit_status::Ok);
                let mut count = 0usize;
                call!(turnfit_file_tokenizer_count, none, t, p, n, &mut count);
                let mut ids = turnfit_tokens { ptr: null_mut(), len: 0 };
                if call!(turnfit_file_tokenizer_encode, none, t, p, n, flags, &mut ids) {
                    assert_eq!(ids.len, count + flags as usize, "encode and count disagree");
                    let mut out = EMPTY;
                    if flags == 0 {
                        // Byte-level BPE decodes back to the text.
                        let st = turnfit_file_tokenizer_decode(t, ids.ptr, ids.len, &mut out, null_mut());
                        assert_eq!(st, turnfit_status::Ok);
                        turnfit_string_free(&mut out);
                    }
                    turnfit_tokens_free(&mut ids);
                }
                let raw: Vec<u32> =
                    bytes.chunks(2).map(|c| c.iter().fold(0u32, |a, &b| a << 8 | u32::from(b))).collect();
                call!(turnfit_file_tokenizer_decode, Some(false), t, raw.as_ptr(), raw.len(), &mut s);
                turnfit_file_tokenizer_free(t);
            }
            _ => {
                let dir = std::env::temp_dir().join(format!(
                    "turnfit-fuzz-abi-{}-{:?}",
                    std::process::id(),
                    std::thread::current().id()
                ));
                std::fs::create_dir_all(&dir).unwrap();
                let root = dir.to_str().unwrap().as_bytes();
                let mut sk = null_mut();
                if call!(turnfit_skills_open, none, txt(root), root.len(), p, n, &mut sk) {
                    call!(turnfit_skills_body, Some(true), sk, p, n, &mut s);
                    call!(turnfit_skills_render_index, Some(true), sk, p, n, &mut s);
                    turnfit_skills_free(sk);
                }
                // The bytes as options of an index and a skill name, on a set opened without them.
                let mut sk = null_mut();
                if call!(turnfit_skills_open, none, txt(root), root.len(), null(), 0, &mut sk) {
                    call!(turnfit_skills_render_index, Some(true), sk, p, n, &mut s);
                    call!(turnfit_skills_body, Some(true), sk, p, n, &mut s);
                    turnfit_skills_free(sk);
                }
                let mut sk = null_mut();
                if call!(turnfit_skills_open_in, none, h.registry, txt(root), root.len(), p, n, &mut sk) {
                    turnfit_skills_free(sk);
                }
                // With an event callback (it only counts).
                unsafe extern "C" fn count(user: *mut std::ffi::c_void, _: u32, _: *const std::ffi::c_char, _: usize) {
                    // SAFETY: `user` is the `seen` counter below, live for the call.
                    unsafe { *user.cast::<usize>() += 1 };
                }
                let mut seen = 0usize;
                let user = (&mut seen as *mut usize).cast();
                if call!(turnfit_skills_open_with_events, none, txt(root), root.len(), p, n, Some(count), user, &mut sk)
                {
                    turnfit_skills_free(sk);
                }
                let _ = turnfit_event_kind_name(u32::from(bytes.first().copied().unwrap_or(0)));
                let _ = turnfit_status_name(u32::from(bytes.first().copied().unwrap_or(0)));
            }
        }
    }
}
