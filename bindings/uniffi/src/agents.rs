//! Agent primitives: skills, handoffs, call stacks, error classification,
//! backoff, circuit breakers, tool telemetry, tool sets and prompt assembly.
//! Options, requests and large results cross as JSON text (docs/formats.md).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use turnfit::handoff::{filter_json, Handoff, RenderOptions};
use turnfit::recovery::{classify_in, BackoffPolicy, BreakerConfig, Breakers, ErrorContext, Provider, RetryDecision};
use turnfit::skills::{IndexOptions, SkillSet as CoreSkills};
use turnfit::trace::{Outcome, Overdue, OverdueSpan, SpanInfo, Tracer as CoreTracer};

use crate::events::{self, EventListener};
use crate::tokenizer::{registry_or_builtin, ModelRegistry, Tokenizer};
use crate::{parse_opt, to_json, Result, Text, TurnfitError};

/// A serde unit enum's JSON name (`rate_limited`).
fn name_of<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

// ---------------------------------------------------------------- skills

/// One skill's body.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct SkillBody {
    /// The skill's name.
    pub name: String,
    /// The body (front-matter removed).
    pub text: String,
    /// Tokens in `text`.
    pub tokens: u64,
}

/// The skills of one folder (`<name>/SKILL.md` or `<name>.md`): headers
/// read at open, bodies on request and cached. Share across threads.
#[derive(uniffi::Object)]
pub struct SkillSet {
    inner: CoreSkills,
}

#[uniffi::export]
impl SkillSet {
    /// Discovers the skills under `root`. `options_json` is `{"model",
    /// "encoding", "layout"}` (null: both layouts, cl100k_base); the `model`
    /// is looked up in `registry` (null: the built-in table). A broken skill
    /// does not fail the call: it is listed with diagnostics.
    #[uniffi::constructor(default(options_json = None, registry = None))]
    pub fn open(root: Text, options_json: Option<Text>, registry: Option<Arc<ModelRegistry>>) -> Result<Arc<Self>> {
        if root.is_empty() {
            return Err(TurnfitError::InvalidArgument("root is empty".into()));
        }
        let inner = CoreSkills::open_json_in(
            registry_or_builtin(&registry),
            Path::new(&*root),
            options_json.as_deref(),
            &turnfit::events::Observer::none(),
        )?;
        Ok(Arc::new(SkillSet { inner }))
    }

    /// [`open`](Self::open), reporting each entry discovery skipped to
    /// `listener` as a `skill_skipped` event, on the calling thread, before
    /// this returns (a failed open reports nothing; the same entries are in
    /// `listJson`'s `ignored`). An exception the listener throws is dropped.
    #[uniffi::constructor(default(options_json = None, registry = None))]
    pub fn open_with_listener(
        root: Text,
        listener: Arc<dyn EventListener>,
        options_json: Option<Text>,
        registry: Option<Arc<ModelRegistry>>,
    ) -> Result<Arc<Self>> {
        if root.is_empty() {
            return Err(TurnfitError::InvalidArgument("root is empty".into()));
        }
        let observer = events::direct(Some(listener));
        let inner = CoreSkills::open_json_in(
            registry_or_builtin(&registry),
            Path::new(&*root),
            options_json.as_deref(),
            &observer,
        )?;
        Ok(Arc::new(SkillSet { inner }))
    }

    /// Every discovered skill as JSON (docs/formats.md, "Skill listing").
    pub fn list_json(&self) -> Result<String> {
        to_json(&self.inner.listing())
    }

    /// Skill `name`'s body, read on first request. Unsafe names are `UnsafePath`.
    pub fn body(&self, name: Text) -> Result<SkillBody> {
        let b = self.inner.body(&name)?;
        Ok(SkillBody { name: b.name.clone(), text: b.text.clone(), tokens: b.tokens as u64 })
    }

    /// The skills index for a system prompt under `options_json`
    /// (`{"budget", "scores", "categories", "preamble", ...}`), as JSON.
    #[uniffi::method(default(options_json = None))]
    pub fn render_index(&self, options_json: Option<Text>) -> Result<String> {
        let o: IndexOptions = parse_opt("options_json", options_json)?;
        to_json(&self.inner.render_index(&o)?)
    }
}

// --------------------------------------------------------------- handoff

/// Validates a handoff and returns it normalized, as JSON.
#[uniffi::export]
pub fn handoff_validate(handoff_json: Text) -> Result<String> {
    Ok(Handoff::parse(&handoff_json)?.to_json()?)
}

/// Renders a handoff as a delimited prompt block under `options_json`
/// (`{"budget", "model", "encoding", "include_custom_fields", "format"}`), the
/// `model` looked up in `registry` (null: the built-in table); JSON result.
#[uniffi::export(default(options_json = None, registry = None))]
pub fn handoff_render(
    handoff_json: Text,
    options_json: Option<Text>,
    registry: Option<Arc<ModelRegistry>>,
) -> Result<String> {
    let o: RenderOptions = parse_opt("options_json", options_json)?;
    to_json(&Handoff::parse(&handoff_json)?.render_in(registry_or_builtin(&registry), &o)?)
}

/// Filters the conversation handed over (`{"mode": "drop_tools"|"nest",
/// "header"}`); JSON `{"conversation", "changes", "removed_tools"}`.
#[uniffi::export(default(options_json = None))]
pub fn handoff_filter(conversation_json: Text, options_json: Option<Text>) -> Result<String> {
    to_json(&filter_json(&conversation_json, options_json.as_deref())?)
}

// ------------------------------------------------------------- callstack

/// An immutable agent call stack: `enter` returns a new, deeper stack and
/// leaves this one unchanged, so parallel branches each hold their own.
#[derive(uniffi::Object)]
pub struct CallStack {
    inner: turnfit::callstack::CallStack,
}

#[uniffi::export]
impl CallStack {
    /// An empty stack allowing `max_depth` agents.
    #[uniffi::constructor]
    pub fn new(max_depth: u64) -> Result<Arc<Self>> {
        let d = usize::try_from(max_depth).unwrap_or(usize::MAX);
        Ok(Arc::new(CallStack { inner: turnfit::callstack::CallStack::new(d)? }))
    }

    /// A stack from its JSON form `{"agents", "max_depth"}`, checked entry by entry.
    #[uniffi::constructor]
    pub fn from_json(json: Text) -> Result<Arc<Self>> {
        Ok(Arc::new(CallStack { inner: turnfit::callstack::CallStack::from_json(&json)? }))
    }

    /// A new stack with `agent` on top. `CycleDetected` when it is already
    /// on the stack (the message carries the chain), `DepthExceeded` when full.
    pub fn enter(&self, agent: Text) -> Result<Arc<CallStack>> {
        Ok(Arc::new(CallStack { inner: self.inner.enter(&agent)? }))
    }

    /// The agents, outermost first.
    pub fn agents(&self) -> Vec<String> {
        self.inner.agents().into_iter().map(str::to_owned).collect()
    }

    /// Agents on the stack.
    pub fn depth(&self) -> u64 {
        self.inner.depth() as u64
    }

    /// The stack as JSON `{"agents", "depth", "max_depth"}`.
    pub fn to_json(&self) -> Result<String> {
        to_json(&self.inner.to_json_value())
    }
}

// -------------------------------------------------------------- recovery

/// A provider error's classification (docs/formats.md, "Error classification").
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct ErrorClassification {
    /// `rate_limited`, `overloaded`, `context_overflow`, ...
    pub category: String,
    /// `low`, `medium`, `high`.
    pub severity: String,
    /// Whether the same request may be sent again unchanged.
    pub retryable: bool,
    /// `retry`, `compact`, `repair_history`, `fail`.
    pub action: String,
    /// For `retry`: the wait in ms.
    pub retry_after_ms: Option<u64>,
    /// The provider's own error code or type.
    pub code: Option<String>,
    /// The provider's message.
    pub message: Option<String>,
    /// For `invalid_tool_history`: the call ids the provider named.
    pub tool_call_ids: Vec<String>,
    /// The agent given in the error's context (null when not given).
    pub agent_id: Option<String>,
    /// The workflow given in the error's context.
    pub workflow_id: Option<String>,
    /// The context's metadata as a JSON object.
    pub metadata_json: Option<String>,
    /// The whole classification as JSON.
    pub json: String,
}

/// Classifies a provider error. `provider` is `openai`, `azure`,
/// `anthropic`, `bedrock`, `gemini`, `ollama` or `other`; `status` the HTTP
/// status (0: no response); `body` as received; `headers_json` a JSON
/// object of response headers (null for none); `context_json` the error's
/// context `{"agent_id", "workflow_id", "metadata"}` (null for none), echoed
/// in the result.
#[uniffi::export(default(headers_json = None, context_json = None))]
pub fn classify_error(
    provider: Text,
    status: u32,
    body: Text,
    headers_json: Option<Text>,
    context_json: Option<Text>,
) -> Result<ErrorClassification> {
    let status = u16::try_from(status)
        .map_err(|_| TurnfitError::InvalidArgument(format!("status {status} is not an HTTP status")))?;
    let provider = Provider::from_name(&provider)?;
    let headers: BTreeMap<String, String> = parse_opt("headers_json", headers_json)?;
    let context: ErrorContext = parse_opt("context_json", context_json)?;
    let pairs: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let c = classify_in(provider, status, &body, &pairs, context)?;
    Ok(ErrorClassification {
        category: name_of(&c.category),
        severity: name_of(&c.severity),
        retryable: c.retryable,
        action: name_of(&c.action),
        retry_after_ms: c.retry_after_ms,
        code: c.code.clone(),
        message: c.message.clone(),
        tool_call_ids: c.tool_call_ids.clone(),
        agent_id: c.agent_id.clone(),
        workflow_id: c.workflow_id.clone(),
        metadata_json: c.metadata.as_ref().map(to_json).transpose()?,
        json: to_json(&c)?,
    })
}

/// Classifies from the JSON request `{"provider", "status", "body",
/// "headers"}` (`body` text or JSON); the classification as JSON.
#[uniffi::export]
pub fn classify_error_json(request_json: Text) -> Result<String> {
    to_json(&turnfit::recovery::classify_json(&request_json)?)
}

/// A retry decision.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct BackoffDecision {
    /// Whether to retry.
    pub retry: bool,
    /// When retrying: the wait in ms.
    pub delay_ms: Option<u64>,
    /// When giving up: why.
    pub reason: Option<String>,
}

/// The retry decision for `request_json` `{"policy": {"base_ms", "cap_ms",
/// "max_attempts", "honor_retry_after", "max_retry_after_ms"},
/// "failed_attempts", "seed", "retry_after_ms"}`: full jitter,
/// deterministic for a seed and attempt.
#[uniffi::export]
pub fn backoff(request_json: Text) -> Result<BackoffDecision> {
    Ok(match BackoffPolicy::decide_json(&request_json)? {
        RetryDecision::Retry { delay_ms } => BackoffDecision { retry: true, delay_ms: Some(delay_ms), reason: None },
        RetryDecision::GiveUp { reason } => {
            BackoffDecision { retry: false, delay_ms: None, reason: Some(reason.to_string()) }
        }
    })
}

/// A circuit breaker's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum BreakerState {
    /// Calls flow.
    Closed,
    /// Calls are refused.
    Open,
    /// A limited number of probes are let through.
    HalfOpen,
}

impl From<turnfit::recovery::BreakerState> for BreakerState {
    fn from(s: turnfit::recovery::BreakerState) -> Self {
        match s {
            turnfit::recovery::BreakerState::Closed => BreakerState::Closed,
            turnfit::recovery::BreakerState::Open => BreakerState::Open,
            turnfit::recovery::BreakerState::HalfOpen => BreakerState::HalfOpen,
        }
    }
}

/// One key's breaker at a point in time.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct BreakerSnapshot {
    /// The key.
    pub key: String,
    /// The state.
    pub state: BreakerState,
    /// Consecutive failures while closed.
    pub consecutive_failures: u32,
    /// When it last opened (ms), if open or half-open.
    pub opened_at_ms: Option<u64>,
    /// While open: ms until probes are allowed.
    pub retry_in_ms: Option<u64>,
    /// While half-open: probes in flight.
    pub probes_in_flight: u32,
    /// While half-open: probe successes so far.
    pub probe_successes: u32,
}

/// Failures per agent and per workflow (document 000's error counts).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct FailureCounts {
    /// Failures per agent id.
    pub by_agent: std::collections::HashMap<String, u64>,
    /// Failures per workflow id.
    pub by_workflow: std::collections::HashMap<String, u64>,
    /// Failures under an id past the 1,024 counted per map.
    pub unattributed: u64,
}

/// Circuit breakers, one per key (a provider, a model, a tool). Times are
/// the caller's clock in ms. Internally synchronized: share across threads.
#[derive(uniffi::Object)]
pub struct CircuitBreaker {
    inner: Breakers,
}

#[uniffi::export]
impl CircuitBreaker {
    /// Breakers configured by `config_json` (`{"failure_threshold",
    /// "cool_down_ms", "half_open_max_calls", "success_threshold"}`; null:
    /// 5 / 30000 / 1 / 1).
    #[uniffi::constructor(default(config_json = None))]
    pub fn new(config_json: Option<Text>) -> Result<Arc<Self>> {
        let config: BreakerConfig = parse_opt("config_json", config_json)?;
        Ok(Arc::new(CircuitBreaker { inner: Breakers::new(config)? }))
    }

    /// Sets (null: clears) the listener of `breaker_state_changed` events,
    /// delivered on the thread whose call moved a key's state, with no lock
    /// held, before that call returns; never after `close`. An exception
    /// the listener throws is dropped (the state change stands).
    pub fn set_event_listener(&self, listener: Option<Arc<dyn EventListener>>) {
        self.inner.set_observer(events::direct(listener));
    }

    /// Whether a call under `key` may go ahead at `now_ms`.
    pub fn allow(&self, key: Text, now_ms: u64) -> Result<bool> {
        Ok(self.inner.allow(&key, now_ms)?)
    }

    /// Records a success; returns the state after.
    pub fn record_success(&self, key: Text, now_ms: u64) -> Result<BreakerState> {
        Ok(self.inner.record(&key, true, now_ms)?.into())
    }

    /// Records a failure; returns the state after.
    pub fn record_failure(&self, key: Text, now_ms: u64) -> Result<BreakerState> {
        Ok(self.inner.record(&key, false, now_ms)?.into())
    }

    /// Records a failure of a call made by the agent in the workflow that
    /// `context_json` names (`{"agent_id", "workflow_id", "metadata"}`); it
    /// is also counted under both ids (see `failure_counts`). Returns the
    /// state after.
    pub fn record_failure_in(&self, key: Text, now_ms: u64, context_json: Text) -> Result<BreakerState> {
        let context = ErrorContext::from_json(&context_json)?;
        Ok(self.inner.record_in(&key, false, now_ms, &context)?.into())
    }

    /// Failures recorded with a context, per agent and per workflow.
    pub fn failure_counts(&self) -> FailureCounts {
        let n = self.inner.failure_counts();
        FailureCounts {
            by_agent: n.by_agent.into_iter().collect(),
            by_workflow: n.by_workflow.into_iter().collect(),
            unattributed: n.unattributed,
        }
    }

    /// `key`'s state at `now_ms`.
    pub fn state(&self, key: Text, now_ms: u64) -> Result<BreakerSnapshot> {
        let s = self.inner.snapshot(&key, now_ms)?;
        Ok(BreakerSnapshot {
            key: s.key,
            state: s.state.into(),
            consecutive_failures: s.consecutive_failures,
            opened_at_ms: s.opened_at_ms,
            retry_in_ms: s.retry_in_ms,
            probes_in_flight: s.probes_in_flight,
            probe_successes: s.probe_successes,
        })
    }
}

// ----------------------------------------------------------------- trace

/// How a span ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum SpanOutcome {
    /// The tool returned a result.
    Success,
    /// The tool returned an error.
    Failed,
    /// The tool ran past its deadline.
    Timeout,
    /// The call was abandoned.
    Cancelled,
}

impl From<SpanOutcome> for Outcome {
    fn from(o: SpanOutcome) -> Self {
        match o {
            SpanOutcome::Success => Outcome::Success,
            SpanOutcome::Failed => Outcome::Failed,
            SpanOutcome::Timeout => Outcome::Timeout,
            SpanOutcome::Cancelled => Outcome::Cancelled,
        }
    }
}

/// Microseconds since the Unix epoch (for hosts without a clock of their own).
#[uniffi::export]
pub fn clock_now_us() -> u64 {
    turnfit::trace::now_us()
}

fn overdue_json(spans: Vec<OverdueSpan>) -> Result<String> {
    to_json(&Overdue::of(spans))
}

/// Tool-call telemetry: spans, per-tool metrics, deadlines, a bounded ring
/// of recent records. Times are the caller's, in µs. Share across threads.
#[derive(uniffi::Object)]
pub struct Tracer {
    inner: CoreTracer,
}

#[uniffi::export]
impl Tracer {
    /// A tracer configured by `config_json` (`{"ring_size",
    /// "default_timeout_ms", "timeouts": {tool: ms}}`; null: defaults).
    #[uniffi::constructor(default(config_json = None))]
    pub fn new(config_json: Option<Text>) -> Result<Arc<Self>> {
        let inner = match config_json {
            Some(t) => CoreTracer::from_json(&t)?,
            None => CoreTracer::new(Default::default())?,
        };
        Ok(Arc::new(Tracer { inner }))
    }

    /// Sets (null: clears) the listener of `span_repeated` (a finished span
    /// folded into the previous record), `span_overdue` (an open span
    /// first seen past its deadline) and, with the config's
    /// `span_finished_events`, `span_finished` (every span that ended) events, delivered on the calling
    /// thread with no lock held, before the call returns; never after
    /// `close`. An exception the listener throws is dropped.
    pub fn set_event_listener(&self, listener: Option<Arc<dyn EventListener>>) {
        self.inner.set_observer(events::direct(listener));
    }

    /// Starts a span; returns its id. `info_json` is `{"agent_id",
    /// "workflow_id", "tool_call_id", "timeout_ms"}` (null: none).
    #[uniffi::method(default(info_json = None, input_bytes = 0))]
    pub fn start(&self, tool: Text, now_us: u64, info_json: Option<Text>, input_bytes: u64) -> Result<u64> {
        let info: SpanInfo = parse_opt("info_json", info_json)?;
        Ok(self.inner.start(&tool, info, input_bytes, now_us)?)
    }

    /// Ends span `span_id`. Ending a span that is not open is `InvalidArgument`.
    #[uniffi::method(default(output_bytes = 0, error = None))]
    pub fn end(
        &self,
        span_id: u64,
        outcome: SpanOutcome,
        now_us: u64,
        output_bytes: u64,
        error: Option<Text>,
    ) -> Result<()> {
        Ok(self.inner.end(span_id, outcome.into(), output_bytes, error.as_deref(), now_us)?)
    }

    /// `end` with token usage, an error category and metadata: `end_json` is
    /// `{"output_bytes", "error", "error_category", "input_tokens",
    /// "output_tokens", "metadata"}`, every field optional (null: none). Over
    /// a cap is `InvalidArgument` / `LimitExceeded` and the span stays open.
    #[uniffi::method(default(end_json = None))]
    pub fn end_with(&self, span_id: u64, outcome: SpanOutcome, now_us: u64, end_json: Option<Text>) -> Result<()> {
        let end = end_json.as_deref().map(turnfit::trace::SpanEnd::from_json).transpose()?.unwrap_or_default();
        Ok(self.inner.end_with(span_id, outcome.into(), end, now_us)?)
    }

    /// Open spans past their deadline, and the tool results that answer
    /// them, as JSON `{"overdue", "interrupted_results"}`. They stay open.
    pub fn overdue(&self, now_us: u64) -> Result<String> {
        overdue_json(self.inner.overdue(now_us))
    }

    /// Like `overdue`, and ends each overdue span as a timeout.
    pub fn expire(&self, now_us: u64) -> Result<String> {
        overdue_json(self.inner.expire(now_us))
    }

    /// Everything the tracer holds, as JSON (docs/formats.md, "Trace export").
    pub fn export_json(&self, now_us: u64) -> Result<String> {
        to_json(&self.inner.export(now_us))
    }
}

// ------------------------------------------------------- toolset, assemble

/// The token cost of a tool registry and of each agent's allowlisted set:
/// `request_json` is `{"model", "tools", "allowlists": {agent: [...]}}`.
#[uniffi::export(default(registry = None))]
pub fn toolset_report(request_json: Text, registry: Option<Arc<ModelRegistry>>) -> Result<String> {
    to_json(&turnfit::toolset::report_json(registry_or_builtin(&registry), &request_json)?)
}

/// `agent`'s tool definitions, exactly as given, as a JSON array.
#[uniffi::export]
pub fn toolset_select(request_json: Text, agent: Text) -> Result<String> {
    to_json(&turnfit::toolset::select_json(&request_json, &agent)?)
}

/// Assembles a prompt from prioritized sections under a budget, counting
/// with `tokenizer` (docs/formats.md, "Assemble"); JSON in and out.
#[uniffi::export]
pub fn assemble(tokenizer: Arc<Tokenizer>, request_json: Text) -> Result<String> {
    Ok(turnfit::assemble::assemble_json(&request_json, &tokenizer.inner)?)
}
