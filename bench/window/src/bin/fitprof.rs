//! Runs `fit` once on a warmed-up process, for instruction counts that do
//! not depend on the machine's load (docs/benchmarks.md):
//!
//!   valgrind --tool=callgrind --toggle-collect='*measured_fit*' \
//!     target/release/fitprof data/loop_1mb.json
//!
//! The o200k vocabulary and the model registry are loaded first (outside
//! `measured_fit`), so the collected instructions are fit's alone: parsing,
//! counting, repair, masking, selection, the result. Budget as in the
//! criterion bench: 100,000 tokens, 10,000 reserved, recency, defaults.

use std::hint::black_box;

use turnfit::window::{fit, Accountant, FitOptions, FitReport, Policy, Strategy};
use turnfit::ModelRegistry;

#[inline(never)]
fn measured_fit(text: &str, opts: &FitOptions) -> FitReport {
    let (c, r) = fit(text, opts).expect("fit");
    black_box(c);
    r
}

fn main() {
    let path = std::env::args().nth(1).expect("usage: fitprof CONVERSATION.json [TOOL_OUTPUT_MAX]");
    let tool_output_max = std::env::args().nth(2).map(|s| s.parse::<usize>().expect("a number"));
    let text = std::fs::read_to_string(&path).expect("read the conversation");
    let (acct, _) = Accountant::for_model(&ModelRegistry::builtin(), "gpt-4o").expect("accountant");
    acct.tokenizer().count("warm up the o200k vocabulary").expect("count");
    let opts = FitOptions {
        model: "gpt-4o".into(),
        max_tokens: Some(100_000),
        reserve_output: Some(10_000),
        policy: Policy { strategy: Strategy::Recency, tool_output_max, ..Policy::default() },
        ..FitOptions::default()
    };
    let r = measured_fit(&text, &opts);
    println!(
        "tokens_before {} tokens_after {} messages {} -> {} changes {}",
        r.tokens_before,
        r.tokens_after,
        r.messages_before,
        r.messages_after,
        r.changes.len()
    );
}
