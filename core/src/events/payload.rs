//! The types events carry that belong to the modules emitting them (a
//! breaker's state, a skipped skill entry, an overdue span, a finished
//! span's record and its outcome, a compaction strategy, a pre-flight verdict).
//!
//! They are defined here, below their home modules, so that `events` imports
//! none of its emitters while they import `events` to emit: the import graph
//! between core's modules stays a tree (scripts/module-graph.py). Each is
//! re-exported from its home module, which is its one public path
//! (`turnfit::recovery::BreakerState`, ...), and keeps its methods there.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A breaker's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum BreakerState {
    /// Calls flow.
    Closed,
    /// Calls are refused.
    Open,
    /// A limited number of probe calls are let through.
    HalfOpen,
}

/// An entry found in the root that is not a skill, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Ignored {
    /// The entry's name.
    pub path: String,
    /// Why it was skipped.
    pub reason: String,
}

/// A span past its deadline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OverdueSpan {
    /// Span id.
    pub span_id: u64,
    /// Tool name.
    pub tool: String,
    /// Calling agent, if given.
    pub agent_id: Option<String>,
    /// Workflow, if given.
    pub workflow_id: Option<String>,
    /// Tool-call id, if given.
    pub tool_call_id: Option<String>,
    /// Start, µs.
    pub started_us: u64,
    /// Time since start, µs.
    pub elapsed_us: u64,
    /// The deadline it missed, ms.
    pub timeout_ms: u64,
}

/// How rounds are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// Keep the newest rounds that fit.
    #[default]
    Recency,
    /// Keep the rounds most relevant to the latest user input (BM25, or the
    /// host's scores), in their original order.
    Relevance,
    /// Rank by `relevance_weight * relevance + (1 - relevance_weight) * recency`.
    Hybrid,
    /// Replace the oldest rounds by one summary: the host's (two-phase, see
    /// `summarize`), or a deterministic extractive digest when `compact` is
    /// called directly.
    Summarize,
}

/// The pre-flight verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Below the trigger ratio.
    Fits,
    /// Fits the window but at or above the trigger ratio: compact now.
    ShouldCompact,
    /// Prompt plus reserved output exceed the window: the call would fail.
    Overflow,
}

/// How a span ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The tool returned a result.
    Success,
    /// The tool returned an error.
    Failed,
    /// The tool ran past its deadline.
    Timeout,
    /// The call was abandoned (the agent was stopped, the user cancelled).
    Cancelled,
}

/// A finished span in the ring; `count` consecutive repeats of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SpanRecord {
    /// The first span's id.
    pub span_id: u64,
    /// Tool name.
    pub tool: String,
    /// Calling agent, if given.
    pub agent_id: Option<String>,
    /// Workflow, if given.
    pub workflow_id: Option<String>,
    /// The first span's tool-call id, if given.
    pub tool_call_id: Option<String>,
    /// Fingerprint of the first span's `input` (FNV-1a 64, 16 hex digits), if given.
    pub input_hash: Option<String>,
    /// The first `excerpt_bytes` of the first span's `input` (cut text ends
    /// with `…`), if given and the tracer keeps excerpts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_excerpt: Option<String>,
    /// The first `excerpt_bytes` of the first span's `output`, likewise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_excerpt: Option<String>,
    /// How it ended.
    pub outcome: Outcome,
    /// Error text (cut to [`crate::limits::MAX_SPAN_ERROR_BYTES`]).
    pub error: Option<String>,
    /// The first span's start, µs.
    pub started_us: u64,
    /// The first span's duration, µs.
    pub duration_us: u64,
    /// The first span's input size, bytes.
    pub input_bytes: u64,
    /// The first span's output size, bytes.
    pub output_bytes: u64,
    /// Token usage the host reported at the end, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Completion tokens the host reported at the end, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// The error category the host reported; for a `failed` or `timeout`
    /// span without one, the tracer's (see the module).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_category: Option<String>,
    /// The first span's metadata (empty: omitted).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, serde_json::Value>,
    /// Consecutive repeats folded into this record (1 = just this).
    pub count: u64,
    /// The id of the last span folded into this record (`span_id` when
    /// `count` is 1).
    pub last_span_id: u64,
    /// When the last of them ended, µs.
    pub last_ended_us: u64,
}
