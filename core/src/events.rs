//! Events for logging: what a handle did that a host may want to log
//! (a compaction, a repair, a budget crossed, a breaker changing state, a
//! folded repeat, an overdue span, a skipped skill file, a finished span), delivered to an
//! [`Observer`] the host sets on that handle. The library never prints; this
//! is how it speaks.
//!
//! There is no global state: each handle holds its own observer (none by
//! default, and then nothing is built). Events are emitted synchronously on
//! the thread that made the call, before the call returns, and never while
//! the handle's own lock is held, so a sink may call back into the handle.
//!
//! The kind names (`compacted`, ...) and payload fields are part of the
//! public contract (docs/formats.md, "Events"): new kinds and new fields may
//! be added, none is renamed or removed.

use std::fmt;
use std::sync::Arc;

use parking_lot::RwLock;
use serde::Serialize;

pub(crate) mod payload;

use payload::{BreakerState, Ignored, OverdueSpan, SpanRecord, Strategy, Verdict};

/// The kind of an [`Event`], with a stable snake_case name and a stable
/// number (the C ABI's `turnfit_event_kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A window compaction was applied.
    Compacted = 1,
    /// A window repair changed the conversation.
    Repaired = 2,
    /// A load, push or replace took the window past its trigger or its limit.
    BudgetCrossed = 3,
    /// A circuit breaker changed state.
    BreakerStateChanged = 4,
    /// A finished span was folded into the previous record as a repeat.
    SpanRepeated = 5,
    /// An open span was first seen past its deadline.
    SpanOverdue = 6,
    /// Skill discovery skipped an entry of the root.
    SkillSkipped = 7,
    /// A span ended (a tool call finished, failed, timed out or was
    /// cancelled); emitted when the tracer's `span_finished_events` is on.
    SpanFinished = 8,
}

impl EventKind {
    /// Every kind, in number order.
    pub const ALL: [EventKind; 8] = [
        EventKind::Compacted,
        EventKind::Repaired,
        EventKind::BudgetCrossed,
        EventKind::BreakerStateChanged,
        EventKind::SpanRepeated,
        EventKind::SpanOverdue,
        EventKind::SkillSkipped,
        EventKind::SpanFinished,
    ];

    /// The stable name (the `kind` field of the payload).
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Compacted => "compacted",
            EventKind::Repaired => "repaired",
            EventKind::BudgetCrossed => "budget_crossed",
            EventKind::BreakerStateChanged => "breaker_state_changed",
            EventKind::SpanRepeated => "span_repeated",
            EventKind::SpanOverdue => "span_overdue",
            EventKind::SkillSkipped => "skill_skipped",
            EventKind::SpanFinished => "span_finished",
        }
    }

    /// The stable number.
    pub fn number(self) -> u32 {
        self as u32
    }
}

/// `compacted`: a window compaction was applied (after `compact`, or after
/// `apply_summary` completed a summarize compaction).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Compaction {
    /// The strategy that ran.
    pub strategy: Strategy,
    /// Prompt tokens before.
    pub tokens_before: usize,
    /// Prompt tokens after.
    pub tokens_after: usize,
    /// Messages removed (dropped rounds, and messages replaced by a summary).
    pub messages_dropped: usize,
    /// Tool results masked or cleared (their content replaced by a placeholder).
    pub results_masked: usize,
    /// Tool results cut to a token budget.
    pub results_truncated: usize,
    /// Whether a summary was inserted.
    pub summarized: bool,
    /// Whether the result is within the target.
    pub within_target: bool,
}

/// `repaired`: a window repair changed the conversation (a repair that
/// found nothing to do emits nothing).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Repair {
    /// Synthetic results inserted for unanswered calls.
    pub results_added: usize,
    /// Results removed (orphaned or duplicated).
    pub results_removed: usize,
    /// Results moved next to their call.
    pub results_moved: usize,
    /// Messages removed because repair left them empty.
    pub messages_removed: usize,
    /// Prompt tokens before.
    pub tokens_before: usize,
    /// Prompt tokens after.
    pub tokens_after: usize,
}

/// `budget_crossed`: an operation moved the window's pre-flight verdict up
/// (`fits` to `should_compact` or `overflow`, `should_compact` to
/// `overflow`). Going back down (a compaction, a pop) is not an event.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BudgetCrossing {
    /// `load`, `push`, `replace` or `repair`.
    pub operation: &'static str,
    /// The verdict before.
    pub from: Verdict,
    /// The verdict after.
    pub to: Verdict,
    /// Calibrated prompt tokens plus reserved output, after.
    pub total_tokens: usize,
    /// Tokens at which `should_compact` starts.
    pub trigger_tokens: usize,
    /// The context window.
    pub limit: usize,
}

/// `breaker_state_changed`: one key's breaker moved between states.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BreakerTransition {
    /// The key.
    pub key: String,
    /// The state before.
    pub from: BreakerState,
    /// The state after.
    pub to: BreakerState,
    /// The time of the call that moved it, ms (the caller's clock).
    pub at_ms: u64,
}

/// `span_repeated`: a finished span was a true repeat of the previous
/// record and was folded into it instead of taking a ring slot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SpanRepeat {
    /// The span that ended.
    pub span_id: u64,
    /// The record it was folded into (its first span).
    pub first_span_id: u64,
    /// Tool name.
    pub tool: String,
    /// The record's count after folding.
    pub count: u64,
}

/// One event: its kind and payload. Serialized with the kind as a `kind`
/// field beside the payload's own fields.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Event {
    /// See [`Compaction`].
    Compacted(Compaction),
    /// See [`Repair`].
    Repaired(Repair),
    /// See [`BudgetCrossing`].
    BudgetCrossed(BudgetCrossing),
    /// See [`BreakerTransition`].
    BreakerStateChanged(BreakerTransition),
    /// See [`SpanRepeat`].
    SpanRepeated(SpanRepeat),
    /// The span as [`crate::trace::Tracer::overdue`] reports it.
    SpanOverdue(OverdueSpan),
    /// The entry as the skill listing's `ignored` reports it.
    SkillSkipped(Ignored),
    /// The execution's record, as the tracer's ring keeps it with `count`
    /// 1 (tool, agent, outcome, error and its category, duration, sizes,
    /// excerpts), so a host can log every tool call. Boxed: the record is
    /// the largest payload by far, and every other event would carry its size.
    SpanFinished(Box<SpanRecord>),
}

impl Event {
    /// The event's kind.
    pub fn kind(&self) -> EventKind {
        match self {
            Event::Compacted(_) => EventKind::Compacted,
            Event::Repaired(_) => EventKind::Repaired,
            Event::BudgetCrossed(_) => EventKind::BudgetCrossed,
            Event::BreakerStateChanged(_) => EventKind::BreakerStateChanged,
            Event::SpanRepeated(_) => EventKind::SpanRepeated,
            Event::SpanOverdue(_) => EventKind::SpanOverdue,
            Event::SkillSkipped(_) => EventKind::SkillSkipped,
            Event::SpanFinished(_) => EventKind::SpanFinished,
        }
    }

    /// The payload as one line of JSON, `kind` first.
    pub fn to_json(&self) -> String {
        // The payloads hold strings, integers, booleans and finite enums
        // only, so serialization cannot fail; the fallback keeps the kind.
        serde_json::to_string(self).unwrap_or_else(|_| format!("{{\"kind\":\"{}\"}}", self.kind().name()))
    }
}

type Sink = Arc<dyn Fn(&Event) + Send + Sync>;

/// A host's event sink, or none.
///
/// A shared closure (`Arc<dyn Fn>`) rather than a trait object in a `Box`:
/// a window is `Clone` (a clone keeps reporting to the same sink), and a
/// shared handle (breaker, tracer) takes a copy out of its lock before
/// calling it, so no lock is held while host code runs. `Send + Sync`
/// because those handles are used from many threads at once.
#[derive(Clone, Default)]
pub struct Observer(Option<Sink>);

impl Observer {
    /// An observer calling `sink` for each event.
    pub fn new(sink: impl Fn(&Event) + Send + Sync + 'static) -> Observer {
        Observer(Some(Arc::new(sink)))
    }

    /// No observer: events are not even built.
    pub fn none() -> Observer {
        Observer(None)
    }

    /// Whether a sink is set.
    pub fn is_set(&self) -> bool {
        self.0.is_some()
    }

    /// Builds the event with `make` and hands it to the sink, if one is set.
    pub fn emit(&self, make: impl FnOnce() -> Event) {
        if let Some(sink) = &self.0 {
            sink(&make());
        }
    }
}

impl fmt::Debug for Observer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.is_set() { "Observer(set)" } else { "Observer(none)" })
    }
}

/// The observer slot of a handle used through `&self` from many threads
/// (breakers, tracers): set at any time, read by copying it out, so the
/// sink runs with no lock of the handle held.
#[derive(Debug, Default)]
pub struct ObserverSlot(RwLock<Observer>);

impl ObserverSlot {
    /// Replaces the observer (calls already under way keep the old one).
    pub fn set(&self, observer: Observer) {
        *self.0.write() = observer;
    }

    /// A copy of the current observer.
    pub fn get(&self) -> Observer {
        self.0.read().clone()
    }
}

#[cfg(test)]
mod tests;
