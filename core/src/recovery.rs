//! Error recovery for agent loops: what a provider error means and what to
//! do about it.
//!
//! - [`classify`] reads a provider's HTTP status, body and headers (OpenAI,
//!   Azure OpenAI, Anthropic, AWS Bedrock, Google Gemini, Ollama) and says
//!   which [`Category`] the error is in, how severe it is, whether the same
//!   request may be retried, and the recommended [`Action`]: retry after N ms,
//!   compact the context, repair the tool-call history, or fail.
//! - [`BackoffPolicy`] computes retry delays: exponential with full jitter,
//!   capped, a maximum number of attempts, honouring the server's
//!   Retry-After; deterministic for a given seed.
//! - [`ErrorContext`] is who met the error (agent, workflow, metadata):
//!   [`classify_in`] echoes it in the classification, and the breakers
//!   ([`Breakers::record_in`]) and the tracer count failures per agent and
//!   per workflow ([`FailureCounts`]).
//! - [`Breakers`] is a set of circuit breakers, one per key (a provider, a
//!   model, a tool), so a failing dependency is given a rest instead of being
//!   hammered by every agent at once.
//!
//! Time is always passed in by the caller in milliseconds, so every decision
//! is reproducible in tests; [`now_ms`] is the one place that reads the clock.

mod backoff;
mod breaker;
mod classify;
mod context;

pub use backoff::{BackoffPolicy, BackoffRequest, Jitter, RetryDecision, SplitMix64};
pub use breaker::{BreakerConfig, BreakerSnapshot, BreakerState, Breakers};
pub use classify::{
    classify, classify_in, classify_json, tool_failure_category, Action, Category, Classification, ClassifyRequest,
    DelaySource, Provider, Severity,
};
pub use context::{ErrorContext, FailureCounts, MAX_COUNTED_IDS};

/// Milliseconds since the Unix epoch, from the system clock. A convenience
/// for callers that have no clock of their own; nothing else in the core
/// reads the time.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests;
