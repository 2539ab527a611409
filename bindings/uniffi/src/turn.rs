//! Turns (core `turnfit::turn::Turn` and `WindowTurn`): the state machine the Kotlin facade's
//! `fitTurn` (a `suspend` summarizer) and `fitTurnBlocking` (a Java-friendly
//! `Summarizer`) drive, and Swift's `async` summarizer alike. Nothing here
//! calls the host: the facade runs the summarizer between `call` and
//! `resume`/`fail`, with no lock held. JSON text in and out.

use std::sync::Arc;

use parking_lot::Mutex;
use turnfit::turn::{AnyTurn, FailReason, Reply, Turn as Core, WindowTurn};
use turnfit::window::FitOptions;

use crate::tokenizer::{registry_or_builtin, ModelRegistry};
use crate::window::ContextWindow;
use crate::{to_json, FitResult, Result, Text};

/// Why the host's summarizer gave no text (`Turn.fail`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum SummaryFailure {
    /// It threw or returned an error.
    Error,
    /// It took longer than the request's `timeout_ms` (it was cancelled).
    Timeout,
    /// It replied with something other than text.
    NotText,
}

/// A summarizer request: the JSON the host's summarizer gets, and its timeout.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct SummarizerRequest {
    /// The request (`schemas/summarizer-call.json`: `prompt`, `model`,
    /// `max_summary_tokens`, `piece`/`pieces`, ...).
    pub request_json: String,
    /// Milliseconds the reply may take (0: no limit).
    pub timeout_ms: u64,
}

/// A turn in progress: while `call` has a summarizer request, run the model
/// on its prompt and hand the reply to `resume` (or the failure to `fail`);
/// then `finish`. Calls on one turn are serialized by a mutex.
#[derive(uniffi::Object)]
pub struct Turn {
    inner: Mutex<Option<Kind>>,
}

/// A turn on a conversation, or on a window (kept beside the turn: it
/// takes the result when the turn finishes; its lock is not held in between).
type Kind = AnyTurn<Arc<ContextWindow>>;

impl Turn {
    /// The turn's lock for a call: refused from inside a host counter (a
    /// counter calling back into the turn it counts for would wait on it
    /// forever).
    fn locked(&self) -> Result<parking_lot::MutexGuard<'_, Option<Kind>>> {
        turnfit::models::check_not_counting("Turn")?;
        Ok(self.inner.lock())
    }
}

#[uniffi::export]
impl Turn {
    /// Starts a turn on `conversation_json` (any of the five formats) with
    /// `options_json`, the fit options (`model` required; `policy`,
    /// `summarizer`: `{"model", "context_window", "max_prompt_tokens",
    /// "timeout_ms", "max_requests"}`, ...).
    #[uniffi::constructor(default(registry = None))]
    pub fn new(conversation_json: Text, options_json: Text, registry: Option<Arc<ModelRegistry>>) -> Result<Arc<Self>> {
        let o: FitOptions = turnfit::frontend::parse_options("options_json", Some(&options_json))?;
        let t = Core::start(registry_or_builtin(&registry), &conversation_json, &o)?;
        Ok(Arc::new(Turn { inner: Mutex::new(Some(Kind::Conversation(Box::new(t)))) }))
    }

    /// Starts a turn on `window`: `options_json` is the fit options without
    /// what the window holds (`policy`, `summarizer`, `trigger_messages`);
    /// `registry` looks up `summarizer.model`.
    #[uniffi::constructor(default(registry = None))]
    pub fn on_window(
        window: Arc<ContextWindow>,
        options_json: Text,
        registry: Option<Arc<ModelRegistry>>,
    ) -> Result<Arc<Self>> {
        let o: FitOptions = turnfit::frontend::parse_options("options_json", Some(&options_json))?;
        let t = WindowTurn::start_in(registry_or_builtin(&registry), &*window.locked()?, &o)?;
        Ok(Arc::new(Turn { inner: Mutex::new(Some(Kind::Window(Box::new(t), window))) }))
    }

    /// The waiting summarizer request, or null.
    pub fn call(&self) -> Result<Option<SummarizerRequest>> {
        let g = self.locked()?;
        let t = g.as_ref().ok_or_else(Kind::finished)?;
        t.call().map(|c| Ok(SummarizerRequest { request_json: to_json(c)?, timeout_ms: c.timeout_ms })).transpose()
    }

    /// The summarizer's text for the waiting request.
    pub fn resume(&self, summary: Text) -> Result<()> {
        Ok(self.locked()?.as_mut().ok_or_else(Kind::finished)?.resume(Reply::Summary(summary.0))?)
    }

    /// The summarizer failed (`message`: the host's words, kept in the report).
    pub fn fail(&self, reason: SummaryFailure, message: Text) -> Result<()> {
        let reason = match reason {
            SummaryFailure::Error => FailReason::Error,
            SummaryFailure::Timeout => FailReason::Timeout,
            SummaryFailure::NotText => FailReason::NotText,
        };
        Ok(self.locked()?.as_mut().ok_or_else(Kind::finished)?.resume(Reply::Failed { reason, message: message.0 })?)
    }

    /// The request to send and the turn report (`schemas/turn-report.json`);
    /// the turn is then finished. On a window, the window takes the result
    /// first, and the conversation is the window's.
    pub fn finish(&self) -> Result<FitResult> {
        let kind = self.locked()?.take().ok_or_else(Kind::finished)?;
        match kind {
            Kind::Conversation(t) => {
                let (c, report) = t.finish()?;
                Ok(FitResult { conversation: c.to_json()?, report: to_json(&report)? })
            }
            Kind::Window(t, w) => w.mutate(|core| {
                let report = t.finish(core)?;
                Ok(FitResult { conversation: core.conversation().to_json()?, report: to_json(&report)? })
            }),
        }
    }
}
