//! The event callbacks through the C functions: each kind arrives with its
//! number and JSON, on the calling thread, and a callback may call back
//! into the handle that raised the event (no deadlock).

use std::ffi::{c_char, c_void, CStr};
use std::ptr;

use super::*;
use crate::strings::{turnfit_string, turnfit_string_free};
use crate::window::{turnfit_window_free, turnfit_window_new, turnfit_window_preflight, turnfit_window_push};

/// What a recording callback saw, and an optional window to call back into.
#[derive(Default)]
struct Seen {
    events: Vec<(u32, String)>,
    reenter: Option<*mut turnfit_window>,
    nested_status: Vec<turnfit_status>,
}

unsafe extern "C" fn record(user: *mut c_void, kind: u32, payload: *const c_char, len: usize) {
    // SAFETY: `user` is the `Seen` the test passed; the payload is valid for `len` and NUL-terminated.
    let seen = unsafe { &mut *user.cast::<Seen>() };
    let bytes = unsafe { std::slice::from_raw_parts(payload.cast::<u8>(), len) };
    assert_eq!(unsafe { *payload.add(len) }, 0, "payload is NUL-terminated");
    seen.events.push((kind, String::from_utf8(bytes.to_vec()).unwrap()));
    if let Some(w) = seen.reenter {
        let mut out = turnfit_string { ptr: ptr::null_mut(), len: 0 };
        // SAFETY: the window is live for the test; calling back in is allowed.
        let s = unsafe { turnfit_window_preflight(w, ptr::null(), 0, &mut out, ptr::null_mut()) };
        unsafe { turnfit_string_free(&mut out) };
        seen.nested_status.push(s);
    }
}

fn kinds(seen: &Seen) -> Vec<u32> {
    seen.events.iter().map(|(k, _)| *k).collect()
}

fn new_window(budget: &str) -> *mut turnfit_window {
    let mut w = ptr::null_mut();
    let model = "gpt-4o";
    // SAFETY: valid buffers and out-pointer.
    let s = unsafe {
        turnfit_window_new(
            ptr::null(),
            model.as_ptr().cast(),
            model.len(),
            budget.as_ptr().cast(),
            budget.len(),
            &mut w,
            ptr::null_mut(),
        )
    };
    assert_eq!(s, turnfit_status::Ok);
    w
}

fn push(w: *mut turnfit_window, words: usize) -> turnfit_status {
    let m = format!(r#"{{"role":"user","content":"{}"}}"#, "word ".repeat(words));
    let mut n = 0;
    // SAFETY: live window, valid buffers.
    unsafe { turnfit_window_push(w, m.as_ptr().cast(), m.len(), &mut n, ptr::null_mut()) }
}

#[test]
fn kind_names_match_the_core() {
    for k in turnfit_core::events::EventKind::ALL {
        // SAFETY: static NUL-terminated strings.
        let name = unsafe { CStr::from_ptr(turnfit_event_kind_name(k.number())) };
        assert_eq!(name.to_str().unwrap(), k.name());
    }
    let unknown = unsafe { CStr::from_ptr(turnfit_event_kind_name(999)) };
    assert_eq!(unknown.to_str().unwrap(), "unrecognized");
    assert_eq!(TURNFIT_EVENT_SKILL_SKIPPED, turnfit_core::events::EventKind::SkillSkipped.number());
    assert_eq!(TURNFIT_EVENT_SPAN_FINISHED, turnfit_core::events::EventKind::SpanFinished.number());
}

#[test]
fn a_window_callback_may_call_back_into_the_window() {
    let w = new_window(r#"{"context_window":1000,"reserved_output":100}"#);
    let mut seen = Seen { reenter: Some(w), ..Seen::default() };
    let user = (&mut seen as *mut Seen).cast::<c_void>();
    // SAFETY: live window; `seen` outlives every call below.
    assert_eq!(
        unsafe { turnfit_window_set_event_callback(w, Some(record), user, ptr::null_mut()) },
        turnfit_status::Ok
    );
    assert_eq!(push(w, 100), turnfit_status::Ok);
    assert!(seen.events.is_empty());
    assert_eq!(push(w, 650), turnfit_status::Ok);
    assert_eq!(kinds(&seen), [TURNFIT_EVENT_BUDGET_CROSSED]);
    assert!(seen.events[0]
        .1
        .starts_with(r#"{"kind":"budget_crossed","operation":"push","from":"fits","to":"should_compact""#));
    assert_eq!(seen.nested_status, [turnfit_status::Ok], "the nested preflight ran");
    // Cleared: nothing more arrives.
    // SAFETY: live window.
    assert_eq!(
        unsafe { turnfit_window_set_event_callback(w, None, ptr::null_mut(), ptr::null_mut()) },
        turnfit_status::Ok
    );
    assert_eq!(push(w, 400), turnfit_status::Ok);
    assert_eq!(seen.events.len(), 1);
    // SAFETY: freed once.
    unsafe { turnfit_window_free(w) };
}

#[test]
fn a_null_handle_is_refused() {
    let mut err = ptr::null_mut();
    // SAFETY: NULL handles are checked.
    let s = unsafe { turnfit_window_set_event_callback(ptr::null_mut(), Some(record), ptr::null_mut(), &mut err) };
    assert_eq!(s, turnfit_status::NullArgument);
    unsafe { crate::error::turnfit_error_free(err) };
    assert_eq!(
        unsafe { turnfit_breaker_set_event_callback(ptr::null_mut(), None, ptr::null_mut(), ptr::null_mut()) },
        turnfit_status::NullArgument
    );
    assert_eq!(
        unsafe { turnfit_tracer_set_event_callback(ptr::null_mut(), None, ptr::null_mut(), ptr::null_mut()) },
        turnfit_status::NullArgument
    );
}

#[test]
fn breaker_tracer_and_skills_deliver_their_kinds() {
    use crate::recovery::{turnfit_breaker_free, turnfit_breaker_new, turnfit_breaker_record_failure};
    use crate::trace::{turnfit_tracer_end, turnfit_tracer_free, turnfit_tracer_new, turnfit_tracer_start};
    let mut seen = Seen::default();
    let user = (&mut seen as *mut Seen).cast::<c_void>();

    let cfg = r#"{"failure_threshold":1}"#;
    let mut b = ptr::null_mut();
    // SAFETY: valid buffers; handles freed once; `seen` outlives them.
    unsafe {
        assert_eq!(turnfit_breaker_new(cfg.as_ptr().cast(), cfg.len(), &mut b, ptr::null_mut()), turnfit_status::Ok);
        assert_eq!(turnfit_breaker_set_event_callback(b, Some(record), user, ptr::null_mut()), turnfit_status::Ok);
        assert_eq!(turnfit_breaker_record_failure(b, "api".as_ptr().cast(), 3, 5, ptr::null_mut()), turnfit_status::Ok);
        turnfit_breaker_free(b);
    }
    assert_eq!(
        seen.events[0].1,
        r#"{"kind":"breaker_state_changed","key":"api","from":"closed","to":"open","at_ms":5}"#
    );

    let mut t = ptr::null_mut();
    let info = r#"{"input":"same"}"#;
    unsafe {
        assert_eq!(turnfit_tracer_new(ptr::null(), 0, &mut t, ptr::null_mut()), turnfit_status::Ok);
        assert_eq!(turnfit_tracer_set_event_callback(t, Some(record), user, ptr::null_mut()), turnfit_status::Ok);
        for at in [0, 10] {
            let mut id = 0;
            let s = turnfit_tracer_start(
                t,
                "grep".as_ptr().cast(),
                4,
                info.as_ptr().cast(),
                info.len(),
                0,
                at,
                &mut id,
                ptr::null_mut(),
            );
            assert_eq!(s, turnfit_status::Ok);
            assert_eq!(turnfit_tracer_end(t, id, 0, 0, ptr::null(), 0, at + 1, ptr::null_mut()), turnfit_status::Ok);
        }
        turnfit_tracer_free(t);
    }
    assert_eq!(kinds(&seen), [TURNFIT_EVENT_BREAKER_STATE_CHANGED, TURNFIT_EVENT_SPAN_REPEATED]);
    assert_eq!(seen.events[1].1, r#"{"kind":"span_repeated","span_id":2,"first_span_id":1,"tool":"grep","count":2}"#);

    let root = std::env::temp_dir().join(format!("turnfit-ffi-events-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("no-skill-here")).unwrap();
    let root_s = root.to_str().unwrap();
    let mut set = ptr::null_mut();
    unsafe {
        let s = turnfit_skills_open_with_events(
            root_s.as_ptr().cast(),
            root_s.len(),
            ptr::null(),
            0,
            Some(record),
            user,
            &mut set,
            ptr::null_mut(),
        );
        assert_eq!(s, turnfit_status::Ok);
        crate::skills::turnfit_skills_free(set);
    }
    let _ = std::fs::remove_dir_all(&root);
    assert_eq!(seen.events[2].0, TURNFIT_EVENT_SKILL_SKIPPED);
    assert_eq!(
        seen.events[2].1,
        r#"{"kind":"skill_skipped","path":"no-skill-here","reason":"a folder without SKILL.md"}"#
    );
}

/// Issue 34: a tracer configured with `span_finished_events` reports every
/// tool call that ended (here one success, one failure), so a host can log
/// each call; without it (the default) a plain end stays silent.
#[test]
fn a_tracer_reports_each_finished_span_when_asked() {
    use crate::trace::{turnfit_tracer_end, turnfit_tracer_free, turnfit_tracer_new, turnfit_tracer_start};
    for (cfg, expect) in [("", 0usize), (r#"{"span_finished_events":true}"#, 2)] {
        let mut seen = Seen::default();
        let user = (&mut seen as *mut Seen).cast::<c_void>();
        let mut t = ptr::null_mut();
        let info = r#"{"agent_id":"fixer","input":"ls -la"}"#;
        // SAFETY: valid buffers; the tracer is freed once; `seen` outlives it.
        unsafe {
            let c = if cfg.is_empty() { ptr::null() } else { cfg.as_ptr().cast() };
            assert_eq!(turnfit_tracer_new(c, cfg.len(), &mut t, ptr::null_mut()), turnfit_status::Ok);
            assert_eq!(turnfit_tracer_set_event_callback(t, Some(record), user, ptr::null_mut()), turnfit_status::Ok);
            for (outcome, err, at) in [(0u32, "", 0u64), (1, "exit status 2", 100)] {
                let mut id = 0;
                let s = turnfit_tracer_start(
                    t,
                    "shell".as_ptr().cast(),
                    5,
                    info.as_ptr().cast(),
                    info.len(),
                    0,
                    at,
                    &mut id,
                    ptr::null_mut(),
                );
                assert_eq!(s, turnfit_status::Ok);
                let e = if err.is_empty() { ptr::null() } else { err.as_ptr().cast() };
                let s = turnfit_tracer_end(t, id, outcome, 7, e, err.len(), at + 40, ptr::null_mut());
                assert_eq!(s, turnfit_status::Ok);
            }
            turnfit_tracer_free(t);
        }
        assert_eq!(seen.events.len(), expect, "{:?}", seen.events);
        if expect == 0 {
            continue;
        }
        assert_eq!(kinds(&seen), [TURNFIT_EVENT_SPAN_FINISHED, TURNFIT_EVENT_SPAN_FINISHED]);
        let ok: serde_json::Value = serde_json::from_str(&seen.events[0].1).unwrap();
        assert_eq!(ok["kind"], "span_finished");
        assert_eq!(ok["tool"], "shell");
        assert_eq!(ok["agent_id"], "fixer");
        assert_eq!(ok["outcome"], "success");
        assert_eq!(ok["duration_us"], 40);
        assert_eq!(ok["input_excerpt"], "ls -la");
        let failed: serde_json::Value = serde_json::from_str(&seen.events[1].1).unwrap();
        assert_eq!(failed["outcome"], "failed");
        assert_eq!(failed["error"], "exit status 2");
        assert!(failed["error_category"].is_string(), "{failed}");
    }
}
