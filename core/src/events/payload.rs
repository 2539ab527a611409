//! The types events carry that belong to the modules emitting them (a
//! breaker's state, a skipped skill entry, an overdue span, a compaction
//! strategy, a pre-flight verdict).
//!
//! They are defined here, below their home modules, so that `events` imports
//! none of its emitters while they import `events` to emit: the import graph
//! between core's modules stays a tree (scripts/module-graph.py). Each is
//! re-exported from its home module, which is its one public path
//! (`turnfit::recovery::BreakerState`, ...), and keeps its methods there.

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
