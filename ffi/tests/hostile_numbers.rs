//! Issue 33, cause D: every numeric field of every options object the C ABI
//! reads, walked from the committed schemas (schemas/*.json), gets 0, 1,
//! 2^32-1, 2^53+1 and u64::MAX through the function that reads it, and
//! then through the calls that use what it configured. Each call returns a
//! result or a specific error; PANIC (or INTERNAL) fails the test. A schema
//! that is neither driven here nor listed as not an options object fails
//! too, so a new options type cannot be missed.
//!
//! Compiled as a unit-test module of the ffi crate (see `lib.rs`).

use std::collections::BTreeSet;
use std::ffi::c_char;
use std::path::PathBuf;
use std::ptr::{null, null_mut};

use serde_json::{json, Value};

use crate::*;

/// The values each numeric field is fed.
const HOSTILE: [u64; 5] = [0, 1, u32::MAX as u64, (1 << 53) + 1, u64::MAX];

/// Schemas that are not options objects of a C function (outputs, and the
/// inputs without a number), with why.
const NOT_DRIVEN: &[(&str, &str)] = &[
    ("assemble-result", "output"),
    ("backoff-decision", "output"),
    ("breaker-state", "output"),
    ("classification", "output"),
    ("classify-headers", "input: a map of strings, no number"),
    ("classify-request", "input of the CLI only (`turnfit classify`); the C function takes the status as a uint16_t"),
    ("compact-report", "output"),
    ("compact-result", "output"),
    ("conversation", "input: provider messages, kept as given; numbers in them are not counts"),
    ("error-context", "input: ids and a metadata object echoed as given; numbers in it are not counts"),
    ("event", "output"),
    ("failure-counts", "output"),
    ("fit-report", "output"),
    ("handoff", "input: no number"),
    ("handoff-filter-options", "input: no number"),
    ("handoff-filter-result", "output"),
    ("handoff-render-result", "output"),
    ("model-info", "output"),
    ("preflight-report", "output"),
    ("registry-list", "output"),
    ("repair-changes", "output"),
    ("skill-body", "output"),
    ("skills-index", "output"),
    ("skills-list", "output"),
    ("skills-open-options", "input: no number"),
    ("summarizer-call", "output"),
    ("special-policy", "input: no number"),
    ("special-tokens", "output"),
    ("file-tokenizer-info", "output"),
    ("tokenizer-info", "output"),
    ("toolset-report", "output"),
    ("toolset-request", "input: no number"),
    ("span-record", "output"),
    ("trace-export", "output"),
    ("tracer-overdue", "output"),
    ("turn-report", "output"),
    ("validation-issues", "output"),
];

/// A summarizer for `turnfit_turn_run` that always replies with one sentence.
unsafe extern "C" fn reply_summary(
    _user: *mut std::ffi::c_void,
    _call: *const c_char,
    _len: usize,
    out_text: *mut *const c_char,
    out_len: *mut usize,
) -> u32 {
    const TEXT: &str = "The user asked; the agent answered.";
    // SAFETY: turnfit_turn_run passes valid out-pointers.
    unsafe {
        *out_text = TEXT.as_ptr().cast();
        *out_len = TEXT.len();
    }
    TURNFIT_SUMMARY_OK
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every path to a number in `schema` (`a.b`, `a[]` for array items, `a{}`
/// for map values), following `$ref`s and `anyOf`.
fn numeric_paths(schema: &Value) -> BTreeSet<Vec<String>> {
    fn walk(s: &Value, defs: &Value, path: &mut Vec<String>, seen: &mut Vec<String>, out: &mut BTreeSet<Vec<String>>) {
        let Some(obj) = s.as_object() else { return };
        if let Some(r) = obj.get("$ref").and_then(Value::as_str) {
            let name = r.rsplit('/').next().unwrap_or_default().to_owned();
            if !seen.contains(&name) {
                seen.push(name.clone());
                walk(&defs[&name], defs, path, seen, out);
                seen.pop();
            }
        }
        let types: Vec<&str> = match obj.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        if types.iter().any(|t| *t == "integer" || *t == "number") {
            out.insert(path.clone());
        }
        for (k, v) in obj.get("properties").and_then(Value::as_object).into_iter().flatten() {
            path.push(k.clone());
            walk(v, defs, path, seen, out);
            path.pop();
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            for v in obj.get(key).and_then(Value::as_array).into_iter().flatten() {
                walk(v, defs, path, seen, out);
            }
        }
        for (key, seg) in [("items", "[]"), ("additionalProperties", "{}")] {
            if let Some(v) = obj.get(key).filter(|v| v.is_object()) {
                path.push(seg.into());
                walk(v, defs, path, seen, out);
                path.pop();
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(schema, &schema["$defs"], &mut Vec::new(), &mut Vec::new(), &mut out);
    out
}

/// `base` with `value` at `path`: objects and arrays on the way are made
/// when missing; an array's first element is the one set (made when the
/// array is empty); a map gets the key `k`.
fn with_value(base: &Value, path: &[String], value: &Value) -> Value {
    fn set(node: &mut Value, path: &[String], value: &Value) {
        let Some((seg, rest)) = path.split_first() else {
            *node = value.clone();
            return;
        };
        match seg.as_str() {
            "[]" => {
                if !node.is_array() {
                    let inner = std::mem::take(node);
                    *node = Value::Array(if inner.is_null() { vec![] } else { vec![inner] });
                }
                let arr = node.as_array_mut().unwrap();
                if arr.is_empty() {
                    arr.push(Value::Null);
                }
                set(&mut arr[0], rest, value);
            }
            "{}" => {
                if !node.is_object() {
                    *node = json!({});
                }
                set(node.as_object_mut().unwrap().entry("k").or_insert(Value::Null), rest, value);
            }
            key => {
                if !node.is_object() {
                    *node = json!({});
                }
                set(node.as_object_mut().unwrap().entry(key).or_insert(Value::Null), rest, value);
            }
        }
    }
    let mut doc = base.clone();
    set(&mut doc, path, value);
    doc
}

/// A status and its message; PANIC and INTERNAL fail the test.
struct Outcome(turnfit_status, String);

fn outcome(st: turnfit_status, err: *mut turnfit_error) -> Outcome {
    let msg = if err.is_null() {
        String::new()
    } else {
        // SAFETY: `err` was written by turnfit and is freed once here.
        let m =
            unsafe { std::ffi::CStr::from_ptr(turnfit_error_message(err, null_mut())) }.to_string_lossy().into_owned();
        unsafe { turnfit_error_free(err) };
        m
    };
    Outcome(st, msg)
}

fn s(text: &str) -> (*const c_char, usize) {
    (text.as_ptr().cast(), text.len())
}

fn empty() -> turnfit_string {
    turnfit_string { ptr: null_mut(), len: 0 }
}

fn free(out: &mut turnfit_string) {
    // SAFETY: `out` is empty or was filled by turnfit.
    unsafe { turnfit_string_free(out) };
}

const CONVERSATION: &str = r#"[{"role":"system","content":"s"},{"role":"user","content":"one two three"},
{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},
{"role":"tool","tool_call_id":"c1","content":"a long tool result with many words in it"},
{"role":"assistant","content":"four"},{"role":"user","content":"five"}]"#;

/// Runs the function that reads `schema`'s documents on `doc`, then the
/// calls that use what it configured; every status they return.
fn drive(schema: &str, doc: &str, tmp: &std::path::Path) -> Vec<Outcome> {
    let mut outs = Vec::new();
    let mut err: *mut turnfit_error = null_mut();
    let (d, dn) = s(doc);
    // SAFETY (all calls below): arguments are live handles, valid buffers
    // with their lengths, and out-parameters valid for a write.
    unsafe {
        match schema {
            "assemble-request" => {
                let mut t = null_mut();
                let (e, en) = s("cl100k_base");
                assert_eq!(turnfit_tokenizer_new(e, en, 0, &mut t, null_mut()), turnfit_status::Ok);
                let mut out = empty();
                outs.push(outcome(turnfit_assemble(t, d, dn, &mut out, &mut err), err));
                free(&mut out);
                turnfit_tokenizer_free(t);
            }
            "backoff-request" => {
                let mut out = empty();
                outs.push(outcome(turnfit_recovery_backoff(d, dn, &mut out, &mut err), err));
                free(&mut out);
            }
            "breaker-config" => {
                let mut b = null_mut();
                let st = turnfit_breaker_new(d, dn, &mut b, &mut err);
                outs.push(outcome(st, err));
                if st == turnfit_status::Ok {
                    let (k, kn) = s("key");
                    for now in [0, 1, u64::MAX / 2, u64::MAX - 1, u64::MAX] {
                        let mut allowed = false;
                        err = null_mut();
                        outs.push(outcome(turnfit_breaker_record_failure(b, k, kn, now, &mut err), err));
                        err = null_mut();
                        outs.push(outcome(turnfit_breaker_allow(b, k, kn, now, &mut allowed, &mut err), err));
                        err = null_mut();
                        outs.push(outcome(turnfit_breaker_record_success(b, k, kn, now, &mut err), err));
                        let mut out = empty();
                        err = null_mut();
                        outs.push(outcome(turnfit_breaker_state(b, k, kn, now, &mut out, &mut err), err));
                        free(&mut out);
                    }
                    turnfit_breaker_free(b);
                }
            }
            "callstack" => {
                let mut c = null_mut();
                let st = turnfit_callstack_from_json(d, dn, &mut c, &mut err);
                outs.push(outcome(st, err));
                if st == turnfit_status::Ok {
                    let mut next = null_mut();
                    let (a, an) = s("z");
                    err = null_mut();
                    outs.push(outcome(turnfit_callstack_enter(c, a, an, &mut next, &mut err), err));
                    turnfit_callstack_free(next);
                    let mut out = empty();
                    err = null_mut();
                    outs.push(outcome(turnfit_callstack_to_json(c, &mut out, &mut err), err));
                    free(&mut out);
                    turnfit_callstack_free(c);
                }
            }
            "compaction-policy" => {
                let mut w = null_mut();
                let (m, mn) = s("gpt-4o");
                let (b, bn) = s(r#"{"context_window":1000}"#);
                assert_eq!(turnfit_window_new(null(), m, mn, b, bn, &mut w, null_mut()), turnfit_status::Ok);
                let (c, cn) = s(CONVERSATION);
                assert_eq!(turnfit_window_load(w, c, cn, null_mut()), turnfit_status::Ok);
                let mut out = empty();
                outs.push(outcome(turnfit_window_compact(w, d, dn, &mut out, &mut err), err));
                free(&mut out);
                turnfit_window_free(w);
            }
            "fit-options" => {
                let (c, cn) = s(CONVERSATION);
                let (mut conv, mut rep) = (empty(), empty());
                outs.push(outcome(turnfit_fit(null(), c, cn, d, dn, &mut conv, &mut rep, &mut err), err));
                free(&mut conv);
                free(&mut rep);
                // The same options through a turn, with a summarizer that replies.
                let (mut conv, mut rep) = (empty(), empty());
                err = null_mut();
                let st = turnfit_turn_run(
                    null(),
                    c,
                    cn,
                    d,
                    dn,
                    Some(reply_summary),
                    null_mut(),
                    &mut conv,
                    &mut rep,
                    &mut err,
                );
                outs.push(outcome(st, err));
                free(&mut conv);
                free(&mut rep);
            }
            "handoff-render-options" => {
                let h = json!({"version": "1.0", "task_summary": "Fix the parser.", "key_outputs": [
                    "the lexer drops a token", {"label": "src/lexer.rs", "content": "fixed"}],
                    "metadata": {"from_agent": "a", "to_agent": "b", "created_at": "2026-03-01T12:00:00Z"}})
                .to_string();
                let (hp, hn) = s(&h);
                let mut out = empty();
                outs.push(outcome(turnfit_handoff_render(hp, hn, d, dn, &mut out, &mut err), err));
                free(&mut out);
            }
            "model-profile" => {
                let mut r = null_mut();
                assert_eq!(turnfit_registry_new(&mut r, null_mut()), turnfit_status::Ok);
                let mut n = 0usize;
                let st = turnfit_registry_register(r, d, dn, &mut n, &mut err);
                outs.push(outcome(st, err));
                if st == turnfit_status::Ok {
                    let (m, mn) = s("hostile-model");
                    let mut out = empty();
                    err = null_mut();
                    outs.push(outcome(turnfit_registry_lookup(r, m, mn, null(), 0, &mut out, &mut err), err));
                    free(&mut out);
                    let mut w = null_mut();
                    err = null_mut();
                    let st = turnfit_window_new(r, m, mn, null(), 0, &mut w, &mut err);
                    outs.push(outcome(st, err));
                    if st == turnfit_status::Ok {
                        let (c, cn) = s(CONVERSATION);
                        err = null_mut();
                        outs.push(outcome(turnfit_window_load(w, c, cn, &mut err), err));
                        err = null_mut();
                        outs.push(outcome(turnfit_window_preflight(w, null(), 0, &mut out, &mut err), err));
                        free(&mut out);
                        err = null_mut();
                        outs.push(outcome(turnfit_window_compact(w, null(), 0, &mut out, &mut err), err));
                        free(&mut out);
                        turnfit_window_free(w);
                    }
                    let o = r#"{"model":"hostile-model"}"#;
                    let (op, on) = s(o);
                    let (c, cn) = s(CONVERSATION);
                    let (mut conv, mut rep) = (empty(), empty());
                    err = null_mut();
                    outs.push(outcome(turnfit_fit(r, c, cn, op, on, &mut conv, &mut rep, &mut err), err));
                    free(&mut conv);
                    free(&mut rep);
                }
                turnfit_registry_free(r);
            }
            "skills-index-options" => {
                let mut sk = null_mut();
                let root = tmp.to_str().unwrap();
                let (rp, rn) = s(root);
                assert_eq!(turnfit_skills_open(rp, rn, null(), 0, &mut sk, null_mut()), turnfit_status::Ok);
                let mut out = empty();
                outs.push(outcome(turnfit_skills_render_index(sk, d, dn, &mut out, &mut err), err));
                free(&mut out);
                turnfit_skills_free(sk);
            }
            "span-end" | "span-info" | "tracer-config" => {
                let mut t = null_mut();
                let (cfg, cn) = if schema == "tracer-config" { (d, dn) } else { (null(), 0) };
                let st = turnfit_tracer_new(cfg, cn, &mut t, &mut err);
                outs.push(outcome(st, err));
                if st == turnfit_status::Ok {
                    let (tool, tn) = s("k");
                    let (info, infon) = if schema == "span-info" { (d, dn) } else { (null(), 0) };
                    for now in [0, 1, u64::MAX / 2, u64::MAX - 1, u64::MAX] {
                        let mut id = 0u64;
                        err = null_mut();
                        let st = turnfit_tracer_start(t, tool, tn, info, infon, u64::MAX, now, &mut id, &mut err);
                        outs.push(outcome(st, err));
                        let (end, endn) = if schema == "span-end" { (d, dn) } else { (null(), 0) };
                        err = null_mut();
                        outs.push(outcome(turnfit_tracer_end_with(t, id, 0, end, endn, now, &mut err), err));
                        for f in [turnfit_tracer_overdue, turnfit_tracer_export, turnfit_tracer_span] {
                            let mut out = empty();
                            err = null_mut();
                            outs.push(outcome(f(t, now, &mut out, &mut err), err));
                            free(&mut out);
                        }
                        let mut out = empty();
                        err = null_mut();
                        outs.push(outcome(turnfit_tracer_expire(t, now, &mut out, &mut err), err));
                        free(&mut out);
                    }
                    turnfit_tracer_free(t);
                }
            }
            "window-budget" => {
                let mut w = null_mut();
                let (m, mn) = s("gpt-4o");
                let st = turnfit_window_new(null(), m, mn, d, dn, &mut w, &mut err);
                outs.push(outcome(st, err));
                if st == turnfit_status::Ok {
                    let (c, cn) = s(CONVERSATION);
                    err = null_mut();
                    outs.push(outcome(turnfit_window_load(w, c, cn, &mut err), err));
                    let mut out = empty();
                    err = null_mut();
                    outs.push(outcome(turnfit_window_preflight(w, null(), 0, &mut out, &mut err), err));
                    free(&mut out);
                    err = null_mut();
                    outs.push(outcome(turnfit_window_compact(w, null(), 0, &mut out, &mut err), err));
                    free(&mut out);
                    turnfit_window_free(w);
                }
            }
            other => panic!("no driver for schema {other}"),
        }
    }
    outs
}

/// A valid document of each driven schema, with one element in each array
/// of objects so that the fields inside them are reached.
fn base(schema: &str) -> Vec<Value> {
    match schema {
        "assemble-request" => vec![
            json!({"budget": 1000, "sections": [{"name": "a", "text": "some text to fit"}]}),
            json!({"budget": 1000, "preset": "agent", "history": [{"role": "user", "content": "hi"}],
                "events": ["e1", "e2"], "context": {"task": "t"}}),
        ],
        "backoff-request" => vec![json!({"failed_attempts": 1}), json!({"failed_attempts": 3, "retry_after_ms": 10})],
        "breaker-config" => vec![json!({})],
        "callstack" => vec![json!({"agents": ["a", "b"]})],
        // Every strategy reaches its own counts.
        "compaction-policy" => ["recency", "relevance", "hybrid", "summarize"]
            .iter()
            .map(|st| json!({"strategy": st, "mask": {}, "digest": {}, "scores": [1.0]}))
            .collect(),
        "fit-options" => {
            let mut v: Vec<Value> = ["recency", "relevance", "hybrid"]
                .iter()
                .map(
                    |st| json!({"model": "gpt-4o", "max_tokens": 60, "policy": {"strategy": st, "mask": {}, "digest": {}}}),
                )
                .collect();
            // A turn that summarizes, so the summarizer's counts are read.
            v.push(json!({"model": "gpt-4o", "max_tokens": 60, "trigger_messages": 2,
                "policy": {"strategy": "summarize", "mask": {}, "digest": {}},
                "summarizer": {"context_window": 8000, "max_prompt_tokens": 2000, "timeout_ms": 60000, "max_requests": 4}}));
            v
        }
        "handoff-render-options" => vec![json!({})],
        "model-profile" => vec![json!({"name": "hostile-model", "encoding": "o200k_base", "exact": true})],
        "skills-index-options" => vec![json!({})],
        "span-end" | "span-info" | "tracer-config" => vec![json!({})],
        "window-budget" => vec![json!({"context_window": 1000})],
        other => panic!("no base document for {other}"),
    }
}

#[test]
fn every_count_in_every_options_object_takes_hostile_numbers() {
    let tmp = std::env::temp_dir().join(format!("turnfit-hostile-{}", std::process::id()));
    std::fs::create_dir_all(tmp.join("a")).unwrap();
    std::fs::write(tmp.join("a/SKILL.md"), "---\nname: a\ndescription: does a thing\n---\nbody\n").unwrap();
    let mut dir: Vec<_> = std::fs::read_dir(root().join("schemas")).unwrap().flatten().map(|e| e.path()).collect();
    dir.sort();
    let mut failures = Vec::new();
    let mut calls = 0usize;
    let mut ok_by_schema = std::collections::BTreeMap::<String, (usize, usize)>::new();
    for path in dir {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if NOT_DRIVEN.iter().any(|(n, _)| *n == name) {
            continue;
        }
        let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let paths = numeric_paths(&schema);
        assert!(!paths.is_empty(), "{name}: driven but has no numeric field; list it in NOT_DRIVEN");
        for b in base(&name) {
            for p in &paths {
                for v in HOSTILE {
                    let doc = with_value(&b, p, &json!(v)).to_string();
                    for Outcome(st, msg) in drive(&name, &doc, &tmp) {
                        calls += 1;
                        let e = ok_by_schema.entry(name.clone()).or_default();
                        e.0 += usize::from(st == turnfit_status::Ok);
                        e.1 += 1;
                        if matches!(st, turnfit_status::Panic | turnfit_status::Internal) {
                            failures.push(format!("{name} {} = {v}: {st:?} {msg}\n    {doc}", p.join(".")));
                        }
                    }
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    // The values reach past the parser: a third of the calls of every driven
    // schema succeed (a count the schema allows is a count the library must take).
    for (name, (ok, n)) in &ok_by_schema {
        eprintln!("{name}: {ok} of {n} calls OK");
    }
    for (name, (ok, n)) in &ok_by_schema {
        assert!(ok * 3 >= *n, "{name}: only {ok} of {n} calls succeeded; the base document is wrong");
    }
    assert!(calls > 1000, "only {calls} calls");
    assert!(failures.is_empty(), "{} of {calls} calls failed:\n{}", failures.len(), failures.join("\n"));
}

/// The walk finds the field the issue names, and `with_value` places values
/// where the schema says they go.
#[test]
fn the_schema_walk_reaches_nested_counts() {
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(root().join("schemas/fit-options.json")).unwrap()).unwrap();
    let paths = numeric_paths(&schema);
    let want: Vec<String> = vec!["policy".into(), "keep_last_turns".into()];
    assert!(paths.contains(&want), "{paths:?}");
    let doc = with_value(&json!({"model": "m"}), &want, &json!(u64::MAX));
    assert_eq!(doc, json!({"model": "m", "policy": {"keep_last_turns": u64::MAX}}));
    let doc = with_value(&json!({}), &["scores".into(), "[]".into()], &json!(1));
    assert_eq!(doc, json!({"scores": [1]}));
}
