use proptest::prelude::{prop_assert, prop_assert_eq, proptest};

use super::histogram::{bounds, index, Histogram, BUCKETS};
use super::*;

fn tracer(ring: usize) -> Tracer {
    Tracer::new(TracerConfig { ring_size: ring, ..TracerConfig::default() }).unwrap()
}

fn info(agent: &str, call: &str) -> SpanInfo {
    SpanInfo { agent_id: Some(agent.into()), tool_call_id: Some(call.into()), ..SpanInfo::default() }
}

#[test]
fn a_span_feeds_metrics_and_the_ring() {
    let t = tracer(8);
    let id = t.start("grep", info("coder", "call_1"), 120, 1_000).unwrap();
    assert_eq!(t.metrics()[0].in_flight, 1);
    t.end(id, Outcome::Success, 4_000, None, 3_500).unwrap();
    let m = &t.metrics()[0];
    assert_eq!(
        (m.tool.as_str(), m.count, m.successes, m.in_flight, m.input_bytes, m.output_bytes),
        ("grep", 1, 1, 0, 120, 4_000)
    );
    let d = m.duration_us.as_ref().unwrap();
    assert_eq!((d.min, d.max, d.p50, d.p99), (2_500, 2_500, 2_500, 2_500));
    let r = &t.recent()[0];
    assert_eq!((r.span_id, r.duration_us, r.count, r.tool_call_id.as_deref()), (id, 2_500, 1, Some("call_1")));
    // Ending twice, or an unknown id, is an error that names the span.
    let e = t.end(id, Outcome::Success, 0, None, 4_000).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains(&format!("span {id}")));
    assert_eq!(t.end(999, Outcome::Failed, 0, None, 0).unwrap_err().kind(), ErrorKind::InvalidArgument);
}

#[test]
fn outcomes_are_counted_separately() {
    let t = tracer(8);
    for (i, o) in [Outcome::Success, Outcome::Failed, Outcome::Failed, Outcome::Timeout, Outcome::Cancelled]
        .into_iter()
        .enumerate()
    {
        let id = t.start("http", SpanInfo::default(), 0, 0).unwrap();
        t.end(id, o, 0, (o == Outcome::Failed).then_some("boom"), i as u64).unwrap();
    }
    let m = &t.metrics()[0];
    assert_eq!((m.count, m.successes, m.errors, m.timeouts, m.cancelled), (5, 1, 2, 1, 1));
}

fn with_input(agent: &str, call: &str, input: &str) -> SpanInfo {
    SpanInfo { input: Some(input.into()), ..info(agent, call) }
}

#[test]
fn repeats_of_the_same_input_collapse() {
    let t = tracer(4);
    for i in 0..40u64 {
        let id = t.start("run_tests", with_input("coder", &format!("c{i}"), r#"{"cmd":"pytest"}"#), 0, i * 10).unwrap();
        t.end(id, Outcome::Failed, 0, Some("exit status 1"), i * 10 + 5).unwrap();
    }
    let id = t.start("run_tests", with_input("coder", "c40", r#"{"cmd":"pytest"}"#), 0, 500).unwrap();
    t.end(id, Outcome::Failed, 0, Some("exit status 2"), 505).unwrap();
    let r = t.recent();
    assert_eq!(r.len(), 2);
    assert_eq!((r[0].count, r[0].tool_call_id.as_deref(), r[0].last_ended_us), (40, Some("c0"), 395));
    assert_eq!(r[1].count, 1);
    let x = t.export(600);
    assert_eq!((x.spans_started, x.spans_ended, x.collapsed, x.evicted), (41, 41, 39, 0));
    assert_eq!(x.tools[0].errors, 41);
}

#[test]
fn distinct_calls_stay_distinct_records() {
    // Three successful calls with different ids, inputs and durations: three
    // executions, three records (they were folded into one with count 3).
    let t = tracer(1024);
    for (i, (call, q, d)) in
        [("call_1", "weather sf", 120), ("call_2", "weather nyc", 340), ("call_3", "news", 95)].into_iter().enumerate()
    {
        let start = i as u64 * 1_000;
        let id = t.start("search", with_input("planner", call, q), q.len() as u64, start).unwrap();
        t.end(id, Outcome::Success, 10, None, start + d).unwrap();
    }
    let r = t.recent();
    assert_eq!(
        r.iter().map(|r| (r.tool_call_id.as_deref(), r.duration_us, r.count)).collect::<Vec<_>>(),
        [(Some("call_1"), 120, 1), (Some("call_2"), 340, 1), (Some("call_3"), 95, 1)]
    );
    assert_ne!(r[0].input_hash, r[1].input_hash);
    assert_eq!(r[0].input_hash.as_deref().map(str::len), Some(16));
    // A hundred distinct calls are a hundred records.
    for i in 0..100u64 {
        let id = t.start("read", info("coder", &format!("r{i}")), 0, 10_000 + i).unwrap();
        t.end(id, Outcome::Success, 0, None, 10_001 + i).unwrap();
    }
    assert_eq!((t.recent().len(), t.export(0).collapsed), (103, 0));
    // Spans with neither id nor input are not known to be repeats.
    let u = tracer(8);
    for i in 0..3 {
        let id = u.start("x", SpanInfo::default(), 0, i).unwrap();
        u.end(id, Outcome::Success, 0, None, i + 1).unwrap();
    }
    assert_eq!(u.recent().len(), 3);
}

#[test]
fn the_same_call_id_collapses_unless_collapse_is_off() {
    for (collapse, records) in [(true, vec![2, 1]), (false, vec![1, 1, 1])] {
        let t = Tracer::new(TracerConfig { collapse, ..TracerConfig::default() }).unwrap();
        // A retried call (same id, different input text) that fails twice, then succeeds.
        for (n, (input, outcome)) in
            [("a", Outcome::Failed), ("b", Outcome::Failed), ("c", Outcome::Success)].into_iter().enumerate()
        {
            let id = t.start("fetch", with_input("coder", "call_9", input), 0, n as u64).unwrap();
            t.end(id, outcome, 0, (outcome == Outcome::Failed).then_some("503"), n as u64 + 1).unwrap();
        }
        let got: Vec<u64> = t.recent().iter().map(|r| r.count).collect();
        assert_eq!(got, records, "collapse {collapse}");
        assert_eq!(t.metrics()[0].count, 3);
    }
    assert!(Tracer::from_json(r#"{"collapse": false}"#).is_ok());
    assert_eq!(Tracer::from_json(r#"{"collapse": "no"}"#).unwrap_err().kind(), ErrorKind::InvalidJson);
}

#[test]
fn the_ring_is_bounded_and_keeps_the_newest() {
    let t = tracer(3);
    for i in 0..10u64 {
        let id = t.start(&format!("tool{}", i % 5), SpanInfo::default(), 0, i).unwrap();
        t.end(id, Outcome::Success, 0, None, i + 1).unwrap();
    }
    let r = t.recent();
    assert_eq!(r.iter().map(|r| r.started_us).collect::<Vec<_>>(), [7, 8, 9]);
    assert_eq!(t.export(0).evicted, 7);
}

#[test]
fn deadlines_report_and_expire_overdue_spans() {
    let mut timeouts = BTreeMap::new();
    timeouts.insert("slow".to_owned(), 60_000);
    let t = Tracer::new(TracerConfig { timeouts, ..TracerConfig::default() }).unwrap();
    let a = t.start("fast", info("coder", "call_a"), 0, 0).unwrap();
    let b = t.start("slow", info("coder", "call_b"), 0, 0).unwrap();
    let c = t.start("fast", SpanInfo { timeout_ms: Some(1), ..SpanInfo::default() }, 0, 0).unwrap();
    // At exactly 10 s nothing of the default deadline is overdue yet.
    assert_eq!(t.overdue(10_000_000).iter().map(|s| s.span_id).collect::<Vec<_>>(), [c]);
    let over = t.overdue(10_000_001);
    assert_eq!(over.iter().map(|s| s.span_id).collect::<Vec<_>>(), [a, c]);
    assert_eq!((over[0].timeout_ms, over[0].elapsed_us), (DEFAULT_TIMEOUT_MS, 10_000_001));
    let results = interrupted_results(&over);
    assert_eq!(results.len(), 1, "only spans with a tool_call_id can be answered");
    assert_eq!(results[0].tool_call_id, "call_a");
    assert_eq!(results[0].content, crate::window::DEFAULT_SYNTHETIC_RESULT);
    assert_eq!(results[0].reason, "deadline of 10000 ms exceeded");
    // Reporting changes nothing; expiring ends them as timeouts.
    assert_eq!(t.overdue(10_000_001).len(), 2);
    assert_eq!(t.expire(10_000_001).len(), 2);
    assert!(t.overdue(10_000_001).is_empty());
    assert_eq!(t.end(a, Outcome::Success, 0, None, 10_000_002).unwrap_err().kind(), ErrorKind::InvalidArgument);
    let fast = t.metrics().into_iter().find(|m| m.tool == "fast").unwrap();
    assert_eq!((fast.timeouts, fast.in_flight), (2, 0));
    let x = t.export(10_000_001);
    assert_eq!(x.open.iter().map(|s| s.span_id).collect::<Vec<_>>(), [b]);
    assert_eq!(x.recent[0].error.as_deref(), Some("deadline of 10000 ms exceeded"));
}

#[test]
fn interrupted_results_fit_the_window_repair() {
    use crate::chat::Conversation;
    use crate::window::{repair, Accountant};
    let conv = r#"[{"role":"user","content":"run it"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_a","type":"function","function":{"name":"fast","arguments":"{}"}}]}]"#;
    let t = tracer(4);
    t.start("fast", info("coder", "call_a"), 0, 0).unwrap();
    let results = interrupted_results(&t.expire(u64::MAX));
    let (acct, _) = Accountant::for_model(&crate::ModelRegistry::builtin(), "gpt-4o").unwrap();
    let c = Conversation::parse(conv, None).unwrap();
    let fixed = repair(&c, Some(&results[0].content), &acct).unwrap();
    let out = fixed.conversation.to_json().unwrap();
    assert!(
        out.contains(
            r#"{"role":"tool","tool_call_id":"call_a","content":"Tool call was interrupted before it returned."}"#
        ),
        "{out}"
    );
}

#[test]
fn clocks_going_backwards_give_zero_durations() {
    let t = tracer(4);
    let id = t.start("x", SpanInfo::default(), 0, 1_000).unwrap();
    t.end(id, Outcome::Success, 0, None, 10).unwrap();
    assert_eq!(t.recent()[0].duration_us, 0);
    assert!(t.overdue(0).is_empty());
}

#[test]
fn config_and_inputs_are_checked() {
    let bad = |c: TracerConfig| Tracer::new(c).unwrap_err().kind();
    assert_eq!(bad(TracerConfig { ring_size: 0, ..TracerConfig::default() }), ErrorKind::InvalidArgument);
    assert_eq!(bad(TracerConfig { default_timeout_ms: 0, ..TracerConfig::default() }), ErrorKind::InvalidArgument);
    assert!(Tracer::new(TracerConfig { ring_size: MAX_TRACE_RING, ..TracerConfig::default() }).is_ok());
    assert_eq!(
        bad(TracerConfig { ring_size: MAX_TRACE_RING + 1, ..TracerConfig::default() }),
        ErrorKind::LimitExceeded
    );
    assert_eq!(Tracer::from_json(r#"{"timeouts":{"x":0}}"#).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(Tracer::from_json(r#"{"ring":5}"#).unwrap_err().kind(), ErrorKind::InvalidJson);
    assert_eq!(Tracer::from_json(r#"{"ring_size":5,"timeouts":{"grep":250}}"#).unwrap().timeout_ms("grep"), 250);

    let t = tracer(4);
    assert_eq!(t.start("", SpanInfo::default(), 0, 0).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert!(t.start(&"t".repeat(MAX_KEY_BYTES), SpanInfo::default(), 0, 0).is_ok());
    assert_eq!(
        t.start(&"t".repeat(MAX_KEY_BYTES + 1), SpanInfo::default(), 0, 0).unwrap_err().kind(),
        ErrorKind::LimitExceeded
    );
    let long_agent = SpanInfo { agent_id: Some("a".repeat(MAX_KEY_BYTES + 1)), ..SpanInfo::default() };
    assert_eq!(t.start("x", long_agent, 0, 0).unwrap_err().kind(), ErrorKind::LimitExceeded);
    let zero = SpanInfo { timeout_ms: Some(0), ..SpanInfo::default() };
    assert_eq!(t.start("x", zero, 0, 0).unwrap_err().kind(), ErrorKind::InvalidArgument);
}

#[test]
fn error_text_is_cut_at_a_character_boundary() {
    let t = tracer(4);
    let id = t.start("x", SpanInfo::default(), 0, 0).unwrap();
    let long = "é".repeat(MAX_SPAN_ERROR_BYTES);
    t.end(id, Outcome::Failed, 0, Some(&long), 1).unwrap();
    let e = t.recent()[0].error.clone().unwrap();
    assert!(e.len() <= MAX_SPAN_ERROR_BYTES && e.ends_with('…') && e.len() > MAX_SPAN_ERROR_BYTES - 8);
}

#[test]
fn tool_limit_at_and_past() {
    let t = tracer(1);
    for i in 0..MAX_TRACE_TOOLS {
        let id = t.start(&format!("t{i}"), SpanInfo::default(), 0, 0).unwrap();
        t.end(id, Outcome::Success, 0, None, 1).unwrap();
    }
    assert_eq!(t.metrics().len(), MAX_TRACE_TOOLS);
    // A known tool still works; a new one is refused.
    assert!(t.start("t0", SpanInfo::default(), 0, 0).is_ok());
    assert_eq!(t.start("one-more", SpanInfo::default(), 0, 0).unwrap_err().kind(), ErrorKind::LimitExceeded);
}

#[test]
fn open_span_limit_at_and_past() {
    let t = tracer(1);
    for _ in 0..MAX_OPEN_SPANS {
        t.start("x", SpanInfo::default(), 0, 0).unwrap();
    }
    assert_eq!(t.start("x", SpanInfo::default(), 0, 0).unwrap_err().kind(), ErrorKind::LimitExceeded);
    assert_eq!(t.expire(u64::MAX).len(), MAX_OPEN_SPANS);
    assert!(t.start("x", SpanInfo::default(), 0, 0).is_ok());
}

#[test]
fn threads_share_one_tracer() {
    let t = std::sync::Arc::new(tracer(64));
    let handles: Vec<_> = (0..8u64)
        .map(|k| {
            let t = t.clone();
            std::thread::spawn(move || {
                for i in 0..2_000u64 {
                    let tool = if i % 2 == 0 { "shared" } else { "own" };
                    let id = t
                        .start(tool, SpanInfo { agent_id: Some(format!("a{k}")), ..SpanInfo::default() }, 1, i)
                        .unwrap();
                    let outcome = if i % 10 == 0 { Outcome::Failed } else { Outcome::Success };
                    t.end(id, outcome, 2, None, i + k + 1).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let x = t.export(0);
    assert_eq!((x.spans_started, x.spans_ended), (16_000, 16_000));
    let total: u64 = x.tools.iter().map(|m| m.count).sum();
    assert_eq!(total, 16_000);
    assert_eq!(x.tools.iter().map(|m| m.errors).sum::<u64>(), 8 * 200);
    assert_eq!(x.tools.iter().map(|m| m.input_bytes).sum::<u64>(), 16_000);
    assert!(x.recent.len() <= 64 && x.open.is_empty());
    // Every event was either pushed (and is still there or was evicted) or folded.
    assert_eq!(x.recent.len() as u64 + x.evicted + x.collapsed, 16_000);
}

#[test]
fn tracer_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Tracer>();
}

#[test]
fn export_is_json() {
    let t = tracer(4);
    let id = t.start("grep", info("coder", "c1"), 3, 0).unwrap();
    t.end(id, Outcome::Success, 5, None, 7).unwrap();
    let v: serde_json::Value = serde_json::from_str(&crate::json::to_string(&t.export(7)).unwrap()).unwrap();
    assert_eq!(v["tools"][0]["duration_us"]["p50"], 7);
    assert_eq!(v["recent"][0]["outcome"], "success");
    assert_eq!(v["recent"][0]["agent_id"], "coder");
}

// ---- histogram --------------------------------------------------------------

#[test]
fn buckets_tile_the_value_range() {
    let mut expected_lo = 0;
    for i in 0..BUCKETS {
        let (lo, hi) = bounds(i);
        assert_eq!(lo, expected_lo, "bucket {i}");
        assert!(hi >= lo);
        // No bucket is wider than 1/16 of its lower bound.
        assert!(lo < 16 || (hi - lo + 1) * 16 <= lo, "bucket {i}: {lo}..={hi}");
        assert_eq!(index(lo), i);
        assert_eq!(index(hi), i);
        if i + 1 < BUCKETS {
            expected_lo = hi + 1;
        } else {
            assert_eq!(hi, u64::MAX, "the last bucket ends at u64::MAX");
        }
    }
    assert_eq!(index(u64::MAX), BUCKETS - 1);
}

/// Issue 14 bug 8: spans of 1e15 and 2e15 µs both reported p95 = 1e15
/// (values were clamped at 2^43). Every value up to u64::MAX keeps the
/// 1/16 bound.
#[test]
fn percentiles_hold_across_the_whole_u64_range() {
    for v in [1_000_000_000_000_000u64, 2_000_000_000_000_000, 1 << 43, (1 << 63) + 12345, u64::MAX - 1, u64::MAX] {
        let mut h = Histogram::default();
        h.record(v);
        h.record(v);
        let est = h.quantile(0.95).unwrap();
        assert!(est.abs_diff(v) <= v / 16, "{v}: {est}");
    }
    let mut h = Histogram::default();
    for _ in 0..20 {
        h.record(1_000_000_000_000_000);
    }
    for _ in 0..80 {
        h.record(2_000_000_000_000_000);
    }
    let p95 = h.quantile(0.95).unwrap();
    assert!(p95.abs_diff(2_000_000_000_000_000) <= 2_000_000_000_000_000 / 16, "{p95}");
    assert!(h.mean().unwrap() > 1.7e15);
}

fn exact(sorted: &[u64], q: f64) -> u64 {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

proptest! {
    /// Percentiles are within one bucket (at most 1/16) of the exact
    /// nearest-rank value.
    #[test]
    fn percentiles_within_bucket_error(values in proptest::collection::vec(proptest::prop_oneof![0u64..5_000_000_000, proptest::prelude::any::<u64>()], 1..400)) {
        let mut h = Histogram::default();
        for &v in &values {
            h.record(v);
        }
        let mut sorted = values.clone();
        sorted.sort_unstable();
        for q in [0.5, 0.95, 0.99, 1.0] {
            let est = h.quantile(q).unwrap();
            let ex = exact(&sorted, q);
            prop_assert!(est.abs_diff(ex) * 16 <= ex, "q {}: estimate {} exact {}", q, est, ex);
        }
        prop_assert_eq!(h.min(), sorted.first().copied());
        prop_assert_eq!(h.max(), sorted.last().copied());
        let mean = values.iter().map(|&v| v as f64).sum::<f64>() / values.len() as f64;
        prop_assert!((h.mean().unwrap() - mean).abs() <= mean * 1e-9 + 1e-9);
    }
}

#[test]
fn replay_runs_recorded_events_and_names_bad_ones() {
    let events = r#"[["start","grep",{"tool_call_id":"a","input":"x"},3,0],["end",1,"success",9,null,40],
        ["start","grep",{"tool_call_id":"b","input":"y"},3,100],["end",1,"success",0,null,120],
        ["end",2,"failed",0,"no match",150],["start","slow",{"tool_call_id":"c"},0,0],["expire",10000001]]"#;
    let r = replay_json("", events).unwrap();
    let grep = r.export.tools.iter().find(|m| m.tool == "grep").unwrap();
    assert_eq!((grep.count, grep.successes, grep.errors), (2, 1, 1));
    assert_eq!(r.export.recent.len(), 3);
    assert_eq!(r.interrupted_results.iter().map(|x| x.tool_call_id.as_str()).collect::<Vec<_>>(), ["c"]);
    assert_eq!(r.event_errors.len(), 1);
    assert_eq!((r.event_errors[0].0, r.event_errors[0].1.as_str()), (3, "invalid_argument"));
    for bad in
        [r#"{}"#, r#"[5]"#, r#"[["stop"]]"#, r#"[["start","t",{},"x",0]]"#, r#"[["end",1,"won",0,null,0]]"#, "[["]
    {
        assert_eq!(replay_json("", bad).unwrap_err().kind(), ErrorKind::InvalidJson, "{bad}");
    }
    assert_eq!(replay_json(r#"{"ring_size":0}"#, "[]").unwrap_err().kind(), ErrorKind::InvalidArgument);
}

#[test]
fn usage_categories_and_metadata_are_summed_per_tool_and_capped() {
    let t = tracer(16);
    let end = |tokens: (u64, u64), cat: Option<&str>, meta: &[(&str, serde_json::Value)]| SpanEnd {
        input_tokens: Some(tokens.0),
        output_tokens: Some(tokens.1),
        error_category: cat.map(str::to_owned),
        metadata: meta.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect(),
        ..SpanEnd::default()
    };
    let a = t.start("summarize", info("writer", "c1"), 0, 0).unwrap();
    t.end_with(a, Outcome::Success, end((1200, 300), None, &[("model", "gpt-4o-mini".into())]), 10).unwrap();
    let b = t.start("summarize", info("writer", "c2"), 0, 20).unwrap();
    t.end_with(b, Outcome::Failed, end((800, 0), Some("rate_limited"), &[]), 30).unwrap();
    let c = t.start("search", info("writer", "c3"), 0, 40).unwrap();
    t.end_with(c, Outcome::Failed, end((0, 0), Some("rate_limited"), &[]), 50).unwrap();
    let d = t.start("search", info("writer", "c4"), 0, 60).unwrap();
    t.end_with(d, Outcome::Failed, end((0, 0), Some("timeout"), &[]), 70).unwrap();
    let x = t.export(100);
    let s = x.tools.iter().find(|m| m.tool == "summarize").unwrap();
    assert_eq!((s.input_tokens, s.output_tokens), (2000, 300));
    assert_eq!(s.error_categories.get("rate_limited"), Some(&1));
    assert_eq!(
        x.error_categories.iter().map(|(k, v)| (k.as_str(), *v)).collect::<Vec<_>>(),
        [("rate_limited", 2), ("timeout", 1)]
    );
    assert_eq!(x.recent[0].metadata.get("model"), Some(&serde_json::Value::from("gpt-4o-mini")));
    assert_eq!(x.recent[0].input_tokens, Some(1200));
    // Caps: too many keys, a long key or value, a nested value, a bad category;
    // the span stays open after a refusal and can still be ended.
    let e = t.start("search", SpanInfo::default(), 0, 80).unwrap();
    let many: Vec<(String, serde_json::Value)> = (0..=MAX_METADATA_KEYS).map(|i| (format!("k{i}"), 1.into())).collect();
    let bad = [
        (SpanEnd { metadata: many.into_iter().collect(), ..SpanEnd::default() }, ErrorKind::LimitExceeded),
        (end((0, 0), None, &[(&"k".repeat(MAX_METADATA_KEY_BYTES + 1), 1.into())]), ErrorKind::LimitExceeded),
        (end((0, 0), None, &[("k", "v".repeat(MAX_METADATA_VALUE_BYTES + 1).into())]), ErrorKind::LimitExceeded),
        (end((0, 0), None, &[("k", serde_json::json!({"a": 1}))]), ErrorKind::InvalidArgument),
        (end((0, 0), None, &[("", 1.into())]), ErrorKind::InvalidArgument),
        (end((0, 0), Some("Rate Limited"), &[]), ErrorKind::InvalidArgument),
    ];
    for (b, kind) in bad {
        assert_eq!(t.end_with(e, Outcome::Failed, b, 90).unwrap_err().kind(), kind);
    }
    t.end_with(e, Outcome::Success, SpanEnd::default(), 95).unwrap();
    // A tool's distinct categories are bounded.
    for i in 0..MAX_ERROR_CATEGORIES {
        let id = t.start("flaky", SpanInfo::default(), 0, 0).unwrap();
        t.end_with(id, Outcome::Failed, end((0, 0), Some(&format!("c{i}")), &[]), 1).unwrap();
    }
    let id = t.start("flaky", SpanInfo::default(), 0, 0).unwrap();
    let over = t.end_with(id, Outcome::Failed, end((0, 0), Some("one_more"), &[]), 1);
    assert_eq!(over.unwrap_err().kind(), ErrorKind::LimitExceeded);
    t.end_with(id, Outcome::Failed, end((0, 0), Some("c0"), &[]), 1).unwrap();
    // JSON: unknown fields are refused.
    assert!(serde_json::from_str::<SpanEnd>(r#"{"tokens": 5}"#).is_err());
}

/// The overdue shape every front end returns (C, Node, uniffi, Python).
#[test]
fn overdue_report_has_one_shape() {
    let t = tracer(4);
    t.start("fast", info("coder", "call_a"), 0, 0).unwrap();
    t.start("fast", SpanInfo::default(), 0, 0).unwrap();
    let r = Overdue::of(t.overdue(u64::MAX));
    assert_eq!((r.overdue.len(), r.interrupted_results.len()), (2, 1));
    let v = serde_json::to_value(&r).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["overdue", "interrupted_results"]);
    assert_eq!(v["interrupted_results"][0]["tool_call_id"], "call_a");
    let empty = serde_json::to_string(&Overdue::of(Vec::new())).unwrap();
    assert_eq!(empty, r#"{"overdue":[],"interrupted_results":[]}"#);
}

// ---- issue 34: excerpts, lookup by id, error counts ---------------------------

fn ended(t: &Tracer, tool: &str, input: Option<&str>, outcome: Outcome, end: SpanEnd, at: u64) -> u64 {
    let info = SpanInfo { input: input.map(str::to_owned), ..SpanInfo::default() };
    let id = t.start(tool, info, 0, at).unwrap();
    t.end_with(id, outcome, end, at + 1).unwrap();
    id
}

#[test]
fn records_keep_bounded_input_and_output_excerpts() {
    let t = tracer(8);
    let out = SpanEnd { output: Some(r#"{"hits":3}"#.into()), ..SpanEnd::default() };
    let id = ended(&t, "search", Some(r#"{"q":"weather"}"#), Outcome::Success, out, 0);
    let r = t.span(id).unwrap();
    assert_eq!(
        (r.input_excerpt.as_deref(), r.output_excerpt.as_deref()),
        (Some(r#"{"q":"weather"}"#), Some(r#"{"hits":3}"#))
    );
    // Huge: a 1 MiB input and output keep DEFAULT_EXCERPT_BYTES each.
    let huge = "é".repeat(512 * 1024);
    let id = ended(
        &t,
        "search",
        Some(&huge),
        Outcome::Success,
        SpanEnd { output: Some(huge.clone()), ..SpanEnd::default() },
        10,
    );
    let r = t.span(id).unwrap();
    for e in [r.input_excerpt.unwrap(), r.output_excerpt.unwrap()] {
        assert!(e.len() <= DEFAULT_EXCERPT_BYTES && e.len() > DEFAULT_EXCERPT_BYTES - 4, "{}", e.len());
        assert!(e.ends_with('…') && e.trim_end_matches('…').chars().all(|c| c == 'é'));
    }
    // Deep: a deeply nested JSON input is text, never parsed; kept cut.
    let deep = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
    let id = ended(&t, "search", Some(&deep), Outcome::Success, SpanEnd::default(), 20);
    assert_eq!(t.span(id).unwrap().input_excerpt.unwrap().len(), DEFAULT_EXCERPT_BYTES);
    // Over 64 MiB is refused, not cut.
    let over = "x".repeat(crate::limits::MAX_JSON_BYTES + 1);
    let e = t.start("search", SpanInfo { input: Some(over.clone()), ..SpanInfo::default() }, 0, 0).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded);
    let id = t.start("search", SpanInfo::default(), 0, 0).unwrap();
    let e = t.end_with(id, Outcome::Success, SpanEnd { output: Some(over), ..SpanEnd::default() }, 1).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded);
    // excerpt_bytes 0 keeps none; caps are named and checked.
    let none = Tracer::new(TracerConfig { excerpt_bytes: 0, ..TracerConfig::default() }).unwrap();
    let id =
        ended(&none, "s", Some("abc"), Outcome::Success, SpanEnd { output: Some("x".into()), ..SpanEnd::default() }, 0);
    let r = none.span(id).unwrap();
    assert_eq!((r.input_excerpt, r.output_excerpt, r.input_hash.is_some()), (None, None, true));
    let small = Tracer::new(TracerConfig { excerpt_bytes: 5, ..TracerConfig::default() }).unwrap();
    let id = ended(&small, "s", Some("abcdefgh"), Outcome::Success, SpanEnd::default(), 0);
    assert_eq!(small.span(id).unwrap().input_excerpt.as_deref(), Some("ab…"));
    let over_cap = TracerConfig { excerpt_bytes: MAX_SPAN_EXCERPT_BYTES + 1, ..TracerConfig::default() };
    assert_eq!(Tracer::new(over_cap).unwrap_err().kind(), ErrorKind::LimitExceeded);
    let too_much = TracerConfig { ring_size: MAX_TRACE_RING, excerpt_bytes: 1024, ..TracerConfig::default() };
    assert_eq!(Tracer::new(too_much).unwrap_err().kind(), ErrorKind::LimitExceeded);
    assert!(Tracer::new(TracerConfig { ring_size: MAX_TRACE_RING, ..TracerConfig::default() }).is_ok());
    // Unknown config fields stay refused.
    assert_eq!(Tracer::from_json(r#"{"excerpt":1}"#).unwrap_err().kind(), ErrorKind::InvalidJson);
}

#[test]
fn a_finished_span_is_found_by_id_while_in_the_ring() {
    let t = tracer(2);
    let open = t.start("a", SpanInfo::default(), 0, 0).unwrap();
    assert_eq!(t.span(open), None, "open spans have no record yet");
    let a = ended(&t, "a", None, Outcome::Success, SpanEnd::default(), 0);
    assert_eq!(t.span(a).unwrap().span_id, a);
    // Repeats fold: the first and the last id find the record; one between does not.
    let first = ended(&t, "r", Some("same"), Outcome::Failed, SpanEnd::default(), 10);
    let middle = ended(&t, "r", Some("same"), Outcome::Failed, SpanEnd::default(), 20);
    let last = ended(&t, "r", Some("same"), Outcome::Failed, SpanEnd::default(), 30);
    let r = t.span(last).unwrap();
    assert_eq!((r.span_id, r.last_span_id, r.count), (first, last, 3));
    assert_eq!(t.span(first), Some(r));
    assert_eq!(t.span(middle), None);
    // Evicted: the ring holds 2 records; a third pushes `a` out.
    assert!(t.span(a).is_some());
    let b = ended(&t, "b", None, Outcome::Success, SpanEnd::default(), 40);
    assert_eq!((t.span(a), t.span(b).map(|r| r.span_id)), (None, Some(b)));
    assert_eq!(t.span(0), None);
    assert_eq!(t.span(u64::MAX), None);
    // The index stays at most 2 entries per record however many spans end.
    for i in 0..1000 {
        ended(&t, "b", Some(&i.to_string()), Outcome::Success, SpanEnd::default(), 100 + i);
    }
    assert!(t.state.lock().by_id.len() <= 4);
    // collapse: false gives every span its record.
    let every = Tracer::new(TracerConfig { collapse: false, ..TracerConfig::default() }).unwrap();
    let ids: Vec<u64> =
        (0..3).map(|i| ended(&every, "r", Some("same"), Outcome::Failed, SpanEnd::default(), i)).collect();
    assert!(ids.iter().all(|&id| every.span(id).map(|r| r.span_id) == Some(id)));
}

#[test]
fn every_failure_is_counted_by_category() {
    let t = tracer(16);
    let fail = |e: &str| SpanEnd { error: Some(e.into()), ..SpanEnd::default() };
    ended(&t, "db", None, Outcome::Failed, fail("redis.exceptions.ResponseError: WRONGTYPE"), 0);
    ended(&t, "db", None, Outcome::Failed, fail("KeyError: 'path'"), 10);
    ended(&t, "db", None, Outcome::Failed, SpanEnd::default(), 20);
    ended(&t, "db", None, Outcome::Failed, fail("Rate limit exceeded"), 30);
    ended(&t, "db", None, Outcome::Timeout, SpanEnd::default(), 40);
    ended(&t, "db", None, Outcome::Cancelled, SpanEnd::default(), 50);
    ended(&t, "db", None, Outcome::Success, SpanEnd::default(), 60);
    // The host's own category wins.
    ended(&t, "db", None, Outcome::Failed, SpanEnd { error_category: Some("quota".into()), ..fail("KeyError") }, 70);
    let x = t.export(100);
    let counts: Vec<(&str, u64)> = x.error_categories.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(counts, [("quota", 1), ("rate_limited", 1), ("state", 1), ("timeout", 1), ("tool_failed", 2)]);
    assert_eq!(x.tools[0].error_categories, x.error_categories);
    assert_eq!(x.recent[0].error_category.as_deref(), Some("state"));
    assert_eq!(x.recent[5].error_category, None, "cancelled is not an error");
}

/// Issue 34: with `span_finished_events`, every span that ends (a plain end,
/// a fold into the previous record, an expiry) sends its own record, before
/// the fold's `span_repeated`; without it, or without an observer, nothing.
#[test]
fn span_finished_reports_every_ended_span_when_asked() {
    use crate::events::{Event, Observer};
    use std::sync::{Arc, Mutex};
    let seen: Arc<Mutex<Vec<Event>>> = Arc::default();
    let sink = seen.clone();
    let observer = Observer::new(move |e| sink.lock().unwrap().push(e.clone()));

    let quiet = tracer(8);
    quiet.set_observer(observer.clone());
    let id = quiet.start("grep", SpanInfo::default(), 0, 0).unwrap();
    quiet.end(id, Outcome::Success, 0, None, 5).unwrap();
    assert!(seen.lock().unwrap().is_empty(), "off by default");

    let t = Tracer::new(TracerConfig {
        span_finished_events: true,
        timeouts: [("slow".to_string(), 1)].into(),
        ..TracerConfig::default()
    })
    .unwrap();
    t.set_observer(observer);
    let input = || SpanInfo { input: Some("same".into()), ..info("fixer", "c1") };
    let a = t.start("shell", input(), 0, 0).unwrap();
    t.end(a, Outcome::Success, 3, None, 40).unwrap();
    let b = t.start("shell", input(), 0, 100).unwrap();
    t.end(b, Outcome::Success, 3, None, 140).unwrap();
    let c = t.start("fetch", SpanInfo::default(), 0, 200).unwrap();
    t.end(c, Outcome::Failed, 0, Some("exit status 2"), 260).unwrap();
    let s = t.start("slow", SpanInfo::default(), 0, 300).unwrap();
    t.expire(10_000);
    let kinds: Vec<&str> = seen.lock().unwrap().iter().map(|e| e.kind().name()).collect();
    assert_eq!(
        kinds,
        ["span_finished", "span_finished", "span_repeated", "span_finished", "span_overdue", "span_finished"]
    );
    let records: Vec<SpanRecord> = seen
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            Event::SpanFinished(r) => Some(r.as_ref().clone()),
            _ => None,
        })
        .collect();
    assert_eq!(records.iter().map(|r| r.span_id).collect::<Vec<_>>(), [a, b, c, s]);
    assert!(records.iter().all(|r| r.count == 1 && r.last_span_id == r.span_id));
    assert_eq!((records[1].duration_us, records[1].agent_id.as_deref()), (40, Some("fixer")));
    assert_eq!((records[2].outcome, records[2].error.as_deref()), (Outcome::Failed, Some("exit status 2")));
    assert_eq!(records[2].error_category.as_deref(), Some("tool_failed"));
    assert_eq!((records[3].outcome, records[3].error_category.as_deref()), (Outcome::Timeout, Some("timeout")));
    assert!(Event::SpanFinished(Box::new(records[0].clone()))
        .to_json()
        .starts_with(r#"{"kind":"span_finished","span_id":"#));
}

#[test]
fn failures_are_counted_per_agent_and_workflow() {
    let t = tracer(8);
    let span = |agent: &str, wf: Option<&str>| SpanInfo {
        agent_id: Some(agent.into()),
        workflow_id: wf.map(str::to_owned),
        ..SpanInfo::default()
    };
    let a = t.start("search", span("narrator", Some("wf-1")), 0, 0).unwrap();
    let b = t.start("search", span("narrator", Some("wf-2")), 0, 0).unwrap();
    let c = t.start("search", span("critic", Some("wf-1")), 0, 0).unwrap();
    let d = t.start("search", span("critic", None), 0, 0).unwrap();
    t.end(a, Outcome::Failed, 0, Some("tool failed"), 10).unwrap();
    t.end(b, Outcome::Timeout, 0, None, 10).unwrap();
    t.end(c, Outcome::Success, 0, None, 10).unwrap();
    t.end(d, Outcome::Cancelled, 0, None, 10).unwrap();
    let n = t.failure_counts();
    assert_eq!(n.by_agent.get("narrator"), Some(&2));
    assert_eq!(n.by_agent.get("critic"), None);
    assert_eq!((n.by_workflow.get("wf-1"), n.by_workflow.get("wf-2")), (Some(&1), Some(&1)));
    let v = serde_json::to_value(t.export(20)).unwrap();
    assert_eq!(v["failure_counts"]["by_agent"]["narrator"], 2);
}
