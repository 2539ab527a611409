//! Tool-telemetry cost: one span start/end pair on a shared `Tracer`.
//!
//! - `trace/start_end_pair/collapsed`: the same tool, agent and outcome every
//!   time, so each finished span folds into the newest ring record (the
//!   steady state of an agent calling one tool in a loop).
//! - `trace/start_end_pair/distinct`: the agent id alternates between two
//!   values, so no event folds and every end pushes a record into a full
//!   ring (evicting the oldest): the most work an end does.
//! - `trace/start_end_pair/4_threads`: the distinct pattern while three
//!   other threads hammer the same tracer (measures lock contention on a
//!   2-core machine; expect it to be noisy).
//!
//! Every span carries an agent id, a workflow id and a tool-call id (three
//! small string allocations), as a real host's would. Time is passed in, so
//! no clock is read inside the measurement.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use turnfit::trace::{Outcome, SpanInfo, Tracer, TracerConfig};

fn info(agent: &str) -> SpanInfo {
    SpanInfo {
        agent_id: Some(agent.to_owned()),
        workflow_id: Some("wf-1".to_owned()),
        tool_call_id: Some("call_abc123".to_owned()),
        timeout_ms: None,
        input: None,
    }
}

fn pair(t: &Tracer, agent: &str, now: &mut u64) {
    *now += 10;
    let id = t.start(black_box("read_file"), info(agent), 64, *now).unwrap();
    t.end(id, Outcome::Success, 2048, None, *now + 5).unwrap();
}

fn start_end(c: &mut Criterion) {
    let mut group = c.benchmark_group("trace/start_end_pair");
    let t = Tracer::new(TracerConfig::default()).unwrap();
    let mut now = 0u64;
    group.bench_function("collapsed", |b| b.iter(|| pair(&t, "coder", &mut now)));
    let t = Tracer::new(TracerConfig::default()).unwrap();
    let mut i = 0u64;
    group.bench_function("distinct", |b| {
        b.iter(|| {
            i += 1;
            pair(&t, if i % 2 == 0 { "coder" } else { "reviewer" }, &mut now)
        })
    });
    let t = Arc::new(Tracer::new(TracerConfig::default()).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let others: Vec<_> = (0..3)
        .map(|k| {
            let (t, stop) = (t.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut now = 0u64;
                let agent = format!("agent-{k}");
                while !stop.load(Ordering::Relaxed) {
                    pair(&t, &agent, &mut now);
                }
            })
        })
        .collect();
    group.bench_function("4_threads", |b| {
        b.iter(|| {
            i += 1;
            pair(&t, if i % 2 == 0 { "coder" } else { "reviewer" }, &mut now)
        })
    });
    stop.store(true, Ordering::Relaxed);
    for h in others {
        h.join().unwrap();
    }
    group.finish();
}

fn config() -> Criterion {
    Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3))
}

criterion_group! { name = benches; config = config(); targets = start_end }
criterion_main!(benches);
