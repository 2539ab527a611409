//! Throughput of turnfit against tiktoken-rs, bpe-openai and tiktoken 4.x.
//!
//! Run from `bench/` (see RESULTS.md for the exact commands):
//!
//!     cargo bench --bench tokenizers -- --warm-up-time 1 --measurement-time 3
//!
//! Before anything is timed, every engine counts every input for both
//! encodings and the counts are compared with tiktoken-rs (the reference):
//! a turnfit disagreement (count, or ids) aborts the run; a peer disagreement
//! is reported and the run continues. The table and the one-shot times of
//! that pass are written to `target/turnfit-bench/` for `report.py`.
//!
//! Groups: `count/<encoding>/<input>` and `encode/<encoding>/<input>` (prose
//! and code) with one function per engine and `Throughput::Bytes`, plus
//! `count_until_limit/<encoding>/prose` for turnfit only.
//!
//! Clock: `TURNFIT_BENCH_CLOCK=cpu` (default) measures the CPU time of the
//! benchmarking thread (`CLOCK_THREAD_CPUTIME_ID`), which does not advance
//! while the thread waits for a core, so results survive a busy shared
//! machine far better than wall time; `TURNFIT_BENCH_CLOCK=wall` uses
//! criterion's usual wall clock. All engines tokenize on the calling thread.
//! `target/turnfit-bench/run.json` records the clock, arguments and load.
//!
//! A cell whose single untimed pass took longer than `TURNFIT_BENCH_MAX_SECS`
//! (default 2 s) is not handed to criterion (it would need at least ten such
//! iterations plus warm-up); its one-shot time is reported instead, marked.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};
use turnfit_bench::{load, load_inputs, Loaded, ENCODINGS, ENGINES};

/// Iteration time above which a group uses 10 samples instead of 20.
const SLOW_ITER: Duration = Duration::from_millis(150);

fn out_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/target")));
    target.join("turnfit-bench")
}

fn max_secs() -> f64 {
    std::env::var("TURNFIT_BENCH_MAX_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(2.0)
}

/// One cell of the pre-timing pass.
struct Check {
    count: usize,
    secs: f64,
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t = Instant::now();
    let r = f();
    (r, t.elapsed().as_secs_f64())
}

fn json_str(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

fn main() {
    let inputs = load_inputs();
    let mut engines: BTreeMap<&str, Vec<(&str, Loaded)>> = BTreeMap::new();
    for enc in ENCODINGS {
        engines.insert(enc, ENGINES.iter().map(|e| (*e, load(e, enc))).collect());
    }

    // ---------------------------------------------------------------- checks
    let mut checks: BTreeMap<(&str, &str, &str), Check> = BTreeMap::new();
    let mut table = String::new();
    let mut disagreements = Vec::new();
    let mut turnfit_failures = Vec::new();
    let _ = writeln!(table, "\nToken counts (ordinary text; reference = tiktoken-rs):\n");
    let _ = writeln!(
        table,
        "| encoding | input | bytes | {} | agree |",
        ENGINES.join(" | ")
    );
    let _ = writeln!(table, "|---|---|---:|{}---|", "---:|".repeat(ENGINES.len()));
    for enc in ENCODINGS {
        for (input, text) in &inputs {
            // Reference ids from tiktoken-rs (its count is the length of these).
            let reference = &engines[enc][1].1;
            let (ref_ids, _) = timed(|| reference.encode(text));
            let mut row = Vec::new();
            let mut agree = true;
            for (engine, loaded) in &engines[enc] {
                let (count, secs) = timed(|| loaded.count(text));
                eprintln!("check {enc:<11} {input:<14} {engine:<11} {count:>9} tokens {secs:>8.3} s");
                if count != ref_ids.len() {
                    agree = false;
                    let msg = format!(
                        "{engine} {enc} {input}: count {count} != tiktoken-rs {}",
                        ref_ids.len()
                    );
                    if *engine == "turnfit" {
                        turnfit_failures.push(msg);
                    } else {
                        disagreements.push(msg);
                    }
                }
                row.push(count.to_string());
                checks.insert((enc, input, engine), Check { count, secs });
            }
            // turnfit must also produce the reference ids, not just their number.
            let ids = engines[enc][0].1.encode(text);
            if ids != ref_ids {
                let at = ids.iter().zip(&ref_ids).position(|(a, b)| a != b).unwrap_or(ids.len().min(ref_ids.len()));
                turnfit_failures.push(format!("turnfit {enc} {input}: ids differ from tiktoken-rs at index {at}"));
                agree = false;
            }
            let _ = writeln!(
                table,
                "| {enc} | {input} | {} | {} | {} |",
                text.len(),
                row.join(" | "),
                if agree { "yes" } else { "NO" }
            );
        }
    }
    // Peers' ids on the encode inputs (prose, code).
    for enc in ENCODINGS {
        for (input, text) in inputs.iter().filter(|(n, _)| matches!(*n, "prose" | "code")) {
            let ref_ids = engines[enc][1].1.encode(text);
            for (engine, loaded) in &engines[enc] {
                if *engine != "turnfit" && *engine != "tiktoken-rs" && loaded.encode(text) != ref_ids {
                    disagreements.push(format!("{engine} {enc} {input}: encode ids differ from tiktoken-rs"));
                }
            }
        }
    }
    eprintln!("{table}");
    if disagreements.is_empty() {
        eprintln!("All peers agree with tiktoken-rs on every count (and on prose/code ids).");
    } else {
        eprintln!("PEER DISAGREEMENTS:");
        for d in &disagreements {
            eprintln!("  {d}");
        }
    }
    let dir = out_dir();
    std::fs::create_dir_all(&dir).expect("create target/turnfit-bench");
    let mut json = String::from("{\n  \"cells\": [\n");
    let cells: Vec<String> = checks
        .iter()
        .map(|((enc, input, engine), c)| {
            format!(
                "    {{\"encoding\": {}, \"input\": {}, \"engine\": {}, \"count\": {}, \"oneshot_secs\": {:.6}}}",
                json_str(enc),
                json_str(input),
                json_str(engine),
                c.count,
                c.secs
            )
        })
        .collect();
    json.push_str(&cells.join(",\n"));
    json.push_str("\n  ],\n  \"input_bytes\": {");
    json.push_str(
        &inputs.iter().map(|(n, t)| format!("{}: {}", json_str(n), t.len())).collect::<Vec<_>>().join(", "),
    );
    json.push_str("},\n  \"disagreements\": [");
    json.push_str(&disagreements.iter().map(|d| json_str(d)).collect::<Vec<_>>().join(", "));
    let _ = write!(json, "],\n  \"max_secs\": {}\n}}\n", max_secs());
    std::fs::write(dir.join("checks.json"), json).expect("write checks.json");
    std::fs::write(dir.join("counts.md"), &table).expect("write counts.md");
    if !turnfit_failures.is_empty() {
        for f in &turnfit_failures {
            eprintln!("TURNFIT MISMATCH: {f}");
        }
        panic!("turnfit disagrees with tiktoken-rs; not benchmarking");
    }

    // ---------------------------------------------------------------- timing
    let clock = std::env::var("TURNFIT_BENCH_CLOCK").unwrap_or_else(|_| "cpu".into());
    let load_before = turnfit_bench::loadavg();
    let started = Instant::now();
    let started_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let skipped = match clock.as_str() {
        "cpu" => timing(Criterion::default().with_measurement(ThreadCpuTime).configure_from_args(), &inputs, &engines, &checks),
        "wall" => timing(Criterion::default().configure_from_args(), &inputs, &engines, &checks),
        other => panic!("TURNFIT_BENCH_CLOCK must be cpu or wall, not {other:?}"),
    };
    let run = format!(
        "{{\"clock\": {}, \"loadavg_before\": {}, \"loadavg_after\": {}, \"timing_wall_secs\": {:.1}, \"started_unix\": {:.3}, \"args\": {}}}\n",
        json_str(&clock),
        json_str(&load_before),
        json_str(&turnfit_bench::loadavg()),
        started.elapsed().as_secs_f64(),
        started_unix,
        json_str(&std::env::args().skip(1).collect::<Vec<_>>().join(" "))
    );
    std::fs::write(out_dir().join("run.json"), run).expect("write run.json");
    let skipped_json = format!(
        "[{}]\n",
        skipped.iter().map(|s| json_str(s)).collect::<Vec<_>>().join(", ")
    );
    std::fs::write(out_dir().join("skipped.json"), skipped_json).expect("write skipped.json");
    if !skipped.is_empty() {
        eprintln!("Not timed by criterion (one-shot pass > {} s): {}", max_secs(), skipped.join(", "));
    }
}

type Engines = BTreeMap<&'static str, Vec<(&'static str, Loaded)>>;
type Checks = BTreeMap<(&'static str, &'static str, &'static str), Check>;

/// Runs every criterion group with measurement `M`; returns the cells skipped
/// as too slow.
fn timing<M: Measurement>(
    mut c: Criterion<M>,
    inputs: &[(&'static str, String)],
    engines: &Engines,
    checks: &Checks,
) -> Vec<String> {
    // ---------------------------------------------------------------- timing
    let limit = max_secs();
    let mut skipped = Vec::new();
    for enc in ENCODINGS {
        for (input, text) in inputs {
            for kind in ["count", "encode"] {
                if kind == "encode" && !matches!(*input, "prose" | "code") {
                    continue;
                }
                let slowest = engines[enc]
                    .iter()
                    .map(|(e, _)| checks[&(enc, *input, *e)].secs)
                    .filter(|s| *s <= limit)
                    .fold(0.0f64, f64::max);
                let mut g = c.benchmark_group(format!("{kind}/{enc}/{input}"));
                g.throughput(Throughput::Bytes(text.len() as u64));
                g.sampling_mode(SamplingMode::Flat);
                g.sample_size(if slowest > SLOW_ITER.as_secs_f64() { 10 } else { 20 });
                for (engine, loaded) in &engines[enc] {
                    let secs = checks[&(enc, *input, *engine)].secs;
                    if secs > limit {
                        skipped.push(format!("{kind}/{enc}/{input}/{engine}"));
                        continue;
                    }
                    let text = text.as_str();
                    if kind == "count" {
                        g.bench_function(*engine, |b| b.iter(|| loaded.count(black_box(text))));
                    } else {
                        g.bench_function(*engine, |b| b.iter(|| loaded.encode(black_box(text))));
                    }
                }
                g.finish();
            }
        }
        // count_until_limit: turnfit only, 1 MiB prose, limit 1000 vs full.
        let prose = inputs.iter().find(|(n, _)| *n == "prose").map(|(_, t)| t.as_str()).unwrap();
        let tok = match &engines[enc][0].1 {
            Loaded::Turnfit(t) => *t,
            _ => unreachable!("turnfit is the first engine"),
        };
        let lim = tok.count_until_limit(prose, 1000).expect("count_until_limit");
        assert!(lim.exceeded && lim.tokens > 1000 && lim.tokens < 2000, "{lim:?}");
        let mut g = c.benchmark_group(format!("count_until_limit/{enc}/prose"));
        g.sampling_mode(SamplingMode::Flat);
        g.sample_size(20);
        g.bench_function(BenchmarkId::new("turnfit", "limit=1000"), |b| {
            b.iter(|| tok.count_until_limit(black_box(prose), 1000).unwrap())
        });
        g.bench_function(BenchmarkId::new("turnfit", "full"), |b| {
            b.iter(|| tok.count(black_box(prose)).unwrap())
        });
        g.finish();
    }
    c.final_summary();
    skipped
}

/// Criterion measurement: CPU time of the benchmarking thread (see
/// `turnfit_bench::thread_cpu_ns`). Values are nanoseconds, like `WallTime`.
struct ThreadCpuTime;

impl Measurement for ThreadCpuTime {
    type Intermediate = u64;
    type Value = u64;
    fn start(&self) -> u64 {
        turnfit_bench::thread_cpu_ns()
    }
    fn end(&self, start: u64) -> u64 {
        turnfit_bench::thread_cpu_ns() - start
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, v: &u64) -> f64 {
        *v as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        &CpuFormatter
    }
}

struct CpuFormatter;

impl ValueFormatter for CpuFormatter {
    fn scale_values(&self, ns: f64, values: &mut [f64]) -> &'static str {
        let (factor, unit) = if ns < 1e3 {
            (1.0, "ns (cpu)")
        } else if ns < 1e6 {
            (1e-3, "µs (cpu)")
        } else if ns < 1e9 {
            (1e-6, "ms (cpu)")
        } else {
            (1e-9, "s (cpu)")
        };
        values.iter_mut().for_each(|v| *v *= factor);
        unit
    }
    fn scale_throughputs(&self, _typical: f64, t: &Throughput, values: &mut [f64]) -> &'static str {
        let per_iter = match *t {
            Throughput::Bytes(n) | Throughput::BytesDecimal(n) | Throughput::Elements(n) | Throughput::Bits(n) => n as f64,
        };
        // ns per iteration -> MB/s (10^6 bytes).
        values.iter_mut().for_each(|v| *v = per_iter / *v * 1e3);
        "MB/s (cpu)"
    }
    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}
