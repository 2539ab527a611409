#!/usr/bin/env python3
"""Regenerates examples/data/coding-session.json: a coding-agent session in
OpenAI shape with parallel tool calls and one very long tool output (a full
verbose test log of about 50,000 tokens). Deterministic: same bytes each run.

    python3 examples/data/gen_coding_session.py > examples/data/coding-session.json
"""
import json
import random

rng = random.Random(4812)
modules = ["parser", "lexer", "window", "tokens", "skills", "handoff", "trace", "recovery", "assemble", "chat"]
verbs = ["parses", "rejects", "keeps", "drops", "counts", "repairs", "splits", "merges", "renders", "truncates"]
things = ["nested braces", "empty input", "unicode identifiers", "tool calls", "long lines", "crlf endings",
          "deep nesting", "trailing commas", "emoji", "zero-width joiners", "orphaned results", "system prompts"]
lines = ["   Compiling turnfit v0.1.0 (/work/turnfit/core)", "    Finished `test` profile [unoptimized + debuginfo] target(s) in 41.07s",
         "     Running unittests src/lib.rs (target/debug/deps/turnfit-3f9a2b7c1d4e5f60)", "", "running 2600 tests"]
failed = []
for i in range(2600):
    mod = rng.choice(modules)
    name = f"{mod}::tests::{rng.choice(verbs)}_{rng.choice(things).replace(' ', '_')}_{i:04d}"
    ok = rng.random() > 0.004
    if not ok:
        failed.append(name)
    lines.append(f"test {name} ... {'ok' if ok else 'FAILED'} ({rng.randint(0, 900)}ms)")
lines.append("")
lines.append("failures:")
for name in failed:
    lines += ["", f"---- {name} stdout ----",
              f"thread '{name}' panicked at src/{name.split('::')[0]}.rs:{rng.randint(10, 900)}:{rng.randint(5, 40)}:",
              "assertion `left == right` failed", '  left: Some("fn main() {}")', "  right: None"]
lines.append("")
lines.append(f"test result: FAILED. {2600 - len(failed)} passed; {len(failed)} failed; 0 ignored; 0 measured; 0 filtered out; finished in 12.84s")
test_log = "\n".join(lines) + "\n"

source = '''pub fn parse_item(input: &str) -> Option<&str> {
    let trimmed = input.trim_start();
    if trimmed.starts_with("fn ") {
        // BUG: stops at the first brace instead of matching braces.
        let end = trimmed.find('}')?;
        return Some(&trimmed[..end]);
    }
    None
}
'''
patch = ("--- a/src/parser.rs\n+++ b/src/parser.rs\n@@ -3,6 +3,14 @@\n-        let end = trimmed.find('}')?;\n"
         "-        return Some(&trimmed[..end]);\n+        let mut depth = 0usize;\n+        for (i, c) in trimmed.char_indices() {\n"
         "+            match c {\n+                '{' => depth += 1,\n"
         "+                '}' => { depth = depth.checked_sub(1)?; if depth == 0 { return Some(&trimmed[..=i]); } }\n"
         "+                _ => {}\n+            }\n+        }\n+        return None;\n")

def call(id_, name, args):
    return {"id": id_, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}

conv = {
    "model": "gpt-4o",
    "tools": [
        {"type": "function", "function": {"name": "run_tests", "description": "Run the project's test suite and return its output.",
            "parameters": {"type": "object", "properties": {"filter": {"type": "string", "description": "Only run tests whose name contains this"}}, "required": []}}},
        {"type": "function", "function": {"name": "read_file", "description": "Read a UTF-8 file from the workspace.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string", "description": "Path relative to the workspace"}}, "required": ["path"]}}},
        {"type": "function", "function": {"name": "apply_patch", "description": "Apply a unified diff to the workspace.",
            "parameters": {"type": "object", "properties": {"patch": {"type": "string", "description": "The diff"}}, "required": ["patch"]}}},
    ],
    "messages": [
        {"role": "system", "content": "You are a careful coding agent working in a Rust repository. Run the tests before and after every change. Never edit files outside src/."},
        {"role": "user", "content": "The parser tests started failing after yesterday's refactor. Find out why and fix it; keep the change minimal."},
        {"role": "assistant", "content": None, "tool_calls": [call("call_tests_1", "run_tests", {"filter": ""}), call("call_read_1", "read_file", {"path": "src/parser.rs"})]},
        {"role": "tool", "tool_call_id": "call_tests_1", "content": test_log},
        {"role": "tool", "tool_call_id": "call_read_1", "content": source},
        {"role": "assistant", "content": f"{len(failed)} of 2600 tests fail, all with the same assertion: `parse_item` cuts at the first `}}` instead of the matching one, so any function body with a nested block is truncated. I'll match braces instead."},
        {"role": "user", "content": "Go ahead, but show me the patch first."},
        {"role": "assistant", "content": "Here is the patch:\n\n```diff\n" + patch + "```"},
        {"role": "user", "content": "Looks right. Apply it."},
        {"role": "assistant", "content": None, "tool_calls": [call("call_patch_1", "apply_patch", {"patch": patch})]},
        {"role": "tool", "tool_call_id": "call_patch_1", "content": "Patch applied: 1 file changed, 9 insertions(+), 2 deletions(-)"},
        {"role": "user", "content": "Good. Run the parser tests again and tell me if anything else fails.", "name": "reviewer"},
    ],
}
print(json.dumps(conv, indent=2, ensure_ascii=False))
