//! Context-window engine benchmarks.
//!
//! - `append_preflight/{10,10000}`: a `Window` holding a 10- or a
//!   10,000-message conversation (loaded, i.e. fully counted, before timing);
//!   the timed operation is `push` of one ~50-word user message, then
//!   `preflight(None)`, then `pop` (which hands the same message back for the
//!   next iteration, so nothing is cloned and the window size stays constant).
//! - `fit_cold/1mb` and `fit_cold/1mb_tool_output_max_2000`: `fit` of the
//!   ~1 MB conversation from its JSON text (parse, count, repair, select,
//!   recount the result) to 100,000 tokens with 10,000 reserved, recency.
//!
//! The o200k vocabulary is built once per process on first use. This file
//! triggers that load (and the model registry's) before any benchmark runs
//! and prints how long it took, so no measurement includes it.
//!
//! Data comes from `gen_data.py` (default `data/` beside Cargo.toml, or
//! `$CTXKIT_WINDOW_DATA`).

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use ctxkit::chat::Conversation;
use ctxkit::window::{fit, Accountant, Budget, FitOptions, Policy, Strategy, Window};
use ctxkit::ModelRegistry;

const MODEL: &str = "gpt-4o";

fn data(name: &str) -> String {
    let dir = std::env::var_os("CTXKIT_WINDOW_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data"));
    let p = dir.join(name);
    std::fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("{}: {e} (run `python3 gen_data.py` first)", p.display()))
}

/// Builds the process-wide o200k engine and the model registry, once, and
/// reports the cost. Everything measured afterwards finds them built.
fn warm_up_vocabulary() {
    let t = Instant::now();
    let (acct, _) = Accountant::for_model(&ModelRegistry::builtin(), MODEL).expect("gpt-4o accountant");
    let n = acct.tokenizer().count("warm up the o200k vocabulary").expect("count");
    eprintln!("warm-up: first o200k vocabulary + registry load took {:.1} ms (excluded from every measurement; {n} tokens counted)", t.elapsed().as_secs_f64() * 1e3);
    let t = Instant::now();
    let (acct, _) = Accountant::for_model(&ModelRegistry::builtin(), MODEL).expect("gpt-4o accountant");
    acct.tokenizer().count("warm up the o200k vocabulary").expect("count");
    eprintln!("warm-up: second (warm) accountant + count took {:.3} ms", t.elapsed().as_secs_f64() * 1e3);
}

fn append_preflight(c: &mut Criterion) {
    warm_up_vocabulary();
    let budget = Budget { context_window: 100_000_000, reserved_output: Some(10_000), ..Budget::default() };
    let mut group = c.benchmark_group("append_preflight");
    for (size, file) in [(10usize, "conv_10.json"), (10_000, "conv_10000.json")] {
        let conv = Conversation::parse(&data(file), None).expect("parse conversation");
        assert_eq!(conv.messages.len(), size);
        let mut window = Window::for_model(&ModelRegistry::builtin(), MODEL, budget).expect("window");
        let t = Instant::now();
        window.load(conv).expect("load");
        let load_ms = t.elapsed().as_secs_f64() * 1e3;
        let mut msg = Some(window.conversation().parse_message(&data("new_user_message.json")).expect("message"));
        let before = window.preflight(None).expect("preflight");
        let pushed = window.push(msg.take().unwrap()).expect("push");
        msg = window.pop();
        eprintln!(
            "append_preflight/{size}: window holds {} messages, {} prompt tokens (load: {load_ms:.1} ms, outside timing); the pushed message counts {pushed} tokens",
            window.conversation().messages.len(),
            before.prompt_tokens
        );
        group.bench_with_input(BenchmarkId::from_parameter(size), &size, |b, _| {
            b.iter(|| {
                let n = window.push(msg.take().unwrap()).unwrap();
                let p = window.preflight(None).unwrap();
                msg = window.pop();
                black_box((n, p.prompt_tokens, p.verdict))
            })
        });
        assert_eq!(window.preflight(None).unwrap(), before, "window size/counts changed during the bench");
    }
    group.finish();
}

fn fit_cold(c: &mut Criterion) {
    warm_up_vocabulary();
    let text = data("conv_1mb.json");
    let mut group = c.benchmark_group("fit_cold");
    group.sample_size(10);
    for (id, tool_output_max) in [("1mb", None), ("1mb_tool_output_max_2000", Some(2000))] {
        let opts = FitOptions {
            model: MODEL.into(),
            max_tokens: Some(100_000),
            reserve_output: Some(10_000),
            policy: Policy { strategy: Strategy::Recency, tool_output_max, ..Policy::default() },
            ..FitOptions::default()
        };
        let t = Instant::now();
        let (out, r) = fit(&text, &opts).expect("fit");
        eprintln!(
            "fit_cold/{id}: {} bytes, tokens_before {} -> tokens_after {} (limit {}), messages {} -> {}, {} changes; one untimed call took {:.1} ms",
            text.len(),
            r.tokens_before,
            r.tokens_after,
            r.limit_tokens,
            r.messages_before,
            r.messages_after,
            r.changes.len(),
            t.elapsed().as_secs_f64() * 1e3
        );
        drop(out);
        group.bench_function(id, |b| b.iter(|| black_box(fit(black_box(&text), &opts).unwrap())));
    }
    group.finish();
}

fn config() -> Criterion {
    Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3))
}

criterion_group! { name = benches; config = config(); targets = append_preflight, fit_cold }
criterion_main!(benches);
