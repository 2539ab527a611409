//! Agent primitives: skills, handoffs, error classification and backoff,
//! circuit breakers, call stacks, tool telemetry and tool sets. Structured
//! values cross as JSON text; the facade parses them into plain objects.

use std::path::Path;
use std::sync::Arc;

use napi::bindgen_prelude::{AbortSignal, AsyncTask};
use napi::{Env, Task};
use napi_derive::napi;

use turnfit::callstack::CallStack;
use turnfit::handoff::{filter_json, Handoff, RenderOptions};
use turnfit::recovery::{classify_json, BackoffPolicy, BreakerConfig, Breakers, ErrorContext};
use turnfit::skills::{IndexOptions, SkillSet};
use turnfit::trace::{Outcome, Overdue, OverdueSpan, SpanInfo, Tracer};

use crate::error::{guard, json, not_counting, to_u64, to_usize};
use crate::registry::registry;

use turnfit::frontend::parse_options as parse_opt;

// ---------------------------------------------------------------- skills

/// The skills of one folder; bodies load lazily and are cached.
#[napi]
pub struct NativeSkillSet {
    inner: Arc<SkillSet>,
}

fn open_skills(root: &str, options: Option<&str>) -> turnfit::Result<SkillSet> {
    SkillSet::open_json_in(registry(), Path::new(root), options, &turnfit::events::Observer::none())
}

#[napi]
impl NativeSkillSet {
    /// `options`: the open options as JSON (docs/formats.md) or null.
    #[napi(factory)]
    pub fn open(root: String, options: Option<String>) -> napi::Result<Self> {
        guard("SkillSet.open", || Ok(NativeSkillSet { inner: Arc::new(open_skills(&root, options.as_deref())?) }))
    }

    #[napi(ts_return_type = "Promise<NativeSkillSet>")]
    pub fn open_async(
        root: String,
        options: Option<String>,
        signal: Option<AbortSignal>,
    ) -> napi::Result<AsyncTask<OpenSkillsTask>> {
        not_counting("SkillSet.openAsync")?;
        Ok(AsyncTask::with_optional_signal(OpenSkillsTask { root, options }, signal))
    }

    #[napi]
    pub fn list_json(&self) -> napi::Result<String> {
        guard("list", || json(&self.inner.listing()))
    }

    #[napi]
    pub fn body_json(&self, name: String) -> napi::Result<String> {
        guard("body", || json(&*self.inner.body(&name)?))
    }

    #[napi]
    pub fn render_index_json(&self, options: Option<String>) -> napi::Result<String> {
        guard("renderIndex", || {
            let o: IndexOptions = parse_opt("options", options.as_deref())?;
            json(&self.inner.render_index(&o)?)
        })
    }
}

/// `SkillSet.openAsync` on the libuv pool.
pub struct OpenSkillsTask {
    root: String,
    options: Option<String>,
}

impl Task for OpenSkillsTask {
    type Output = SkillSet;
    type JsValue = NativeSkillSet;

    fn compute(&mut self) -> napi::Result<SkillSet> {
        guard("SkillSet.openAsync", || open_skills(&self.root, self.options.as_deref()))
    }

    fn resolve(&mut self, _env: Env, out: SkillSet) -> napi::Result<NativeSkillSet> {
        Ok(NativeSkillSet { inner: Arc::new(out) })
    }
}

// ---------------------------------------------------------------- handoff

/// The normalized handoff as JSON.
#[napi]
pub fn handoff_validate_json(handoff: String) -> napi::Result<String> {
    guard("handoff.validate", || Handoff::parse(&handoff)?.to_json())
}

#[napi]
pub fn handoff_render_json(handoff: String, options: Option<String>) -> napi::Result<String> {
    guard("handoff.render", || {
        let h = Handoff::parse(&handoff)?;
        let o: RenderOptions = parse_opt("options", options.as_deref())?;
        json(&h.render_in(registry(), &o)?)
    })
}

#[napi]
pub fn handoff_filter_json(conversation: String, options: Option<String>) -> napi::Result<String> {
    guard("handoff.filter", || json(&filter_json(&conversation, options.as_deref())?))
}

// ---------------------------------------------------------------- recovery

#[napi]
pub fn classify_error_json(request: String) -> napi::Result<String> {
    guard("classifyError", || json(&classify_json(&request)?))
}

#[napi]
pub fn backoff_json(request: String) -> napi::Result<String> {
    guard("backoff", || json(&BackoffPolicy::decide_json(&request)?))
}

/// Circuit breakers keyed by string (one per provider or tool).
/// Internally synchronized.
#[napi]
pub struct NativeBreakers {
    inner: Breakers,
}

fn now_ms(at: Option<f64>) -> u64 {
    at.map_or_else(turnfit::recovery::now_ms, to_u64)
}

#[napi]
impl NativeBreakers {
    #[napi(constructor)]
    pub fn new(config: Option<String>) -> napi::Result<Self> {
        guard("CircuitBreaker", || {
            let c: BreakerConfig = parse_opt("config", config.as_deref())?;
            Ok(NativeBreakers { inner: Breakers::new(c)? })
        })
    }

    #[napi]
    pub fn allow(&self, key: String, at_ms: Option<f64>) -> napi::Result<bool> {
        guard("allow", || self.inner.allow(&key, now_ms(at_ms)))
    }

    /// Records an outcome; returns the new state as JSON (`"open"`, ...).
    #[napi]
    pub fn record(&self, key: String, success: bool, at_ms: Option<f64>) -> napi::Result<String> {
        guard("record", || json(&self.inner.record(&key, success, now_ms(at_ms))?))
    }

    /// Records an outcome of a call made by the context's agent in its
    /// workflow (`{"agent_id", "workflow_id", "metadata"}` JSON); a failure
    /// is also counted under both ids.
    #[napi]
    pub fn record_in(&self, key: String, success: bool, at_ms: Option<f64>, context: String) -> napi::Result<String> {
        guard("record", || {
            let c = ErrorContext::from_json(&context)?;
            json(&self.inner.record_in(&key, success, now_ms(at_ms), &c)?)
        })
    }

    /// Failures per agent and per workflow, as JSON.
    #[napi]
    pub fn failure_counts_json(&self) -> napi::Result<String> {
        guard("failureCounts", || json(&self.inner.failure_counts()))
    }

    #[napi]
    pub fn snapshot_json(&self, key: String, at_ms: Option<f64>) -> napi::Result<String> {
        guard("state", || json(&self.inner.snapshot(&key, now_ms(at_ms))?))
    }
}

// ---------------------------------------------------------------- call stack

/// An immutable agent call stack: `enter` returns a new stack.
#[napi]
pub struct NativeCallStack {
    inner: CallStack,
}

#[napi]
impl NativeCallStack {
    #[napi(constructor)]
    pub fn new(max_depth: f64) -> napi::Result<Self> {
        guard("CallStack", || Ok(NativeCallStack { inner: CallStack::new(to_usize(max_depth))? }))
    }

    #[napi(factory)]
    pub fn from_json(text: String) -> napi::Result<Self> {
        guard("CallStack.fromJSON", || Ok(NativeCallStack { inner: CallStack::from_json(&text)? }))
    }

    #[napi]
    pub fn enter(&self, agent: String) -> napi::Result<NativeCallStack> {
        guard("enter", || Ok(NativeCallStack { inner: self.inner.enter(&agent)? }))
    }

    #[napi]
    pub fn parent(&self) -> NativeCallStack {
        NativeCallStack { inner: self.inner.parent() }
    }

    #[napi]
    pub fn to_json_text(&self) -> napi::Result<String> {
        guard("toJSON", || json(&self.inner.to_json_value()))
    }

    #[napi]
    pub fn contains(&self, agent: String) -> bool {
        self.inner.contains(&agent)
    }

    #[napi]
    pub fn chain(&self) -> String {
        self.inner.chain()
    }
}

// ---------------------------------------------------------------- trace

/// Tool execution spans and per-tool metrics, bounded memory.
/// Internally synchronized.
#[napi]
pub struct NativeTracer {
    inner: Tracer,
}

fn now_us(at: Option<f64>) -> u64 {
    at.map_or_else(turnfit::trace::now_us, to_u64)
}

fn overdue(spans: Vec<OverdueSpan>) -> turnfit::Result<String> {
    json(&Overdue::of(spans))
}

#[napi]
impl NativeTracer {
    #[napi(constructor)]
    pub fn new(config: Option<String>) -> napi::Result<Self> {
        guard("Tracer", || {
            Ok(NativeTracer {
                inner: match config {
                    Some(c) => Tracer::from_json(&c)?,
                    None => Tracer::new(Default::default())?,
                },
            })
        })
    }

    /// Starts a span; returns its id.
    #[napi]
    pub fn start(&self, tool: String, info: Option<String>, input_bytes: f64, at_us: Option<f64>) -> napi::Result<f64> {
        guard("start", || {
            let info: SpanInfo = parse_opt("info", info.as_deref())?;
            self.inner.start(&tool, info, to_u64(input_bytes), now_us(at_us)).map(|id| id as f64)
        })
    }

    /// `outcome`: `"success"`, `"error"`, `"timeout"`, `"cancelled"` (as JSON spells them).
    #[napi]
    pub fn end(
        &self,
        id: f64,
        outcome: String,
        output_bytes: f64,
        error: Option<String>,
        at_us: Option<f64>,
    ) -> napi::Result<()> {
        guard("end", || {
            let o: Outcome = turnfit::frontend::parse_json("outcome", &json(&outcome)?)?;
            self.inner.end(to_u64(id), o, to_u64(output_bytes), error.as_deref(), now_us(at_us))
        })
    }

    /// `end` with token usage, an error category and metadata: `end` is the
    /// core's span-end JSON (`{output_bytes, error, error_category,
    /// input_tokens, output_tokens, metadata}`, every field optional).
    #[napi]
    pub fn end_with(&self, id: f64, outcome: String, end: Option<String>, at_us: Option<f64>) -> napi::Result<()> {
        guard("endWith", || {
            let o: Outcome = turnfit::frontend::parse_json("outcome", &json(&outcome)?)?;
            let end = end.as_deref().map(turnfit::trace::SpanEnd::from_json).transpose()?.unwrap_or_default();
            self.inner.end_with(to_u64(id), o, end, now_us(at_us))
        })
    }

    /// `{overdue, interrupted_results}` (core's `trace::Overdue`, as C
    /// returns it): spans past their timeout, and the synthetic tool results
    /// that would answer them.
    #[napi]
    pub fn overdue_json(&self, at_us: Option<f64>) -> napi::Result<String> {
        guard("overdue", || overdue(self.inner.overdue(now_us(at_us))))
    }

    /// Like `overdue_json`, and the spans are closed as timed out.
    #[napi]
    pub fn expire_json(&self, at_us: Option<f64>) -> napi::Result<String> {
        guard("expire", || overdue(self.inner.expire(now_us(at_us))))
    }

    #[napi]
    pub fn metrics_json(&self) -> napi::Result<String> {
        guard("metrics", || json(&self.inner.metrics()))
    }

    #[napi]
    pub fn recent_json(&self) -> napi::Result<String> {
        guard("recent", || json(&self.inner.recent()))
    }

    #[napi]
    pub fn export_json(&self, at_us: Option<f64>) -> napi::Result<String> {
        guard("export", || json(&self.inner.export(now_us(at_us))))
    }
}

// ---------------------------------------------------------------- toolset

#[napi]
pub fn toolset_report_json(request: String) -> napi::Result<String> {
    guard("toolset.report", || json(&turnfit::toolset::report_json(registry(), &request)?))
}

#[napi]
pub fn toolset_select_json(request: String, agent: String) -> napi::Result<String> {
    guard("toolset.select", || json(&turnfit::toolset::select_json(&request, &agent)?))
}
