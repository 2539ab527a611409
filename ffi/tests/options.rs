//! Issue 33 A and E: every object a JSON parameter of the C ABI takes
//! (options, budgets, policies, configs, metadata, headers, requests) is
//! read strictly. For each input schema in schemas/, the test starts from a
//! document the function accepts and, at every object in it (nested ones
//! included, as the schema describes them), checks through the C function
//! that
//!
//! - the object given as an array (serde's positional form) is
//!   `INVALID_JSON`, "expected an object";
//! - each of its fields given twice (every field the schema lists, whether
//!   or not the document uses it) is `INVALID_JSON`, "duplicate key";
//! - an unknown field is `INVALID_JSON`, "unknown field" (for a map, any
//!   key is a key: a repeated one is still refused).
//!
//! A schema added without a driver here, or a field holding an object the
//! base document leaves out, fails the test. Compiled as a unit-test
//! module of the ffi crate (see `lib.rs`).

use std::ffi::CStr;
use std::path::PathBuf;
use std::ptr::{null, null_mut};

use serde_json::{json, Value};

use crate::*;

const CONVERSATION: &str =
    r#"[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},{"role":"user","content":"again"}]"#;
const HANDOFF: &str = r#"{"version":"1.0","task_summary":"t","key_outputs":[],"metadata":{"from_agent":"a","to_agent":"b","created_at":"2026-03-01T12:00:00Z"}}"#;

/// A C call's status and error message.
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

fn c(s: &str) -> *const std::ffi::c_char {
    s.as_ptr().cast()
}

fn free_string(mut s: turnfit_string) {
    // SAFETY: `s` is empty or was filled by turnfit.
    unsafe { turnfit_string_free(&mut s) };
}

fn empty() -> turnfit_string {
    turnfit_string { ptr: null_mut(), len: 0 }
}

/// A temporary, empty skills folder.
fn skills_root() -> String {
    let dir = std::env::temp_dir().join(format!("turnfit-options-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.to_str().unwrap().to_owned()
}

/// Calls the C function that reads schema `name`'s document as `text`.
/// SAFETY (every call below): the buffers are live Rust strings with their
/// lengths, the out-pointers are locals, handles are created and freed here.
fn drive(name: &str, text: &str) -> (turnfit_status, String) {
    let n = text.len();
    unsafe {
        match name {
            "window-budget" => {
                let mut w = null_mut();
                let r = call(|e| turnfit_window_new(null(), c("gpt-4o"), 6, c(text), n, &mut w, e));
                turnfit_window_free(w);
                r
            }
            "fit-options" => {
                // A turn reads every field (fit and a window's turn refuse
                // `carry`, which only a stateless turn takes).
                let mut t = null_mut();
                let r =
                    call(|e| turnfit_turn_start(null(), c(CONVERSATION), CONVERSATION.len(), c(text), n, &mut t, e));
                turnfit_turn_free(t);
                // fit and a window's turn read them through the same parser
                // and must refuse malformed JSON alike (then each refuses
                // what it does not take: `carry`, or what the window holds).
                if r.0 == turnfit_status::InvalidJson {
                    let (mut a, mut b) = (empty(), empty());
                    let r2 = call(|e| {
                        turnfit_fit(null(), c(CONVERSATION), CONVERSATION.len(), c(text), n, &mut a, &mut b, e)
                    });
                    free_string(a);
                    free_string(b);
                    assert_eq!(r.0, r2.0, "turnfit_turn_start and turnfit_fit differ on {text}: {} / {}", r.1, r2.1);
                    let mut w = null_mut();
                    assert_eq!(
                        turnfit_window_new(null(), c("gpt-4o"), 6, null(), 0, &mut w, null_mut()),
                        turnfit_status::Ok
                    );
                    let r3 = call(|e| turnfit_window_turn_start(null(), w, c(text), n, &mut t, e));
                    turnfit_window_free(w);
                    assert_eq!(
                        r.0, r3.0,
                        "turnfit_turn_start and turnfit_window_turn_start differ on {text}: {}",
                        r3.1
                    );
                }
                r
            }
            "compaction-policy" => {
                let mut w = null_mut();
                assert_eq!(
                    turnfit_window_new(null(), c("gpt-4o"), 6, null(), 0, &mut w, null_mut()),
                    turnfit_status::Ok
                );
                assert_eq!(turnfit_window_load(w, c(CONVERSATION), CONVERSATION.len(), null_mut()), turnfit_status::Ok);
                let mut a = empty();
                let r = call(|e| turnfit_window_compact(w, c(text), n, &mut a, e));
                free_string(a);
                turnfit_window_free(w);
                r
            }
            "skills-open-options" => {
                let root = skills_root();
                let mut s = null_mut();
                let r = call(|e| turnfit_skills_open(c(&root), root.len(), c(text), n, &mut s, e));
                turnfit_skills_free(s);
                let mut s = null_mut();
                let r2 = call(|e| turnfit_skills_open_in(null(), c(&root), root.len(), c(text), n, &mut s, e));
                turnfit_skills_free(s);
                assert_eq!(r.0, r2.0, "skills_open and skills_open_in disagree on {text}");
                r
            }
            "skills-index-options" => {
                let root = skills_root();
                let mut s = null_mut();
                assert_eq!(
                    turnfit_skills_open(c(&root), root.len(), null(), 0, &mut s, null_mut()),
                    turnfit_status::Ok
                );
                let mut a = empty();
                let r = call(|e| turnfit_skills_render_index(s, c(text), n, &mut a, e));
                free_string(a);
                turnfit_skills_free(s);
                r
            }
            "handoff-render-options" => {
                let mut a = empty();
                let r = call(|e| turnfit_handoff_render(c(HANDOFF), HANDOFF.len(), c(text), n, &mut a, e));
                free_string(a);
                let mut a = empty();
                let r2 = call(|e| turnfit_handoff_render_in(null(), c(HANDOFF), HANDOFF.len(), c(text), n, &mut a, e));
                free_string(a);
                assert_eq!(r.0, r2.0, "handoff_render and handoff_render_in disagree on {text}");
                r
            }
            "handoff-filter-options" => {
                let mut a = empty();
                let r = call(|e| turnfit_handoff_filter(c(CONVERSATION), CONVERSATION.len(), c(text), n, &mut a, e));
                free_string(a);
                r
            }
            "backoff-request" => {
                let mut a = empty();
                let r = call(|e| turnfit_recovery_backoff(c(text), n, &mut a, e));
                free_string(a);
                r
            }
            "breaker-config" => {
                let mut b = null_mut();
                let r = call(|e| turnfit_breaker_new(c(text), n, &mut b, e));
                turnfit_breaker_free(b);
                r
            }
            "tracer-config" => {
                let mut t = null_mut();
                let r = call(|e| turnfit_tracer_new(c(text), n, &mut t, e));
                turnfit_tracer_free(t);
                r
            }
            "span-info" | "span-end" => {
                let mut t = null_mut();
                assert_eq!(turnfit_tracer_new(null(), 0, &mut t, null_mut()), turnfit_status::Ok);
                let mut id = 0u64;
                let r = if name == "span-info" {
                    call(|e| turnfit_tracer_start(t, c("tool"), 4, c(text), n, 0, 0, &mut id, e))
                } else {
                    assert_eq!(
                        turnfit_tracer_start(t, c("tool"), 4, null(), 0, 0, 0, &mut id, null_mut()),
                        turnfit_status::Ok
                    );
                    call(|e| turnfit_tracer_end_with(t, id, 0, c(text), n, 1, e))
                };
                turnfit_tracer_free(t);
                r
            }
            "callstack" => {
                let mut s = null_mut();
                let r = call(|e| turnfit_callstack_from_json(c(text), n, &mut s, e));
                turnfit_callstack_free(s);
                r
            }
            "toolset-request" => {
                let mut a = empty();
                let r = call(|e| turnfit_toolset_report(null(), c(text), n, &mut a, e));
                free_string(a);
                let mut a = empty();
                let r2 = call(|e| turnfit_toolset_select(c(text), n, c("a"), 1, &mut a, e));
                free_string(a);
                assert_eq!(r.0, r2.0, "toolset_report and toolset_select disagree on {text}: {} / {}", r.1, r2.1);
                r
            }
            "special-policy" => {
                let mut t = null_mut();
                assert_eq!(turnfit_tokenizer_new(c("cl100k_base"), 11, 0, &mut t, null_mut()), turnfit_status::Ok);
                let mut ids = turnfit_tokens { ptr: null_mut(), len: 0 };
                let r = call(|e| turnfit_tokenizer_encode_special(t, c("hi"), 2, c(text), n, &mut ids, e));
                turnfit_tokens_free(&mut ids);
                turnfit_tokenizer_free(t);
                r
            }
            "classify-headers" => {
                let mut a = empty();
                let r = call(|e| turnfit_recovery_classify(c("openai"), 6, 429, c("{}"), 2, c(text), n, &mut a, e));
                free_string(a);
                r
            }
            "error-context" => {
                let mut a = empty();
                let r = call(|e| {
                    turnfit_recovery_classify_in(c("openai"), 6, 500, null(), 0, null(), 0, c(text), n, &mut a, e)
                });
                free_string(a);
                r
            }
            "assemble-request" => {
                let mut t = null_mut();
                assert_eq!(turnfit_tokenizer_new(c("cl100k_base"), 11, 0, &mut t, null_mut()), turnfit_status::Ok);
                let mut a = empty();
                let r = call(|e| turnfit_assemble(t, c(text), n, &mut a, e));
                free_string(a);
                turnfit_tokenizer_free(t);
                r
            }
            "model-profile" => {
                let mut reg = null_mut();
                assert_eq!(turnfit_registry_new(&mut reg, null_mut()), turnfit_status::Ok);
                let mut k = 0usize;
                let r = call(|e| turnfit_registry_register(reg, c(text), n, &mut k, e));
                turnfit_registry_free(reg);
                r
            }
            other => panic!("no driver for input schema {other}"),
        }
    }
}

/// A document each input schema's function accepts, holding every field
/// whose value is an object.
fn base(name: &str) -> Value {
    match name {
        "window-budget" => json!({"context_window": 8000, "reserved_output": 100,
            "multi_scale": {"immediate_tokens": 4000, "session_tokens": 1000, "historical_tokens": 1000}}),
        "fit-options" => json!({"model": "gpt-4o", "max_tokens": 4000, "policy": {"mask": {}, "digest": {}},
            "summarizer": {"timeout_ms": 1000},
            "carry": {"replaced": ["0123456789abcdef"], "summary": {"role": "user", "content": "s"}}}),
        "compaction-policy" => json!({"target_tokens": 4000, "limit_tokens": 6000, "mask": {}, "digest": {}}),
        "skills-open-options" => json!({"layout": "auto"}),
        "skills-index-options" => json!({"budget": 1000, "scores": {"a": 1.0}}),
        "handoff-render-options" => json!({"budget": 1000}),
        "handoff-filter-options" => json!({}),
        "backoff-request" => json!({"policy": {}, "failed_attempts": 1, "seed": 7}),
        "breaker-config" => json!({}),
        "tracer-config" => json!({"timeouts": {"t": 5}}),
        "span-info" => json!({"agent_id": "a"}),
        "span-end" => json!({"output_bytes": 1, "metadata": {"k": 1}}),
        "callstack" => json!({"agents": ["a"], "depth": 1, "max_depth": 5}),
        "toolset-request" => json!({
            "model": "gpt-4o",
            "tools": [{"type": "function", "function": {"name": "x", "parameters": {}}}],
            "allowlists": {"a": ["x"]},
        }),
        "special-policy" => json!({"allowed_special": "all"}),
        "classify-headers" => json!({"retry-after": "1"}),
        "error-context" => json!({"agent_id": "narrator", "workflow_id": "wf-7", "metadata": {"turn": 3}}),
        "assemble-request" => json!({
            "budget": 1000,
            "templates": [{"name": "mine", "required": ["task"]}],
            "depth": {"turns": 1, "events": 1},
            "depth_limits": {"minimal": {"turns": 1}, "standard": {}, "comprehensive": {}},
            "sections": [{"name": "task", "text": "Do it."}],
            "context": {"k": "v"},
        }),
        "model-profile" => json!({"name": "mine", "encoding": "o200k_base", "exact": true}),
        other => panic!("no base document for input schema {other}"),
    }
}

/// The input schemas: those that say a function takes them.
fn input_schemas(root: &std::path::Path) -> Vec<(String, Value)> {
    const INPUTS: &[&str] = &[
        "window-budget",
        "fit-options",
        "compaction-policy",
        "skills-open-options",
        "skills-index-options",
        "handoff-render-options",
        "handoff-filter-options",
        "backoff-request",
        "breaker-config",
        "tracer-config",
        "span-info",
        "span-end",
        "callstack",
        "toolset-request",
        "special-policy",
        "classify-headers",
        "error-context",
        "assemble-request",
        "model-profile",
    ];
    let mut out = Vec::new();
    for e in std::fs::read_dir(root.join("schemas")).unwrap() {
        let path = e.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_owned();
        let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let used_by = schema["description"].as_str().unwrap_or("");
        // An input: a parameter name in parentheses, or one of the requests.
        // (`out_..._json` parameters are results, not inputs.)
        let takes = used_by.match_indices("_json)").any(|(i, _)| {
            let param = used_by[..i].rsplit('(').next().unwrap_or("");
            !param.starts_with("out_")
        }) || INPUTS.contains(&name.as_str());
        if takes && name != "conversation" && name != "handoff" {
            assert!(INPUTS.contains(&name.as_str()), "input schema {name} has no driver in ffi/tests/options.rs");
            out.push((name, schema));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(out.len(), INPUTS.len(), "an input schema is missing from schemas/");
    out
}

/// `s` with `$ref`s followed; for `anyOf`/`oneOf` and type lists, the
/// alternative that describes an object (or the first non-null one).
fn resolve<'a>(root: &'a Value, s: &'a Value, want_object: bool) -> &'a Value {
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r.rsplit('/').next().unwrap();
        return resolve(root, &root["$defs"][name], want_object);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(alts) = s.get(key).and_then(Value::as_array) {
            let resolved: Vec<&Value> = alts.iter().map(|a| resolve(root, a, want_object)).collect();
            let pick = if want_object {
                resolved.iter().find(|a| is_object(a))
            } else {
                resolved.iter().find(|a| a.get("type") != Some(&json!("null")))
            };
            return pick.copied().unwrap_or(resolved[0]);
        }
    }
    s
}

fn is_object(s: &Value) -> bool {
    match s.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.contains(&json!("object")),
        _ => s.get("properties").is_some(),
    }
}

/// Whether a schema offers alternatives (then the array's message is the
/// type's own, not the struct reader's).
fn has_alternatives(root: &Value, s: &Value) -> bool {
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        return has_alternatives(root, &root["$defs"][r.rsplit('/').next().unwrap()]);
    }
    s.get("anyOf").is_some() || s.get("oneOf").is_some()
}

/// A value of the type `s` describes (its default, a constant, or the
/// simplest value of its type).
fn sample(root: &Value, s: &Value) -> Value {
    let s = resolve(root, s, false);
    if let Some(d) = s.get("default").filter(|d| !d.is_null()) {
        return d.clone();
    }
    if let Some(v) = s.get("const") {
        return v.clone();
    }
    if let Some(v) = s.get("enum").and_then(|e| e.get(0)) {
        return v.clone();
    }
    let ty = match s.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => {
            ts.iter().filter_map(Value::as_str).find(|t| *t != "null").unwrap_or("null").to_owned()
        }
        _ => "object".to_owned(),
    };
    match ty.as_str() {
        "integer" => json!(1),
        "number" => json!(0.5),
        "boolean" => json!(true),
        "string" => json!("x"),
        "array" => json!([]),
        "null" => Value::Null,
        _ => {
            let mut o = serde_json::Map::new();
            for r in s.get("required").and_then(Value::as_array).into_iter().flatten() {
                let k = r.as_str().unwrap();
                o.insert(k.to_owned(), sample(root, &s["properties"][k]));
            }
            Value::Object(o)
        }
    }
}

/// One hostile variant of the base document.
struct Case {
    what: String,
    text: String,
    /// Words the message must hold.
    expect: &'static str,
}

const HOLE: &str = "\u{1}HOLE\u{1}";

/// `doc` with the value at `path` replaced by the raw text `raw`.
fn with_raw(doc: &Value, path: &[PathStep], raw: &str) -> String {
    let mut d = doc.clone();
    let mut at = &mut d;
    for step in path {
        at = match step {
            PathStep::Key(k) => &mut at[k.as_str()],
            PathStep::Index(i) => &mut at[*i],
        };
    }
    *at = Value::String(HOLE.to_owned());
    let text = d.to_string();
    let quoted = serde_json::to_string(HOLE).unwrap();
    assert_eq!(text.matches(&quoted).count(), 1);
    text.replacen(&quoted, raw, 1)
}

#[derive(Clone, Debug)]
enum PathStep {
    Key(String),
    Index(usize),
}

fn show(path: &[PathStep]) -> String {
    let mut s = String::from("$");
    for p in path {
        match p {
            PathStep::Key(k) => s += &format!(".{k}"),
            PathStep::Index(i) => s += &format!("[{i}]"),
        }
    }
    s
}

/// Walks the object at `path` (its schema `s`) and everything under it.
fn walk(root: &Value, doc: &Value, path: Vec<PathStep>, value: &Value, s: &Value, out: &mut Vec<Case>) {
    let alternatives = has_alternatives(root, s);
    let s = resolve(root, s, value.is_object());
    if let Some(items) = value.as_array() {
        for (i, v) in items.iter().enumerate() {
            let mut p = path.clone();
            p.push(PathStep::Index(i));
            walk(root, doc, p, v, s.get("items").unwrap_or(&Value::Bool(true)), out);
        }
        return;
    }
    let Some(obj) = value.as_object() else { return };
    let at = show(&path);
    let member = |k: &str, v: &Value| format!("{}:{}", serde_json::to_string(k).unwrap(), v);
    let body = |extra: &[String]| {
        let mut parts: Vec<String> = obj.iter().map(|(k, v)| member(k, v)).collect();
        parts.extend_from_slice(extra);
        format!("{{{}}}", parts.join(","))
    };
    // By position: the values in order. (A free-form value, such as a
    // tool definition or a section's text, may be an array.)
    let free_form = !is_object(s) && s.get("additionalProperties").is_none();
    if !free_form {
        let positional = Value::Array(obj.values().cloned().collect()).to_string();
        out.push(Case {
            what: format!("{at} as an array"),
            text: with_raw(doc, &path, &positional),
            // serde_json refuses `[` for a map itself ("invalid type:
            // sequence, expected a map"); a struct is refused by the reader.
            expect: if alternatives {
                ""
            } else if s.get("properties").is_some() {
                "invalid type: array, expected an object"
            } else {
                "expected a map"
            },
        });
    }
    match s.get("properties").and_then(Value::as_object) {
        Some(props) => {
            out.push(Case {
                what: format!("{at} with an unknown field"),
                text: with_raw(doc, &path, &body(&[member("zz_not_a_field", &json!(1))])),
                expect: "unknown field",
            });
            for (k, ps) in props {
                let v = obj.get(k).cloned().unwrap_or_else(|| sample(root, ps));
                let extra = if obj.contains_key(k) { vec![member(k, &v)] } else { vec![member(k, &v), member(k, &v)] };
                out.push(Case {
                    what: format!("{at}.{k} twice"),
                    text: with_raw(doc, &path, &body(&extra)),
                    expect: "duplicate key",
                });
                let field_schema = resolve(root, ps, true);
                if is_object(field_schema) && !obj.contains_key(k) {
                    panic!("base document leaves out {at}.{k}, an object: add it so its fields are walked");
                }
            }
        }
        None => {
            // A map: any key is a key, a repeated one is refused.
            let v = match obj.iter().next() {
                Some((_, v)) => v.clone(),
                None => sample(root, s.get("additionalProperties").unwrap_or(&json!({"type": "string"}))),
            };
            let extra = if let Some((k, _)) = obj.iter().next() {
                vec![member(k, &v)]
            } else {
                vec![member("k", &v), member("k", &v)]
            };
            out.push(Case {
                what: format!("{at} (a map) with a key twice"),
                text: with_raw(doc, &path, &body(&extra)),
                expect: "duplicate key",
            });
        }
    }
    for (k, v) in obj {
        if v.is_object() || v.is_array() {
            let mut p = path.clone();
            p.push(PathStep::Key(k.clone()));
            let fs = s.get("properties").and_then(|p| p.get(k)).or_else(|| s.get("additionalProperties"));
            walk(root, doc, p, v, fs.unwrap_or(&Value::Bool(true)), out);
        }
    }
}

/// The variants for one schema.
fn cases(schema: &Value, doc: &Value) -> Vec<Case> {
    let mut out = Vec::new();
    walk(schema, doc, Vec::new(), doc, schema, &mut out);
    out
}

#[test]
fn every_object_parameter_refuses_arrays_repeats_and_unknown_fields() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut failures = Vec::new();
    let mut total = 0;
    for (name, schema) in input_schemas(&root) {
        let doc = base(&name);
        let (st, msg) = drive(&name, &doc.to_string());
        assert_eq!(st, turnfit_status::Ok, "{name}: the base document {doc} is refused: {msg}");
        for case in cases(&schema, &doc) {
            total += 1;
            let (st, msg) = drive(&name, &case.text);
            if st != turnfit_status::InvalidJson || !msg.contains(case.expect) {
                failures.push(format!("{name}: {}: {st:?} {msg}\n      {}", case.what, case.text));
            }
        }
    }
    assert!(total > 150, "only {total} cases");
    assert!(
        failures.is_empty(),
        "{} of {total} cases accepted or misreported:\n  {}",
        failures.len(),
        failures.join("\n  ")
    );
}
