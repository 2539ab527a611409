//! Agent primitives: skills, handoffs, error classification, backoff,
//! circuit breakers, call stacks, tool telemetry and tool sets. Requests and
//! results cross as JSON text (docs/formats.md).

use std::path::Path;

use pyo3::prelude::*;

use turnfit::callstack::CallStack as CoreStack;
use turnfit::handoff::{filter_json, Handoff, RenderOptions};
use turnfit::recovery::{classify_json, BackoffPolicy, BreakerConfig, Breakers, ErrorContext};
use turnfit::skills::{IndexOptions, SkillSet};
use turnfit::trace::{Outcome, OverdueSpan, SpanInfo, Tracer as CoreTracer};

use crate::tokenizer::registry;
use crate::{guard, to_json, Text};

use turnfit::frontend::parse_options as parse;

/// A skills folder (`<name>/SKILL.md` or `<name>.md`), opened once; bodies
/// are read lazily and cached. Thread-safe.
#[pyclass(frozen, module = "turnfit._native")]
struct Skills {
    inner: SkillSet,
}

#[pymethods]
impl Skills {
    #[new]
    #[pyo3(signature = (root, options_json=None))]
    fn new(root: Text, options_json: Option<Text>) -> PyResult<Self> {
        let inner = guard("Skills", || {
            if root.is_empty() {
                return Err(turnfit::Error::new(turnfit::ErrorKind::InvalidArgument, "root is empty"));
            }
            SkillSet::open_json_in(
                crate::tokenizer::registry(),
                Path::new(&*root),
                options_json.as_deref(),
                &turnfit::events::Observer::none(),
            )
        })?;
        Ok(Skills { inner })
    }

    fn list(&self) -> PyResult<String> {
        guard("Skills.list", || to_json(&self.inner.listing()))
    }

    fn body(&self, name: Text) -> PyResult<String> {
        guard("Skills.body", || to_json(&*self.inner.body(&name)?))
    }

    #[pyo3(signature = (options_json=None))]
    fn render_index(&self, options_json: Option<Text>) -> PyResult<String> {
        guard("Skills.render_index", || {
            let o: IndexOptions = parse("options", options_json.as_deref())?;
            to_json(&self.inner.render_index(&o)?)
        })
    }
}

#[pyfunction]
fn _handoff_validate(handoff_json: Text) -> PyResult<String> {
    guard("handoff_validate", || Handoff::parse(&handoff_json)?.to_json())
}

#[pyfunction]
#[pyo3(signature = (handoff_json, options_json=None))]
fn _handoff_render(handoff_json: Text, options_json: Option<Text>) -> PyResult<String> {
    guard("handoff_render", || {
        let o: RenderOptions = parse("options", options_json.as_deref())?;
        to_json(&Handoff::parse(&handoff_json)?.render_in(crate::tokenizer::registry(), &o)?)
    })
}

#[pyfunction]
#[pyo3(signature = (conversation_json, options_json=None))]
fn _handoff_filter(conversation_json: Text, options_json: Option<Text>) -> PyResult<String> {
    guard("handoff_filter", || to_json(&filter_json(&conversation_json, options_json.as_deref())?))
}

/// Classifies a provider error (`{"provider", "status", "headers", "body"}`,
/// and the error's context: `agent_id`, `workflow_id`, `metadata`).
#[pyfunction]
fn _classify(request_json: Text) -> PyResult<String> {
    guard("classify", || to_json(&classify_json(&request_json)?))
}

/// The retry decision for a backoff request (docs/formats.md).
#[pyfunction]
fn _backoff(request_json: Text) -> PyResult<String> {
    guard("backoff", || to_json(&BackoffPolicy::decide_json(&request_json)?))
}

/// Circuit breakers keyed by a string (a provider, a tool). Thread-safe.
#[pyclass(frozen, module = "turnfit._native")]
struct CircuitBreaker {
    inner: Breakers,
}

#[pymethods]
impl CircuitBreaker {
    #[new]
    #[pyo3(signature = (config_json=None))]
    fn new(config_json: Option<Text>) -> PyResult<Self> {
        let inner = guard("CircuitBreaker", || {
            let c: BreakerConfig = parse("config", config_json.as_deref())?;
            Breakers::new(c)
        })?;
        Ok(CircuitBreaker { inner })
    }

    fn allow(&self, key: Text, now_ms: u64) -> PyResult<bool> {
        guard("CircuitBreaker.allow", || self.inner.allow(&key, now_ms))
    }

    /// Records an outcome; returns the state after it (`closed`, `open`, `half_open`).
    fn record(&self, key: Text, success: bool, now_ms: u64) -> PyResult<String> {
        guard("CircuitBreaker.record", || {
            let s = self.inner.record(&key, success, now_ms)?;
            Ok(serde_json::to_value(s).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default())
        })
    }

    /// Records an outcome of a call made by the context's agent in its
    /// workflow (`{"agent_id", "workflow_id", "metadata"}`); a failure is
    /// also counted under both ids.
    fn record_in(&self, key: Text, success: bool, now_ms: u64, context_json: Text) -> PyResult<String> {
        guard("CircuitBreaker.record", || {
            let c = ErrorContext::from_json(&context_json)?;
            let s = self.inner.record_in(&key, success, now_ms, &c)?;
            Ok(serde_json::to_value(s).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default())
        })
    }

    /// Failures per agent and per workflow (`{"by_agent", "by_workflow", "unattributed"}`).
    fn failure_counts(&self) -> PyResult<String> {
        guard("CircuitBreaker.failure_counts", || to_json(&self.inner.failure_counts()))
    }

    fn state(&self, key: Text, now_ms: u64) -> PyResult<String> {
        guard("CircuitBreaker.state", || to_json(&self.inner.snapshot(&key, now_ms)?))
    }
}

/// An immutable agent call stack: `enter` returns a new stack, so parallel
/// branches never see each other's entries.
#[pyclass(frozen, module = "turnfit._native")]
struct CallStack {
    inner: CoreStack,
}

#[pymethods]
impl CallStack {
    #[new]
    #[pyo3(signature = (max_depth=turnfit::callstack::DEFAULT_MAX_DEPTH))]
    fn new(max_depth: usize) -> PyResult<Self> {
        Ok(CallStack { inner: guard("CallStack", || CoreStack::new(max_depth))? })
    }

    #[staticmethod]
    fn from_json(json: Text) -> PyResult<Self> {
        Ok(CallStack { inner: guard("CallStack.from_json", || CoreStack::from_json(&json))? })
    }

    fn enter(&self, agent: Text) -> PyResult<Self> {
        Ok(CallStack { inner: guard("CallStack.enter", || self.inner.enter(&agent))? })
    }

    fn parent(&self) -> Self {
        CallStack { inner: self.inner.parent() }
    }

    #[getter]
    fn depth(&self) -> usize {
        self.inner.depth()
    }

    #[getter]
    fn max_depth(&self) -> usize {
        self.inner.max_depth()
    }

    #[getter]
    fn current(&self) -> Option<String> {
        self.inner.current().map(str::to_owned)
    }

    fn agents(&self) -> Vec<String> {
        self.inner.agents().into_iter().map(str::to_owned).collect()
    }

    fn chain(&self) -> String {
        self.inner.chain()
    }

    fn __contains__(&self, agent: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.inner.contains(&crate::str_arg(agent, "agent")?))
    }

    fn __len__(&self) -> usize {
        self.inner.depth()
    }

    fn to_json(&self) -> PyResult<String> {
        guard("CallStack.to_json", || to_json(&self.inner.to_json_value()))
    }
}

/// Tool-execution spans with per-tool metrics in bounded memory. Thread-safe.
#[pyclass(frozen, module = "turnfit._native")]
struct Tracer {
    inner: CoreTracer,
}

fn overdue_json(spans: Vec<OverdueSpan>) -> turnfit::Result<String> {
    to_json(&turnfit::trace::Overdue::of(spans))
}

#[pymethods]
impl Tracer {
    #[new]
    #[pyo3(signature = (config_json=None))]
    fn new(config_json: Option<Text>) -> PyResult<Self> {
        let inner = guard("Tracer", || match config_json.as_deref() {
            Some(t) => CoreTracer::from_json(t),
            None => CoreTracer::new(Default::default()),
        })?;
        Ok(Tracer { inner })
    }

    #[pyo3(signature = (tool, info_json=None, input_bytes=0, now_us=None))]
    fn start(&self, tool: Text, info_json: Option<Text>, input_bytes: u64, now_us: Option<u64>) -> PyResult<u64> {
        guard("Tracer.start", || {
            let info: SpanInfo = parse("info", info_json.as_deref())?;
            self.inner.start(&tool, info, input_bytes, now_us.unwrap_or_else(turnfit::trace::now_us))
        })
    }

    #[pyo3(signature = (span_id, outcome=Text(String::from("success")), output_bytes=0, error=None, now_us=None))]
    fn end(
        &self,
        span_id: u64,
        outcome: Text,
        output_bytes: u64,
        error: Option<Text>,
        now_us: Option<u64>,
    ) -> PyResult<()> {
        guard("Tracer.end", || {
            let outcome: Outcome =
                turnfit::frontend::parse_json("outcome", &serde_json::Value::from(&*outcome).to_string())?;
            self.inner.end(
                span_id,
                outcome,
                output_bytes,
                error.as_deref(),
                now_us.unwrap_or_else(turnfit::trace::now_us),
            )
        })
    }

    /// `end` with the core's span-end JSON (`output_bytes`, `error`,
    /// `error_category`, `input_tokens`, `output_tokens`, `metadata`).
    #[pyo3(signature = (span_id, outcome, end_json=None, now_us=None))]
    fn end_with(&self, span_id: u64, outcome: Text, end_json: Option<Text>, now_us: Option<u64>) -> PyResult<()> {
        guard("Tracer.end_with", || {
            let outcome: Outcome =
                turnfit::frontend::parse_json("outcome", &serde_json::Value::from(&*outcome).to_string())?;
            let end = end_json.as_deref().map(turnfit::trace::SpanEnd::from_json).transpose()?.unwrap_or_default();
            self.inner.end_with(span_id, outcome, end, now_us.unwrap_or_else(turnfit::trace::now_us))
        })
    }

    #[pyo3(signature = (now_us=None))]
    fn overdue(&self, now_us: Option<u64>) -> PyResult<String> {
        guard("Tracer.overdue", || overdue_json(self.inner.overdue(now_us.unwrap_or_else(turnfit::trace::now_us))))
    }

    #[pyo3(signature = (now_us=None))]
    fn expire(&self, now_us: Option<u64>) -> PyResult<String> {
        guard("Tracer.expire", || overdue_json(self.inner.expire(now_us.unwrap_or_else(turnfit::trace::now_us))))
    }

    fn metrics(&self) -> PyResult<String> {
        guard("Tracer.metrics", || to_json(&self.inner.metrics()))
    }

    fn recent(&self) -> PyResult<String> {
        guard("Tracer.recent", || to_json(&self.inner.recent()))
    }

    /// The record of finished span `span_id` while it is in the ring, as
    /// JSON (`null` when not found).
    fn span(&self, span_id: u64) -> PyResult<String> {
        guard("Tracer.span", || to_json(&self.inner.span(span_id)))
    }

    #[pyo3(signature = (now_us=None))]
    fn export(&self, now_us: Option<u64>) -> PyResult<String> {
        guard("Tracer.export", || to_json(&self.inner.export(now_us.unwrap_or_else(turnfit::trace::now_us))))
    }
}

#[pyfunction]
fn _toolset_report(request_json: Text) -> PyResult<String> {
    guard("toolset_report", || to_json(&turnfit::toolset::report_json(registry(), &request_json)?))
}

#[pyfunction]
fn _toolset_select(request_json: Text, agent: Text) -> PyResult<String> {
    guard("toolset_select", || to_json(&turnfit::toolset::select_json(&request_json, &agent)?))
}

/// Microseconds on turnfit's monotonic clock (what the tracer uses by default).
#[pyfunction]
fn now_us() -> u64 {
    turnfit::trace::now_us()
}

/// Milliseconds on turnfit's clock (what breakers expect).
#[pyfunction]
fn now_ms() -> u64 {
    turnfit::recovery::now_ms()
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Skills>()?;
    m.add_class::<CircuitBreaker>()?;
    m.add_class::<CallStack>()?;
    m.add_class::<Tracer>()?;
    m.add_function(wrap_pyfunction!(_handoff_validate, m)?)?;
    m.add_function(wrap_pyfunction!(_handoff_render, m)?)?;
    m.add_function(wrap_pyfunction!(_handoff_filter, m)?)?;
    m.add_function(wrap_pyfunction!(_classify, m)?)?;
    m.add_function(wrap_pyfunction!(_backoff, m)?)?;
    m.add_function(wrap_pyfunction!(_toolset_report, m)?)?;
    m.add_function(wrap_pyfunction!(_toolset_select, m)?)?;
    m.add_function(wrap_pyfunction!(now_us, m)?)?;
    m.add_function(wrap_pyfunction!(now_ms, m)?)?;
    Ok(())
}
