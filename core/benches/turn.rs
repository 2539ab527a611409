//! A turn on a window after one message is pushed, next to a cold `fit` of
//! the same history (issue 31: "a turn on a 1 MB history after one message
//! is pushed takes a small fraction of a cold fit, because nothing is
//! recounted"). A benchmark, not a test: it prints medians and asserts
//! nothing about time.
//!
//!     cargo bench -p turnfit --bench turn
//!
//! The history is an agent loop of about 1 MB (a task, then tool rounds with
//! 2 KB outputs) under a 1,000,000-token budget, so the turn does not fire: the
//! warm path is the common one (hysteresis makes compaction rare). The cold
//! path parses and counts the whole history, as a stateless host pays at
//! every call.

use std::hint::black_box;
use std::time::Instant;

use serde_json::{json, Value};
use turnfit::chat::Conversation;
use turnfit::turn::run_window;
use turnfit::window::{fit, Budget, FitOptions, Window};
use turnfit::ModelRegistry;

fn history(bytes: usize) -> String {
    let mut msgs = vec![
        json!({"role": "system", "content": "You are a coding agent."}),
        json!({"role": "user", "content": "Fix the failing test in src/parser.rs."}),
    ];
    let mut k = 0;
    while serde_json::to_string(&msgs).unwrap().len() < bytes {
        for _ in 0..50 {
            let id = format!("call_{k}");
            msgs.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function",
                "function": {"name": "bash", "arguments": format!("{{\"cmd\":\"cat src/f{k}.rs\"}}")}}]}));
            let out: String = (0..80).map(|i| format!("fn item_{k}_{i}() -> u32 {{ {i} }}\n")).collect();
            msgs.push(json!({"role": "tool", "tool_call_id": id, "content": out}));
            k += 1;
        }
    }
    Value::Array(msgs).to_string()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let text = history(1 << 20);
    let budget = 1_000_000;
    let options = FitOptions { model: "gpt-4o".into(), max_tokens: Some(budget), ..FitOptions::default() };
    let cold: Vec<f64> = (0..11)
        .map(|_| {
            let t = Instant::now();
            black_box(fit(&text, &options).unwrap());
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    let mut w =
        Window::for_model(&ModelRegistry::builtin(), "gpt-4o", Budget { context_window: budget, ..Budget::default() })
            .unwrap();
    w.load(Conversation::parse(&text, None).unwrap()).unwrap();
    let warm: Vec<f64> = (0..101)
        .map(|i| {
            let t = Instant::now();
            w.push_json(&json!({"role": "user", "content": format!("and now step {i}")}).to_string()).unwrap();
            let r = run_window(&mut w, &FitOptions::default(), None).unwrap();
            let ms = t.elapsed().as_secs_f64() * 1e3;
            assert!(!r.fired);
            black_box(r);
            w.pop();
            ms
        })
        .collect();
    let (c, h) = (median(cold), median(warm));
    println!(
        "history {} bytes, {} messages: cold fit {c:.2} ms (median of 11), push + window turn {h:.3} ms (median of 101), {:.0}x",
        text.len(),
        w.conversation().messages.len(),
        c / h
    );
}
