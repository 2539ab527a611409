//! Issue 31: a turn on a window through the C ABI. Below the trigger the
//! window answers from its counts; over it, the host's summarizer (a C
//! function pointer) is called with the window unlocked, so it may call
//! the window, and a window changed that way gets nothing applied, with
//! the error saying so; handles of the two turn kinds are not mixed up;
//! options the window holds are refused. Compiled as a unit-test module of
//! the ffi crate (see `lib.rs`).

use std::ffi::{c_char, c_void, CStr};
use std::ptr::{null, null_mut};

use serde_json::{json, Value};

use crate::*;

fn call(f: impl FnOnce(*mut *mut turnfit_error) -> turnfit_status) -> (turnfit_status, String) {
    let mut err = null_mut();
    let st = f(&mut err);
    let msg = if err.is_null() {
        String::new()
    } else {
        // SAFETY: `err` is a live error object; its message is a C string.
        let m = unsafe { CStr::from_ptr(turnfit_error_message(err, null_mut())) }.to_string_lossy().into_owned();
        unsafe { turnfit_error_free(err) };
        m
    };
    (st, msg)
}

fn c(s: &str) -> *const c_char {
    s.as_ptr().cast()
}

fn take(mut s: turnfit_string) -> String {
    // SAFETY: filled by turnfit: `len` bytes of UTF-8 at `ptr`.
    let t = unsafe { std::str::from_utf8(std::slice::from_raw_parts(s.ptr.cast::<u8>(), s.len)) }.unwrap().to_owned();
    unsafe { turnfit_string_free(&mut s) };
    t
}

fn empty() -> turnfit_string {
    turnfit_string { ptr: null_mut(), len: 0 }
}

/// An OpenAI agent loop: system, task, `rounds` rounds of one call and a
/// long result.
fn agent_loop(rounds: usize) -> String {
    let mut m = vec![
        json!({"role": "system", "content": "You are a coding agent."}),
        json!({"role": "user", "content": "Fix the failing test."}),
    ];
    for k in 0..rounds {
        let id = format!("call_{k}");
        m.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function",
            "function": {"name": "bash", "arguments": "{\"cmd\":\"ls\"}"}}]}));
        let out: String = (0..150).map(|w| format!("line{k} word{w} ")).collect();
        m.push(json!({"role": "tool", "tool_call_id": id, "content": out}));
    }
    Value::Array(m).to_string()
}

/// A window for gpt-4o with an 8,000-token context holding `conv`.
fn window(conv: &str) -> *mut turnfit_window {
    let mut w = null_mut();
    let budget = r#"{"context_window":8000,"reserved_output":500}"#;
    // SAFETY: live strings with their lengths; `w` is a local.
    unsafe {
        assert_eq!(
            turnfit_window_new(null(), c("gpt-4o"), 6, c(budget), budget.len(), &mut w, null_mut()),
            turnfit_status::Ok
        );
        assert_eq!(turnfit_window_load(w, c(conv), conv.len(), null_mut()), turnfit_status::Ok);
    }
    w
}

fn messages(w: *mut turnfit_window) -> Vec<Value> {
    let mut out = empty();
    // SAFETY: `w` is live; `out` a local.
    assert_eq!(unsafe { turnfit_window_conversation(w, &mut out, null_mut()) }, turnfit_status::Ok);
    serde_json::from_str::<Vec<Value>>(&take(out)).unwrap()
}

const OPTIONS: &str = r#"{"policy":{"strategy":"summarize","mask":{"enabled":false}}}"#;

/// A summarizer that replies with a fixed sentence; `user` counts its calls.
unsafe extern "C" fn summarize(
    user: *mut c_void,
    _call: *const c_char,
    _len: usize,
    out_text: *mut *const c_char,
    out_len: *mut usize,
) -> u32 {
    const TEXT: &str = "The agent listed the folder many times.";
    // SAFETY: `user` is a live usize; the out-pointers are valid.
    unsafe {
        *user.cast::<usize>() += 1;
        *out_text = TEXT.as_ptr().cast();
        *out_len = TEXT.len();
    }
    TURNFIT_SUMMARY_OK
}

/// A summarizer that pushes a message to the window (`user`) before it
/// replies: the window changes while the turn runs.
unsafe extern "C" fn summarize_and_push(
    user: *mut c_void,
    _call: *const c_char,
    _len: usize,
    out_text: *mut *const c_char,
    out_len: *mut usize,
) -> u32 {
    const MSG: &str = r#"{"role":"user","content":"one more thing"}"#;
    const TEXT: &str = "summary";
    // SAFETY: `user` is the live window; the out-pointers are valid.
    unsafe {
        let mut n = 0usize;
        assert_eq!(turnfit_window_push(user.cast(), c(MSG), MSG.len(), &mut n, null_mut()), turnfit_status::Ok);
        *out_text = TEXT.as_ptr().cast();
        *out_len = TEXT.len();
    }
    TURNFIT_SUMMARY_OK
}

#[test]
fn below_the_trigger_nothing_changes_and_nothing_is_called() {
    let w = window(&agent_loop(2));
    let before = messages(w);
    let mut calls = 0usize;
    let mut rep = empty();
    // SAFETY: live window, strings and locals.
    let (st, msg) = call(|e| unsafe {
        turnfit_window_turn_run(
            null(),
            w,
            c(OPTIONS),
            OPTIONS.len(),
            Some(summarize),
            (&mut calls as *mut usize).cast(),
            &mut rep,
            e,
        )
    });
    assert_eq!(st, turnfit_status::Ok, "{msg}");
    let r: Value = serde_json::from_str(&take(rep)).unwrap();
    assert_eq!((r["fired"].as_bool(), r["changed"].as_bool(), calls), (Some(false), Some(false), 0), "{r}");
    assert_eq!(messages(w), before);
    unsafe { turnfit_window_free(w) };
}

#[test]
fn over_the_trigger_the_host_summarizes_and_the_window_takes_it() {
    let w = window(&agent_loop(40));
    let n = messages(w).len();
    let mut calls = 0usize;
    let mut rep = empty();
    // SAFETY: as above.
    let (st, msg) = call(|e| unsafe {
        turnfit_window_turn_run(
            null(),
            w,
            c(OPTIONS),
            OPTIONS.len(),
            Some(summarize),
            (&mut calls as *mut usize).cast(),
            &mut rep,
            e,
        )
    });
    assert_eq!(st, turnfit_status::Ok, "{msg}");
    let r: Value = serde_json::from_str(&take(rep)).unwrap();
    assert_eq!(r["summary"]["source"], "host", "{r}");
    assert!(calls >= 1);
    assert!(r["fit"]["tokens_after"].as_u64() <= r["fit"]["limit_tokens"].as_u64());
    let after = messages(w);
    assert!(after.len() < n);
    assert!(after.iter().any(|m| m.to_string().contains("listed the folder")));
    unsafe { turnfit_window_free(w) };
}

/// The handle form: start, answer each request, finish on the window.
#[test]
fn the_handle_form_drives_the_same_turn() {
    let w = window(&agent_loop(40));
    let mut t = null_mut();
    // SAFETY: live window and strings; `t` a local; the turn is freed below.
    unsafe {
        let (st, msg) = call(|e| turnfit_window_turn_start(null(), w, c(OPTIONS), OPTIONS.len(), &mut t, e));
        assert_eq!(st, turnfit_status::Ok, "{msg}");
        // A window turn is not ended as a stateless one, and stays usable.
        let (mut a, mut b) = (empty(), empty());
        let (st, msg) = call(|e| turnfit_turn_finish(t, &mut a, &mut b, e));
        assert_eq!(st, turnfit_status::InvalidArgument);
        assert!(msg.contains("turnfit_window_turn_finish"), "{msg}");
        let mut waiting = false;
        let mut requests = 0;
        loop {
            let mut call_json = empty();
            assert_eq!(turnfit_turn_call(t, &mut waiting, &mut call_json, null_mut()), turnfit_status::Ok);
            let _ = take(call_json);
            if !waiting {
                break;
            }
            requests += 1;
            let text = "summary from the host";
            assert_eq!(
                turnfit_turn_resume(t, TURNFIT_SUMMARY_OK, c(text), text.len(), null(), 0, null_mut()),
                turnfit_status::Ok
            );
        }
        assert!(requests >= 1);
        let mut rep = empty();
        let (st, msg) = call(|e| turnfit_window_turn_finish(w, t, &mut rep, e));
        assert_eq!(st, turnfit_status::Ok, "{msg}");
        let r: Value = serde_json::from_str(&take(rep)).unwrap();
        assert_eq!(r["changed"], true);
        // Finished: every further call but free is refused.
        let mut rep = empty();
        let (st, msg) = call(|e| turnfit_window_turn_finish(w, t, &mut rep, e));
        assert_eq!(st, turnfit_status::InvalidArgument);
        assert!(msg.contains("finished"), "{msg}");
        turnfit_turn_free(t);
        // A stateless turn is not ended on a window.
        let conv = agent_loop(2);
        let o = r#"{"model":"gpt-4o"}"#;
        assert_eq!(
            turnfit_turn_start(null(), c(&conv), conv.len(), c(o), o.len(), &mut t, null_mut()),
            turnfit_status::Ok
        );
        let mut rep = empty();
        let (st, msg) = call(|e| turnfit_window_turn_finish(w, t, &mut rep, e));
        assert_eq!(st, turnfit_status::InvalidArgument);
        assert!(msg.contains("turnfit_turn_finish"), "{msg}");
        turnfit_turn_free(t);
        turnfit_window_free(w);
    }
}

/// A summarizer that pushes to the window while the turn runs (no lock is
/// held, so no deadlock): the turn applies nothing, says so, and the pushed
/// message is kept.
#[test]
fn a_summarizer_that_changes_the_window_gets_nothing_applied() {
    let w = window(&agent_loop(40));
    let n = messages(w).len();
    let mut rep = empty();
    // SAFETY: live window and strings; the callback gets the window.
    let (st, msg) = call(|e| unsafe {
        turnfit_window_turn_run(null(), w, c(OPTIONS), OPTIONS.len(), Some(summarize_and_push), w.cast(), &mut rep, e)
    });
    assert_eq!(st, turnfit_status::InvalidArgument);
    assert!(msg.contains("the window changed during the turn"), "{msg}");
    let after = messages(w);
    assert!(after.len() > n, "nothing was compacted and the pushed message is there");
    assert_eq!(after.last().unwrap()["content"], "one more thing");
    unsafe { turnfit_window_free(w) };
}

/// What the window holds is not a turn's to set; bad options are the same
/// errors as for a stateless turn.
#[test]
fn options_the_window_holds_are_refused() {
    let w = window(&agent_loop(2));
    for (o, status, words) in [
        (r#"{"max_tokens":100}"#, turnfit_status::InvalidArgument, "belongs to the window"),
        (r#"{"model":"gpt-4o-mini"}"#, turnfit_status::InvalidArgument, "not the window's model"),
        (r#"{"policy":{"strategy":"nope"}}"#, turnfit_status::InvalidJson, "unknown variant `nope`"),
        (r#"{"trigger_messages":0}"#, turnfit_status::InvalidArgument, "trigger_messages"),
        ("[", turnfit_status::InvalidJson, ""),
    ] {
        let mut t = null_mut();
        // SAFETY: live window and strings; `t` a local.
        let (st, msg) = call(|e| unsafe { turnfit_window_turn_start(null(), w, c(o), o.len(), &mut t, e) });
        assert_eq!(st, status, "{o}: {msg}");
        assert!(msg.contains(words), "{o}: {msg}");
        assert!(t.is_null());
    }
    // (NULL, 0) options are the defaults; the model may repeat the window's.
    for o in [None, Some(r#"{"model":"gpt-4o"}"#)] {
        let mut t = null_mut();
        let (p, n) = o.map_or((null(), 0), |o| (c(o), o.len()));
        // SAFETY: as above.
        let (st, msg) = call(|e| unsafe { turnfit_window_turn_start(null(), w, p, n, &mut t, e) });
        assert_eq!(st, turnfit_status::Ok, "{o:?}: {msg}");
        unsafe { turnfit_turn_free(t) };
    }
    // NULL window or out-pointer.
    let mut t = null_mut();
    let (st, _) = call(|e| unsafe { turnfit_window_turn_start(null(), null(), null(), 0, &mut t, e) });
    assert_eq!(st, turnfit_status::NullArgument);
    let (st, _) = call(|e| unsafe { turnfit_window_turn_start(null(), w, null(), 0, null_mut(), e) });
    assert_eq!(st, turnfit_status::NullArgument);
    unsafe { turnfit_window_free(w) };
}
