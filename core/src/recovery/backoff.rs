//! Retry delays: exponential backoff with full jitter ("Exponential Backoff
//! And Jitter", AWS Architecture Blog): after the n-th failure wait a uniform
//! random time in `[0, min(cap, base * 2^(n-1))]`. Full jitter spreads the
//! retries of many agents that failed together, which fixed delays do not.
//!
//! `jitter: "none"` turns the jitter off for hosts that want a fixed
//! schedule (base 1000 ms: 1 s, 2 s, 4 s, ...), typically one agent whose
//! retries no other agent competes with, or a test that asserts the waits.
//!
//! The random number comes from a [`SplitMix64`] seeded with the caller's
//! seed and the attempt number, so the policy is stateless (shareable by any
//! number of threads) and a given (seed, attempt) always gives the same delay.

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// Steele, Lea and Flood's SplitMix64: tiny, fast, and good enough to spread
/// retries. Not for cryptography.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform value in `0..=max` (Lemire's multiply-shift; the bias is
    /// below 2^-64 of the range and irrelevant for delays).
    pub fn up_to(&mut self, max: u64) -> u64 {
        if max == u64::MAX {
            return self.next_u64();
        }
        ((u128::from(self.next_u64()) * (u128::from(max) + 1)) >> 64) as u64
    }
}

/// How the delay is spread below its ceiling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Jitter {
    /// Uniform in `[0, ceiling]` (the default: spreads many agents' retries).
    #[default]
    Full,
    /// Exactly the ceiling: `min(cap, base * 2^(n-1))`, a fixed schedule.
    None,
}

/// A retry policy. Every field is optional in JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct BackoffPolicy {
    /// Upper bound of the first retry's delay, in ms.
    pub base_ms: u64,
    /// No computed delay exceeds this, in ms.
    pub cap_ms: u64,
    /// Attempts in total, the first call included: after this many failures
    /// the policy says give up.
    pub max_attempts: u32,
    /// Whether a server hint (Retry-After) is honoured. When it is, the delay
    /// is at least the hint, even above `cap_ms`: retrying before the server
    /// said to only earns another rejection.
    pub honor_retry_after: bool,
    /// A server hint longer than this makes the policy give up rather than
    /// wait (an agent should not sleep for an hour on a 429).
    pub max_retry_after_ms: u64,
    /// `full` (default) or `none` (the delay is the ceiling itself).
    pub jitter: Jitter,
}

impl Default for BackoffPolicy {
    fn default() -> Self {
        BackoffPolicy {
            base_ms: 500,
            cap_ms: 30_000,
            max_attempts: 5,
            honor_retry_after: true,
            max_retry_after_ms: 120_000,
            jitter: Jitter::Full,
        }
    }
}

/// What to do after a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum RetryDecision {
    /// Wait `delay_ms`, then try again.
    Retry {
        /// The wait, in milliseconds.
        delay_ms: u64,
    },
    /// Stop retrying.
    GiveUp {
        /// Why, for logs.
        reason: &'static str,
    },
}

/// The input of `turnfit_recovery_backoff`: `{"policy", "failed_attempts",
/// "seed", "retry_after_ms"}`.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct BackoffRequest {
    /// The policy (defaults when absent).
    #[serde(default)]
    pub policy: BackoffPolicy,
    /// Failures so far, the one just seen included (1 after the first call failed).
    pub failed_attempts: u32,
    /// Seed for the jitter; use a different one per request or agent.
    #[serde(default)]
    pub seed: u64,
    /// The server's hint, e.g. a classification's `retry_after_ms`.
    #[serde(default)]
    pub retry_after_ms: Option<u64>,
}

impl BackoffPolicy {
    /// Checks the policy: `base_ms` at least 1, `cap_ms >= base_ms`,
    /// `max_attempts` at least 1.
    pub fn validate(&self) -> Result<()> {
        if self.base_ms == 0 {
            return Err(Error::invalid_argument("backoff base_ms must be at least 1"));
        }
        if self.cap_ms < self.base_ms {
            return Err(Error::invalid_argument(format!(
                "backoff cap_ms {} is below base_ms {}",
                self.cap_ms, self.base_ms
            )));
        }
        if self.max_attempts == 0 {
            return Err(Error::invalid_argument("backoff max_attempts must be at least 1"));
        }
        Ok(())
    }

    /// The ceiling of the jittered delay after `failed_attempts` failures:
    /// `min(cap, base * 2^(failed_attempts - 1))`, without overflow.
    pub fn ceiling_ms(&self, failed_attempts: u32) -> u64 {
        let shift = failed_attempts.saturating_sub(1).min(63);
        self.base_ms.checked_shl(shift).filter(|v| v >> shift == self.base_ms).unwrap_or(u64::MAX).min(self.cap_ms)
    }

    /// The decision after `failed_attempts` failures (at least 1), with the
    /// server's hint if it gave one. Deterministic in `(seed, failed_attempts)`.
    pub fn decide(&self, failed_attempts: u32, seed: u64, retry_after_ms: Option<u64>) -> Result<RetryDecision> {
        self.validate()?;
        if failed_attempts == 0 {
            return Err(Error::invalid_argument("failed_attempts must be at least 1 (count the failure just seen)"));
        }
        if failed_attempts >= self.max_attempts {
            return Ok(RetryDecision::GiveUp { reason: "max_attempts reached" });
        }
        let ceiling = self.ceiling_ms(failed_attempts);
        let jittered = match self.jitter {
            Jitter::Full => {
                SplitMix64::new(seed ^ u64::from(failed_attempts).wrapping_mul(0xD1B5_4A32_D192_ED03)).up_to(ceiling)
            }
            Jitter::None => ceiling,
        };
        let delay_ms = match retry_after_ms.filter(|_| self.honor_retry_after) {
            Some(hint) if hint > self.max_retry_after_ms => {
                return Ok(RetryDecision::GiveUp { reason: "server asked to wait longer than max_retry_after_ms" })
            }
            Some(hint) => jittered.max(hint),
            None => jittered,
        };
        Ok(RetryDecision::Retry { delay_ms })
    }

    /// [`BackoffPolicy::decide`] for a JSON [`BackoffRequest`].
    pub fn decide_json(text: &str) -> Result<RetryDecision> {
        let r: BackoffRequest = crate::json::parse("backoff request", text)?;
        r.policy.decide(r.failed_attempts, r.seed, r.retry_after_ms)
    }
}
