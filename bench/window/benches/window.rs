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
//! - `fit_parts/parse_1mb` and `fit_parts/count_1mb`: JSON parsing of the
//!   same text alone, and one `Accountant::conversation` count of the parsed
//!   conversation alone, to show where fit's time goes.
//!
//! The o200k vocabulary is built once per process on first use. This file
//! triggers that load (and the model registry's) before any benchmark runs
//! and prints how long it took, so no measurement includes it.
//!
//! Data comes from `gen_data.py` (default `data/` beside Cargo.toml, or
//! `$TURNFIT_WINDOW_DATA`).

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use turnfit::chat::Conversation;
use turnfit::window::{fit, Accountant, Budget, FitOptions, Policy, Strategy, Window};
use turnfit::ModelRegistry;

const MODEL: &str = "gpt-4o";

fn data(name: &str) -> String {
    let dir = std::env::var_os("TURNFIT_WINDOW_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data"));
    let p = dir.join(name);
    std::fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("{}: {e} (run `python3 gen_data.py` first)", p.display()))
}

/// Builds the process-wide o200k engine and the model registry, once per
/// process, and reports the cost. Everything measured afterwards finds them
/// built. Each group calls this first, so it holds whatever the filter.
fn warm_up_vocabulary() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let t = Instant::now();
        let (acct, _) = Accountant::for_model(&ModelRegistry::builtin(), MODEL).expect("gpt-4o accountant");
        let n = acct.tokenizer().count("warm up the o200k vocabulary").expect("count");
        let first = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        let (acct, _) = Accountant::for_model(&ModelRegistry::builtin(), MODEL).expect("gpt-4o accountant");
        acct.tokenizer().count("warm up the o200k vocabulary").expect("count");
        eprintln!(
            "warm-up: first o200k vocabulary + registry load took {first:.1} ms (done before any measurement, so excluded from all; {n} tokens counted); a second accountant + count took {:.3} ms",
            t.elapsed().as_secs_f64() * 1e3
        );
    });
}

/// A loaded window and the message that is pushed and popped on it.
struct Loaded {
    window: Window,
    msg: Option<turnfit::chat::Message>,
}

impl Loaded {
    fn new(size: usize, file: &str) -> Loaded {
        // A budget every window fits in, so the verdict is the same for both.
        let budget = Budget { context_window: 100_000_000, reserved_output: Some(10_000), ..Budget::default() };
        let conv = Conversation::parse(&data(file), None).expect("parse conversation");
        assert_eq!(conv.messages.len(), size);
        let mut window = Window::for_model(&ModelRegistry::builtin(), MODEL, budget).expect("window");
        let t = Instant::now();
        window.load(conv).expect("load");
        let load_ms = t.elapsed().as_secs_f64() * 1e3;
        let msg = Some(window.conversation().parse_message(&data("new_user_message.json")).expect("message"));
        let mut l = Loaded { window, msg };
        let before = l.window.preflight(None).expect("preflight");
        let pushed = l.step();
        eprintln!(
            "append_preflight/{size}: window holds {} messages, {} prompt tokens (load: {load_ms:.1} ms, outside timing); the pushed message counts {pushed} tokens",
            l.window.conversation().messages.len(),
            before.prompt_tokens
        );
        l
    }

    /// The timed operation: push, preflight, pop (which returns the message
    /// for the next step, so nothing is cloned).
    #[inline]
    fn step(&mut self) -> usize {
        let n = self.window.push(self.msg.take().unwrap()).unwrap();
        let p = self.window.preflight(None).unwrap();
        self.msg = self.window.pop();
        black_box((p.prompt_tokens, p.verdict));
        n
    }
}

fn append_preflight(c: &mut Criterion) {
    warm_up_vocabulary();
    // Loaded on first use, so a criterion filter that skips this group also
    // skips loading the 18 MB conversation.
    let mut windows: Option<[Loaded; 2]> = None;
    let load = || [Loaded::new(10, "conv_10.json"), Loaded::new(10_000, "conv_10000.json")];
    let mut checked = false;
    let mut group = c.benchmark_group("append_preflight");
    for k in 0..2 {
        let id = BenchmarkId::from_parameter([10, 10_000][k]);
        group.bench_function(id, |b| {
            let w = windows.get_or_insert_with(load);
            // The check runs before the first measurement: it also soaks up
            // the after-effects of loading 18 MB (allocator, page faults),
            // which otherwise land on whichever size is measured first.
            if !checked {
                interleaved_check(w);
                checked = true;
            }
            let l = &mut w[k];
            b.iter(|| l.step())
        });
    }
    group.finish();
}

/// Cross-check of the 10,000/10 ratio that a noisy neighbour cannot bias
/// one way: the two windows alternate (which goes first alternates too) in
/// rounds of 2,000 steps; the per-step median over the rounds for each, and
/// the median of the per-round ratios. Runs once, before criterion measures
/// either size, and is not part of criterion's figures.
fn interleaved_check(windows: &mut [Loaded; 2]) {
    const ROUNDS: usize = 100;
    const STEPS: u32 = 2_000;
    let before: Vec<_> = windows.iter().map(|l| l.window.preflight(None).unwrap()).collect();
    let mut per: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut ratios = Vec::new();
    for r in 0..ROUNDS {
        let mut ns = [0.0; 2];
        let order = if r % 2 == 0 { [0, 1] } else { [1, 0] };
        for &k in &order {
            let t = Instant::now();
            for _ in 0..STEPS {
                windows[k].step();
            }
            ns[k] = t.elapsed().as_nanos() as f64 / f64::from(STEPS);
            per[k].push(ns[k]);
        }
        ratios.push(ns[1] / ns[0]);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (m10, m10k, mr) = (median(&mut per[0]), median(&mut per[1]), median(&mut ratios));
    eprintln!(
        "append_preflight interleaved check: {ROUNDS} alternating rounds of {STEPS} steps: median {m10:.0} ns (10 messages), {m10k:.0} ns (10,000 messages), median per-round ratio 10,000/10 = {mr:.3}"
    );
    for (l, b) in windows.iter().zip(&before) {
        assert_eq!(&l.window.preflight(None).unwrap(), b, "window size/counts changed by push/preflight/pop");
    }
}

fn fit_cold(c: &mut Criterion) {
    warm_up_vocabulary();
    let (chat, agent_loop) = (data("conv_1mb.json"), data("loop_1mb.json"));
    let mut group = c.benchmark_group("fit_cold");
    group.sample_size(10);
    // loop_1mb: one task, then ~460 rounds of call and result (issue 13's
    // shape), which masks and drops rounds after the task.
    for (id, tool_output_max, text) in [
        ("1mb", None, &chat),
        ("1mb_tool_output_max_2000", Some(2000), &chat),
        ("loop_1mb", None, &agent_loop),
    ] {
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

/// Where fit's time goes: the two single passes it cannot avoid, timed alone.
fn fit_parts(c: &mut Criterion) {
    warm_up_vocabulary();
    let text = data("conv_1mb.json");
    let conv = Conversation::parse(&text, None).expect("parse");
    let (acct, _) = Accountant::for_model(&ModelRegistry::builtin(), MODEL).expect("accountant");
    let mut group = c.benchmark_group("fit_parts");
    group.sample_size(10);
    group.bench_function("parse_1mb", |b| b.iter(|| black_box(Conversation::parse(black_box(&text), None).unwrap())));
    group.bench_function("count_1mb", |b| b.iter(|| black_box(acct.conversation(black_box(&conv)).unwrap())));
    group.finish();
}

fn config() -> Criterion {
    Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3))
}

criterion_group! { name = benches; config = config(); targets = append_preflight, fit_cold, fit_parts }
criterion_main!(benches);
