//! Deterministic input generators for the growth workloads. The input of
//! size 2n starts with the input of size n wherever the shape allows, so a
//! doubling adds more of the same rather than something different.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// xorshift64*: deterministic, no dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const WORDS: &[&str] = &[
    "the",
    "window",
    "keeps",
    "every",
    "tool",
    "call",
    "next",
    "to",
    "its",
    "result",
    "and",
    "drops",
    "whole",
    "turns",
    "when",
    "budget",
    "is",
    "tight",
    "a",
    "parser",
    "reads",
    "front-matter",
    "of",
    "each",
    "skill",
    "before",
    "body",
    "counting",
    "tokens",
    "exactly",
    "matters",
    "because",
    "models",
    "refuse",
    "prompts",
    "that",
    "overflow",
    "their",
    "context",
    "we",
    "measure",
    "instructions",
    "not",
    "seconds",
    "so",
    "results",
    "stay",
    "stable",
    "on",
    "shared",
    "machines",
    "file",
    "src/main.rs",
    "returns",
    "error",
    "retry",
    "after",
    "summary",
    "agent",
    "handoff",
    "conversation",
    "message",
    "assistant",
    "user",
    "compaction",
    "relevance",
    "recency",
    "hybrid",
    "weight",
    "score",
    "identifier_with_underscores",
    "CamelCaseName",
    "2048",
    "v1.2.3",
];

/// English-like prose of exactly `n` bytes (ASCII), deterministic in `seed`.
pub fn prose(n: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut s = String::with_capacity(n + 32);
    let mut in_sentence = 0;
    while s.len() < n {
        let w = WORDS[rng.below(WORDS.len())];
        if in_sentence == 0 {
            let mut c = w.chars();
            if let Some(f) = c.next() {
                s.extend(f.to_uppercase());
                s.push_str(c.as_str());
            }
        } else {
            s.push_str(w);
        }
        in_sentence += 1;
        if in_sentence > 6 + rng.below(10) {
            s.push_str(if rng.below(5) == 0 { ".\n" } else { ". " });
            in_sentence = 0;
        } else if rng.below(9) == 0 {
            s.push_str(", ");
        } else {
            s.push(' ');
        }
    }
    s.truncate(n);
    s
}

/// `n` random bytes drawn from `alphabet` (ASCII).
pub fn random_from(n: usize, seed: u64, alphabet: &[u8]) -> String {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| char::from(alphabet[rng.below(alphabet.len())])).collect()
}

pub const LOWER: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
pub const BASE64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// An OpenAI chat request with the given messages and one tool.
pub fn openai(messages: Vec<Value>) -> String {
    json!({
        "model": "gpt-4o",
        "tools": [{"type": "function", "function": {"name": "read_file", "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}],
        "messages": messages,
    })
    .to_string()
}

/// An Anthropic messages request with the given messages and one tool.
pub fn anthropic(messages: Vec<Value>) -> String {
    json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "system": "You are a careful assistant.",
        "tools": [{"name": "read_file", "description": "Read a file.",
            "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}],
        "messages": messages,
    })
    .to_string()
}

pub fn oa_user(text: String) -> Value {
    json!({"role": "user", "content": text})
}

pub fn oa_assistant(text: String) -> Value {
    json!({"role": "assistant", "content": text})
}

pub fn oa_calls(ids: &[String]) -> Value {
    let calls: Vec<Value> = ids
        .iter()
        .map(|id| json!({"id": id, "type": "function", "function": {"name": "read_file", "arguments": format!("{{\"path\":\"src/{id}.rs\"}}")}}))
        .collect();
    json!({"role": "assistant", "content": null, "tool_calls": calls})
}

pub fn oa_result(id: &str, text: String) -> Value {
    json!({"role": "tool", "tool_call_id": id, "content": text})
}

pub fn an_text(role: &str, text: String) -> Value {
    json!({"role": role, "content": [{"type": "text", "text": text}]})
}

pub fn an_uses(ids: &[String]) -> Value {
    let blocks: Vec<Value> = ids
        .iter()
        .map(|id| json!({"type": "tool_use", "id": id, "name": "read_file", "input": {"path": format!("src/{id}.rs")}}))
        .collect();
    json!({"role": "assistant", "content": blocks})
}

pub fn an_result_block(id: &str, text: String) -> Value {
    json!({"type": "tool_result", "tool_use_id": id, "content": text})
}

/// A scratch directory removed on drop (no tempfile dependency).
pub struct ScratchDir(pub PathBuf);

impl ScratchDir {
    pub fn new(tag: &str) -> std::io::Result<ScratchDir> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let k = NEXT.fetch_add(1, Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("turnfit-growth-{}-{tag}-{k}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p)?;
        Ok(ScratchDir(p))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
