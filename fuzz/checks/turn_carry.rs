//! Target `turn_carry` (issue 48): a stateless turn with an `options.carry`
//! made from the input. Input: four option bytes (the carry's index, its
//! length, how it was made: bit 0 fingerprints of the history or forged
//! ones, bit 1 an index from the bytes or none, bit 2 a summary message or
//! a value that is not one; the policy byte: strategy and pins), then the
//! conversation JSON. Never panics and never fails `Internal`; when the
//! carry is applied, its run was at its index in the history and held no
//! system or developer message and not the newest user message (what a
//! carry may never remove), and the report names the run it replaced.

use serde_json::{json, Value};
use turnfit::window::{fingerprint, FitOptions};
use turnfit::{ErrorKind, ModelRegistry};

use super::common::{text, Knobs};

pub fn check(data: &[u8]) {
    let mut k = Knobs::new(data);
    let index = k.byte() as usize;
    let len = 1 + k.byte() as usize % 8;
    let how = k.byte();
    let policy = k.byte();
    let conversation = text(k.rest());
    let messages: Vec<Value> = serde_json::from_str::<Value>(&conversation)
        .ok()
        .and_then(|v| match v {
            Value::Array(a) => Some(a),
            Value::Object(mut o) => match o.remove("messages") {
                Some(Value::Array(a)) => Some(a),
                _ => None,
            },
            _ => None,
        })
        .unwrap_or_default();
    let fps: Vec<String> = messages.iter().map(fingerprint).collect();
    let replaced: Vec<String> = if how & 1 == 0 && !fps.is_empty() {
        let start = index.min(fps.len() - 1);
        fps[start..(start + len).min(fps.len())].to_vec()
    } else {
        (0..len).map(|i| format!("{:016x}", i as u64 * 0x9e37_79b9 + index as u64)).collect()
    };
    let summary = if how & 4 == 0 {
        json!({"role": "user", "content": "[Summary of earlier conversation]\nForged."})
    } else {
        json!({"role": 7})
    };
    let mut carry = json!({"replaced": replaced, "summary": summary});
    if how & 2 == 0 {
        carry["index"] = json!(index);
    }
    let strategy = ["recency", "summarize", "hybrid", "relevance"][policy as usize % 4];
    let mut p = json!({"strategy": strategy});
    if policy & 0x10 != 0 {
        p["pinned"] = json!([0, 2]);
    }
    let budget = 200 + 50 * (policy as usize >> 5);
    let options = json!({"model": "gpt-4o", "max_tokens": budget * 10, "reserve_output": budget, "policy": p,
                         "carry": carry});
    let o: FitOptions = match turnfit::frontend::parse_options("options", Some(&options.to_string())) {
        Ok(o) => o,
        Err(e) => {
            assert_ne!(e.kind(), ErrorKind::Internal, "{e}");
            return;
        }
    };
    let report = match turnfit::turn::run(&ModelRegistry::builtin(), &conversation, &o, None) {
        Ok((_, r)) => r,
        Err(e) => {
            assert_ne!(e.kind(), ErrorKind::Internal, "turn failed internally ({options}): {e}");
            return;
        }
    };
    let Some(at) = report.carried else { return };
    assert!(report.carry_ignored.is_none(), "applied and ignored at once");
    let run = at.index..at.index + at.messages;
    assert_eq!(Some(at.index), carry["index"].as_u64().map(|i| i as usize), "applied away from its index");
    assert_eq!(fps.get(run.clone()), Some(&replaced[..]), "applied over messages that are not its run");
    let role = |m: &Value| m.get("role").and_then(Value::as_str).unwrap_or("").to_owned();
    for m in &messages[run.clone()] {
        assert!(!matches!(role(m).as_str(), "system" | "developer"), "a carry removed a system message: {options}");
    }
    let newest_user = messages.iter().rposition(|m| {
        role(m) == "user"
            && m.get("content").and_then(Value::as_str).is_some_and(|t| !t.starts_with("[Summary of earlier"))
    });
    if let Some(u) = newest_user {
        assert!(!run.contains(&u), "a carry removed the newest user message {u}: {options}");
    }
}
