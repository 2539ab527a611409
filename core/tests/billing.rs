//! The accuracy harness: recorded request bodies with the prompt tokens the
//! provider billed for them (tests/fixtures/billing/, see SOURCES.md there),
//! counted through turnfit's accounting and compared.
//!
//! - `report_matches_docs` checks that docs/accuracy.md is what the harness
//!   produces now (drift; a debug build gives the same file as a release
//!   one, and is cheaper to build). Regenerate it with
//!   `TURNFIT_WRITE_ACCURACY=1 cargo test -p turnfit --test billing`
//!   (or `make accuracy`).
//! - `floors` fails when a figure drops below the floor recorded here.
//! - `accepted_bodies_parse` checks that every body the provider answered
//!   with 200 parses.
//!
//! A third of the records of the first collection (by a hash of their source
//! path, fixed when they were collected) are hold-out: reported separately
//! and never used to tune. Later collections (`{provider}-{set}.jsonl`)
//! choose their hold-out by source package and are reported in a section
//! of their own.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;
use turnfit::chat::{Conversation, Format};
use turnfit::window::Accountant;
use turnfit::ModelRegistry;

struct Record {
    /// Which collection: "1" for `{provider}.jsonl`, NAME for `{provider}-NAME.jsonl`.
    set: String,
    id: String,
    provider: String,
    /// "responses" for OpenAI Responses API bodies (`"api"` in the record),
    /// else "chat" (Chat Completions or Anthropic Messages).
    api: String,
    model: String,
    shape: String,
    holdout: bool,
    billed: i64,
    body: String,
}

struct Outcome {
    rec: Record,
    family: String,
    /// The model's counts are exact (its tokenizer is public).
    model_exact: bool,
    /// This request's count is exact: the model's are and the request holds
    /// no shape the accounting only estimates (`Accountant::estimate_reasons`).
    exact: bool,
    /// None when the body was rejected (the error message in `error`).
    counted: Option<i64>,
    /// Why the request is an estimate (`Accountant::estimate_reasons`), for the dump.
    reasons: String,
    error: Option<String>,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The record files: `{provider}.jsonl` (the first collection) and
/// `{provider}-{set}.jsonl` (later ones), in name order.
fn record_files() -> Vec<(String, PathBuf)> {
    let dir = root().join("tests/fixtures/billing");
    let mut files: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .map(|p| {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            let set = stem.split_once('-').map_or("1", |(_, s)| s).to_owned();
            (set, p)
        })
        .collect();
    files.sort();
    files
}

fn records() -> Vec<Record> {
    let mut out = Vec::new();
    for (set, path) in record_files() {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        for (i, line) in text.lines().enumerate() {
            let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{file}:{}: {e}", i + 1));
            let s = |k: &str| v[k].as_str().unwrap_or_else(|| panic!("{file}:{}: no {k}", i + 1)).to_owned();
            out.push(Record {
                set: set.clone(),
                id: s("id"),
                provider: s("provider"),
                api: v["api"].as_str().unwrap_or("chat").to_owned(),
                model: s("model"),
                shape: s("shape"),
                holdout: v["holdout"].as_bool().expect("holdout"),
                billed: v["billed"].as_i64().expect("billed"),
                body: serde_json::to_string(&v["request"]).unwrap(),
            });
        }
    }
    out
}

/// The model family rows are grouped by.
fn family(model: &str) -> &'static str {
    let m = model.to_ascii_lowercase();
    let families: &[(&str, &str)] = &[
        ("gpt-3.5", "gpt-3.5"),
        ("gpt-4.1", "gpt-4.1"),
        ("gpt-4o", "gpt-4o"),
        ("gpt-4", "gpt-4"),
        ("gpt-5", "gpt-5"),
        ("o1", "o-series"),
        ("o3", "o-series"),
        ("o4", "o-series"),
        ("claude-3", "claude-3"),
        ("claude-haiku-4", "claude-4"),
        ("claude-sonnet-4", "claude-4"),
        ("claude-opus-4", "claude-4"),
    ];
    families.iter().find(|(p, _)| m.starts_with(p)).map_or("other", |(_, f)| f)
}

fn run() -> Vec<Outcome> {
    let registry = ModelRegistry::builtin();
    records()
        .into_iter()
        .map(|rec| {
            let format = match (rec.provider.as_str(), rec.api.as_str()) {
                ("openai", "responses") => Format::Responses,
                ("openai", _) => Format::OpenAi,
                _ => Format::Anthropic,
            };
            let (acct, info) = Accountant::for_model(&registry, &rec.model).expect("model in the registry");
            // What preflight reports: exact only when the format's framing
            // is measured and the request holds no estimated shape.
            let counted = Conversation::parse(&rec.body, Some(format)).and_then(|c| {
                let reasons = acct.estimate_reasons(&c);
                Ok((acct.conversation(&c)?, c.format.counts_exactly() && reasons.is_empty(), format!("{reasons:?}")))
            });
            let (counted, error, exact, reasons) = match counted {
                Ok((n, exact, reasons)) => (Some(n as i64), None, info.exact && exact, reasons),
                Err(e) => (None, Some(e.to_string()), info.exact, String::new()),
            };
            Outcome {
                family: family(&rec.model).to_owned(),
                model_exact: info.exact,
                exact,
                rec,
                counted,
                error,
                reasons,
            }
        })
        .collect()
}

#[derive(Default)]
struct Stats {
    n: usize,
    rejected: usize,
    exact: usize,
    within3: usize,
    under3: usize,
    ratios: Vec<f64>,
}

impl Stats {
    fn add(&mut self, o: &Outcome) {
        self.n += 1;
        let Some(c) = o.counted else {
            self.rejected += 1;
            return;
        };
        let d = c - o.rec.billed;
        self.exact += usize::from(d == 0);
        self.within3 += usize::from(d.abs() <= 3);
        self.under3 += usize::from(d < -3);
        self.ratios.push(c as f64 / o.rec.billed.max(1) as f64);
    }
    fn share(&self, k: usize) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            k as f64 / self.n as f64
        }
    }
    fn median(&self) -> f64 {
        let mut r = self.ratios.clone();
        r.sort_by(f64::total_cmp);
        match r.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => r[n / 2],
            n => (r[n / 2 - 1] + r[n / 2]) / 2.0,
        }
    }
    /// The ratio farthest from 1 (by its logarithm).
    fn worst(&self) -> f64 {
        self.ratios.iter().copied().max_by(|a, b| a.ln().abs().total_cmp(&b.ln().abs())).unwrap_or(f64::NAN)
    }
    fn below(&self, limit: f64) -> usize {
        self.ratios.iter().filter(|r| **r < limit).count()
    }
    fn row(&self, label: &str) -> String {
        format!(
            "| {label} | {} | {} | {:.0}% | {:.0}% | {} | {:.3} | {:.3} |\n",
            self.n,
            self.rejected,
            100.0 * self.share(self.exact),
            100.0 * self.share(self.within3),
            self.under3,
            self.median(),
            self.worst()
        )
    }
}

/// Where each accounting rule comes from: documented by the provider,
/// measured (a clean difference between recorded requests) or fitted (a
/// constant chosen on the tuning set). docs/formats.md, "Accounting", has
/// the figures.
const RULES: &str = "\n## Rules and where they come from\n\n\
- Message framing, names, reply priming, the guide's tool constants: documented (OpenAI's counting guide).\n\
- OpenAI tools in the TypeScript-like `namespace functions` rendering: documented (openai/harmony's renderer); \
`$ref`s expanded: measured; -1 / +1 with or without a system message: fitted.\n\
- A forced `tool_choice` costs the reply's recipient ` to=functions.{name}`: documented (harmony's call header); \
+5 on top: fitted (3 forced requests; a flat +10 left the long-named one 4 under); 2 less with \
`parallel_tool_calls: false`: fitted (set 3's fit part, two gpt-4o requests 2 over; why is not known). On \
reasoning models a forced function adds no recipient in Chat either: measured (set 3's fit part, two gpt-5-mini \
requests 13 over with it); an estimate. `tool_choice: \"required\"` counts as `auto`; an estimate on models other \
than reasoning ones (set 3's fit part has no such request without another estimated shape).\n\
- Property `title`s as comments (harmony) at every level: documented; the one recorded pydantic model nested in an \
array is 19 over with its nested titles and would be 5 under without them, so they stay (not resolved).\n\
- A union `type` (`[\"string\", \"null\"]`) is billed as the property's compact JSON schema: fitted to the one \
such schema recorded (4 requests, 21-22 under as `string | null`).\n\
- A tool call costs `functions.{name}` for its result's author: documented (harmony); +3 per call: fitted.\n\
- A call whose arguments hold a compact string member (`\"key\":\"value\"`) costs 1 more, once per call: measured \
(one cassette's rounds went 0, -1, -2, -3, -4 under as compact calls were added; numbers and spaced JSON are billed \
their text; tuning tool requests exact went from 11 to 27 of 50). Why is not known.\n\
- Several calls in one message are one `multi_tool_use.parallel` call wrapping `recipient_name` / `parameters`: \
measured (two gpt-4o recordings within 2; the gpt-4o-mini and the third gpt-4o recording are not explained), so \
such requests are estimates (`exact: false`) with 20% of the wrapped call added: fitted (the 37-under recording).\n\
- Estimates per request on exact models (`Accountant::estimate_reasons`): structured output, parallel calls, and \
tool schemas with a nested object (the one recorded, an array of a `$ref`'d pydantic model, is 19 over with the \
nested titles and descriptions, 5 under without; no layout tried gives the billed figure).\n\
- The legacy `functions` parameter is the same `namespace functions` block as `tools` (and `function_call` the \
same choice): measured (gpt-fn's recordings on gpt-3.5-turbo-0613, counted as no tools before, 41-59 under); its \
properties' `title`s are not billed: measured (7 requests 12-13 over with them); a forcing `function_call` costs its \
recipient +1: fitted (one function, 4 requests).\n\
- Estimates because the tuning set does not measure the shape (issue 36 reports each over): a tool with no \
description and no parameters, `tool_choice` `allowed_tools`, a tool type other than `function`, a description \
of more than two lines, a forced function among tools mixing `strict` and non-strict.\n\
- A `name` on a `tool` message is not billed: measured (tool messages with one were 2-3 over each).\n\
- gpt-5's hidden prompt (84) only with tools: measured (without tools the messages alone are billed); its size: fitted.\n\
- `response_format`: the harmony section (documented), titles dropped and the join with the system message \
(measured), +8: fitted.\n\
- Images: OpenAI's and Anthropic's documented formulas; gpt-5-mini / gpt-5-nano patches x1.2 / x1.5: documented \
(OpenAI's pricing-page calculator; the vision guide's 1.62 / 2.46 were 34% / 64% over on the recorded requests).\n\
- Anthropic tool-use system prompts: documented per model (Claude 4.5 and later: fitted); tool blocks +24, \
thinking +28, web fetch and code execution prompts: fitted.\n\
- Anthropic structured output (`output_format` / `output_config.format`): the schema's compact JSON plus 145: \
fitted (6 requests of one claude-sonnet-4-5 cassette, 131-145 under with the schema alone).\n\
- Anthropic server tools (web search, web fetch, code execution): what the tool fetches while the request runs \
is billed as input but is in no request body, so no count made before the request can include it; those \
requests stay under and preflight reports only what the body holds (about 0.3 of billed in these recordings).\n\
- Anthropic: a run of 64 or more of one repeated character costs at least a token per 3 characters: measured \
(one recording: 100,000 `a`s are 12,516 o200k tokens and were billed 33,423; OpenAI's encodings merge runs into \
long tokens, Anthropic's tokenizer does not).\n\
- Anthropic thinking of an earlier turn is not billed: documented (kept by Claude Opus 4.5 and later); applied to \
assistant messages without `tool_use` (one with a call may be the current tool loop, whose thinking is billed).\n\
- Reasoning models (gpt-5 but gpt-5-chat, o3, o4): the reply is primed with 2 tokens, not 3: measured (every \
plain-text request, Chat and Responses, 1 over with 3; gpt-5's hidden prompt, fitted with tools, is 85 so that the \
Chat tool requests are unchanged); an assistant message with text costs 2 more (harmony's `<|channel|>final`): \
measured (the Responses tuning requests replaying one, 2 under without).\n\
- Responses: an item costs what the same Chat message costs, `instructions` what a system message costs: \
measured (text requests exact on gpt-4o / gpt-4.1 / gpt-4o-mini); gpt-5's hidden prompt is not billed: measured \
(every tuning request with tools 80-87 over with it); the tool block costs -5 on top of the Chat rendering on \
gpt-4o and gpt-4.1: fitted (two requests, both with an undescribed function).\n\
- Responses function tools on reasoning models (issue 36): the block is billed its rendering + 2 whether or not \
the request has a system message (in Chat it joins one for 1 less, or is a message of its own for 1 more): \
measured (the tuning requests without instructions were 1 over, those with 1-2 under, under the Chat rule); \
non-empty `instructions` cost 1 more with tools (the `# Instructions` and `# Tools` sections share the developer \
message; why 1 is not known): fitted (3 requests); a function without a description 2 less: fitted (2 requests); \
a forced function does not add its recipient (two gpt-5-mini recordings were billed 1 less than unforced): \
measured on the first hold-out after it was opened. A call item given with its `id` is the current turn's until \
an assistant message with text follows it, not only after the last user message: measured (a gpt-5 request \
replaying user, call, output, user was billed 10 more than its items; the stored reasoning is attached).\n\
- Responses `reasoning` items: the `summary` is not billed: measured (replayed summaries of 0.5-3.8k characters, \
none billed); an earlier turn's reasoning (a user message after it) is not billed on gpt-5 up to gpt-5.5 and the \
o-series: documented (OpenAI's reasoning guide) and measured (a gpt-5 request replaying 1,920 reasoning tokens of \
an earlier turn billed without them); the current turn's reasoning is billed as its hidden tokens, which only the \
provider knows: estimates (`encrypted_content` length / 4, over on every recording), as are current-turn call \
items given with their `id` on reasoning models (the stored reasoning is attached: 8-21 under). Requests \
replaying any reasoning item are estimates: on Responses hold-out set 2, 4 of the 5 that were counted as exact \
were within 3 and one 5 under (o3-mini, recorded 2025-04, the item given by `id` after the answer it preceded).\n\
- Responses estimates (`exact: false`): server-side tools and their items (their results and prompts are billed \
but not in the body: under by up to 100k), images and files, `text.format` schemas, `instructions: \"\"` (gpt-4o \
recordings of 2025-03/04 sending it with tools were billed 209-227 more than counted, without tools 14 more; \
pydantic-ai's same test recorded 2025-10 without `instructions` was billed its count (40): what was billed is \
not in the body, consistent with a prompt OpenAI added then for empty instructions), a `reasoning.mode`, \
tools given in an input item; function tools on gpt-4.1 (two tuning recordings), on gpt-4o models with \
`instructions` or a system / developer item (set 3's fit part: 2 of 4 with a system item 35 over, none with \
instructions; hold-out set 2's with instructions 6-20 under), a function without a description, a forced \
function on reasoning models. Function tools on gpt-4o models without either are exact (issue 53: the Chat rendering \
- 5, set 3's fit part 35 gpt-4o-mini requests within 1). The first hold-out had 2 of 4 gpt-5 requests with tools and the 1 with a tool \
history off by more than 3 under the earlier rule, so all tool requests were made estimates then; the rule \
above was fitted afterwards (looking at that hold-out too) and checked on Responses hold-out set 2, collected \
after it was written.\n\
- Images whose pixel size cannot be read (a URL; data whose header is not a known format) are estimates, counted \
as 1024x1024 (`detail: low` costs the same at any size and stays exact): measured (hold-out set 2: a \
gpt-4-vision URL image of 800x400 billed 438 was counted 778).\n";

const HEADER: &str = "| group | requests | rejected | exact | within 3 | under by >3 | median counted/billed | worst |\n|---|---:|---:|---:|---:|---:|---:|---:|\n";

fn is_text_or_tools(shape: &str) -> bool {
    matches!(shape, "text" | "tools" | "tool_history")
}

/// The goal rows: (label, filter).
/// Which outcomes a goal row takes.
type Keep = fn(&Outcome) -> bool;

fn goals() -> Vec<(&'static str, Keep)> {
    vec![
        ("counted as exact, text and tool requests", |o| o.exact && is_text_or_tools(&o.rec.shape)),
        ("estimates on exact models, text and tool requests (parallel calls, nested or unmeasured tool shapes)", |o| {
            o.model_exact && !o.exact && is_text_or_tools(&o.rec.shape)
        }),
        ("exact models, structured output (estimates)", |o| o.model_exact && o.rec.shape == "structured_output"),
        ("counted as exact, images", |o| o.exact && o.rec.shape == "images"),
        ("anthropic, without tools", |o| o.rec.provider == "anthropic" && o.rec.shape == "text"),
        ("anthropic, with client tools", |o| {
            o.rec.provider == "anthropic" && matches!(o.rec.shape.as_str(), "tools" | "tool_history")
        }),
        ("anthropic, other shapes (images, documents, server tools, structured output)", |o| {
            o.rec.provider == "anthropic" && !matches!(o.rec.shape.as_str(), "text" | "tools" | "tool_history")
        }),
    ]
}

fn goal_stats(rows: &[&Outcome]) -> Vec<(&'static str, Stats)> {
    goals()
        .into_iter()
        .map(|(label, keep)| {
            let mut s = Stats::default();
            rows.iter().filter(|o| keep(o)).for_each(|o| s.add(o));
            (label, s)
        })
        .collect()
}

fn section(out: &mut String, title: &str, rows: &[&Outcome]) {
    out.push_str(&format!("\n## {title}\n\n"));
    let mut by_provider: BTreeMap<&str, Stats> = BTreeMap::new();
    let mut groups: BTreeMap<(String, String, String), Stats> = BTreeMap::new();
    for o in rows {
        by_provider.entry(o.rec.provider.as_str()).or_default().add(o);
        let mark = if o.model_exact { "" } else { " (estimate)" };
        groups.entry((o.rec.provider.clone(), format!("{}{mark}", o.family), o.rec.shape.clone())).or_default().add(o);
    }
    out.push_str("### Goals\n\n");
    out.push_str(HEADER);
    for (label, s) in goal_stats(rows) {
        out.push_str(&s.row(&format!("{label} (ratio under 0.8: {})", s.below(0.8))));
    }
    out.push_str("\n### By provider\n\n");
    out.push_str(HEADER);
    for (k, s) in &by_provider {
        out.push_str(&s.row(k));
    }
    out.push_str("\n### By provider, model family and shape\n\n");
    out.push_str(HEADER);
    for ((p, f, shape), s) in &groups {
        out.push_str(&s.row(&format!("{p} / {f} / {shape}")));
    }
    let rejected: Vec<_> = rows.iter().filter(|o| o.error.is_some()).collect();
    if !rejected.is_empty() {
        out.push_str("\n### Rejected bodies\n\n");
        for o in rejected {
            out.push_str(&format!("- `{}`: {}\n", o.rec.id, o.error.as_deref().unwrap_or("")));
        }
    }
}

fn report(outcomes: &[Outcome]) -> String {
    let mut out = String::from(
        "# Accuracy against billed usage\n\n\
         Generated by `core/tests/billing.rs` from the recorded requests in `tests/fixtures/billing/`\n\
         (sources and licences in `tests/fixtures/billing/SOURCES.md`); do not edit by hand. Regenerate with\n\n\
         ```\nTURNFIT_WRITE_ACCURACY=1 cargo test -p turnfit --test billing\n```\n\n\
         Each request body is parsed as the provider's format and counted with `Accountant::conversation`\n\
         for the model the body names (what `turnfit preflight` reports as `prompt_tokens`); billed is\n\
         OpenAI's `prompt_tokens`, or Anthropic's `input_tokens + cache_creation_input_tokens +\n\
         cache_read_input_tokens`. \"exact\" is counted == billed, \"within 3\" is |counted - billed| <= 3,\n\
         ratios are counted/billed and \"worst\" is the ratio farthest from 1. Rejected bodies count in\n\
         `requests` but in no share. Hold-out records (a third, chosen by a hash of the source path when\n\
         they were collected) were never looked at while tuning.\n",
    );
    out.push_str(RULES);
    let (set3, outcomes): (Vec<&Outcome>, Vec<&Outcome>) = outcomes.iter().partition(|o| is_fit_check_set(&o.rec.set));
    let (responses, outcomes): (Vec<&Outcome>, Vec<&Outcome>) =
        outcomes.into_iter().partition(|o| o.rec.api == "responses");
    let tuning: Vec<&Outcome> = outcomes.iter().copied().filter(|o| !o.rec.holdout).collect();
    section(&mut out, &format!("Tuning set ({} requests)", tuning.len()), &tuning);
    let mut sets: Vec<&str> = outcomes.iter().map(|o| o.rec.set.as_str()).collect();
    sets.dedup();
    for set in sets {
        let holdout: Vec<&Outcome> = outcomes.iter().copied().filter(|o| o.rec.holdout && o.rec.set == set).collect();
        let title = match set {
            "1" => format!("Hold-out set ({} requests)", holdout.len()),
            other => format!("Hold-out set {other} ({} requests; {})", holdout.len(), set_note(other)),
        };
        section(&mut out, &title, &holdout);
    }
    if !responses.is_empty() {
        out.push_str(RESPONSES_INTRO);
        let (first, later): (Vec<&Outcome>, Vec<&Outcome>) = responses.iter().partition(|o| o.rec.set == "responses");
        let (holdout, tuning): (Vec<&Outcome>, Vec<&Outcome>) = first.iter().partition(|o| o.rec.holdout);
        responses_section(&mut out, &format!("Responses tuning set ({} requests)", tuning.len()), &tuning);
        responses_section(&mut out, &format!("Responses hold-out set ({} requests)", holdout.len()), &holdout);
        if !later.is_empty() {
            out.push_str(RESPONSES_2_INTRO);
            responses_section(&mut out, &format!("Responses hold-out set 2 ({} requests)", later.len()), &later);
        }
    }
    if !set3.is_empty() {
        fit_check_report(&mut out, &set3);
    }
    out
}

/// Set 3 (issue 53) is one collection split into a fit part and a check
/// part by a hash of the cassette directory when it was collected: rules
/// are fitted on the fit part only.
fn is_fit_check_set(set: &str) -> bool {
    matches!(set, "3" | "responses-3")
}

const SET3_INTRO: &str = "\n## Set 3: fit and check parts (issue 53)\n\n\
    Recordings of mirascope 2.8.2's test cassettes, opentelemetry-instrumentation-openai-v2 2.4b0, OpenLLMetry's agno \
    and haystack instrumentations 0.62.4 and pydantic-ai's Chat Completions cassettes at 4fda389 \
    (`openai-3.jsonl`, `anthropic-3.jsonl`, `openai-responses-3.jsonl`), none identical to a record above. Split \
    before any was counted: a cassette directory whose hash is odd is on the check side; pydantic-ai's Chat \
    recordings are all on the fit side (the hash had put every other `tool_choice: \"required\"` recording on the \
    check side). The rules issue 53 added were fitted on the fit part and the check part was opened once, after. \
    Two changes followed that opening, neither changing a count: Responses function tools on gpt-4o models with a \
    system or developer item were made estimates again (on the fit part 2 of 4 such gpt-4o requests are 35 over, \
    not explained; the check part holds the same test's other recordings), and `tool_choice: \"required\"` on \
    gpt-4o became an estimate (the fit part cannot measure it; the check part's 16 are each 5 over). Chat rows \
    are grouped as above; the `tool_choice` rows take every OpenAI Chat request with tools by its choice. \
    Regenerate with `scripts/billing/set3.sh table`; `scripts/billing/set3.sh verify` re-collects the records \
    from the pinned packages.\n";

fn fit_check_report(out: &mut String, rows: &[&Outcome]) {
    out.push_str(SET3_INTRO);
    let (responses, chat): (Vec<&Outcome>, Vec<&Outcome>) = rows.iter().partition(|o| o.rec.api == "responses");
    for (part, check) in [("fit", false), ("check", true)] {
        let chat: Vec<&Outcome> = chat.iter().copied().filter(|o| o.rec.holdout == check).collect();
        section(out, &format!("Set 3, {part} part: Chat and Anthropic ({} requests)", chat.len()), &chat);
        out.push_str("\n### By `tool_choice` (OpenAI Chat with tools)\n\n");
        out.push_str(HEADER);
        let mut choices: BTreeMap<String, Stats> = BTreeMap::new();
        for o in chat.iter().filter(|o| o.rec.provider == "openai") {
            if let Some(k) = tool_choice_kind(&o.rec.body) {
                let mark = if o.exact { "exact" } else { "estimate" };
                choices.entry(format!("{} / {k} / {mark}", o.family)).or_default().add(o);
            }
        }
        for (k, s) in &choices {
            out.push_str(&s.row(k));
        }
        let responses: Vec<&Outcome> = responses.iter().copied().filter(|o| o.rec.holdout == check).collect();
        out.push_str(&format!("\n## Set 3, {part} part: Responses\n"));
        responses_section(out, &format!("Responses set 3, {part} part ({} requests)", responses.len()), &responses);
    }
}

/// How a Chat request with tools chooses: `auto` (or none), `required`,
/// `none`, or a forced function with or without `parallel_tool_calls: false`.
fn tool_choice_kind(body: &str) -> Option<String> {
    let v: Value = serde_json::from_str(body).ok()?;
    if v["tools"].as_array().is_none_or(|t| t.is_empty()) {
        return None;
    }
    let serial = v["parallel_tool_calls"] == Value::Bool(false);
    let choice = match &v["tool_choice"] {
        Value::Null => "auto".to_owned(),
        Value::String(s) => s.clone(),
        Value::Object(o) if o.get("type").and_then(Value::as_str) == Some("function") => "forced".to_owned(),
        Value::Object(o) => o.get("type").and_then(Value::as_str).unwrap_or("other").to_owned(),
        _ => "other".to_owned(),
    };
    Some(if serial { format!("{choice}, parallel_tool_calls false") } else { choice })
}

const RESPONSES_INTRO: &str = "\n## OpenAI Responses API\n\n\
    Requests to `/v1/responses` (records with `\"api\": \"responses\"` in `openai-responses.jsonl`), parsed as \
    the `responses` format; billed is `usage.input_tokens`. Requests that name server-side state \
    (`previous_response_id`, `conversation`, `background`) were not collected: their billed input holds items \
    the body does not. Shapes: `server_tools` is a request with a tool OpenAI runs (web search, file search, \
    code interpreter, MCP, image generation, tool search, ...) or such an item in its input; \
    `reasoning_history` one replaying a `reasoning` item (with no server tool); `tool_history` one replaying \
    function calls. Rows are split by whether the request is counted as exact (`exact: true`) or as an \
    estimate. The hold-out (a third of the cassettes by a hash of their path) was opened once, after the \
    rules were written.\n";

const RESPONSES_2_INTRO: &str = "\nA second Responses hold-out (`openai-responses-2.jsonl`, issue 36): recordings \
    from other packages (OpenLLMetry's OpenAI and OpenAI Agents instrumentations, and langchain-openai 0.3.35, \
    1.1.0 and 1.4.0, whose cassettes hold earlier recordings than 1.7.4's), none identical to a record above. \
    Collected after the Responses function-tool rule was written (the first hold-out had been opened once already) \
    and opened once to check it; every record is hold-out.\n";

/// The Responses sections: goal rows per shape for the requests counted as
/// exact, the estimates, then each model family and shape, split by
/// whether the request is counted as exact.
fn responses_section(out: &mut String, title: &str, rows: &[&Outcome]) {
    out.push_str(&format!("\n### {title}\n\n"));
    let mut exact: BTreeMap<String, Stats> = BTreeMap::new();
    let mut groups: BTreeMap<(String, String, &str), Stats> = BTreeMap::new();
    for o in rows {
        let mark = if o.exact {
            "exact"
        } else if o.model_exact {
            "estimate"
        } else {
            "estimate (model)"
        };
        exact.entry(format!("{} / {mark}", o.rec.shape)).or_default().add(o);
        groups.entry((o.family.clone(), o.rec.shape.clone(), mark)).or_default().add(o);
    }
    out.push_str("By shape:\n\n");
    out.push_str(HEADER);
    for (k, s) in &exact {
        out.push_str(&s.row(k));
    }
    out.push_str("\nBy model family and shape:\n\n");
    out.push_str(HEADER);
    for ((f, shape, mark), s) in &groups {
        out.push_str(&s.row(&format!("{f} / {shape} / {mark}")));
    }
    let rejected: Vec<_> = rows.iter().filter(|o| o.error.is_some()).collect();
    if !rejected.is_empty() {
        out.push_str("\nRejected bodies:\n\n");
        for o in rejected {
            out.push_str(&format!("- `{}`: {}\n", o.rec.id, o.error.as_deref().unwrap_or("")));
        }
    }
}

/// What a later collection is (SOURCES.md has its packages).
fn set_note(set: &str) -> &'static str {
    match set {
        "2" => {
            "issue 36: OpenLLMetry's recordings, collected to check the legacy `functions` rule and opened once \
                after it was written; its tuning half, gpt-fn's recordings, is in the tuning set above"
        }
        _ => "see tests/fixtures/billing/SOURCES.md",
    }
}

#[test]
fn report_matches_docs() {
    let outcomes = run();
    if let Ok(path) = std::env::var("TURNFIT_BILLING_DUMP") {
        // Per-record figures of the tuning set only, for working on the rules
        // (with TURNFIT_BILLING_DUMP_SET=NAME, that collection's records
        // only, hold-out included: for a hold-out already opened).
        let only = std::env::var("TURNFIT_BILLING_DUMP_SET").ok();
        let mut s = String::new();
        // Set 3's check part only with TURNFIT_BILLING_DUMP_CHECK=1 (to report, never to fit).
        let check = std::env::var_os("TURNFIT_BILLING_DUMP_CHECK").is_some();
        let keep = |o: &&Outcome| {
            let set_ok = only.as_ref().map_or(!o.rec.holdout, |set| &o.rec.set == set);
            set_ok && (!is_fit_check_set(&o.rec.set) || o.rec.holdout == check)
        };
        for o in outcomes.iter().filter(keep) {
            let c = o.counted.map_or_else(|| "rejected".to_owned(), |c| c.to_string());
            s.push_str(&format!(
                "{}{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
                o.rec.provider,
                if o.rec.api == "responses" { "-responses" } else { "" },
                if o.exact { "exact" } else { "estimate" },
                o.rec.model,
                o.rec.shape,
                o.rec.billed,
                c,
                o.counted.map_or(0, |c| c - o.rec.billed),
                o.rec.id,
                if o.rec.holdout { "holdout" } else { "tuning" },
                o.reasons
            ));
        }
        std::fs::write(&path, s).unwrap();
        // The tuning section of the report alone, beside it.
        let (responses, tuning): (Vec<&Outcome>, Vec<&Outcome>) = outcomes
            .iter()
            .filter(|o| !o.rec.holdout && !is_fit_check_set(&o.rec.set))
            .partition(|o| o.rec.api == "responses");
        let mut md = String::new();
        section(&mut md, "Tuning set", &tuning);
        responses_section(&mut md, "Responses tuning set", &responses);
        std::fs::write(format!("{path}.md"), md).unwrap();
    }
    let text = report(&outcomes);
    let path = root().join("docs/accuracy.md");
    if std::env::var_os("TURNFIT_WRITE_ACCURACY").is_some() {
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == text,
        "docs/accuracy.md is not what the harness produces; regenerate it with \
         TURNFIT_WRITE_ACCURACY=1 cargo test -p turnfit --test billing"
    );
}

#[test]
fn accepted_bodies_parse() {
    let rejected: Vec<String> =
        run().into_iter().filter_map(|o| o.error.map(|e| format!("{}: {e}", o.rec.id))).collect();
    assert!(
        rejected.is_empty(),
        "{} bodies the provider accepted are rejected:\n{}",
        rejected.len(),
        rejected.join("\n")
    );
}

/// Floors for the tuning set's figures: a change to the accounting that
/// makes any of them worse fails here. Raise them when the figures improve.
#[test]
fn floors() {
    let outcomes = run();
    let tuning: Vec<&Outcome> = outcomes
        .iter()
        .filter(|o| !o.rec.holdout && o.rec.api != "responses" && !is_fit_check_set(&o.rec.set))
        .collect();
    let goals = goal_stats(&tuning);
    let get = |label: &str| &goals.iter().find(|(l, _)| *l == label).unwrap().1;
    let exact = get("counted as exact, text and tool requests");
    assert!(exact.share(exact.within3) >= FLOOR_EXACT_WITHIN3, "within-3 share {}", exact.share(exact.within3));
    // The goal: none under by more than 3.
    assert_eq!(exact.under3, 0, "requests counted as exact under billed by more than 3");
    let estimates =
        get("estimates on exact models, text and tool requests (parallel calls, nested or unmeasured tool shapes)");
    assert_eq!(estimates.under3, 0, "estimates on exact models counted under billed");
    let structured = get("exact models, structured output (estimates)");
    assert_eq!(structured.under3, 0, "structured output counted under billed");
    assert!(
        structured.share(structured.within3) >= FLOOR_STRUCTURED_WITHIN3,
        "structured output within-3 share {}",
        structured.share(structured.within3)
    );
    for (label, lo) in [("anthropic, without tools", 0.90), ("anthropic, with client tools", 0.90)] {
        let s = get(label);
        assert!(s.median() >= lo && s.median() <= 1.1, "{label}: median {}", s.median());
    }
    let rejected: usize = tuning.iter().filter(|o| o.error.is_some()).count();
    assert_eq!(rejected, 0);
}

/// Floors for the Responses tuning set: requests counted as exact within 3
/// of billed (40 of 42 now). One is under by more than 3 and is not
/// explained (pydantic-ai test_openai_responses_system_prompt #0, gpt-4o,
/// recorded 2025-03: billed 42, counted 24; the same body recorded later,
/// test_openai_responses_model_instructions #0, was billed 24); one gpt-4.1
/// request is 4 over.
#[test]
fn responses_floors() {
    let outcomes = run();
    let mut exact = Stats::default();
    for o in
        outcomes.iter().filter(|o| !o.rec.holdout && o.rec.api == "responses" && o.exact && o.rec.set == "responses")
    {
        exact.add(o);
    }
    assert!(exact.share(exact.within3) >= FLOOR_RESPONSES_EXACT_WITHIN3, "{}", exact.share(exact.within3));
    assert!(exact.under3 <= 1, "{} Responses requests counted as exact under billed by more than 3", exact.under3);
    assert_eq!(exact.rejected, 0);
}

const FLOOR_RESPONSES_EXACT_WITHIN3: f64 = 0.95;

const FLOOR_EXACT_WITHIN3: f64 = 1.0;
const FLOOR_STRUCTURED_WITHIN3: f64 = 0.33;
