//! Tool telemetry: spans, per-tool metrics, deadlines, bounded memory.
//!
//! A host starts a span when an agent calls a tool and ends it when the tool
//! returns (`success`, `failed`, `timeout`, `cancelled`). The [`Tracer`]
//! keeps, per tool, counts and a fixed-size latency histogram (min, max,
//! mean, p50, p95, p99 within 6.25%), and a ring of the most recent finished
//! spans, one record per execution. Only true repeats collapse into one
//! record with a count: consecutive spans of the same tool, agent, workflow,
//! outcome and error that are the same call (same `tool_call_id`) or the
//! same input (same `input`, kept as a 64-bit fingerprint). An agent stuck
//! re-running one failing command shows up as one line with `count: 40`
//! instead of flushing every other record out of the ring, while three
//! different calls stay three records. `collapse: false` keeps every
//! execution. Metrics always count every execution.
//!
//! A record keeps bounded excerpts of what went in and came out: the first
//! `excerpt_bytes` (default [`DEFAULT_EXCERPT_BYTES`], at most
//! [`MAX_SPAN_EXCERPT_BYTES`]) of the span's `input` and of its end's
//! `output`, cut at a character boundary and marked with `…`; the whole text
//! is never kept (64 MiB is the most accepted). [`Tracer::span`] finds a
//! finished span's record by its id while the record is in the ring (the
//! first and the last span folded into a record are found; the repeats in
//! between are counted, not kept). A span that failed without a category
//! from the host is given one ([`crate::recovery::tool_failure_category`]
//! over its error text, `timeout` for a timeout), so the per-category counts
//! in the metrics and the export (document 000's `error_counts`) cover every
//! failure; the export's `failure_counts` also counts failed and timed-out
//! spans per agent and per workflow ([`crate::recovery::FailureCounts`]).
//!
//! Every tool has a deadline (default 10 s, per tool or per span
//! configurable). [`Tracer::overdue`] lists spans past it; [`Tracer::expire`]
//! also ends them as `timeout`; [`interrupted_results`] turns the ones that
//! carry a `tool_call_id` into the synthetic tool results the window's repair
//! inserts, with the same text, so the conversation stays valid.
//!
//! Memory is bounded: open spans, tools and the ring all have limits
//! ([`crate::limits`]). The tracer is `Send + Sync` with `&self` methods (one
//! mutex; a start/end pair costs well under a microsecond, see
//! docs/benchmarks.md). Time is passed in by the caller in microseconds;
//! [`now_us`] is the only clock read.

mod histogram;
mod replay;
mod usage;

pub use replay::{replay, replay_json, Replay};
pub use usage::{SpanEnd, MAX_ERROR_CATEGORIES, MAX_METADATA_KEYS, MAX_METADATA_KEY_BYTES, MAX_METADATA_VALUE_BYTES};

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::events::{Event, Observer, ObserverSlot, SpanRepeat};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::limits::{
    self, MAX_KEY_BYTES, MAX_OPEN_SPANS, MAX_SPAN_ERROR_BYTES, MAX_SPAN_EXCERPT_BYTES, MAX_TRACE_EXCERPT_BYTES,
    MAX_TRACE_RING, MAX_TRACE_TOOLS,
};
use crate::recovery::FailureCounts;
use crate::window::DEFAULT_SYNTHETIC_RESULT;
use crate::{Error, ErrorKind, Result};
use histogram::Histogram;

/// Microseconds since the Unix epoch, from the system clock: the convenience
/// for callers without a clock of their own.
pub fn now_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// The default per-tool deadline.
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;

/// The default number of recent span records kept.
pub const DEFAULT_RING_SIZE: usize = 1024;

/// The default bytes of a span's input and of its output kept on its record.
pub const DEFAULT_EXCERPT_BYTES: usize = 512;

/// Tracer settings; every field optional in JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct TracerConfig {
    /// Recent span records kept (1 ..= [`MAX_TRACE_RING`]).
    pub ring_size: usize,
    /// Deadline of a tool without its own, in ms.
    pub default_timeout_ms: u64,
    /// Per-tool deadlines, in ms.
    pub timeouts: BTreeMap<String, u64>,
    /// Whether true repeats fold into one ring record (default true).
    pub collapse: bool,
    /// Bytes of a span's `input` and of its `output` kept on its record
    /// (0 ..= [`MAX_SPAN_EXCERPT_BYTES`]; 0 keeps none; default
    /// [`DEFAULT_EXCERPT_BYTES`]). `ring_size` x 2 x `excerpt_bytes` may not
    /// pass [`MAX_TRACE_EXCERPT_BYTES`].
    pub excerpt_bytes: usize,
    /// Emit a `span_finished` event, the execution's record, for every span
    /// that ends (success, failed, timeout, cancelled; default false). Off by
    /// default because it is one event per tool call: a host that logs every
    /// call turns it on, one that only wants anomalies (repeats, overdue
    /// spans) keeps the quieter default.
    pub span_finished_events: bool,
}

impl Default for TracerConfig {
    fn default() -> Self {
        TracerConfig {
            ring_size: DEFAULT_RING_SIZE,
            default_timeout_ms: DEFAULT_TIMEOUT_MS,
            timeouts: BTreeMap::new(),
            collapse: true,
            excerpt_bytes: DEFAULT_EXCERPT_BYTES,
            span_finished_events: false,
        }
    }
}

/// Optional identifiers and settings of a span (JSON in the C ABI).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct SpanInfo {
    /// The agent that called the tool.
    pub agent_id: Option<String>,
    /// The workflow (run, session) the call belongs to.
    pub workflow_id: Option<String>,
    /// The model's tool-call id, so an overdue call can be answered.
    pub tool_call_id: Option<String>,
    /// This span's deadline, overriding the tool's.
    pub timeout_ms: Option<u64>,
    /// The call's input (its arguments, as the host has them, up to 64 MiB):
    /// a 64-bit fingerprint recognises repeats of the same input, and the
    /// first `excerpt_bytes` are kept as the record's `input_excerpt`.
    pub input: Option<String>,
}

#[derive(Debug, Clone)]
struct OpenSpan {
    tool: Arc<str>,
    info: SpanInfo,
    input_hash: Option<u64>,
    input_excerpt: Option<String>,
    started_us: u64,
    input_bytes: u64,
    timeout_ms: u64,
    /// Whether `span_overdue` was emitted for it (once per span).
    reported: bool,
}

impl SpanRecord {
    /// A true repeat: the same call (tool-call id) or the same input, ending
    /// the same way. Spans that carry neither are never repeats: nothing says
    /// they did the same thing.
    fn repeats(&self, other: &SpanRecord) -> bool {
        let same = |a: &Option<String>, b: &Option<String>| matches!((a, b), (Some(x), Some(y)) if x == y);
        self.tool == other.tool
            && self.agent_id == other.agent_id
            && self.workflow_id == other.workflow_id
            && self.outcome == other.outcome
            && self.error == other.error
            && (same(&self.tool_call_id, &other.tool_call_id) || same(&self.input_hash, &other.input_hash))
    }
}

/// FNV-1a, 64 bits: stable across runs and platforms, so an exported
/// fingerprint means the same thing tomorrow.
fn fingerprint(input: &str) -> u64 {
    input.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

pub use crate::events::payload::{Outcome, OverdueSpan, SpanRecord};

/// A synthetic tool result for an interrupted call: what the window's repair
/// inserts for an unanswered call, with the same text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct InterruptedResult {
    /// The call it answers.
    pub tool_call_id: String,
    /// The tool that was called.
    pub tool: String,
    /// The result text: the repair's default ([`DEFAULT_SYNTHETIC_RESULT`]).
    pub content: String,
    /// Why, for logs: "deadline of N ms exceeded".
    pub reason: String,
}

/// The answer of `turnfit_tracer_overdue` and `turnfit_tracer_expire`: the
/// spans past their deadline and the synthetic results that answer them.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Overdue {
    /// Spans past their deadline.
    pub overdue: Vec<OverdueSpan>,
    /// [`interrupted_results`] of those spans.
    pub interrupted_results: Vec<InterruptedResult>,
}

impl Overdue {
    /// The spans and their interrupted results.
    pub fn of(overdue: Vec<OverdueSpan>) -> Overdue {
        let interrupted_results = interrupted_results(&overdue);
        Overdue { overdue, interrupted_results }
    }
}

/// Maps overdue spans that carry a `tool_call_id` to synthetic results
/// (spans without one are skipped: there is nothing in the conversation to
/// answer). Pass `content` to [`crate::window::repair`] as its synthetic
/// text, or append the results yourself.
pub fn interrupted_results(overdue: &[OverdueSpan]) -> Vec<InterruptedResult> {
    overdue
        .iter()
        .filter_map(|s| {
            s.tool_call_id.as_ref().map(|id| InterruptedResult {
                tool_call_id: id.clone(),
                tool: s.tool.clone(),
                content: DEFAULT_SYNTHETIC_RESULT.to_owned(),
                reason: format!("deadline of {} ms exceeded", s.timeout_ms),
            })
        })
        .collect()
}

/// Latency figures in µs (absent when nothing ended yet).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Durations {
    /// Fastest.
    pub min: u64,
    /// Slowest.
    pub max: u64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Median (within 6.25%).
    pub p50: u64,
    /// 95th percentile (within 6.25%).
    pub p95: u64,
    /// 99th percentile (within 6.25%).
    pub p99: u64,
}

/// One tool's metrics.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ToolMetrics {
    /// Tool name.
    pub tool: String,
    /// Spans ended.
    pub count: u64,
    /// Ended with `success`.
    pub successes: u64,
    /// Ended with `failed`.
    pub errors: u64,
    /// Ended with `timeout`.
    pub timeouts: u64,
    /// Ended with `cancelled`.
    pub cancelled: u64,
    /// Started and not yet ended.
    pub in_flight: u64,
    /// Sum of input sizes, bytes.
    pub input_bytes: u64,
    /// Sum of output sizes, bytes.
    pub output_bytes: u64,
    /// Sum of reported prompt tokens.
    pub input_tokens: u64,
    /// Sum of reported completion tokens.
    pub output_tokens: u64,
    /// Spans ended with each reported error category.
    pub error_categories: BTreeMap<String, u64>,
    /// Latency of ended spans.
    pub duration_us: Option<Durations>,
}

#[derive(Debug, Default)]
struct ToolStats {
    successes: u64,
    errors: u64,
    timeouts: u64,
    cancelled: u64,
    in_flight: u64,
    input_bytes: u64,
    output_bytes: u64,
    input_tokens: u64,
    output_tokens: u64,
    error_categories: BTreeMap<String, u64>,
    hist: Histogram,
}

/// Everything a tracer knows, as JSON (docs/formats.md, "Trace export").
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TraceExport {
    /// Spans started since the tracer was made.
    pub spans_started: u64,
    /// Spans ended.
    pub spans_ended: u64,
    /// Executions folded into an earlier record as repeats.
    pub collapsed: u64,
    /// Records pushed out of the ring by newer ones.
    pub evicted: u64,
    /// The ring's capacity.
    pub ring_size: usize,
    /// Per-tool metrics, by tool name.
    pub tools: Vec<ToolMetrics>,
    /// Error categories over every tool.
    pub error_categories: BTreeMap<String, u64>,
    /// Spans still open, by id.
    pub open: Vec<OverdueSpan>,
    /// Recent finished spans, oldest first.
    pub recent: Vec<SpanRecord>,
    /// Spans ended `failed` or `timeout`, per agent and per workflow (from
    /// the spans' `agent_id` and `workflow_id`; document 000's error counts
    /// per agent and workflow).
    pub failure_counts: FailureCounts,
}

#[derive(Debug, Default)]
struct State {
    next_id: u64,
    // Fx hashing: span ids and tool names come from the host, not from an
    // attacker who could aim collisions, and SipHash would be a third of a
    // start/end pair's cost.
    open: FxHashMap<u64, OpenSpan>,
    tools: FxHashMap<Arc<str>, ToolStats>,
    ring: VecDeque<SpanRecord>,
    /// Records ever pushed into the ring: the back record's sequence number
    /// is `pushed - 1`, the front's `pushed - ring.len()`.
    pushed: u64,
    /// Span id to the sequence number of its record, for the first and the
    /// last span of each record in the ring (at most 2 x ring entries).
    by_id: FxHashMap<u64, u64>,
    started: u64,
    ended: u64,
    collapsed: u64,
    evicted: u64,
    failures: FailureCounts,
}

/// Tool-call telemetry. Thread-safe: share one tracer across every agent.
#[derive(Debug)]
pub struct Tracer {
    config: TracerConfig,
    state: Mutex<State>,
    observer: ObserverSlot,
}

fn check_id(what: &str, s: &str) -> Result<()> {
    if s.is_empty() {
        return Err(Error::invalid_argument(format!("{what} is empty")));
    }
    limits::check(what, s.len(), MAX_KEY_BYTES)
}

fn cut(text: &str) -> String {
    excerpt(text, MAX_SPAN_ERROR_BYTES)
}

/// The first `cap` bytes of `text` at most, cut at a character boundary
/// and ending with `…` when cut (caps under 3 bytes keep no marker).
fn excerpt(text: &str, cap: usize) -> String {
    if text.len() <= cap {
        return text.to_owned();
    }
    let marker = if cap >= '…'.len_utf8() { "…" } else { "" };
    let mut end = cap - marker.len();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{marker}", &text[..end])
}

impl Tracer {
    /// A tracer with `config`. Errors: `InvalidArgument` for a zero ring size
    /// or a zero timeout, `LimitExceeded` for a ring over [`MAX_TRACE_RING`]
    /// or more than [`MAX_TRACE_TOOLS`] per-tool timeouts.
    pub fn new(config: TracerConfig) -> Result<Tracer> {
        if config.ring_size == 0 {
            return Err(Error::invalid_argument("tracer ring_size must be at least 1"));
        }
        limits::check_items("tracer ring_size", config.ring_size, MAX_TRACE_RING)?;
        limits::check_items("tracer timeouts", config.timeouts.len(), MAX_TRACE_TOOLS)?;
        limits::check_items("tracer excerpt_bytes", config.excerpt_bytes, MAX_SPAN_EXCERPT_BYTES)?;
        if config.ring_size.saturating_mul(2).saturating_mul(config.excerpt_bytes) > MAX_TRACE_EXCERPT_BYTES {
            return Err(Error::new(
                ErrorKind::LimitExceeded,
                format!(
                    "tracer ring_size {} x 2 x excerpt_bytes {} is over {MAX_TRACE_EXCERPT_BYTES} bytes of excerpts; lower one",
                    config.ring_size, config.excerpt_bytes
                ),
            ));
        }
        if config.default_timeout_ms == 0 {
            return Err(Error::invalid_argument("tracer default_timeout_ms must be at least 1"));
        }
        for (tool, &ms) in &config.timeouts {
            check_id("tracer timeouts key", tool)?;
            if ms == 0 {
                return Err(Error::invalid_argument(format!("tracer timeout for '{tool}' must be at least 1 ms")));
            }
        }
        Ok(Tracer { config, state: Mutex::new(State::default()), observer: ObserverSlot::default() })
    }

    /// Parses a [`TracerConfig`] from JSON and builds the tracer.
    pub fn from_json(text: &str) -> Result<Tracer> {
        Tracer::new(crate::json::parse("tracer config", text)?)
    }

    /// Sets the observer that receives `span_repeated` and `span_overdue`
    /// events (see [`crate::events`]); it is called after the tracer's lock
    /// is released.
    pub fn set_observer(&self, observer: Observer) {
        self.observer.set(observer);
    }

    /// Hands events gathered under the lock to the observer (the lock is
    /// released by then).
    fn report(&self, events: Vec<Event>) {
        if events.is_empty() {
            return;
        }
        let observer = self.observer.get();
        for e in events {
            observer.emit(|| e);
        }
    }

    /// Whether a `span_finished` event is wanted: configured on and an
    /// observer set (otherwise the record is not even copied).
    fn wants_finished(&self) -> bool {
        self.config.span_finished_events && self.observer.get().is_set()
    }

    /// The configuration.
    pub fn config(&self) -> &TracerConfig {
        &self.config
    }

    /// The deadline of `tool` in ms.
    pub fn timeout_ms(&self, tool: &str) -> u64 {
        self.config.timeouts.get(tool).copied().unwrap_or(self.config.default_timeout_ms)
    }

    /// Starts a span for a call of `tool` at `now_us`; returns its id.
    /// Errors: `InvalidArgument` (empty tool or id, zero timeout),
    /// `LimitExceeded` (a name over [`MAX_KEY_BYTES`], more than
    /// [`MAX_OPEN_SPANS`] open spans, a tool beyond [`MAX_TRACE_TOOLS`]).
    pub fn start(&self, tool: &str, mut info: SpanInfo, input_bytes: u64, now_us: u64) -> Result<u64> {
        check_id("tool name", tool)?;
        for (what, v) in
            [("agent_id", &info.agent_id), ("workflow_id", &info.workflow_id), ("tool_call_id", &info.tool_call_id)]
        {
            if let Some(v) = v {
                check_id(what, v)?;
            }
        }
        if info.timeout_ms == Some(0) {
            return Err(Error::invalid_argument("span timeout_ms must be at least 1"));
        }
        limits::check("span input", info.input.as_ref().map_or(0, String::len), limits::MAX_JSON_BYTES)?;
        let input = info.input.take();
        let input_hash = input.as_deref().map(fingerprint);
        let input_excerpt =
            input.as_deref().filter(|_| self.config.excerpt_bytes > 0).map(|i| excerpt(i, self.config.excerpt_bytes));
        drop(input);
        let timeout_ms = info.timeout_ms.unwrap_or_else(|| self.timeout_ms(tool));
        let mut st = self.state.lock();
        if st.open.len() >= MAX_OPEN_SPANS {
            return Err(Error::new(
                ErrorKind::LimitExceeded,
                format!("tracer has {MAX_OPEN_SPANS} open spans; the limit is {MAX_OPEN_SPANS} (end or expire some)"),
            ));
        }
        let key: Arc<str> = match st.tools.get_key_value(tool) {
            Some((k, _)) => k.clone(),
            None => {
                if st.tools.len() >= MAX_TRACE_TOOLS {
                    return Err(Error::new(
                        ErrorKind::LimitExceeded,
                        format!("tracer already tracks {MAX_TRACE_TOOLS} tools; the limit is {MAX_TRACE_TOOLS}"),
                    ));
                }
                let k: Arc<str> = Arc::from(tool);
                st.tools.insert(k.clone(), ToolStats::default());
                k
            }
        };
        if let Some(stats) = st.tools.get_mut(&key) {
            stats.in_flight += 1;
        }
        st.next_id += 1;
        st.started += 1;
        let id = st.next_id;
        st.open.insert(
            id,
            OpenSpan {
                tool: key,
                info,
                input_hash,
                input_excerpt,
                started_us: now_us,
                input_bytes,
                timeout_ms,
                reported: false,
            },
        );
        Ok(id)
    }

    /// Ends span `id` at `now_us`. Errors: `InvalidArgument` when the span is
    /// not open (never started, already ended or expired).
    pub fn end(&self, id: u64, outcome: Outcome, output_bytes: u64, error: Option<&str>, now_us: u64) -> Result<()> {
        let end = SpanEnd { output_bytes, error: error.map(str::to_owned), ..SpanEnd::default() };
        self.end_with(id, outcome, end, now_us)
    }

    /// [`Tracer::end`] with token usage, an error category and metadata.
    /// Errors: as `end`, plus `InvalidArgument` / `LimitExceeded` for a
    /// [`SpanEnd`] over its caps, and `LimitExceeded` for a tool's
    /// [`MAX_ERROR_CATEGORIES`]-plus-first category (the span stays open).
    pub fn end_with(&self, id: u64, outcome: Outcome, end: SpanEnd, now_us: u64) -> Result<()> {
        end.validate()?;
        let want = self.wants_finished();
        let mut st = self.state.lock();
        let span = st.open.get(&id).ok_or_else(|| {
            Error::invalid_argument(format!("span {id} is not open (never started, already ended, or expired)"))
        })?;
        if let (Some(c), Some(stats)) = (&end.error_category, st.tools.get(&span.tool)) {
            if !stats.error_categories.contains_key(c) && stats.error_categories.len() >= MAX_ERROR_CATEGORIES {
                return Err(Error::new(
                    ErrorKind::LimitExceeded,
                    format!("tool '{}' already has {MAX_ERROR_CATEGORIES} error categories; the limit is {MAX_ERROR_CATEGORIES}", span.tool),
                ));
            }
        }
        let span = st.open.remove(&id).ok_or_else(|| Error::internal("span vanished under the lock"))?;
        let mut events = Vec::new();
        if !span.reported && is_overdue(&span, now_us) {
            events.push(Event::SpanOverdue(overdue_view(id, &span, now_us)));
        }
        let (finished, repeat) = st.finish(id, span, outcome, end, now_us, &self.config, want);
        events.extend(finished.map(|r| Event::SpanFinished(Box::new(r))));
        events.extend(repeat.map(Event::SpanRepeated));
        drop(st);
        self.report(events);
        Ok(())
    }

    /// Open spans past their deadline at `now_us`, by id.
    pub fn overdue(&self, now_us: u64) -> Vec<OverdueSpan> {
        let mut st = self.state.lock();
        let mut out = Vec::new();
        let mut fresh = Vec::new();
        for (&id, s) in st.open.iter_mut().filter(|(_, s)| is_overdue(s, now_us)) {
            let view = overdue_view(id, s, now_us);
            if !s.reported {
                s.reported = true;
                fresh.push(view.clone());
            }
            out.push(view);
        }
        drop(st);
        out.sort_by_key(|s| s.span_id);
        fresh.sort_by_key(|s| s.span_id);
        self.report(fresh.into_iter().map(Event::SpanOverdue).collect());
        out
    }

    /// Like [`Tracer::overdue`], and ends each of them as `timeout` (error
    /// "deadline of N ms exceeded").
    pub fn expire(&self, now_us: u64) -> Vec<OverdueSpan> {
        let want = self.wants_finished();
        let mut st = self.state.lock();
        let mut ids: Vec<u64> = st.open.iter().filter(|(_, s)| is_overdue(s, now_us)).map(|(&id, _)| id).collect();
        ids.sort_unstable();
        let mut out = Vec::with_capacity(ids.len());
        let mut events = Vec::new();
        for id in ids {
            if let Some(span) = st.open.remove(&id) {
                let view = overdue_view(id, &span, now_us);
                if !span.reported {
                    events.push(Event::SpanOverdue(view.clone()));
                }
                out.push(view);
                let end = SpanEnd {
                    error: Some(format!("deadline of {} ms exceeded", span.timeout_ms)),
                    ..SpanEnd::default()
                };
                let (finished, repeat) = st.finish(id, span, Outcome::Timeout, end, now_us, &self.config, want);
                events.extend(finished.map(|r| Event::SpanFinished(Box::new(r))));
                events.extend(repeat.map(Event::SpanRepeated));
            }
        }
        drop(st);
        self.report(events);
        out
    }

    /// Per-tool metrics, by tool name.
    pub fn metrics(&self) -> Vec<ToolMetrics> {
        let st = self.state.lock();
        let mut out: Vec<ToolMetrics> = st.tools.iter().map(|(tool, s)| s.metrics(tool)).collect();
        out.sort_by(|a, b| a.tool.cmp(&b.tool));
        out
    }

    /// The record of finished span `id`, while it is in the ring: the
    /// record it started, or the one it was last folded into. `None` for a
    /// span still open, never started, evicted, or a repeat folded in
    /// between (with `collapse: false` every finished span has its record).
    pub fn span(&self, id: u64) -> Option<SpanRecord> {
        let st = self.state.lock();
        let seq = *st.by_id.get(&id)?;
        let front = st.pushed - st.ring.len() as u64;
        let at = usize::try_from(seq.checked_sub(front)?).ok()?;
        st.ring.get(at).cloned()
    }

    /// Spans ended `failed` or `timeout`, per agent and per workflow.
    pub fn failure_counts(&self) -> FailureCounts {
        self.state.lock().failures.clone()
    }

    /// The recent finished spans, oldest first.
    pub fn recent(&self) -> Vec<SpanRecord> {
        self.state.lock().ring.iter().cloned().collect()
    }

    /// Everything, for JSON export; open spans are described as of `now_us`.
    pub fn export(&self, now_us: u64) -> TraceExport {
        let tools = self.metrics();
        let mut error_categories: BTreeMap<String, u64> = BTreeMap::new();
        for (c, n) in tools.iter().flat_map(|t| t.error_categories.iter()) {
            *error_categories.entry(c.clone()).or_default() += n;
        }
        let st = self.state.lock();
        let mut open: Vec<OverdueSpan> = st.open.iter().map(|(&id, s)| overdue_view(id, s, now_us)).collect();
        open.sort_by_key(|s| s.span_id);
        TraceExport {
            spans_started: st.started,
            spans_ended: st.ended,
            collapsed: st.collapsed,
            evicted: st.evicted,
            ring_size: self.config.ring_size,
            tools,
            error_categories,
            open,
            recent: st.ring.iter().cloned().collect(),
            failure_counts: st.failures.clone(),
        }
    }
}

fn is_overdue(s: &OpenSpan, now_us: u64) -> bool {
    now_us.saturating_sub(s.started_us) > s.timeout_ms.saturating_mul(1000)
}

fn overdue_view(id: u64, s: &OpenSpan, now_us: u64) -> OverdueSpan {
    OverdueSpan {
        span_id: id,
        tool: s.tool.to_string(),
        agent_id: s.info.agent_id.clone(),
        workflow_id: s.info.workflow_id.clone(),
        tool_call_id: s.info.tool_call_id.clone(),
        started_us: s.started_us,
        elapsed_us: now_us.saturating_sub(s.started_us),
        timeout_ms: s.timeout_ms,
    }
}

impl State {
    /// Records an ended span; a true repeat of the last record is folded into
    /// it and returned for the `span_repeated` event.
    /// Records a finished span: metrics, then the ring (folded into the
    /// last record when a true repeat). Returns the execution's own record
    /// when `want_record` (for `span_finished`), and the fold, if any.
    #[allow(clippy::too_many_arguments)]
    fn finish(
        &mut self,
        id: u64,
        span: OpenSpan,
        outcome: Outcome,
        end: SpanEnd,
        now_us: u64,
        config: &TracerConfig,
        want_record: bool,
    ) -> (Option<SpanRecord>, Option<SpanRepeat>) {
        let output_bytes = end.output_bytes;
        let error = end.error.as_deref().map(cut);
        let output_excerpt =
            end.output.as_deref().filter(|_| config.excerpt_bytes > 0).map(|o| excerpt(o, config.excerpt_bytes));
        let error_category = end.error_category.or_else(|| match outcome {
            Outcome::Failed => {
                Some(crate::recovery::tool_failure_category(end.error.as_deref().unwrap_or("")).as_str().to_owned())
            }
            Outcome::Timeout => Some(crate::recovery::Category::Timeout.as_str().to_owned()),
            Outcome::Success | Outcome::Cancelled => None,
        });
        let duration = now_us.saturating_sub(span.started_us);
        self.ended += 1;
        if matches!(outcome, Outcome::Failed | Outcome::Timeout) {
            self.failures.add(span.info.agent_id.as_deref(), span.info.workflow_id.as_deref());
        }
        if let Some(stats) = self.tools.get_mut(&span.tool) {
            stats.in_flight = stats.in_flight.saturating_sub(1);
            match outcome {
                Outcome::Success => stats.successes += 1,
                Outcome::Failed => stats.errors += 1,
                Outcome::Timeout => stats.timeouts += 1,
                Outcome::Cancelled => stats.cancelled += 1,
            }
            stats.input_bytes = stats.input_bytes.saturating_add(span.input_bytes);
            stats.output_bytes = stats.output_bytes.saturating_add(output_bytes);
            stats.input_tokens = stats.input_tokens.saturating_add(end.input_tokens.unwrap_or(0));
            stats.output_tokens = stats.output_tokens.saturating_add(end.output_tokens.unwrap_or(0));
            if let Some(c) = &error_category {
                *stats.error_categories.entry(c.clone()).or_default() += 1;
            }
            stats.hist.record(duration);
        }
        let record = SpanRecord {
            span_id: id,
            tool: span.tool.to_string(),
            agent_id: span.info.agent_id,
            workflow_id: span.info.workflow_id,
            tool_call_id: span.info.tool_call_id,
            input_hash: span.input_hash.map(|h| format!("{h:016x}")),
            input_excerpt: span.input_excerpt,
            output_excerpt,
            outcome,
            error,
            started_us: span.started_us,
            duration_us: duration,
            input_bytes: span.input_bytes,
            output_bytes,
            input_tokens: end.input_tokens,
            output_tokens: end.output_tokens,
            error_category,
            metadata: end.metadata,
            count: 1,
            last_span_id: id,
            last_ended_us: now_us,
        };
        let own = want_record.then(|| record.clone());
        if let Some(last) = self.ring.back_mut().filter(|_| config.collapse) {
            if last.repeats(&record) {
                last.count += 1;
                last.last_ended_us = now_us;
                if last.last_span_id != last.span_id {
                    self.by_id.remove(&last.last_span_id);
                }
                last.last_span_id = id;
                self.by_id.insert(id, self.pushed - 1);
                self.collapsed += 1;
                let repeat =
                    SpanRepeat { span_id: id, first_span_id: last.span_id, tool: last.tool.clone(), count: last.count };
                return (own, Some(repeat));
            }
        }
        if self.ring.len() >= config.ring_size {
            if let Some(old) = self.ring.pop_front() {
                self.by_id.remove(&old.span_id);
                self.by_id.remove(&old.last_span_id);
            }
            self.evicted += 1;
        }
        self.by_id.insert(id, self.pushed);
        self.pushed += 1;
        self.ring.push_back(record);
        (own, None)
    }
}

impl ToolStats {
    fn metrics(&self, tool: &str) -> ToolMetrics {
        let h = &self.hist;
        let duration_us = match (h.min(), h.max(), h.mean(), h.quantile(0.5), h.quantile(0.95), h.quantile(0.99)) {
            (Some(min), Some(max), Some(mean), Some(p50), Some(p95), Some(p99)) => {
                Some(Durations { min, max, mean, p50, p95, p99 })
            }
            _ => None,
        };
        ToolMetrics {
            tool: tool.to_owned(),
            count: h.count(),
            successes: self.successes,
            errors: self.errors,
            timeouts: self.timeouts,
            cancelled: self.cancelled,
            in_flight: self.in_flight,
            input_bytes: self.input_bytes,
            output_bytes: self.output_bytes,
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            error_categories: self.error_categories.clone(),
            duration_us,
        }
    }
}

#[cfg(test)]
mod tests;
