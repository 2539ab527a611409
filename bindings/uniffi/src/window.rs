//! Context windows, the stateless `fit`, conversation counting and repair.
//! Conversations, options, policies and reports cross as JSON text
//! (docs/formats.md), so options added to core need no binding change.

use std::sync::Arc;

use parking_lot::Mutex;
use turnfit::chat::Conversation;
use turnfit::window::{fit_json_in, repair, validate, Accountant, Budget, Policy, Window as Core};

use crate::events::{self, EventListener};
use crate::tokenizer::{registry_or_builtin, ModelRegistry};
use crate::{parse_opt, to_json, Result, Text};

/// The pre-flight verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum Verdict {
    /// Below the trigger ratio.
    Fits,
    /// Fits, but at or above the trigger ratio: compact now.
    ShouldCompact,
    /// Prompt plus reserved output exceed the window.
    Overflow,
}

/// A pre-flight report: token totals by component and the verdict
/// (docs/formats.md, "Preflight").
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct Preflight {
    /// The model the window is for.
    pub model: String,
    /// Whether the counts are exact (OpenAI encodings) or an estimate.
    pub exact: bool,
    /// System prompt tokens.
    pub system: u64,
    /// Tool-definition tokens.
    pub tools: u64,
    /// Every other message in the window.
    pub history: u64,
    /// The message about to be sent, if one was given.
    pub new_input: u64,
    /// Reply priming.
    pub reply_priming: u64,
    /// The prompt as counted.
    pub prompt_tokens: u64,
    /// `prompt_tokens` times the calibration factor.
    pub calibrated_prompt_tokens: u64,
    /// The calibration factor (1.0 when none).
    pub calibration: f64,
    /// Tokens reserved for the reply.
    pub reserved_output: u64,
    /// The context window.
    pub limit: u64,
    /// `limit - (calibrated prompt + reserved)`; negative when overflowing.
    pub remaining: i64,
    /// `(calibrated prompt + reserved) / limit`.
    pub utilization: f64,
    /// The messages alone (system + tools + history + new input), no priming.
    pub message_tokens: u64,
    /// `message_tokens / limit`: document 000's utilization (0.0 when empty).
    pub message_utilization: f64,
    /// Tokens at which compaction is triggered.
    pub trigger_tokens: u64,
    /// Tokens compaction aims for.
    pub target_tokens: u64,
    /// The verdict.
    pub verdict: Verdict,
}

impl From<turnfit::window::Preflight> for Preflight {
    fn from(p: turnfit::window::Preflight) -> Self {
        let n = |x: usize| x as u64;
        Preflight {
            model: p.model,
            exact: p.exact,
            system: n(p.system),
            tools: n(p.tools),
            history: n(p.history),
            new_input: n(p.new_input),
            reply_priming: n(p.reply_priming),
            prompt_tokens: n(p.prompt_tokens),
            calibrated_prompt_tokens: n(p.calibrated_prompt_tokens),
            calibration: p.calibration,
            reserved_output: n(p.reserved_output),
            limit: n(p.limit),
            remaining: p.remaining,
            utilization: p.utilization,
            message_tokens: n(p.message_tokens),
            message_utilization: p.message_utilization,
            trigger_tokens: n(p.trigger_tokens),
            target_tokens: n(p.target_tokens),
            verdict: match p.verdict {
                turnfit::window::Verdict::Fits => Verdict::Fits,
                turnfit::window::Verdict::ShouldCompact => Verdict::ShouldCompact,
                turnfit::window::Verdict::Overflow => Verdict::Overflow,
            },
        }
    }
}

/// A conversation bound to a model and a token budget, with cached
/// per-message counts: `push` costs the new message, not the history.
/// Calls on one window are serialized by a mutex, so it may be shared.
#[derive(uniffi::Object)]
pub struct ContextWindow {
    pub(crate) inner: Mutex<Core>,
    /// The host's listener (`set_event_listener`), if any.
    listener: Mutex<Option<Arc<dyn EventListener>>>,
}

impl ContextWindow {
    /// The window's lock for a call that can fail: a host counter calling
    /// back into the window it counts for would wait on it forever, so such
    /// a call is refused instead (`InvalidArgument`).
    pub(crate) fn locked(&self) -> Result<parking_lot::MutexGuard<'_, Core>> {
        turnfit::models::check_not_counting("ContextWindow")?;
        Ok(self.inner.lock())
    }

    /// Runs `f` on the window under its lock, then, with the lock released,
    /// hands the events the call raised to the listener (events.rs), also
    /// when `f` failed part-way.
    /// A host counter calling back into the window it counts for would wait
    /// on this lock forever: refused instead (`InvalidArgument`).
    pub(crate) fn mutate<T>(&self, f: impl FnOnce(&mut Core) -> Result<T>) -> Result<T> {
        let r = f(&mut *self.locked()?);
        let pending = events::take_pending();
        if !pending.is_empty() {
            let listener = self.listener.lock().clone();
            if let Some(l) = listener {
                for e in &pending {
                    events::deliver(&*l, e);
                }
            }
        }
        r
    }
}

#[uniffi::export]
impl ContextWindow {
    /// An empty window for `model`. `budget_json` is `{"context_window",
    /// "reserved_output", "trigger_ratio", "target_ratio"}`, every field
    /// optional (null: the model's window and the defaults).
    #[uniffi::constructor(default(budget_json = None, registry = None))]
    pub fn new(model: Text, budget_json: Option<Text>, registry: Option<Arc<ModelRegistry>>) -> Result<Arc<Self>> {
        let budget: Budget = parse_opt("budget_json", budget_json)?;
        let w = Core::for_model(registry_or_builtin(&registry), &model, budget)?;
        Ok(Arc::new(ContextWindow { inner: Mutex::new(w), listener: Mutex::new(None) }))
    }

    /// Replaces the conversation (OpenAI or Anthropic JSON, detected),
    /// counting every message once. On failure the window is unchanged.
    pub fn load(&self, conversation_json: Text) -> Result<()> {
        let c = Conversation::parse(&conversation_json, None)?;
        self.mutate(|w| Ok(w.load(c)?))
    }

    /// Appends one message (JSON in the window's format); returns its tokens.
    pub fn push(&self, message_json: Text) -> Result<u64> {
        self.mutate(|w| Ok(w.push_json(&message_json)? as u64))
    }

    /// Removes the last message and returns it as JSON (null when empty).
    pub fn pop(&self) -> Result<Option<String>> {
        let m = self.locked()?.pop();
        m.map(|m| to_json(m.raw())).transpose()
    }

    /// The number of messages. Refused from inside a host counter, like
    /// every call on the window (it would wait on the lock the count holds).
    pub fn message_count(&self) -> Result<u64> {
        Ok(self.locked()?.message_tokens().len() as u64)
    }

    /// The pre-flight report, counting `new_input_json` (a message about to
    /// be sent) when given.
    #[uniffi::method(default(new_input_json = None))]
    pub fn preflight(&self, new_input_json: Option<Text>) -> Result<Preflight> {
        let w = self.locked()?;
        let m = new_input_json.map(|t| w.conversation().parse_message(&t)).transpose()?;
        Ok(w.preflight(m.as_ref())?.into())
    }

    /// The pre-flight report as JSON text (docs/formats.md).
    #[uniffi::method(default(new_input_json = None))]
    pub fn preflight_json(&self, new_input_json: Option<Text>) -> Result<String> {
        let w = self.locked()?;
        let m = new_input_json.map(|t| w.conversation().parse_message(&t)).transpose()?;
        to_json(&w.preflight(m.as_ref())?)
    }

    /// Structural issues as a JSON array (`[]` when none).
    pub fn validate(&self) -> Result<String> {
        to_json(&self.locked()?.validate())
    }

    /// Repairs the conversation in place; returns the changes as a JSON
    /// array. `synthetic_result` is the text of inserted results (null: default).
    #[uniffi::method(default(synthetic_result = None))]
    pub fn repair(&self, synthetic_result: Option<Text>) -> Result<String> {
        let changes = self.mutate(|w| Ok(w.repair(synthetic_result.as_deref())?))?;
        to_json(&changes)
    }

    /// The conversation as JSON, in the format it was loaded in.
    pub fn conversation(&self) -> Result<String> {
        Ok(self.locked()?.conversation().to_json()?)
    }

    /// Compacts under `policy_json` (docs/formats.md, "Compaction policy";
    /// null: recency with the window's target). Returns `{"status": "done",
    /// "report"}` or, for the summarize strategy, `{"status":
    /// "needs_summary", "request": {"id", "prompt", ...}}`: send the prompt
    /// to your model, then call `applySummary` with the id.
    #[uniffi::method(default(policy_json = None))]
    pub fn compact(&self, policy_json: Option<Text>) -> Result<String> {
        let policy: Policy = parse_opt("policy_json", policy_json)?;
        let outcome = self.mutate(|w| Ok(w.compact(&policy)?))?;
        to_json(&outcome)
    }

    /// Completes a pending summarize compaction with the host's summary;
    /// returns the report as JSON. A wrong or stale id is `InvalidArgument`.
    pub fn apply_summary(&self, id: Text, summary: Text) -> Result<String> {
        let report = self.mutate(|w| Ok(w.apply_summary(&id, &summary)?))?;
        to_json(&report)
    }

    /// Sets (null: clears) the listener of this window's events:
    /// `compacted` (compact, applySummary), `repaired` (repair, when it
    /// changed something) and `budget_crossed` (load, push, repair moving
    /// the verdict up). Each is delivered on the calling thread once the
    /// call's work is done and the window unlocked, before the call returns,
    /// so the listener may call the window back; never after `close`. An
    /// exception the listener throws is dropped (events.rs). Refused from
    /// inside a host counter.
    pub fn set_event_listener(&self, listener: Option<Arc<dyn EventListener>>) -> Result<()> {
        let observer = if listener.is_some() { events::queued() } else { turnfit::events::Observer::none() };
        let mut w = self.locked()?;
        *self.listener.lock() = listener;
        w.set_observer(observer);
        Ok(())
    }

    /// Records the prompt tokens the provider billed for the current
    /// conversation; returns reported / counted (applied to later
    /// pre-flights for estimated models).
    pub fn calibrate(&self, reported_prompt_tokens: u64) -> Result<f64> {
        let r = usize::try_from(reported_prompt_tokens).unwrap_or(usize::MAX);
        Ok(self.locked()?.calibrate(r)?)
    }
}

/// The result of `fit`: the conversation in the input's shape and the
/// report (figures and manifest), both JSON text.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct FitResult {
    /// The fitted conversation, in the input's shape.
    pub conversation: String,
    /// The report (docs/formats.md, "Fit report").
    pub report: String,
}

/// Makes a conversation fit a budget, statelessly: repairs it, cuts long
/// tool outputs, drops whole turns (never splitting a tool call from its
/// result). `options_json` is the fit options object (`model` required).
/// `registry` looks up `model` (null: the built-in table), so a model
/// registered there, with a host counter too, works as in a window.
#[uniffi::export(default(registry = None))]
pub fn fit(conversation_json: Text, options_json: Text, registry: Option<Arc<ModelRegistry>>) -> Result<FitResult> {
    let (conversation, report) = fit_json_in(registry_or_builtin(&registry), &conversation_json, &options_json)?;
    Ok(FitResult { conversation, report: to_json(&report)? })
}

/// The prompt tokens of a whole conversation for `model` (framing and reply
/// priming included), as a provider would bill them.
#[uniffi::export(default(registry = None))]
pub fn count_conversation(conversation_json: Text, model: Text, registry: Option<Arc<ModelRegistry>>) -> Result<u64> {
    let (acct, _) = Accountant::for_model(registry_or_builtin(&registry), &model)?;
    Ok(acct.conversation(&Conversation::parse(&conversation_json, None)?)? as u64)
}

/// Validates and repairs a conversation statelessly: `{"issues",
/// "conversation", "changes"}` as JSON, the conversation in the input's shape.
#[uniffi::export(default(synthetic_result = None, registry = None))]
pub fn repair_conversation(
    conversation_json: Text,
    model: Text,
    synthetic_result: Option<Text>,
    registry: Option<Arc<ModelRegistry>>,
) -> Result<String> {
    let (acct, _) = Accountant::for_model(registry_or_builtin(&registry), &model)?;
    let c = Conversation::parse(&conversation_json, None)?;
    let r = repair(&c, synthetic_result.as_deref(), &acct)?;
    to_json(&serde_json::json!({
        "issues": validate(&c),
        "conversation": r.conversation.to_value(),
        "changes": r.changes,
    }))
}
