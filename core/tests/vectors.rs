//! Runs every conformance vector in tests/vectors/*.json against the core.
//! The expected values come from OpenAI's Python tiktoken (see
//! tests/vectors/README.md); every binding runs the same files.

use std::path::PathBuf;

use serde_json::Value;
use turnfit::chat::Conversation;
use turnfit::window::{fit_json, repair, validate, Accountant, Budget, Window};
use turnfit::{DecodeMode, Encoding, ModelRegistry, SpecialTokens, Tokenizer, TruncateSide};

#[path = "vectors/agents.rs"]
mod agents;

fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors")
}

fn tokenizer(input: &Value) -> Tokenizer {
    let enc = Encoding::from_name(input["encoding"].as_str().expect("encoding")).unwrap();
    let special = match input["special"].as_str().unwrap_or("ordinary") {
        "ordinary" => SpecialTokens::Ordinary,
        "recognize" => SpecialTokens::Recognize,
        other => panic!("bad special {other}"),
    };
    Tokenizer::new(enc).unwrap().with_special_tokens(special)
}

fn ids(v: &Value) -> Vec<u32> {
    v.as_array().expect("ids").iter().map(|x| x.as_u64().unwrap() as u32).collect()
}

/// The result of a window operation, or its error kind, as JSON.
fn run_window(op: &str, input: &Value) -> Result<Value, turnfit::Error> {
    let conversation = input["conversation"].to_string();
    let model = input["model"].as_str().unwrap_or("gpt-4o");
    let registry = ModelRegistry::builtin();
    Ok(match op {
        "count_conversation" => {
            let (acct, _) = Accountant::for_model(&registry, model)?;
            serde_json::json!({ "prompt_tokens": acct.conversation(&Conversation::parse(&conversation, None)?)? })
        }
        "preflight" => {
            let budget: Budget = serde_json::from_value(input["budget"].clone()).unwrap_or_default();
            let mut w = Window::for_model(&registry, model, budget)?;
            w.load(Conversation::parse(&conversation, None)?)?;
            serde_json::to_value(w.preflight(None)?).unwrap()
        }
        "repair" => {
            let (acct, _) = Accountant::for_model(&registry, model)?;
            let c = Conversation::parse(&conversation, None)?;
            let r = repair(&c, None, &acct)?;
            serde_json::json!({ "issues": validate(&c), "conversation": r.conversation.to_value(), "changes": r.changes })
        }
        "fit" => {
            let (c, report) = fit_json(&conversation, &input["options"].to_string())?;
            serde_json::json!({ "conversation": serde_json::from_str::<Value>(&c).unwrap(), "report": report })
        }
        other => panic!("unknown window op {other}"),
    })
}

/// The agent-primitive ops of tests/vectors/recovery.json (see its README
/// section). `classify` expectations are a subset of the output.
fn run_agents(op: &str, input: &Value, expected: &Value) -> Result<(), String> {
    use turnfit::callstack::CallStack;
    use turnfit::recovery::{classify_json, BackoffPolicy, BreakerConfig, Breakers};
    let err = |e: turnfit::Error| serde_json::json!({ "error": e.kind().as_str() });
    let got = match op {
        "classify" => {
            if let Some(path) = input["fixture"].as_str() {
                let on_disk = std::fs::read_to_string(vectors_dir().join("../..").join(path))
                    .map_err(|e| format!("{path}: {e}"))?;
                if on_disk != input["body"].as_str().unwrap_or("") {
                    return Err(format!("{path} differs from the vector's body; rerun gen_recovery_vectors.py"));
                }
            }
            let mut req = input.clone();
            req.as_object_mut().unwrap().remove("fixture");
            let got = classify_json(&req.to_string()).map_or_else(err, |c| serde_json::to_value(c).unwrap());
            let mismatched: Vec<String> = expected
                .as_object()
                .unwrap()
                .iter()
                .filter(|(k, v)| got.get(k.as_str()) != Some(v))
                .map(|(k, v)| format!("{k}: expected {v}, got {}", got.get(k.as_str()).unwrap_or(&Value::Null)))
                .collect();
            return if mismatched.is_empty() {
                Ok(())
            } else {
                Err(format!("{}\n     full output {got}", mismatched.join("; ")))
            };
        }
        "backoff" => {
            BackoffPolicy::decide_json(&input.to_string()).map_or_else(err, |d| serde_json::to_value(d).unwrap())
        }
        "breaker" => {
            let config: BreakerConfig = serde_json::from_value(input["config"].clone()).map_err(|e| e.to_string())?;
            let b = Breakers::new(config).map_err(|e| e.to_string())?;
            let mut results = Vec::new();
            for op in input["ops"].as_array().unwrap() {
                let (what, at) = (op[0].as_str().unwrap(), op[1].as_u64().unwrap());
                results.push(match what {
                    "allow" => serde_json::json!(b.allow("k", at).map_err(|e| e.to_string())?),
                    "success" | "failure" => {
                        serde_json::to_value(b.record("k", what == "success", at).map_err(|e| e.to_string())?).unwrap()
                    }
                    "state" => serde_json::to_value(b.snapshot("k", at).map_err(|e| e.to_string())?.state).unwrap(),
                    other => return Err(format!("unknown breaker op {other}")),
                });
            }
            serde_json::json!({ "results": results })
        }
        "callstack" => {
            let max = input["max_depth"].as_u64().unwrap() as usize;
            let stack = CallStack::new(max).and_then(|mut s| {
                for a in input["enter"].as_array().unwrap() {
                    s = s.enter(a.as_str().unwrap())?;
                }
                Ok(s)
            });
            stack.map_or_else(err, |s| serde_json::to_value(s.to_json_value()).unwrap())
        }
        "trace" => run_trace(input)?,
        "toolset" => {
            let req = input["request"].to_string();
            match input["select"].as_str() {
                Some(agent) => turnfit::toolset::select_json(&req, agent)
                    .map_or_else(err, |v| serde_json::json!({ "selected": v })),
                None => turnfit::toolset::report_json(&ModelRegistry::builtin(), &req).map_or_else(err, |r| {
                    let agents: serde_json::Map<String, Value> =
                        r.agents.iter().map(|a| (a.agent.clone(), serde_json::json!(a.tools))).collect();
                    serde_json::json!({ "tool_count": r.tool_count, "agents": agents })
                }),
            }
        }
        other => return Err(format!("unknown op {other:?}")),
    };
    if &got == expected {
        Ok(())
    } else {
        Err(format!("expected {expected}\n     got {got}"))
    }
}

/// Replays a trace vector's events on a fresh tracer; returns the view the
/// vector's `expected` describes (tools, recent records, interrupted calls,
/// events that failed).
fn run_trace(input: &Value) -> Result<Value, String> {
    use turnfit::trace::{interrupted_results, Outcome, SpanInfo, Tracer};
    let t = Tracer::from_json(&input["config"].to_string()).map_err(|e| e.to_string())?;
    let (mut ids, mut interrupted, mut event_errors) = (Vec::new(), Vec::new(), Vec::new());
    for (i, e) in input["events"].as_array().unwrap().iter().enumerate() {
        let at = |k: usize| e[k].as_u64().unwrap();
        let result = match e[0].as_str().unwrap() {
            "start" => {
                let info: SpanInfo = serde_json::from_value(e[2].clone()).map_err(|x| x.to_string())?;
                let r = t.start(e[1].as_str().unwrap(), info, at(3), at(4));
                ids.push(r.as_ref().ok().copied());
                r.map(|_| ())
            }
            "end" => {
                let n = e[1].as_u64().unwrap() as usize;
                let id = ids.get(n.wrapping_sub(1)).copied().flatten().unwrap_or(u64::MAX);
                let outcome: Outcome = serde_json::from_value(e[2].clone()).map_err(|x| x.to_string())?;
                t.end(id, outcome, at(3), e[4].as_str(), at(5))
            }
            "expire" => {
                interrupted.extend(interrupted_results(&t.expire(at(1))).into_iter().map(|r| r.tool_call_id));
                Ok(())
            }
            other => return Err(format!("unknown trace event {other}")),
        };
        if let Err(x) = result {
            event_errors.push(serde_json::json!([i, x.kind().as_str()]));
        }
    }
    let mut tools = serde_json::Map::new();
    for m in t.metrics() {
        let mut v = serde_json::json!({ "count": m.count, "successes": m.successes, "errors": m.errors,
            "timeouts": m.timeouts, "cancelled": m.cancelled, "in_flight": m.in_flight });
        if let Some(d) = &m.duration_us {
            for (k, x) in [("min", d.min), ("max", d.max), ("p50", d.p50), ("p95", d.p95), ("p99", d.p99)] {
                v[k] = serde_json::json!(x);
            }
        }
        tools.insert(m.tool.clone(), v);
    }
    let recent: Vec<Value> = t.recent().iter().map(|r| serde_json::json!([r.tool, r.outcome, r.count])).collect();
    Ok(
        serde_json::json!({ "tools": tools, "recent": recent, "interrupted": interrupted, "event_errors": event_errors }),
    )
}

/// Runs one vector; returns a description of the mismatch, if any.
/// `file_encode` / `file_decode` (tests/vectors/file_tokenizer.json): a
/// tokenizer loaded from one of tests/vectors/files/, HF `tokenizers` the oracle.
fn run_file(op: &str, input: &Value) -> Result<Value, turnfit::Error> {
    use turnfit::pipeline::FileTokenizer;
    let path = vectors_dir().join(input["file"].as_str().unwrap_or(""));
    let special = match input["special"].as_str() {
        Some("recognize") => turnfit::SpecialTokens::Recognize,
        _ => turnfit::SpecialTokens::Ordinary,
    };
    let t = FileTokenizer::from_file(&path)?.with_special_tokens(special);
    Ok(match op {
        "file_encode" => {
            let text = input["text"].as_str().unwrap_or("");
            let add = input["add_special"].as_bool().unwrap_or(false);
            serde_json::json!({ "ids": t.encode_with_special(text, add)?, "count": t.count(text)? })
        }
        _ => serde_json::json!({ "text": t.decode(&ids(&input["ids"]))? }),
    })
}

fn run(v: &Value) -> Result<(), String> {
    let (op, input, expected) = (v["op"].as_str().unwrap_or(""), &v["input"], &v["expected"]);
    if agents::handles(op) {
        let got = agents::run(op, input);
        return if &got == expected { Ok(()) } else { Err(format!("expected {expected}\n     got {got}")) };
    }
    if matches!(op, "classify" | "backoff" | "breaker" | "callstack" | "trace" | "toolset") {
        return run_agents(op, input, expected);
    }
    if matches!(op, "count_conversation" | "preflight" | "repair" | "fit") {
        let got = match run_window(op, input) {
            Ok(v) => v,
            Err(e) => serde_json::json!({ "error": e.kind().as_str() }),
        };
        return if &got == expected { Ok(()) } else { Err(format!("expected {expected}\n     got {got}")) };
    }
    if matches!(op, "file_encode" | "file_decode") {
        let got = run_file(op, input).unwrap_or_else(|e| serde_json::json!({ "error": e.kind().as_str() }));
        return if &got == expected { Ok(()) } else { Err(format!("expected {expected}\n     got {got}")) };
    }
    if op == "model_lookup" {
        let model = input["model"].as_str().unwrap_or("");
        let got = match turnfit::ModelRegistry::builtin().lookup(model) {
            Ok(m) => serde_json::json!({
                "family": m.family, "encoding": m.encoding.name(), "context_window": m.context_window,
                "max_output_tokens": m.max_output_tokens, "exact": m.exact, "source": m.source.as_str(),
            }),
            Err(e) => serde_json::json!({ "error": e.kind().as_str() }),
        };
        return if &got == expected { Ok(()) } else { Err(format!("expected {expected}\n     got {got}")) };
    }
    let t = tokenizer(input);
    let text = input["text"].as_str().unwrap_or("");
    let got: Value = match op {
        "encode" => {
            let ids = t.encode(text).map_err(|e| e.to_string())?;
            let count = t.count(text).map_err(|e| e.to_string())?;
            serde_json::json!({ "ids": ids, "count": count })
        }
        "decode" => {
            let mode = match input["mode"].as_str() {
                Some("strict") => DecodeMode::Strict,
                _ => DecodeMode::Replace,
            };
            match t.decode(&ids(&input["ids"]), mode) {
                Ok(s) => serde_json::json!({ "text": s }),
                Err(e) => serde_json::json!({ "error": e.kind().as_str() }),
            }
        }
        "count_until_limit" => {
            let limit = input["limit"].as_u64().unwrap() as usize;
            let r = t.count_until_limit(text, limit).map_err(|e| e.to_string())?;
            if r.exceeded {
                let min = expected["tokens_min"].as_u64().unwrap_or(0) as usize;
                if r.tokens < min {
                    return Err(format!("exceeded with {} tokens, expected at least {min}", r.tokens));
                }
                serde_json::json!({ "exceeded": true, "tokens_min": expected["tokens_min"] })
            } else {
                serde_json::json!({ "tokens": r.tokens, "exceeded": false })
            }
        }
        "truncate" => {
            let side = match input["side"].as_str() {
                Some("head") => TruncateSide::Head,
                Some("tail") => TruncateSide::Tail,
                Some("both") => TruncateSide::Both,
                other => return Err(format!("bad side {other:?}")),
            };
            let max = input["max_tokens"].as_u64().unwrap() as usize;
            match t.truncate(text, max, side, input["marker"].as_str()) {
                Ok(r) => serde_json::to_value(r).unwrap(),
                Err(e) => serde_json::json!({ "error": e.kind().as_str() }),
            }
        }
        other => return Err(format!("unknown op {other:?}")),
    };
    if &got == expected {
        Ok(())
    } else {
        Err(format!("expected {expected}\n     got {got}"))
    }
}

/// Writes tests/vectors/window.json and window_loops.json from their
/// `.cases.json`:
/// each case's expected output is what turnfit returns now, except for the
/// cases that carry their own expected value (the counting guide's figures),
/// which are kept and checked. Run after a deliberate behaviour change:
/// `TURNFIT_BLESS=1 cargo test -p turnfit --test vectors`.
#[test]
fn bless_window_vectors() {
    if std::env::var_os("TURNFIT_BLESS").is_none() {
        return;
    }
    for name in ["window", "window_loops", "window_formats"] {
        let cases: Value =
            serde_json::from_str(&std::fs::read_to_string(vectors_dir().join(format!("{name}.cases.json"))).unwrap())
                .unwrap();
        let mut out = Vec::new();
        for c in cases["cases"].as_array().unwrap() {
            let got = match run_window(c["op"].as_str().unwrap(), &c["input"]) {
                Ok(v) => v,
                Err(e) => serde_json::json!({ "error": e.kind().as_str() }),
            };
            if let Some(fixed) = c.get("expected") {
                assert_eq!(&got, fixed, "{}: an independent expectation disagrees", c["name"]);
            }
            out.push(serde_json::json!({ "name": c["name"], "op": c["op"], "input": c["input"], "expected": got }));
        }
        let doc = serde_json::json!({
            "format": 1,
            "generated_by": format!("TURNFIT_BLESS=1 cargo test -p turnfit --test vectors (from {name}.cases.json)"),
            "oracle": "count_conversation cases: OpenAI's counting guide; other cases: turnfit's own output, frozen for regression and cross-binding parity",
            "vectors": out,
        });
        std::fs::write(vectors_dir().join(format!("{name}.json")), serde_json::to_string_pretty(&doc).unwrap() + "\n")
            .unwrap();
    }
}

/// Writes tests/vectors/skills.json and handoff.json from their
/// `.cases.json` (see `agents::bless`); same switch as the window vectors.
#[test]
fn bless_agent_vectors() {
    if std::env::var_os("TURNFIT_BLESS").is_none() {
        return;
    }
    let oracle = "turnfit's own output, frozen for regression and cross-binding parity (cases with their own expected value are checked)";
    agents::bless(&vectors_dir(), "skills", oracle);
    agents::bless(&vectors_dir(), "handoff", oracle);
    agents::bless(&vectors_dir(), "assemble", oracle);
}

#[test]
fn every_conformance_vector_passes() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(vectors_dir())
        .expect("tests/vectors exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json") && !p.to_string_lossy().ends_with(".cases.json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no vector files");
    let (mut passed, mut failures) = (0usize, Vec::new());
    for file in &files {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        assert_eq!(doc["format"], 1, "{}", file.display());
        let vectors = doc["vectors"].as_array().expect("vectors array");
        assert!(vectors.len() >= 10, "{} has only {} vectors", file.display(), vectors.len());
        for v in vectors {
            match run(v) {
                Ok(()) => passed += 1,
                Err(e) => failures.push(format!("{}: {}", v["name"], e)),
            }
        }
    }
    for f in failures.iter().take(20) {
        eprintln!("FAIL {f}");
    }
    assert!(failures.is_empty(), "{} of {} vectors failed", failures.len(), passed + failures.len());
    eprintln!("vectors: {passed} passed");
}
