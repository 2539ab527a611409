//! Provider error classification.
//!
//! Recognition is driven by the shapes the providers document, not by the
//! provider name alone (the name is recorded and breaks no ties), so an
//! OpenAI-compatible gateway in front of another model is still read right:
//!
//! - OpenAI / Azure OpenAI: `{"error": {"message", "type", "param", "code"}}`
//!   (`context_length_exceeded`, `rate_limit_exceeded`, `insufficient_quota`,
//!   `invalid_api_key`; Azure's `content_filter` with `innererror`);
//! - Anthropic: `{"type": "error", "error": {"type": "overloaded_error" |
//!   "rate_limit_error" | "invalid_request_error" | ..., "message"}}`, HTTP 529;
//! - AWS Bedrock: `{"message"}` (or `{"__type", "message"}`) with the
//!   `x-amzn-ErrorType` header (`ValidationException`, `ThrottlingException`,
//!   `ModelTimeoutException`, ...);
//! - Google Gemini: `{"error": {"code", "message", "status":
//!   "RESOURCE_EXHAUSTED" | ..., "details": [RetryInfo ...]}}`;
//! - Ollama: `{"error": "..."}`;
//! - LangGraph / LangChain's `INVALID_CHAT_HISTORY` exception ("Found
//!   AIMessages with tool_calls that do not have a corresponding
//!   ToolMessage", the calls printed as Python dicts): the ids are read from
//!   their `'id': '...'` entries;
//! - anything else: plain text and the HTTP status.
//!
//! Status 0 means no HTTP response: the text is an exception message. It
//! is read for the common patterns (timeouts, rate limits, connection
//! failures, content-safety refusals, validation errors); a text none of
//! them matches is `unknown` -> fail, because retrying an error nobody
//! recognised (a failed safety check, a broken state store) repeats it. Only
//! an empty status-0 error (nothing but "no response") is `network`.
//!
//! Specific message patterns win over generic codes: a 400
//! `invalid_request_error` that says "prompt is too long" is a context
//! overflow, not an invalid request, because the fix is to compact.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::context::ErrorContext;
use crate::limits::{self, MAX_JSON_BYTES};
use crate::{Error, Result};

/// Who returned the error. Recorded in the classification; recognition
/// itself reads the shapes of every provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Provider {
    /// OpenAI (and OpenAI-compatible gateways).
    #[serde(rename = "openai")]
    OpenAi,
    /// Azure OpenAI.
    Azure,
    /// Anthropic.
    Anthropic,
    /// AWS Bedrock.
    Bedrock,
    /// Google Gemini (AI Studio or Vertex AI).
    Gemini,
    /// Ollama.
    Ollama,
    /// Anything else.
    Other,
}

impl Provider {
    /// Parses a provider name (case-insensitive; `azure_openai`, `aws`,
    /// `bedrock`, `google`, `vertex` are accepted aliases).
    pub fn from_name(name: &str) -> Result<Provider> {
        Ok(match name.trim().to_ascii_lowercase().replace('-', "_").as_str() {
            "openai" => Provider::OpenAi,
            "azure" | "azure_openai" => Provider::Azure,
            "anthropic" => Provider::Anthropic,
            "bedrock" | "aws" | "aws_bedrock" => Provider::Bedrock,
            "gemini" | "google" | "vertex" | "vertex_ai" => Provider::Gemini,
            "ollama" => Provider::Ollama,
            "other" | "unknown" | "" => Provider::Other,
            other => {
                return Err(Error::invalid_argument(format!(
                    "unknown provider '{other}'; use openai, azure, anthropic, bedrock, gemini, ollama or other"
                )))
            }
        })
    }
}

/// What kind of failure it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Too many requests or tokens per interval (or quota exhausted).
    RateLimited,
    /// The provider is temporarily out of capacity (Anthropic 529, 503).
    Overloaded,
    /// The request took too long (408, 504, a client-side timeout).
    Timeout,
    /// The prompt is longer than the model's context window.
    ContextOverflow,
    /// Tool calls and tool results do not pair up.
    InvalidToolHistory,
    /// The credentials are missing, wrong or expired.
    Auth,
    /// The credentials are valid but not allowed to do this.
    Permission,
    /// The request is malformed or names something that does not exist.
    InvalidRequest,
    /// A content-safety filter refused the prompt or the reply.
    ContentFilter,
    /// The provider failed internally (500, 502).
    ServerError,
    /// No response arrived (connection refused, reset, DNS).
    Network,
    /// The model produced a tool call the provider could not parse.
    ToolError,
    /// A tool the agent called failed while executing (status 0: a
    /// `ToolException`, "tool execution failed"; or a tracer span that ended
    /// `failed` for no reason the other categories recognise). Not
    /// [`Category::ToolError`], where the provider could not read the call.
    ToolFailed,
    /// The agent's state store failed (status 0: Redis, a checkpointer, "state
    /// store unavailable"): retrying the same step meets the same store.
    State,
    /// Nothing recognizable.
    Unknown,
}

/// How bad it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(rename = "ErrorSeverity"))]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Transient: waiting and retrying the same request is expected to work.
    Low,
    /// The request must change (compact, repair, retry for a new tool call).
    Medium,
    /// This request cannot succeed; other requests may.
    High,
    /// Nothing will succeed until someone fixes the account or credentials.
    Critical,
}

/// The recommended next step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(rename = "RecoveryAction"))]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Send the same request again after `retry_after_ms`.
    Retry,
    /// Compact the context (see `window`), then send again.
    Compact,
    /// Repair the tool-call history (see `window::repair`), then send again.
    RepairHistory,
    /// Give up and report the error.
    Fail,
}

/// Where a retry delay came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum DelaySource {
    /// The `retry-after-ms` header.
    RetryAfterMsHeader,
    /// The `retry-after` header (seconds).
    RetryAfterHeader,
    /// A hint in the body (Gemini `RetryInfo.retryDelay`, "try again in 4.8s").
    Body,
    /// turnfit's default for the category (no hint from the server).
    Default,
}

/// A classified provider error (docs/formats.md, "Error classification").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Classification {
    /// The kind of failure.
    pub category: Category,
    /// How bad it is.
    pub severity: Severity,
    /// Whether the same request may be sent again unchanged.
    pub retryable: bool,
    /// The recommended next step.
    pub action: Action,
    /// For `retry`: how long to wait, in milliseconds (None otherwise).
    pub retry_after_ms: Option<u64>,
    /// For `retry`: where the delay came from.
    pub delay_source: Option<DelaySource>,
    /// The provider named in the request.
    pub provider: Provider,
    /// The HTTP status (0: no response).
    pub status: u16,
    /// The provider's own error code or type, when it gave one.
    pub code: Option<String>,
    /// The provider's message, when it gave one.
    pub message: Option<String>,
    /// For `invalid_tool_history`: the call ids the provider named.
    pub tool_call_ids: Vec<String>,
    /// The agent the host said met the error (echoed; None when not given).
    pub agent_id: Option<String>,
    /// The workflow the host said the error belongs to (echoed).
    pub workflow_id: Option<String>,
    /// The host's metadata for the error, echoed unchanged.
    pub metadata: Option<Map<String, Value>>,
}

impl Classification {
    /// The context the classification carries, to hand to
    /// [`crate::recovery::Breakers::record_in`] or a span's end.
    pub fn context(&self) -> ErrorContext {
        ErrorContext {
            agent_id: self.agent_id.clone(),
            workflow_id: self.workflow_id.clone(),
            metadata: self.metadata.clone(),
        }
    }
}

/// The input of [`classify_json`]: `{"provider", "status", "body", "headers",
/// "agent_id", "workflow_id", "metadata"}`. `body` is the response body as a
/// string, or already-parsed JSON; the last three are the error's context
/// ([`ErrorContext`]), echoed in the result.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ClassifyRequest {
    /// Provider name (see [`Provider::from_name`]).
    pub provider: String,
    /// HTTP status; 0 or absent when no response arrived.
    #[serde(default)]
    pub status: u16,
    /// The response body (text or JSON).
    #[serde(default)]
    pub body: Value,
    /// Response headers, name to value (names are case-insensitive).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The agent that met the error.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The workflow it belongs to.
    #[serde(default)]
    pub workflow_id: Option<String>,
    /// The host's metadata (a JSON object), echoed.
    #[serde(default)]
    pub metadata: Option<Map<String, Value>>,
}

/// Classifies a JSON [`ClassifyRequest`].
pub fn classify_json(text: &str) -> Result<Classification> {
    let r: ClassifyRequest = crate::json::parse("classify request", text)?;
    let provider = Provider::from_name(&r.provider)?;
    let context = ErrorContext { agent_id: r.agent_id, workflow_id: r.workflow_id, metadata: r.metadata };
    context.validate()?;
    let headers: Vec<(&str, &str)> = r.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let c = match r.body {
        Value::String(s) => classify(provider, r.status, &s, &headers)?,
        Value::Null => classify(provider, r.status, "", &headers)?,
        other => classify_value(provider, r.status, Some(&other), "", &headers),
    };
    Ok(c.with_context(context))
}

/// [`classify`] with the error's context, echoed in the result. Errors: as
/// for [`classify`], and `InvalidArgument` / `LimitExceeded` for an empty or
/// over-long id ([`ErrorContext::validate`]).
pub fn classify_in(
    provider: Provider,
    status: u16,
    body: &str,
    headers: &[(&str, &str)],
    context: ErrorContext,
) -> Result<Classification> {
    context.validate()?;
    Ok(classify(provider, status, body, headers)?.with_context(context))
}

impl Classification {
    fn with_context(mut self, c: ErrorContext) -> Classification {
        self.agent_id = c.agent_id;
        self.workflow_id = c.workflow_id;
        self.metadata = c.metadata;
        self
    }
}

/// Classifies one provider error from its HTTP status (0 for none), body
/// (JSON or plain text) and headers. Fails only when the body is over
/// [`crate::limits::MAX_JSON_BYTES`].
pub fn classify(provider: Provider, status: u16, body: &str, headers: &[(&str, &str)]) -> Result<Classification> {
    limits::check("error body", body.len(), MAX_JSON_BYTES)?;
    // Not JSON (or too deep) is fine: then the body is plain text.
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    Ok(classify_value(provider, status, parsed.as_ref(), body, headers))
}

/// What the body and headers say, flattened.
struct Facts {
    /// Lowercased codes and types from every place providers put them.
    codes: Vec<String>,
    /// The first code in provider order, as given (for the output).
    code: Option<String>,
    message: Option<String>,
    /// Lowercased message, or the whole body when it is not JSON.
    text: String,
    body_delay_ms: Option<u64>,
    blocked: bool,
    /// OpenAI's `param`: which request field the error is about.
    param: Option<String>,
}

fn header<'a>(headers: &[(&'a str, &'a str)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(k, _)| k.trim().eq_ignore_ascii_case(name)).map(|(_, v)| v.trim())
}

fn code_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn facts(doc: Option<&Value>, raw: &str, headers: &[(&str, &str)]) -> Facts {
    let mut codes: Vec<String> = Vec::new();
    let mut message: Option<String> = None;
    let mut body_delay_ms = None;
    let mut blocked = false;
    let mut param = None;
    let push = |codes: &mut Vec<String>, v: Option<&Value>| {
        if let Some(c) = v.and_then(code_text) {
            // Bedrock's __type may be "com.amazon.coral.service#ThrottlingException".
            let c = c.rsplit('#').next().unwrap_or(&c).to_owned();
            codes.push(c);
        }
    };
    if let Some(doc) = doc {
        match doc.get("error") {
            Some(Value::Object(e)) => {
                push(&mut codes, e.get("code"));
                push(&mut codes, e.get("type"));
                push(&mut codes, e.get("status"));
                if let Some(inner) = e.get("innererror") {
                    push(&mut codes, inner.get("code"));
                }
                message = e.get("message").and_then(Value::as_str).map(str::to_owned);
                param = e.get("param").and_then(Value::as_str).map(str::to_owned);
                if let Some(details) = e.get("details").and_then(Value::as_array) {
                    for d in details {
                        if let Some(delay) = d.get("retryDelay").and_then(Value::as_str) {
                            body_delay_ms = body_delay_ms.or_else(|| duration_ms(delay));
                        }
                        push(&mut codes, d.get("reason"));
                    }
                }
            }
            Some(Value::String(s)) => message = Some(s.clone()), // Ollama
            _ => {}
        }
        push(&mut codes, doc.get("__type"));
        push(&mut codes, doc.get("code"));
        if message.is_none() {
            message = ["message", "Message", "detail"]
                .iter()
                .find_map(|k| doc.get(*k).and_then(Value::as_str))
                .map(str::to_owned);
        }
        // Gemini reports a blocked prompt in an otherwise normal response.
        blocked = doc.pointer("/promptFeedback/blockReason").is_some();
        if let Some(r) = doc.pointer("/promptFeedback/blockReason") {
            push(&mut codes, Some(r));
        }
    }
    if let Some(t) = header(headers, "x-amzn-errortype") {
        // "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"
        codes.push(t.split(':').next().unwrap_or(t).to_owned());
    }
    let code = codes.first().cloned();
    let codes = codes.into_iter().map(|c| c.to_ascii_lowercase()).collect();
    let text = match (&message, doc) {
        (Some(m), _) => m.to_lowercase(),
        (None, Some(_)) => String::new(),
        (None, None) => raw.to_lowercase(),
    };
    if body_delay_ms.is_none() {
        body_delay_ms = delay_in_text(&text);
    }
    let message = message.or_else(|| (doc.is_none() && !raw.trim().is_empty()).then(|| raw.trim().to_owned()));
    Facts { codes, code, message, text, body_delay_ms, blocked, param }
}

/// "28s", "1.5s", "200ms" to milliseconds.
fn duration_ms(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, scale) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1000.0)
    } else {
        (s, 1000.0)
    };
    let v: f64 = num.trim().parse().ok()?;
    (v.is_finite() && v >= 0.0).then(|| (v * scale).ceil().min(u64::MAX as f64) as u64)
}

/// "please try again in 4.8s" (OpenAI), "retry after 6 seconds" (Azure).
fn delay_in_text(text: &str) -> Option<u64> {
    for marker in ["try again in ", "retry after "] {
        let Some(at) = text.find(marker) else { continue };
        let rest = &text[at + marker.len()..];
        let num: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
        let unit = rest[num.len()..].trim_start();
        let scale = if unit.starts_with("ms") || unit.starts_with("millisecond") {
            1.0
        } else if unit.starts_with('s') {
            1000.0
        } else if unit.starts_with('m') {
            60_000.0
        } else {
            continue;
        };
        if let Ok(v) = num.trim_end_matches('.').parse::<f64>() {
            return Some((v * scale).ceil() as u64);
        }
    }
    None
}

fn server_delay(headers: &[(&str, &str)], f: &Facts) -> Option<(u64, DelaySource)> {
    if let Some(ms) =
        header(headers, "retry-after-ms").and_then(|v| v.parse::<f64>().ok()).filter(|v| v.is_finite() && *v >= 0.0)
    {
        return Some((ms.ceil() as u64, DelaySource::RetryAfterMsHeader));
    }
    // Seconds; an HTTP-date form is not interpreted (it needs a clock).
    if let Some(s) =
        header(headers, "retry-after").and_then(|v| v.parse::<f64>().ok()).filter(|v| v.is_finite() && *v >= 0.0)
    {
        return Some(((s * 1000.0).ceil().min(u64::MAX as f64) as u64, DelaySource::RetryAfterHeader));
    }
    f.body_delay_ms.map(|ms| (ms, DelaySource::Body))
}

fn any_code(f: &Facts, list: &[&str]) -> bool {
    f.codes.iter().any(|c| list.contains(&c.as_str()))
}

fn any_text(f: &Facts, list: &[&str]) -> bool {
    list.iter().any(|p| f.text.contains(p))
}

/// The ids listed after `marker` in `message`, up to the end of its sentence.
fn ids_after(message: &str, markers: &[&str]) -> Vec<String> {
    // ASCII lowercasing keeps byte offsets, so `at` indexes `message` too.
    let lower = message.to_ascii_lowercase();
    for m in markers {
        let Some(at) = lower.find(m) else { continue };
        let rest = &message[at + m.len()..];
        let end = rest.find(". ").unwrap_or(rest.len());
        return rest[..end]
            .split(|c: char| c == ',' || c.is_whitespace())
            .map(|s| s.trim_matches(|c: char| c == '.' || c == '`' || c == '\'' || c == '"' || c == '[' || c == ']'))
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
    }
    Vec::new()
}

/// The values of `'id': '...'` (or `"id": "..."`) entries: LangGraph prints
/// the unanswered calls as Python dicts, `{'name': 'search', 'args': {...},
/// 'id': 'call_abc', 'type': 'tool_call'}`. At most 64 ids of up to 256 bytes.
fn python_dict_ids(message: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for quote in ['\'', '"'] {
        let key = format!("{quote}id{quote}:");
        let mut rest = message;
        while let Some(at) = rest.find(&key) {
            rest = rest[at + key.len()..].trim_start();
            let Some(body) = rest.strip_prefix(quote) else { continue };
            let Some(end) = body.find(quote) else { break };
            let id = &body[..end];
            if !id.is_empty() && id.len() <= crate::limits::MAX_KEY_BYTES && !out.iter().any(|x| x == id) {
                out.push(id.to_owned());
            }
            if out.len() >= 64 {
                return out;
            }
            rest = &body[end..];
        }
    }
    out
}

const TOOL_ID_MARKERS: &[&str] = &[
    "did not have response messages:",
    "without `tool_result` blocks immediately after:",
    "without tool_result blocks immediately after:",
    "found in `tool_result` blocks:",
    "for the following ids:",
];

fn category_of(status: u16, f: &Facts) -> (Category, bool) {
    use Category::*;
    // (category, quota exhausted: a rate limit that waiting will not fix)
    if any_text(
        f,
        &[
            "did not have response messages",
            "must be followed by tool messages",
            "must be a response to a preceeding message with 'tool_calls'",
            "must be a response to a preceding message with 'tool_calls'",
            "ids were found without `tool_result` blocks",
            "ids were found without tool_result blocks",
            "unexpected `tool_use_id` found in `tool_result` blocks",
            "each `tool_result` block must have a corresponding `tool_use` block",
            "expected toolresult blocks at",
            // LangGraph's create_react_agent / ToolNode (INVALID_CHAT_HISTORY).
            "do not have a corresponding toolmessage",
            "invalid_chat_history",
            "toolresult blocks at",
            "function response turn comes immediately after a function call turn",
            "number of function response parts is equal to the number of function call parts",
        ],
    ) {
        return (InvalidToolHistory, false);
    }
    // `string_above_max_length` is an overflow only when it is about the
    // messages (a too-long `user` field is an invalid request).
    let long_string = any_code(f, &["string_above_max_length"])
        && f.param.as_deref().is_none_or(|p| p.starts_with("messages") || p.starts_with("input"));
    let overflow_code = long_string
        || any_code(
            f,
            &["context_length_exceeded", "exceed_context_size_error", "request_too_large", "context_window_exceeded"],
        );
    let overflow_text = any_text(
        f,
        &[
            "maximum context length",
            "prompt is too long",
            "input is too long",
            "exceed context limit",
            "exceeds the maximum number of tokens allowed",
            "exceeds the context window",
            "exceeds maximum context length",
            "exceeds the available context size",
            "too many input tokens",
            "context length exceeded",
            "context window exceeded",
            // Vertex AI: "the input token count is N but model only supports up to M".
            "but model only supports up to",
            // OpenAI: "Input tokens exceed the configured limit of N tokens".
            "input tokens exceed the configured limit",
            // OpenAI 429 and Groq 413 "Request too large for <model> ... on tokens
            // per min": the request alone is over the per-minute budget, so
            // waiting never helps; making it smaller does.
            "request too large for",
            // Cohere: "too many tokens: total number of tokens in the prompt cannot exceed N".
            "too many tokens: total number of tokens",
            // Gateways (LiteLLM's ContextWindowExceededError and the like).
            "contextwindowexceedederror",
            "reduce the length of the messages",
        ],
    );
    // A 5xx that mentions the context length is still a server error: the
    // request was not refused for its size.
    if overflow_code || (overflow_text && !(500..600).contains(&status)) {
        return (ContextOverflow, false);
    }
    if f.blocked
        || any_code(
            f,
            &[
                "content_filter",
                "content_policy_violation",
                "responsibleaipolicyviolation",
                "safety",
                "prohibited_content",
                "blocklist",
                // OpenAI: "Invalid prompt: your prompt was flagged as potentially violating our usage policy".
                "invalid_prompt",
            ],
        )
        || any_text(f, &["content management policy", "content filtering policy", "blocked by our content filters"])
    {
        return (ContentFilter, false);
    }
    if any_code(f, &["tool_use_failed", "malformed_function_call"])
        || any_text(f, &["failed to call a function", "malformed function call"])
    {
        return (ToolError, false);
    }
    // Waiting does not refill an exhausted quota. Gemini words its
    // per-minute RESOURCE_EXHAUSTED like a quota message, so that code wins.
    if any_code(f, &["insufficient_quota", "billing_error", "billing_not_active", "servicequotaexceededexception"])
        || (any_text(f, &["exceeded your current quota"]) && !any_code(f, &["resource_exhausted"]))
    {
        return (RateLimited, true);
    }
    if any_code(
        f,
        &[
            "authentication_error",
            "invalid_api_key",
            "unauthenticated",
            "unrecognizedclientexception",
            "expiredtokenexception",
            "api_key_invalid",
            "invalidsignatureexception",
            "incompletesignature",
        ],
    ) || any_text(
        f,
        &[
            "api key not valid",
            "incorrect api key",
            "invalid x-api-key",
            "invalid api key",
            "invalid subscription key",
            "security token included in the request is invalid",
        ],
    ) {
        return (Auth, false);
    }
    if any_code(f, &["permission_error", "permission_denied", "accessdeniedexception", "forbidden"]) {
        return (Permission, false);
    }
    if any_code(
        f,
        &[
            "modelnotreadyexception",
            "overloaded_error",
            "serviceunavailableexception",
            "unavailable",
            "server_overloaded",
            "engine_overloaded",
        ],
    ) || matches!(status, 503 | 529)
        || any_text(f, &["overloaded", "server busy", "maximum pending requests exceeded", "currently unavailable"])
    {
        return (Overloaded, false);
    }
    if any_code(
        f,
        &[
            "rate_limit_error",
            "rate_limit_exceeded",
            "throttlingexception",
            "resource_exhausted",
            "toomanyrequestsexception",
            "too_many_requests",
            "tokens",
            "requests",
        ],
    ) || status == 429
    {
        return (RateLimited, false);
    }
    if any_code(f, &["timeout_error", "deadline_exceeded", "modeltimeoutexception", "timeout"])
        || matches!(status, 408 | 504)
    {
        return (Timeout, false);
    }
    if any_code(
        f,
        &[
            "api_error",
            "server_error",
            "internal",
            "internal_error",
            "internalserverexception",
            "internalservererror",
            "internal_server_error",
            "modelerrorexception",
            "modelstreamerrorexception",
        ],
    ) || (500..600).contains(&status)
    {
        return (ServerError, false);
    }
    if status == 0 {
        return (status_zero(f), false);
    }
    if status == 401 {
        return (Auth, false);
    }
    if status == 403 || any_code(f, &["failed_precondition"]) {
        return (Permission, false);
    }
    if any_code(
        f,
        &[
            "invalid_request_error",
            "invalid_argument",
            "validationexception",
            "not_found_error",
            "not_found",
            "resourcenotfoundexception",
            "model_not_found",
            "invalid_request",
        ],
    ) || (400..500).contains(&status)
    {
        return (InvalidRequest, false);
    }
    (Unknown, false)
}

/// Status 0: no HTTP response, so the text is all there is (an exception
/// message from a client library, a gateway or the host's own code).
fn status_zero(f: &Facts) -> Category {
    use Category::*;
    let t = f.text.trim();
    if t.is_empty() {
        return Network;
    }
    let has = |list: &[&str]| list.iter().any(|p| t.contains(p));
    if has(&["timed out", "timeout", "deadline exceeded", "deadline expired"]) {
        return Timeout;
    }
    if has(&["rate limit", "rate-limit", "ratelimit", "too many requests", "throttl"]) {
        return RateLimited;
    }
    if has(&[
        "connection refused",
        "connection reset",
        "connection aborted",
        "connection error",
        "connection closed",
        "connecterror",
        "apiconnectionerror",
        "econnrefused",
        "econnreset",
        "enotfound",
        "eai_again",
        "epipe",
        "broken pipe",
        "network is unreachable",
        "no route to host",
        "name or service not known",
        "temporary failure in name resolution",
        "getaddrinfo",
        "failed to establish a new connection",
        "server disconnected",
        "remote end closed connection",
        "remotedisconnected",
        "upstream connect error",
    ]) {
        return Network;
    }
    if has(&["safety", "content filter", "content_filter", "content policy", "moderation", "flagged"]) {
        return ContentFilter;
    }
    if has(&["validation", "invalid input", "invalid argument", "valueerror"]) {
        return InvalidRequest;
    }
    // Document 000's rule is "state" or "redis" anywhere in the text; a whole
    // word "state" keeps "statement" and "estate" out.
    if has(&["redis", "checkpointer", "checkpoint store", "statestore", "invalidstateerror"]) || has_word(t, "state") {
        return State;
    }
    if has(&["toolexception", "tool_exception", "toolerror", "tool execution", "tool call failed", "tool failed"])
        || has_word(t, "tool")
    {
        return ToolFailed;
    }
    Unknown
}

/// Whether `word` (lowercase ASCII) occurs in `text` between non-alphanumeric
/// characters (or the text's ends).
fn has_word(text: &str, word: &str) -> bool {
    let b = text.as_bytes();
    let mut from = 0;
    while let Some(at) = text[from..].find(word).map(|i| i + from) {
        let end = at + word.len();
        let before = at == 0 || !b[at - 1].is_ascii_alphanumeric();
        let after = end == b.len() || !b[end].is_ascii_alphanumeric();
        if before && after {
            return true;
        }
        from = end;
    }
    false
}

/// The category of a failed tool execution from its error text alone: what
/// [`classify`] reads in a status-0 text, with [`Category::ToolFailed`] for a
/// text none of its patterns recognise (the tool ran and failed; nothing says
/// why). The tracer uses it for a `failed` span the host gave no category.
pub fn tool_failure_category(error: &str) -> Category {
    let f = facts(None, error, &[]);
    if f.text.trim().is_empty() {
        return Category::ToolFailed;
    }
    match category_of(0, &f).0 {
        Category::Unknown => Category::ToolFailed,
        c => c,
    }
}

impl Category {
    /// The category's snake_case name, as serialized.
    pub fn as_str(self) -> &'static str {
        use Category::*;
        match self {
            RateLimited => "rate_limited",
            Overloaded => "overloaded",
            Timeout => "timeout",
            ContextOverflow => "context_overflow",
            InvalidToolHistory => "invalid_tool_history",
            Auth => "auth",
            Permission => "permission",
            InvalidRequest => "invalid_request",
            ContentFilter => "content_filter",
            ServerError => "server_error",
            Network => "network",
            ToolError => "tool_error",
            ToolFailed => "tool_failed",
            State => "state",
            Unknown => "unknown",
        }
    }
}

/// Default wait when the server gave no hint, by category.
fn default_delay(c: Category) -> u64 {
    match c {
        Category::RateLimited => 1000,
        Category::Overloaded => 2000,
        Category::Timeout | Category::ServerError => 500,
        Category::Network => 250,
        _ => 0,
    }
}

fn classify_value(
    provider: Provider,
    status: u16,
    doc: Option<&Value>,
    raw: &str,
    headers: &[(&str, &str)],
) -> Classification {
    use Category::*;
    let f = facts(doc, raw, headers);
    let (category, quota) = category_of(status, &f);
    let (severity, action) = match category {
        RateLimited if quota => (Severity::Critical, Action::Fail),
        RateLimited | Overloaded | Timeout | ServerError | Network => (Severity::Low, Action::Retry),
        ToolError => (Severity::Medium, Action::Retry),
        // The tool's error goes back to the model as its result; resending
        // the model request unchanged would not run the tool again.
        ToolFailed => (Severity::Medium, Action::Fail),
        State => (Severity::High, Action::Fail),
        ContextOverflow => (Severity::Medium, Action::Compact),
        InvalidToolHistory => (Severity::Medium, Action::RepairHistory),
        InvalidRequest | ContentFilter | Unknown => (Severity::High, Action::Fail),
        Auth | Permission => (Severity::Critical, Action::Fail),
    };
    let retryable = action == Action::Retry;
    let (retry_after_ms, delay_source) = if retryable {
        let (ms, src) = server_delay(headers, &f).unwrap_or((default_delay(category), DelaySource::Default));
        (Some(ms), Some(src))
    } else {
        (None, None)
    };
    let tool_call_ids = if category == InvalidToolHistory {
        f.message
            .as_deref()
            .map(|m| {
                let ids = ids_after(m, TOOL_ID_MARKERS);
                if ids.is_empty() {
                    python_dict_ids(m)
                } else {
                    ids
                }
            })
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    Classification {
        category,
        severity,
        retryable,
        action,
        retry_after_ms,
        delay_source,
        provider,
        status,
        code: f.code,
        message: f.message,
        tool_call_ids,
        agent_id: None,
        workflow_id: None,
        metadata: None,
    }
}
