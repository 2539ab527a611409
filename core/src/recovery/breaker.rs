//! Circuit breakers, one per key (a provider, a model, a tool).
//!
//! - **closed**: calls flow; `failure_threshold` consecutive failures open it.
//! - **open**: calls are refused until `cool_down_ms` has passed since it
//!   opened; then the next `allow` moves it to half-open.
//! - **half-open**: up to `half_open_max_calls` probe calls are let through
//!   at a time; `success_threshold` successes close it, any failure opens it
//!   again (and restarts the cool-down).
//!
//! The caller passes the time (ms) into every call, so the machine is
//! deterministic; a clock that goes backwards counts as no time passing.
//! [`Breakers`] is internally synchronized (`&self` methods, one mutex).

use std::collections::HashMap;

use parking_lot::Mutex;

use super::context::{ErrorContext, FailureCounts};
use crate::events::{BreakerTransition, Event, Observer, ObserverSlot};
use serde::{Deserialize, Serialize};

use crate::limits::{self, MAX_BREAKER_KEYS, MAX_KEY_BYTES};
use crate::{Error, ErrorKind, Result};

/// Breaker settings; every field is optional in JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct BreakerConfig {
    /// Consecutive failures that open a closed breaker.
    pub failure_threshold: u32,
    /// How long an open breaker refuses calls, in ms.
    pub cool_down_ms: u64,
    /// Probe calls allowed at once while half-open.
    pub half_open_max_calls: u32,
    /// Probe successes that close a half-open breaker.
    pub success_threshold: u32,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        BreakerConfig { failure_threshold: 5, cool_down_ms: 30_000, half_open_max_calls: 1, success_threshold: 1 }
    }
}

pub use crate::events::payload::BreakerState;

/// One key's state as JSON (docs/formats.md, "Circuit breaker state").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BreakerSnapshot {
    /// The key.
    pub key: String,
    /// The state at the time asked about.
    pub state: BreakerState,
    /// Consecutive failures while closed.
    pub consecutive_failures: u32,
    /// When it last opened (ms), if it is open or half-open.
    pub opened_at_ms: Option<u64>,
    /// While open: ms until probes are allowed.
    pub retry_in_ms: Option<u64>,
    /// While half-open: probes in flight and successes so far.
    pub probes_in_flight: u32,
    /// While half-open: probe successes so far.
    pub probe_successes: u32,
}

#[derive(Debug, Clone, Copy, Default)]
struct Entry {
    state: Option<BreakerState>, // None = closed (so Default is closed)
    failures: u32,
    opened_at: u64,
    in_flight: u32,
    successes: u32,
}

impl Entry {
    fn state(&self) -> BreakerState {
        self.state.unwrap_or(BreakerState::Closed)
    }

    fn is_idle(&self) -> bool {
        self.state() == BreakerState::Closed && self.failures == 0
    }

    /// Moves an open breaker whose cool-down is over to half-open.
    fn tick(&mut self, cfg: &BreakerConfig, now: u64) {
        if self.state() == BreakerState::Open && now.saturating_sub(self.opened_at) >= cfg.cool_down_ms {
            self.state = Some(BreakerState::HalfOpen);
            self.in_flight = 0;
            self.successes = 0;
        }
    }

    fn open(&mut self, now: u64) {
        *self = Entry { state: Some(BreakerState::Open), failures: 0, opened_at: now, in_flight: 0, successes: 0 };
    }
}

fn check_key(key: &str) -> Result<()> {
    if key.is_empty() {
        return Err(Error::invalid_argument("breaker key is empty"));
    }
    limits::check("breaker key", key.len(), MAX_KEY_BYTES)
}

/// A set of circuit breakers keyed by name. Thread-safe.
#[derive(Debug)]
pub struct Breakers {
    config: BreakerConfig,
    keys: Mutex<HashMap<String, Entry>>,
    /// Failures recorded with a context, per agent and per workflow (over
    /// every key; kept apart from the per-key entries, which are dropped when
    /// idle, so the counts survive a breaker closing).
    counts: Mutex<FailureCounts>,
    observer: ObserverSlot,
}

impl Breakers {
    /// Breakers with `config`. Errors: `InvalidArgument` for a zero threshold
    /// or a zero `half_open_max_calls`.
    pub fn new(config: BreakerConfig) -> Result<Breakers> {
        if config.failure_threshold == 0 || config.success_threshold == 0 || config.half_open_max_calls == 0 {
            return Err(Error::invalid_argument(
                "breaker failure_threshold, success_threshold and half_open_max_calls must each be at least 1",
            ));
        }
        Ok(Breakers {
            config,
            keys: Mutex::new(HashMap::new()),
            counts: Mutex::new(FailureCounts::default()),
            observer: ObserverSlot::default(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &BreakerConfig {
        &self.config
    }

    /// Sets the observer that receives `breaker_state_changed` events (see
    /// [`crate::events`]); it is called after the breaker's lock is released.
    pub fn set_observer(&self, observer: Observer) {
        self.observer.set(observer);
    }

    /// Runs `f` on `key`'s entry at `now_ms`, after moving an open breaker
    /// whose cool-down is over to half-open, then reports each state change
    /// (the cool-down's, and `f`'s) to the observer once the lock is released.
    fn with_entry<T>(&self, key: &str, now_ms: u64, f: impl FnOnce(&mut Entry) -> T) -> Result<T> {
        let mut moves = [None, None];
        let out = self.with_entry_locked(key, |e| {
            let s0 = e.state();
            e.tick(&self.config, now_ms);
            let s1 = e.state();
            let out = f(e);
            let s2 = e.state();
            moves = [(s0 != s1).then_some((s0, s1)), (s1 != s2).then_some((s1, s2))];
            out
        })?;
        let observer = self.observer.get();
        for (from, to) in moves.into_iter().flatten() {
            observer.emit(|| {
                Event::BreakerStateChanged(BreakerTransition { key: key.to_owned(), from, to, at_ms: now_ms })
            });
        }
        Ok(out)
    }

    fn with_entry_locked<T>(&self, key: &str, f: impl FnOnce(&mut Entry) -> T) -> Result<T> {
        check_key(key)?;
        let mut keys = self.keys.lock();
        if !keys.contains_key(key) {
            if keys.len() >= MAX_BREAKER_KEYS {
                // Closed breakers with no failures carry no information.
                keys.retain(|_, e| !e.is_idle());
            }
            if keys.len() >= MAX_BREAKER_KEYS {
                return Err(Error::new(
                    ErrorKind::LimitExceeded,
                    format!(
                        "breaker tracks {MAX_BREAKER_KEYS} keys with failures already; the limit is {MAX_BREAKER_KEYS}"
                    ),
                ));
            }
            keys.insert(key.to_owned(), Entry::default());
        }
        let entry = keys.get_mut(key).ok_or_else(|| Error::internal("breaker entry vanished"))?;
        Ok(f(entry))
    }

    /// Whether a call under `key` may go ahead at `now_ms`. While half-open a
    /// `true` reserves one probe slot; report its outcome with [`Breakers::record`].
    pub fn allow(&self, key: &str, now_ms: u64) -> Result<bool> {
        let cfg = self.config;
        self.with_entry(key, now_ms, |e| match e.state() {
            BreakerState::Closed => true,
            BreakerState::Open => false,
            BreakerState::HalfOpen if e.in_flight < cfg.half_open_max_calls => {
                e.in_flight += 1;
                true
            }
            BreakerState::HalfOpen => false,
        })
    }

    /// Records a call's outcome under `key` at `now_ms`; returns the new state.
    pub fn record(&self, key: &str, success: bool, now_ms: u64) -> Result<BreakerState> {
        let cfg = self.config;
        self.with_entry(key, now_ms, |e| {
            match (e.state(), success) {
                (BreakerState::Closed, true) => e.failures = 0,
                (BreakerState::Closed, false) => {
                    e.failures = e.failures.saturating_add(1);
                    if e.failures >= cfg.failure_threshold {
                        e.open(now_ms);
                    }
                }
                // A result arriving while open (a call started before it
                // opened) changes nothing.
                (BreakerState::Open, _) => {}
                (BreakerState::HalfOpen, true) => {
                    e.in_flight = e.in_flight.saturating_sub(1);
                    e.successes += 1;
                    if e.successes >= cfg.success_threshold {
                        *e = Entry::default();
                    }
                }
                (BreakerState::HalfOpen, false) => e.open(now_ms),
            }
            e.state()
        })
    }

    /// [`Breakers::record`] for a call made by `context`'s agent in its
    /// workflow: a failure is also counted under both ids (see
    /// [`Breakers::failure_counts`]). Errors: as for `record`, and the
    /// context's own ([`ErrorContext::validate`]), checked before anything
    /// is recorded.
    pub fn record_in(&self, key: &str, success: bool, now_ms: u64, context: &ErrorContext) -> Result<BreakerState> {
        context.validate()?;
        let state = self.record(key, success, now_ms)?;
        if !success {
            self.counts.lock().add(context.agent_id.as_deref(), context.workflow_id.as_deref());
        }
        Ok(state)
    }

    /// Failures recorded through [`Breakers::record_in`], per agent and per
    /// workflow, over every key since the breakers were made.
    pub fn failure_counts(&self) -> FailureCounts {
        self.counts.lock().clone()
    }

    /// The state of `key` at `now_ms` (an unknown key is closed, and is not
    /// added). Moves an open breaker whose cool-down is over to half-open, as
    /// `allow` would.
    pub fn snapshot(&self, key: &str, now_ms: u64) -> Result<BreakerSnapshot> {
        let cfg = self.config;
        if !self.keys.lock().contains_key(key) {
            check_key(key)?;
            let e = Entry::default();
            return Ok(BreakerSnapshot {
                key: key.to_owned(),
                state: e.state(),
                consecutive_failures: 0,
                opened_at_ms: None,
                retry_in_ms: None,
                probes_in_flight: 0,
                probe_successes: 0,
            });
        }
        self.with_entry(key, now_ms, |e| {
            let state = e.state();
            BreakerSnapshot {
                key: key.to_owned(),
                state,
                consecutive_failures: e.failures,
                opened_at_ms: (state != BreakerState::Closed).then_some(e.opened_at),
                retry_in_ms: (state == BreakerState::Open)
                    .then(|| (e.opened_at.saturating_add(cfg.cool_down_ms)).saturating_sub(now_ms.max(e.opened_at))),
                probes_in_flight: e.in_flight,
                probe_successes: e.successes,
            }
        })
    }

    /// Number of keys tracked.
    pub fn len(&self) -> usize {
        self.keys.lock().len()
    }

    /// Whether no key is tracked.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
