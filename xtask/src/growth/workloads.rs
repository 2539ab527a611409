//! The growth workloads: what each one feeds the core, at what base size.
//! Every area has a typical shape and at least one hostile one (a shape
//! that would expose quadratic work: one endless piece, one message with
//! every call, orphans everywhere, a front-matter at the node budget).
//!
//! Sizes are chosen so that the constant part of a run (setting up a
//! window, opening a folder) is small next to the n-dependent part, that
//! hash tables are past their first few resizes (a resize that falls
//! between n and 2n shows as a few percent), and so that the whole table
//! runs under callgrind in about a minute. The parallel-call repair sizes
//! are the ones at which the quadratic block lookup that the script found
//! there (fixed in `window/repair.rs`) measured 2.55x and 2.67x.

use serde_json::{json, Value};
use turnfit::chat::Conversation;
use turnfit::window::{self, Accountant};
use turnfit::ModelRegistry;

use super::inputs::{self, ScratchDir};

/// An input, made before the measurement. Built once per run, so the size
/// difference between variants does not matter.
#[allow(clippy::large_enum_variant)]
pub enum Input {
    Text(turnfit::Tokenizer, String),
    Fit { conversation: String, options: String },
    Repair(Conversation, Accountant),
    Skills(ScratchDir),
}

/// One workload: `make(n)` builds the input outside the measurement,
/// `run` is what is measured; it returns something nonzero derived from
/// the result (0 means the core refused the input).
pub struct Workload {
    pub name: &'static str,
    pub what: &'static str,
    pub unit: &'static str,
    pub n: usize,
    pub make: fn(usize) -> Result<Input, String>,
    pub run: fn(&Input) -> usize,
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

// ---- counting -------------------------------------------------------------

fn text(s: String) -> Result<Input, String> {
    Ok(Input::Text(turnfit::Tokenizer::from_name("o200k_base").map_err(err)?, s))
}

fn count(i: &Input) -> usize {
    match i {
        Input::Text(t, s) => t.count(s).unwrap_or(0),
        _ => 0,
    }
}

// ---- compaction -----------------------------------------------------------

/// `turns` turns of a coding session: question, a tool call, its result,
/// an answer.
fn session(turns: usize) -> Vec<Value> {
    let mut m = Vec::with_capacity(4 * turns + 1);
    m.push(json!({"role": "system", "content": "You are a coding assistant."}));
    for k in 0..turns {
        let id = format!("call_{k}");
        m.push(inputs::oa_user(inputs::prose(90, 3 * k as u64)));
        m.push(inputs::oa_calls(std::slice::from_ref(&id)));
        m.push(inputs::oa_result(&id, inputs::prose(300, 3 * k as u64 + 1)));
        m.push(inputs::oa_assistant(inputs::prose(150, 3 * k as u64 + 2)));
    }
    m
}

/// Fit options whose prompt limit is half of what the conversation costs,
/// so compaction drops about half the turns at every size.
fn fit_input(
    conversation: String,
    strategy: &str,
    tool_output_max: Option<usize>,
    limit: Option<usize>,
) -> Result<Input, String> {
    let registry = ModelRegistry::builtin();
    let (acct, _) = Accountant::for_model(&registry, "gpt-4o").map_err(err)?;
    let c = Conversation::parse(&conversation, None).map_err(err)?;
    let total = acct.conversation(&c).map_err(err)?;
    let limit = limit.unwrap_or(total / 2);
    let reserve = 1000;
    let mut policy = json!({"strategy": strategy});
    if let Some(t) = tool_output_max {
        policy["tool_output_max"] = json!(t);
    }
    let options =
        json!({"model": "gpt-4o", "max_tokens": limit + reserve, "reserve_output": reserve, "policy": policy});
    Ok(Input::Fit { conversation, options: options.to_string() })
}

fn fit_many(n: usize, strategy: &str) -> Result<Input, String> {
    fit_input(inputs::openai(session(n)), strategy, None, None)
}

/// Six turns whose tool outputs are n/6 bytes of base64 each (long pieces,
/// few spaces), cut to 1,000 tokens, then compacted to 6,000 tokens.
fn fit_huge(n: usize, strategy: &str) -> Result<Input, String> {
    let mut m = vec![json!({"role": "system", "content": "You are a coding assistant."})];
    for k in 0..6u64 {
        let id = format!("call_{k}");
        m.push(inputs::oa_user(inputs::prose(90, 100 + k)));
        m.push(inputs::oa_calls(std::slice::from_ref(&id)));
        m.push(inputs::oa_result(&id, inputs::random_from(n / 6, 200 + k, inputs::BASE64)));
        m.push(inputs::oa_assistant(inputs::prose(150, 300 + k)));
    }
    fit_input(inputs::openai(m), strategy, Some(1000), Some(6000))
}

/// An application log of about `bytes` bytes in which every third line is
/// an `ERROR` (five messages, their ids varying) and one in ten a `WARN`.
fn error_log(bytes: usize, seed: u64) -> String {
    const ERRORS: [&str; 5] = [
        "failed to process order {}: upstream timeout",
        "database error: deadlock detected (txn {})",
        "could not decode payload for job-{}",
        "payment declined for order {}: card_expired",
        "redis connection reset by peer (attempt {})",
    ];
    let mut s = String::with_capacity(bytes + 120);
    let mut i = 0u64;
    while s.len() < bytes {
        let n = (i * 7919 + seed * 104_729) % 1_000_003;
        let line = match i % 10 {
            1 | 4 | 7 => format!(
                "2026-03-01T10:{:02}:{:02}Z ERROR [api] {}\n",
                i / 60 % 60,
                i % 60,
                ERRORS[(n % 5) as usize].replace("{}", &n.to_string())
            ),
            3 => {
                format!("2026-03-01T10:{:02}:{:02}Z WARN  [api] slow query took {} ms\n", i / 60 % 60, i % 60, n % 3000)
            }
            _ => format!("2026-03-01T10:{:02}:{:02}Z INFO  [api] GET /v1/orders/{n} 200\n", i / 60 % 60, i % 60),
        };
        s.push_str(&line);
        i += 1;
    }
    s
}

/// Six turns whose tool outputs are n/6 bytes of error-heavy log each,
/// cut by structure to 1,000 tokens (issue 52: the cut keeps one block per
/// message and counts the rest, so it stays linear however many lines say
/// `ERROR`).
fn fit_error_logs(n: usize) -> Result<Input, String> {
    let mut m = vec![json!({"role": "system", "content": "You are a coding assistant."})];
    for k in 0..6u64 {
        let id = format!("call_{k}");
        m.push(inputs::oa_user(inputs::prose(90, 100 + k)));
        m.push(inputs::oa_calls(std::slice::from_ref(&id)));
        m.push(inputs::oa_result(&id, error_log(n / 6, k)));
        m.push(inputs::oa_assistant(inputs::prose(150, 300 + k)));
    }
    fit_input(inputs::openai(m), "recency", Some(1000), Some(6000))
}

fn fit(i: &Input) -> usize {
    match i {
        Input::Fit { conversation, options } => match window::fit_json(conversation, options) {
            Ok((out, report)) => out.len().min(1) + report.messages_after,
            Err(_) => 0,
        },
        _ => 0,
    }
}

// ---- turns -----------------------------------------------------------------

/// A polling loop (issue 48, L): the task, then `n` identical status
/// messages, and the carry of a summary that replaced the first half of
/// them plus one. Finding a carry's run at every offset compared the
/// whole run each time (quadratic on such a history); it is now anchored
/// at the index it was made at. The budget is large, so nothing else
/// happens but parsing, applying the carry and counting.
fn carry_polling(n: usize) -> Result<Input, String> {
    let mut m = vec![
        json!({"role": "system", "content": "You are a monitoring agent."}),
        inputs::oa_user("Wait until the deployment is healthy, then report.".into()),
    ];
    let poll = inputs::oa_assistant("Checked the deployment: still rolling out.".into());
    m.extend(std::iter::repeat_n(poll.clone(), n));
    let run = n / 2 + 1;
    let carry = json!({
        "replaced": vec![window::fingerprint(&poll); run],
        "index": 2,
        "summary": {"role": "user", "content": "[Summary of earlier conversation]\nThe deployment was rolling out."},
    });
    let options = json!({"model": "gpt-4o", "max_tokens": 100_000_000, "reserve_output": 1000, "carry": carry});
    Ok(Input::Fit { conversation: Value::Array(m).to_string(), options: options.to_string() })
}

fn turn(i: &Input) -> usize {
    let Input::Fit { conversation, options } = i else { return 0 };
    let Ok(o) = turnfit::frontend::parse_options::<window::FitOptions>("options", Some(options)) else { return 0 };
    match turnfit::turn::Turn::start(&ModelRegistry::builtin(), conversation, &o).and_then(|t| t.finish()) {
        Ok((c, report)) => c.messages.len() * usize::from(report.carried.is_some()),
        Err(_) => 0,
    }
}

// ---- repair ---------------------------------------------------------------

fn repair_input(text: String) -> Result<Input, String> {
    let registry = ModelRegistry::builtin();
    let (acct, _) = Accountant::for_model(&registry, "gpt-4o").map_err(err)?;
    Ok(Input::Repair(Conversation::parse(&text, None).map_err(err)?, acct))
}

fn repair(i: &Input) -> usize {
    match i {
        Input::Repair(c, acct) => match window::repair(c, None, acct) {
            Ok(r) => r.changes.len() + r.conversation.messages.len(),
            Err(_) => 0,
        },
        _ => 0,
    }
}

/// n/4 turns of: a call nobody answers, a result that answers no call.
fn orphans_openai(n: usize) -> Result<Input, String> {
    let mut m = Vec::new();
    for k in 0..n / 4 {
        m.push(inputs::oa_user(format!("step {k}")));
        m.push(inputs::oa_calls(&[format!("c{k}")]));
        m.push(inputs::oa_result(&format!("r{k}"), format!("output {k}")));
        m.push(inputs::oa_assistant(format!("done {k}")));
    }
    repair_input(inputs::openai(m))
}

fn orphans_anthropic(n: usize) -> Result<Input, String> {
    let mut m = Vec::new();
    for k in 0..n / 2 {
        m.push(json!({"role": "user", "content": [
            inputs::an_result_block(&format!("r{k}"), format!("output {k}")),
            {"type": "text", "text": format!("step {k}")},
        ]}));
        m.push(inputs::an_uses(&[format!("c{k}")]));
    }
    m.push(inputs::an_text("user", "go on".into()));
    repair_input(inputs::anthropic(m))
}

/// One assistant message with n parallel calls; the results come in
/// reverse order, every fourth one after a later user message (to be
/// moved) and every fourth missing (to be synthesized).
fn parallel_openai(n: usize) -> Result<Input, String> {
    let ids: Vec<String> = (0..n).map(|k| format!("p{k}")).collect();
    let mut m = vec![inputs::oa_user("read everything".into()), inputs::oa_calls(&ids)];
    let mut late = Vec::new();
    for (k, id) in ids.iter().enumerate().rev() {
        match k % 4 {
            1 => late.push(inputs::oa_result(id, format!("late {k}"))),
            3 => {}
            _ => m.push(inputs::oa_result(id, format!("content of {id}"))),
        }
    }
    m.push(inputs::oa_user("and then?".into()));
    m.extend(late);
    m.push(inputs::oa_assistant("done".into()));
    repair_input(inputs::openai(m))
}

fn parallel_anthropic(n: usize) -> Result<Input, String> {
    let ids: Vec<String> = (0..n).map(|k| format!("p{k}")).collect();
    let mut m = vec![inputs::an_text("user", "read everything".into()), inputs::an_uses(&ids)];
    let mut now = Vec::new();
    let mut late = Vec::new();
    for (k, id) in ids.iter().enumerate().rev() {
        match k % 4 {
            1 => late.push(inputs::an_result_block(id, format!("late {k}"))),
            3 => {}
            _ => now.push(inputs::an_result_block(id, format!("content of {id}"))),
        }
    }
    m.push(json!({"role": "user", "content": now}));
    m.push(inputs::an_text("assistant", "reading".into()));
    late.push(json!({"type": "text", "text": "and then?"}));
    m.push(json!({"role": "user", "content": late}));
    repair_input(inputs::anthropic(m))
}

/// One reused call id: n results for `x` come first, then n assistant
/// messages each calling `x`. Every result answers a call after it, the
/// pairing's step 2 (a scan from the first call of the id for each result
/// would be quadratic here).
fn reused_id_openai(n: usize) -> Result<Input, String> {
    let mut m = vec![inputs::oa_user("go".into())];
    for k in 0..n / 2 {
        m.push(inputs::oa_result("x", format!("early {k}")));
    }
    for _ in 0..n / 2 {
        m.push(inputs::oa_calls(&["x".to_owned()]));
    }
    m.push(inputs::oa_user("and then?".into()));
    repair_input(inputs::openai(m))
}

/// n/4 healthy turns with two parallel calls each; every tenth turn lost
/// one result.
fn typical_openai(n: usize) -> Result<Input, String> {
    let mut m = Vec::new();
    for k in 0..n / 5 {
        let ids = [format!("a{k}"), format!("b{k}")];
        m.push(inputs::oa_user(format!("step {k}")));
        m.push(inputs::oa_calls(&ids));
        m.push(inputs::oa_result(&ids[0], format!("output a{k}")));
        if k % 10 != 0 {
            m.push(inputs::oa_result(&ids[1], format!("output b{k}")));
        }
        m.push(inputs::oa_assistant(format!("done {k}")));
    }
    repair_input(inputs::openai(m))
}

// ---- skills ---------------------------------------------------------------

fn open_skills(i: &Input) -> usize {
    match i {
        Input::Skills(dir) => match turnfit::skills::SkillSet::open(dir.path(), &Default::default()) {
            // A skill without a header failed to load: that would measure
            // an error path, not parsing.
            Ok(set) if set.skills().iter().all(|s| s.header().is_some()) => {
                set.skills().iter().map(|s| 1 + s.header_tokens()).sum::<usize>() + set.ignored().len()
            }
            _ => 0,
        },
        _ => 0,
    }
}

fn write(dir: &std::path::Path, rel: &str, text: &str) -> Result<(), String> {
    let p = dir.join(rel);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).map_err(err)?;
    }
    std::fs::write(&p, text).map_err(err)
}

fn one_skill(front: String) -> Result<Input, String> {
    let dir = ScratchDir::new("skill").map_err(err)?;
    write(dir.path(), "big/SKILL.md", &format!("---\n{front}---\n# Body\n\nNot read when listing.\n"))?;
    Ok(Input::Skills(dir))
}

/// A valid front-matter whose `metadata` map has n entries (2n + 8 nodes;
/// the node budget is 1,024).
fn many_keys(n: usize) -> Result<Input, String> {
    let mut f = String::from("name: big\ndescription: A skill with a large metadata map.\nmetadata:\n");
    for k in 0..n {
        f.push_str(&format!("  key_{k}: {}\n", inputs::prose(40, k as u64).replace([':', '#', ',', '.', '\n'], " ")));
    }
    one_skill(f)
}

/// A description of n bytes as a folded block scalar (70-byte lines).
fn long_scalar(n: usize) -> Result<Input, String> {
    let text = inputs::prose(n, 7).replace('\n', " ");
    let mut f = String::from("name: big\ndescription: >\n");
    for chunk in text.as_bytes().chunks(70) {
        f.push_str("  ");
        f.push_str(std::str::from_utf8(chunk).map_err(err)?);
        f.push('\n');
    }
    one_skill(f)
}

/// A description of n bytes as one double-quoted line, an escape every
/// eight bytes (the scanner's slow path, on one line).
fn quoted_line(n: usize) -> Result<Input, String> {
    let mut s = String::with_capacity(n + 16);
    let mut k = 0u64;
    while s.len() < n {
        s.push_str(if k.is_multiple_of(2) { "abc\\u00e9 " } else { "de\\t\\\"fg " });
        k += 1;
    }
    one_skill(format!("name: big\ndescription: \"{s}\"\n"))
}

/// n skills in the folder layout, each a typical front-matter.
fn folder(n: usize) -> Result<Input, String> {
    let dir = ScratchDir::new("folder").map_err(err)?;
    for k in 0..n {
        let name = format!("skill-{k:04}");
        let front = format!(
            "name: {name}\ndescription: {}\nlicense: MIT\nallowed-tools: Read Bash(ls:*)\nmetadata:\n  author: team-{k}\n  category: tools\n",
            inputs::prose(150, k as u64).replace([':', '#', '\n'], " ")
        );
        write(dir.path(), &format!("{name}/SKILL.md"), &format!("---\n{front}---\n# {name}\n\nBody text.\n"))?;
    }
    Ok(Input::Skills(dir))
}

/// n flat skills that are all wrong in some way (name mismatch, an
/// over-long description, an unknown field, aliases), next to n entries
/// that are not skills at all.
fn folder_hostile(n: usize) -> Result<Input, String> {
    let dir = ScratchDir::new("hostile").map_err(err)?;
    for k in 0..n {
        let front = format!(
            "name: Not-The-File-{k}\ndescription: &d {}\nextra: *d\nmetadata: {{a: *d, b: *d, c: [*d, *d]}}\n",
            inputs::prose(1500, k as u64).replace([':', '#', '\n', '{', '}', '[', ']', ',', '&', '*'], " ")
        );
        write(dir.path(), &format!("flat-{k:04}.md"), &format!("---\n{front}---\nbody\n"))?;
        write(dir.path(), &format!("notes-{k:04}.txt"), "not a skill\n")?;
    }
    Ok(Input::Skills(dir))
}

pub static WORKLOADS: &[Workload] = &[
    Workload {
        name: "count/prose",
        what: "English-like prose, o200k_base",
        unit: "bytes",
        n: 16_384,
        make: |n| text(inputs::prose(n, 1)),
        run: count,
    },
    Workload {
        name: "count/one-letter",
        what: "'a' x n: one piece",
        unit: "bytes",
        n: 16_384,
        make: |n| text("a".repeat(n)),
        run: count,
    },
    Workload {
        name: "count/spaces",
        what: "' ' x n: one whitespace run",
        unit: "bytes",
        n: 16_384,
        make: |n| text(" ".repeat(n)),
        run: count,
    },
    Workload {
        name: "count/random-letters",
        what: "random a-z, no spaces: one piece",
        unit: "bytes",
        n: 16_384,
        make: |n| text(inputs::random_from(n, 2, inputs::LOWER)),
        run: count,
    },
    Workload {
        name: "count/base64",
        what: "random base64: long mixed pieces",
        unit: "bytes",
        n: 16_384,
        make: |n| text(inputs::random_from(n, 3, inputs::BASE64)),
        run: count,
    },
    Workload {
        name: "fit/many-messages/recency",
        what: "n turns, 4 messages each, half dropped",
        unit: "turns",
        n: 32,
        make: |n| fit_many(n, "recency"),
        run: fit,
    },
    Workload {
        name: "fit/many-messages/relevance",
        what: "same, BM25 relevance",
        unit: "turns",
        n: 32,
        make: |n| fit_many(n, "relevance"),
        run: fit,
    },
    Workload {
        name: "fit/many-messages/hybrid",
        what: "same, hybrid",
        unit: "turns",
        n: 32,
        make: |n| fit_many(n, "hybrid"),
        run: fit,
    },
    Workload {
        name: "fit/huge-tool-outputs/recency",
        what: "6 tool outputs of n/6 bytes base64, cut to 1,000 tokens",
        unit: "bytes",
        n: 24_576,
        make: |n| fit_huge(n, "recency"),
        run: fit,
    },
    Workload {
        name: "fit/huge-tool-outputs/relevance",
        what: "same, BM25 relevance",
        unit: "bytes",
        n: 24_576,
        make: |n| fit_huge(n, "relevance"),
        run: fit,
    },
    Workload {
        name: "fit/huge-tool-outputs/hybrid",
        what: "same, hybrid",
        unit: "bytes",
        n: 24_576,
        make: |n| fit_huge(n, "hybrid"),
        run: fit,
    },
    Workload {
        name: "fit/error-logs/recency",
        what: "6 logs of n/6 bytes, a third of the lines ERROR, cut by structure to 1,000 tokens",
        unit: "bytes",
        n: 98_304,
        make: fit_error_logs,
        run: fit,
    },
    Workload {
        name: "turn/carry/polling",
        what: "n identical messages, a carry of half of them",
        unit: "messages",
        n: 4096,
        make: carry_polling,
        run: turn,
    },
    Workload {
        name: "repair/typical",
        what: "OpenAI, two parallel calls a turn, 1 in 10 unanswered",
        unit: "messages",
        n: 256,
        make: typical_openai,
        run: repair,
    },
    Workload {
        name: "repair/orphans/openai",
        what: "every call unanswered, every result orphaned",
        unit: "messages",
        n: 256,
        make: orphans_openai,
        run: repair,
    },
    Workload {
        name: "repair/orphans/anthropic",
        what: "same, Anthropic blocks",
        unit: "messages",
        n: 256,
        make: orphans_anthropic,
        run: repair,
    },
    Workload {
        name: "repair/parallel/openai",
        what: "one message with n calls; results reversed, 1/4 late, 1/4 missing",
        unit: "calls",
        n: 512,
        make: parallel_openai,
        run: repair,
    },
    Workload {
        name: "repair/parallel/anthropic",
        what: "same, Anthropic blocks",
        unit: "calls",
        n: 512,
        make: parallel_anthropic,
        run: repair,
    },
    Workload {
        name: "repair/reused-id/openai",
        what: "n/2 results for one id, then n/2 calls reusing it",
        unit: "messages",
        n: 512,
        make: reused_id_openai,
        run: repair,
    },
    Workload {
        name: "skills/frontmatter/many-keys",
        what: "one valid front-matter, metadata of n keys",
        unit: "keys",
        n: 64,
        make: many_keys,
        run: open_skills,
    },
    Workload {
        name: "skills/frontmatter/long-scalar",
        what: "description: folded scalar of n bytes",
        unit: "bytes",
        n: 4_096,
        make: long_scalar,
        run: open_skills,
    },
    Workload {
        name: "skills/frontmatter/quoted-line",
        what: "description: one quoted line of n bytes, escapes",
        unit: "bytes",
        n: 4_096,
        make: quoted_line,
        run: open_skills,
    },
    Workload {
        name: "skills/folder/typical",
        what: "n folder-layout skills",
        unit: "skills",
        n: 32,
        make: folder,
        run: open_skills,
    },
    Workload {
        name: "skills/folder/hostile",
        what: "n invalid flat skills with aliases + n non-skills",
        unit: "skills",
        n: 32,
        make: folder_hostile,
        run: open_skills,
    },
];
