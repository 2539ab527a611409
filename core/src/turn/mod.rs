//! Every turn fits: one call per model turn, with the host's own model
//! summarizing. Given the history (any of the six formats), the model and
//! a policy, a [`Turn`] yields the request to send for this turn:
//! repaired, within the budget, in the input's shape, with a report.
//!
//! turnfit never calls a model. A turn is a small state machine the host
//! drives (sans-IO, as rustls and h2 are): while [`Turn::call`] returns a
//! summarizer request, the host runs its model on it (a callable, a
//! coroutine, a Node async function, a Kotlin `suspend` function, a
//! Haskell `IO` action, a C function pointer) and hands the reply to
//! [`Turn::resume`]; then [`Turn::finish`] returns the request and the
//! report. So one core serves synchronous and asynchronous hosts alike,
//! and a callback can never re-enter a lock the core holds. [`run`] is the
//! loop for a synchronous closure.
//!
//! The summarizer's failures never fail the turn: an error, a timeout, an
//! empty reply, one far over its size, one that is not text, or a span
//! that needs more requests than allowed all fall back to the
//! deterministic digest, and the report says which (`summary.fallback`).
//! A turn fails only when the irreducible part of the history (framing,
//! tools, system prompt, task, newest user message, pins) exceeds the
//! budget, with `DoesNotFit` naming each part and its cost.

mod cache;
mod pieces;
mod session;
#[cfg(test)]
mod tests;

use std::time::Instant;

use serde::{Deserialize, Serialize};

pub use cache::CacheImpact;
pub use session::{FitSession, SessionStep};

use crate::chat::Conversation;
use crate::window::carry::{self, Applied};
use crate::window::{
    apply_summary, digest_summary, start_fit_parsed, start_fit_parsed_cached, start_fit_resolved, Accountant, Begun,
    Carried, Carry, CarryIgnored, Counted, FitHead, FitOptions, FitReport, Pending, Policy, Window, DEFAULT_LABEL,
    DEFAULT_TEMPLATE,
};
use crate::{Error, ModelRegistry, Result, TruncateSide};

/// Default milliseconds a summarizer request may take.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// Default most summarizer requests per turn.
pub const DEFAULT_MAX_REQUESTS: usize = 16;
/// Largest `max_requests` accepted.
pub const MAX_REQUESTS: usize = 256;
/// A reply longer than this many times its cap is not a summary (an echo
/// of the transcript, a runaway generation): the digest is used. A reply
/// between its cap and this is cut to the cap.
pub const OVERSIZED_FACTOR: usize = 2;

/// One request to the host's summarizer: send `prompt` to the model named
/// `model` and reply with plain text of at most `max_summary_tokens`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SummarizerCall {
    /// The span's id (the same for every piece of one span).
    pub id: String,
    /// This request's number, from 1.
    pub piece: usize,
    /// How many requests the span takes.
    pub pieces: usize,
    /// The summarizer's model (the options' `summarizer.model`, else the
    /// agent's).
    pub model: String,
    /// The prompt to send, as one user message.
    pub prompt: String,
    /// Its tokens, counted with the summarizer's encoding.
    pub prompt_tokens: usize,
    /// The most a request may take (the summarizer's budget).
    pub max_prompt_tokens: usize,
    /// Tokens the reply may take; a longer reply is cut, one over twice
    /// this is refused (the digest is used).
    pub max_summary_tokens: usize,
    /// Input indices of the messages this request covers.
    pub messages: Vec<usize>,
    /// Whether the prompt carries a summary so far (an earlier piece's, or
    /// a previous compaction's) to update.
    pub folds_previous: bool,
    /// Milliseconds the reply may take (0: no limit).
    pub timeout_ms: u64,
}

/// Why the host's summarizer produced no summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum FailReason {
    /// The summarizer raised or returned an error.
    Error,
    /// It took longer than `timeout_ms` (the host cancelled it, or the
    /// reply came late).
    Timeout,
    /// It replied with something other than text (a tool call, an object).
    NotText,
    /// Its reply was not valid UTF-8.
    InvalidUtf8,
}

impl FailReason {
    /// The reason named as in the report (`error`, `timeout`, `not_text`,
    /// `invalid_utf8`): how bindings hand a failure across as text. Any
    /// other name is `InvalidArgument` naming the four.
    pub fn from_name(name: &str) -> Result<FailReason> {
        Ok(match name {
            "error" => FailReason::Error,
            "timeout" => FailReason::Timeout,
            "not_text" => FailReason::NotText,
            "invalid_utf8" => FailReason::InvalidUtf8,
            other => {
                return Err(Error::invalid_argument(format!(
                    "failure reason '{}' is not error, timeout, not_text or invalid_utf8",
                    crate::text::clip(other)
                )))
            }
        })
    }
}

/// The host's answer to a [`SummarizerCall`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// The model's text.
    Summary(String),
    /// The model gave no usable text.
    Failed {
        /// Why.
        reason: FailReason,
        /// The host's words (an exception's message), kept in the report.
        message: String,
    },
}

/// Why a turn summarized with the deterministic digest instead of the
/// host's model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum FallbackReason {
    /// No summarizer was given, or the host finished the turn without
    /// answering.
    NoSummarizer,
    /// The summarizer raised or returned an error.
    Error,
    /// It took longer than `timeout_ms`.
    Timeout,
    /// It replied with blank text.
    Empty,
    /// Its reply was more than twice its cap.
    Oversized,
    /// It replied with something other than text.
    NotText,
    /// Its reply was not valid UTF-8.
    InvalidUtf8,
    /// The span needed more requests than `max_requests`.
    TooManyPieces,
    /// The summarizer's budget has no room for a useful piece.
    BudgetTooSmall,
}

/// The digest stood in for the host's summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Fallback {
    /// Why.
    pub reason: FallbackReason,
    /// The request it happened at (from 1; 0 before any).
    pub piece: usize,
    /// What happened, in words (the host's error message included).
    pub detail: String,
}

/// One summarizer request and what came of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SummarizerRecord {
    /// The request's number, from 1.
    pub piece: usize,
    /// Its prompt tokens (at most `max_prompt_tokens`).
    pub prompt_tokens: usize,
    /// The reply's tokens, when there was text.
    pub reply_tokens: Option<usize>,
    /// Whether the reply was cut to `max_summary_tokens`.
    pub cut: bool,
    /// Milliseconds between the request and its reply.
    pub elapsed_ms: u64,
}

/// How the span was summarized.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SummaryReport {
    /// `host` (the host's model wrote it) or `digest`.
    pub source: SummarySource,
    /// Messages summarized and their tokens.
    pub messages: usize,
    /// Their tokens.
    pub span_tokens: usize,
    /// The summarizer's model.
    pub model: String,
    /// Its budget per request.
    pub max_prompt_tokens: usize,
    /// The cap on the summary.
    pub max_summary_tokens: usize,
    /// Whether a previous summary was folded into this one.
    pub folded_previous: bool,
    /// Every request made, in order.
    pub requests: Vec<SummarizerRecord>,
    /// Set when the digest stood in for the host's summary.
    pub fallback: Option<Fallback>,
}

/// Who wrote the summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum SummarySource {
    /// The host's model.
    Host,
    /// The deterministic digest.
    Digest,
}

/// What a turn did: the fit report, whether compaction ran, how the
/// summary was made, and what it cost the prompt cache.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TurnReport {
    /// The figures and the manifest, as `fit` reports them.
    #[serde(flatten)]
    pub fit: FitReport,
    /// Whether the trigger fired (tokens over `trigger_ratio`, messages
    /// over `trigger_messages`, or the history over the limit).
    pub fired: bool,
    /// Whether the request differs from the history given (a carried
    /// summary sent in place of its run counts).
    pub changed: bool,
    /// Set when a span was summarized.
    pub summary: Option<SummaryReport>,
    /// The prompt-cache impact of the changes.
    pub cache: CacheImpact,
    /// What to pass as the next turn's `options.carry` when the host keeps
    /// the full history and sends only this turn's request: the messages
    /// this turn's summary replaced and the message holding it (or the
    /// carried summary, sent again). Absent when there is no summary to
    /// carry, and on a window's turn (the window keeps its summary).
    pub carry: Option<Carry>,
    /// Set when `options.carry` was applied: the input messages sent as the
    /// carried summary. The figures are of the history with that run
    /// replaced; indices (changes, protected, cache, summarizer requests)
    /// are the input's.
    pub carried: Option<Carried>,
    /// Set when `options.carry` was given but not applied, and why: its
    /// run is not where it was made in this history, or it holds a message
    /// the policy always keeps. The history was fitted as given.
    pub carry_ignored: Option<CarryIgnored>,
}

/// A turn in progress (see the module documentation).
#[derive(Debug)]
pub struct Turn {
    head: FitHead,
    policy: Policy,
    acct: Accountant,
    state: State,
    /// Fingerprints of the history fitted, for the next carry (stateless
    /// turns only).
    fitted: Option<Vec<String>>,
    /// The carry applied to the input, if any.
    applied: Option<Applied>,
    /// Why the carry given was not applied.
    ignored: Option<CarryIgnored>,
}

#[derive(Debug)]
enum State {
    Done(Box<crate::window::Compacted>, Option<SummaryReport>),
    Summarizing(Box<Summarizing>),
    /// Only while the state moves from summarizing to done.
    Moving,
}

/// The summarize step: the pending span, its pieces, the summary so far.
#[derive(Debug)]
struct Summarizing {
    pending: Pending,
    plan: pieces::Plan,
    /// The summarizer model's accountant: every count of its prompts and
    /// replies goes through it (a host counter registered with the model
    /// included), cuts through its encoding.
    acct: Accountant,
    budget: usize,
    next: usize,
    so_far: Option<String>,
    call: Option<(SummarizerCall, Instant)>,
    report: SummaryReport,
    timeout_ms: u64,
}

impl Turn {
    /// Starts a turn on `conversation` (JSON in any of the six formats)
    /// with models from `registry`. When the policy summarizes and a span
    /// must go, [`call`](Self::call) has the first summarizer request.
    /// With `options.carry` (a previous turn's report's `carry`), the run
    /// of messages it stands for is sent as its summary (see
    /// `window::carry`).
    pub fn start(registry: &ModelRegistry, conversation: &str, options: &FitOptions) -> Result<Turn> {
        if options.model.trim().is_empty() {
            return Err(Error::invalid_argument("options.model is required"));
        }
        let c = Conversation::parse(conversation, options.format)?;
        let fingerprints = c.messages.iter().map(|m| carry::fingerprint(m.raw())).collect();
        Turn::start_parsed(registry, c, fingerprints, options, None)
    }

    /// [`start`](Self::start) on a parsed conversation with its messages'
    /// fingerprints, and a fit session's kept counts, aligned with the
    /// input's messages (`session::FitSession`): on return they hold every
    /// input message's count (`None` for those a carry replaced).
    ///
    /// For a model registered from its files, whose rendered request may
    /// come out over the limit the per-message figures aimed at, the turn
    /// is first run with the digest as its summary, tightening the budget
    /// as a synchronous turn does (`window::rendered`), and then started
    /// for real with the budget that rendered within the limit. A host's
    /// summary of the same cap rarely renders longer than the digest; when
    /// it does, `insufficient` says so. The report keeps the budget asked
    /// for.
    pub(crate) fn start_parsed(
        registry: &ModelRegistry,
        c: Conversation,
        fingerprints: Vec<String>,
        options: &FitOptions,
        mut counts: Option<&mut Vec<Option<Counted>>>,
    ) -> Result<Turn> {
        if options.model.trim().is_empty() {
            return Err(Error::invalid_argument("options.model is required"));
        }
        if !crate::window::has_prompt_model(registry, options) {
            return Turn::start_parsed_once(registry, c, fingerprints, options, counts);
        }
        let mut last = None;
        let (_, asked) = crate::window::tighten_rendered(registry, options, |o| {
            last = Some(o.clone());
            let t = Turn::start_parsed_once(registry, c.clone(), fingerprints.clone(), o, counts.as_deref_mut())?;
            let (_, report) = t.finish()?;
            Ok(((), report.fit))
        })?;
        let o = last.ok_or_else(|| Error::internal("a turn ran no pass"))?;
        let mut t = Turn::start_parsed_once(registry, c, fingerprints, &o, counts)?;
        (t.head.max_tokens, t.head.limit_tokens) = (asked.max_tokens, asked.limit_tokens);
        Ok(t)
    }

    /// One pass of [`start_parsed`](Self::start_parsed), with the budget
    /// as given.
    fn start_parsed_once(
        registry: &ModelRegistry,
        mut c: Conversation,
        fingerprints: Vec<String>,
        options: &FitOptions,
        counts: Option<&mut Vec<Option<Counted>>>,
    ) -> Result<Turn> {
        let n = c.messages.len();
        let (fitted, outcome) = match &options.carry {
            Some(k) => carry::apply(&mut c, k, fingerprints, &options.policy)?,
            None => (fingerprints, Err(None)),
        };
        let (applied, ignored) = match outcome {
            Ok(a) => (Some(a), None),
            Err(why) => (None, why),
        };
        let mut o = FitOptions { carry: None, ..options.clone() };
        if let Some(a) = &applied {
            // Pins name input messages: moved to the history fitted.
            o.policy.pinned = o.policy.pinned.iter().map(|&i| a.fitted_index(i)).collect();
        }
        let started = match counts {
            None => start_fit_parsed(registry, c, &o)?,
            Some(counts) => {
                // The kept counts move to the fitted history's indices (a
                // carry puts one summary in place of its run), and back.
                let at = |i: usize| applied.as_ref().map_or(Some(i), |a| a.kept_index(i));
                let mut fitted: Vec<Option<Counted>> = vec![None; c.messages.len()];
                for (i, k) in counts.iter_mut().enumerate().take(n) {
                    if let Some(j) = at(i) {
                        fitted[j] = k.take();
                    }
                }
                let s = start_fit_parsed_cached(registry, c, &o, Some(&mut fitted))?;
                counts.clear();
                counts.resize(n, None);
                for (i, k) in counts.iter_mut().enumerate() {
                    if let Some(j) = at(i) {
                        *k = fitted.get(j).cloned().flatten();
                    }
                }
                s
            }
        };
        let mut t = Turn::begin(registry, started, &o, applied)?;
        t.fitted = Some(fitted);
        t.ignored = ignored;
        Ok(t)
    }

    fn begin(
        registry: &ModelRegistry,
        s: crate::window::Started,
        options: &FitOptions,
        applied: Option<Applied>,
    ) -> Result<Turn> {
        let state = match s.next {
            Begun::Done(c) => State::Done(c, None),
            Begun::Summarize(pending) => {
                match Summarizing::new(registry, *pending, options, &s.policy, &s.acct, &s.head)? {
                    Ok(sm) => State::Summarizing(Box::new(sm)),
                    Err((pending, report)) => {
                        State::Done(Box::new(digest_summary(pending, &s.policy, &s.acct)?), Some(report))
                    }
                }
            }
        };
        let mut t = Turn { head: s.head, policy: s.policy, acct: s.acct, state, fitted: None, applied, ignored: None };
        t.issue()?;
        Ok(t)
    }

    /// The summarizer request waiting for a reply, if any.
    pub fn call(&self) -> Option<&SummarizerCall> {
        match &self.state {
            State::Summarizing(s) => s.call.as_ref().map(|(c, _)| c),
            State::Done(..) | State::Moving => None,
        }
    }

    /// Hands the host's reply to the waiting request. The next request (a
    /// further piece) is then in [`call`](Self::call); a failed or
    /// unusable reply ends the summarizing with the digest (in the report).
    /// `InvalidArgument` when no request is waiting.
    pub fn resume(&mut self, reply: Reply) -> Result<()> {
        let State::Summarizing(s) = &mut self.state else {
            return Err(Error::invalid_argument("no summarizer request is waiting on this turn"));
        };
        let Some((call, issued)) = s.call.take() else {
            return Err(Error::invalid_argument("no summarizer request is waiting on this turn"));
        };
        let elapsed_ms = issued.elapsed().as_millis().min(u64::MAX as u128) as u64;
        let mut record = SummarizerRecord {
            piece: call.piece,
            prompt_tokens: call.prompt_tokens,
            reply_tokens: None,
            cut: false,
            elapsed_ms,
        };
        let outcome = s.accept(&call, reply, &mut record);
        s.report.requests.push(record);
        match outcome? {
            Ok(text) => {
                s.so_far = Some(text);
                s.next += 1;
                if s.next == s.plan.pieces.len() {
                    self.complete(None)?;
                }
            }
            Err(fallback) => self.complete(Some(fallback))?,
        }
        self.issue()
    }

    /// Ends the turn: the request to send (in the input's format) and the
    /// report. With a summarizer request still waiting, the digest stands
    /// in (`fallback.reason: no_summarizer`).
    pub fn finish(mut self) -> Result<(Conversation, TurnReport)> {
        if let State::Summarizing(s) = &self.state {
            let piece = s.call.as_ref().map_or(0, |(c, _)| c.piece);
            let fb = Fallback {
                reason: FallbackReason::NoSummarizer,
                piece,
                detail: "the turn was finished without a reply from the summarizer".into(),
            };
            self.complete(Some(fb))?;
        }
        let State::Done(mut c, summary) = self.state else {
            return Err(Error::internal("a finished turn is still summarizing"));
        };
        let label = self.policy.summary_label.as_deref().unwrap_or(DEFAULT_LABEL);
        let next = self
            .fitted
            .as_ref()
            .and_then(|f| carry::next(f, &c.conversation.messages, &c.changes, label, self.applied.as_ref()));
        // After the carry, which names the summary as compaction wrote it.
        self.head.settle(&mut c, &self.acct)?;
        let mut fit = self.head.report(&c)?;
        let mut cache = cache::impact(&c, &self.acct)?;
        // A carried summary in place of its run changes the request too.
        let changed = !c.changes.is_empty() || self.applied.is_some();
        if let Some(a) = &self.applied {
            a.remap_changes(&mut fit.changes);
            for p in &mut fit.protected {
                p.messages = p.messages.iter().flat_map(|&i| a.input_indices(i)).collect();
            }
            cache.first_changed = cache.first_changed.map(|i| a.input_index(i));
        }
        let carried = self.applied.as_ref().map(|a| a.at);
        let report = TurnReport {
            fit,
            fired: self.head.fired,
            changed,
            summary,
            cache,
            carry: next,
            carried,
            carry_ignored: self.ignored,
        };
        Ok((c.conversation, report))
    }

    /// Issues the next piece's request, if the turn is summarizing.
    fn issue(&mut self) -> Result<()> {
        let State::Summarizing(s) = &mut self.state else { return Ok(()) };
        if s.call.is_some() {
            return Ok(());
        }
        let mut call = s.make_call(&self.policy)?;
        if let Some(a) = &self.applied {
            call.messages = call.messages.iter().flat_map(|&i| a.input_indices(i)).collect();
        }
        s.call = Some((call, Instant::now()));
        Ok(())
    }

    /// Applies the summary (the host's, or the digest with `fallback`).
    fn complete(&mut self, fallback: Option<Fallback>) -> Result<()> {
        let State::Summarizing(s) = std::mem::replace(&mut self.state, State::Moving) else {
            return Ok(());
        };
        let Summarizing { pending, so_far, mut report, .. } = *s;
        let compacted = match (&fallback, so_far) {
            (None, Some(text)) => {
                report.source = SummarySource::Host;
                let id = pending.request.id.clone();
                apply_summary(&pending, &id, &text, &self.policy, &self.acct)?
            }
            _ => {
                report.source = SummarySource::Digest;
                report.fallback = fallback.or(Some(Fallback {
                    reason: FallbackReason::NoSummarizer,
                    piece: 0,
                    detail: "no summary was given".into(),
                }));
                digest_summary(pending, &self.policy, &self.acct)?
            }
        };
        self.state = State::Done(Box::new(compacted), Some(report));
        Ok(())
    }
}

impl Summarizing {
    /// The summarize step for `pending`, or the digest's report (with the
    /// reason) when the summarizer's budget cannot hold a useful piece or
    /// the span needs too many.
    #[allow(clippy::result_large_err)]
    fn new(
        registry: &ModelRegistry,
        pending: Pending,
        options: &FitOptions,
        policy: &Policy,
        acct: &Accountant,
        head: &FitHead,
    ) -> Result<std::result::Result<Summarizing, (Pending, SummaryReport)>> {
        let so = &options.summarizer;
        let max_requests = so.max_requests.unwrap_or(DEFAULT_MAX_REQUESTS);
        if max_requests == 0 || max_requests > MAX_REQUESTS {
            return Err(Error::invalid_argument(format!(
                "summarizer.max_requests {max_requests} is not between 1 and {MAX_REQUESTS}"
            )));
        }
        // The summarizer's own accountant, as the agent's is made: its host
        // counter when one is registered (issue 48).
        let (model, sacct, window) = match &so.model {
            Some(m) => {
                let custom = crate::CustomModel {
                    encoding: so.encoding,
                    context_window: so.context_window,
                    max_output_tokens: None,
                };
                let info = registry.resolve(m, &custom)?;
                let sacct = Accountant::for_resolved(registry, &info, None)?;
                (info.model.clone(), sacct, info.context_window.map(|w| w as usize))
            }
            None => {
                let custom =
                    crate::CustomModel { encoding: None, context_window: so.context_window, max_output_tokens: None };
                custom.check()?;
                let w = so.context_window.or(head.info.context_window.map(|w| w as usize));
                (head.info.model.clone(), acct.clone(), w)
            }
        };
        let cap = pending.request.max_summary_tokens;
        let mut budget = so.max_prompt_tokens.unwrap_or(policy.summarizer_budget);
        if budget == 0 {
            return Err(Error::invalid_argument("summarizer.max_prompt_tokens must be positive"));
        }
        if let Some(w) = window {
            budget = budget.min(w.saturating_sub(cap));
        }
        let report = SummaryReport {
            source: SummarySource::Digest,
            messages: pending.request.messages.len(),
            span_tokens: pending.request.span_tokens,
            model: model.clone(),
            max_prompt_tokens: budget,
            max_summary_tokens: cap,
            folded_previous: false,
            requests: Vec::new(),
            fallback: None,
        };
        let template = policy.summary_template.as_deref().unwrap_or(DEFAULT_TEMPLATE);
        let label = policy.summary_label.as_deref().unwrap_or(DEFAULT_LABEL);
        let fail = |mut report: SummaryReport, reason, detail: String| {
            report.fallback = Some(Fallback { reason, piece: 0, detail });
            report
        };
        let room = pieces::piece_room(template, cap, budget, &sacct, false)?;
        if room < pieces::MIN_PIECE_TOKENS + cap {
            let detail = format!(
                "the summarizer's budget of {budget} tokens leaves {room} for messages beside the template and a \
                 {cap}-token summary so far; at least {} are needed",
                pieces::MIN_PIECE_TOKENS + cap
            );
            return Ok(Err((pending, fail(report, FallbackReason::BudgetTooSmall, detail))));
        }
        let span = pending.span();
        let plan = pieces::plan(&span, &pending.span_round_starts(), label, template, cap, budget, &sacct)?;
        if plan.pieces.len() > max_requests {
            let detail = format!(
                "the span of {} messages ({} tokens) needs {} summarizer requests of at most {budget} tokens; \
                 max_requests is {max_requests}",
                pending.request.messages.len(),
                pending.request.span_tokens,
                plan.pieces.len()
            );
            return Ok(Err((pending, fail(report, FallbackReason::TooManyPieces, detail))));
        }
        let report = SummaryReport { folded_previous: plan.previous.is_some(), ..report };
        let so_far = plan.previous.clone();
        Ok(Ok(Summarizing {
            pending,
            plan,
            acct: sacct,
            budget,
            next: 0,
            so_far,
            call: None,
            report,
            timeout_ms: so.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS),
        }))
    }

    fn make_call(&self, policy: &Policy) -> Result<SummarizerCall> {
        let template = policy.summary_template.as_deref().unwrap_or(DEFAULT_TEMPLATE);
        let cap = self.pending.request.max_summary_tokens;
        let span = self.pending.span();
        let (prompt, prompt_tokens) = self.plan.prompt(
            self.next,
            &span,
            self.so_far.as_deref(),
            template,
            cap,
            self.budget,
            &self.acct,
            &policy.digest,
        )?;
        let inputs = self.pending.span_input_indices();
        let r = self.plan.pieces[self.next].clone();
        let timeout_ms = self.timeout_ms;
        Ok(SummarizerCall {
            id: self.pending.request.id.clone(),
            piece: self.next + 1,
            pieces: self.plan.pieces.len(),
            model: self.report.model.clone(),
            prompt,
            prompt_tokens,
            max_prompt_tokens: self.budget,
            max_summary_tokens: cap,
            messages: inputs[r].to_vec(),
            folds_previous: self.so_far.as_deref().is_some_and(|s| !s.trim().is_empty()),
            timeout_ms,
        })
    }

    /// The reply's text (cut to its cap when a little over), or why the
    /// digest must stand in.
    fn accept(
        &self,
        call: &SummarizerCall,
        reply: Reply,
        record: &mut SummarizerRecord,
    ) -> Result<std::result::Result<String, Fallback>> {
        let fb = |reason, detail: String| Ok(Err(Fallback { reason, piece: call.piece, detail }));
        if self.timeout_ms > 0 && record.elapsed_ms > self.timeout_ms {
            return fb(
                FallbackReason::Timeout,
                format!("the summarizer replied after {} ms; the timeout is {} ms", record.elapsed_ms, self.timeout_ms),
            );
        }
        let text = match reply {
            Reply::Summary(t) => t,
            Reply::Failed { reason, message } => {
                let (r, what) = match reason {
                    FailReason::Error => (FallbackReason::Error, "failed"),
                    FailReason::Timeout => (FallbackReason::Timeout, "timed out"),
                    FailReason::NotText => (FallbackReason::NotText, "replied with something other than text"),
                    FailReason::InvalidUtf8 => (FallbackReason::InvalidUtf8, "replied with invalid UTF-8"),
                };
                let message = crate::text::clip(&message);
                return fb(r, format!("the summarizer {what}: {message}"));
            }
        };
        let text = text.trim();
        if text.is_empty() {
            return fb(FallbackReason::Empty, "the summarizer replied with blank text".into());
        }
        let cap = call.max_summary_tokens;
        let n = self.acct.text(text)?;
        record.reply_tokens = Some(n);
        if n > cap.saturating_mul(OVERSIZED_FACTOR) {
            return fb(
                FallbackReason::Oversized,
                format!("the summarizer replied with {n} tokens; the cap is {cap} (more than {OVERSIZED_FACTOR}x is refused)"),
            );
        }
        if n > cap {
            record.cut = true;
            return Ok(Ok(self.cut(text, cap)?));
        }
        Ok(Ok(text.to_owned()))
    }
}

impl Summarizing {
    /// `text` cut to `cap` tokens as the summarizer's accountant counts
    /// them: cut with its encoding, then further while its counter (a host
    /// counter, an estimate) still finds it over.
    fn cut(&self, text: &str, cap: usize) -> Result<String> {
        let tok = self.acct.tokenizer();
        let mut room = cap;
        loop {
            let t = tok.truncate(text, room, TruncateSide::Head, None)?.text;
            let n = self.acct.text(&t)?;
            if n <= cap || room == 0 {
                return Ok(t);
            }
            room = room.saturating_sub((n - cap).max(room / 8).max(1));
        }
    }
}

/// A turn on a window (the stateful form): the window's conversation as
/// the history, its model and budget, and from the options only `policy`,
/// `summarizer` and `trigger_messages`. The history was counted as it was
/// pushed, so a turn below the trigger costs no recount and no copy: the
/// report says `fired: false`. Otherwise the turn runs on a copy, and
/// [`finish`](WindowTurn::finish) gives the window its result, unless the
/// window changed meanwhile (a message pushed while the summarizer ran:
/// then nothing is applied and the error says so). Like [`Turn`], the host
/// drives it, with no window lock held while its model runs.
#[derive(Debug)]
pub struct WindowTurn {
    inner: WindowInner,
    generation: u64,
}

#[derive(Debug)]
enum WindowInner {
    Unchanged(Box<TurnReport>),
    Running(Box<Turn>),
}

impl WindowTurn {
    /// Starts a turn on `window` (see the type's documentation); a
    /// summarizer model named in `options.summarizer` is looked up in the
    /// built-in table.
    pub fn start(window: &Window, options: &FitOptions) -> Result<WindowTurn> {
        WindowTurn::start_in(&ModelRegistry::builtin(), window, options)
    }

    /// [`start`](WindowTurn::start) with the summarizer's model looked up in
    /// `registry`. The agent's model is the window's own (resolved when the
    /// window was made, calibration included): never looked up again.
    pub fn start_in(registry: &ModelRegistry, window: &Window, options: &FitOptions) -> Result<WindowTurn> {
        refuse_window_fields(window, options)?;
        if options.trigger_messages == Some(0) {
            return Err(Error::invalid_argument("options.trigger_messages must be positive"));
        }
        let generation = window.generation();
        let over_count = options.trigger_messages.is_some_and(|n| window.conversation().messages.len() > n);
        if !window.over_trigger() && !over_count {
            let report = unchanged(window, &options.policy)?;
            return Ok(WindowTurn { inner: WindowInner::Unchanged(Box::new(report)), generation });
        }
        let o = FitOptions {
            policy: options.policy.clone(),
            summarizer: options.summarizer.clone(),
            trigger_messages: options.trigger_messages,
            ..window.fit_options()
        };
        let started = start_fit_resolved(
            window.model_info().clone(),
            window.accountant().clone(),
            window.conversation().clone(),
            &o,
        )?;
        let t = Turn::begin(registry, started, &o, None)?;
        Ok(WindowTurn { inner: WindowInner::Running(Box::new(t)), generation })
    }

    /// The summarizer request waiting for a reply, if any.
    pub fn call(&self) -> Option<&SummarizerCall> {
        match &self.inner {
            WindowInner::Running(t) => t.call(),
            WindowInner::Unchanged(_) => None,
        }
    }

    /// Hands the host's reply to the waiting request (see [`Turn::resume`]).
    pub fn resume(&mut self, reply: Reply) -> Result<()> {
        match &mut self.inner {
            WindowInner::Running(t) => t.resume(reply),
            WindowInner::Unchanged(_) => Err(Error::invalid_argument("no summarizer request is waiting on this turn")),
        }
    }

    /// Ends the turn: the window takes the result (when it changed) and the
    /// report comes back. `InvalidArgument` when the window changed since
    /// the turn started; the window is then left as it is.
    pub fn finish(self, window: &mut Window) -> Result<TurnReport> {
        self.check_window(window)?;
        match self.inner {
            WindowInner::Unchanged(r) => Ok(*r),
            WindowInner::Running(t) => {
                let (c, report) = t.finish()?;
                if report.changed {
                    window.load(c)?;
                }
                Ok(report)
            }
        }
    }

    /// The refusal [`finish`](Self::finish) would give on `window`, without
    /// ending the turn: a front end that holds the turn apart from its
    /// window checks first, so a wrong window does not spend the turn.
    pub fn check_window(&self, window: &Window) -> Result<()> {
        if window.generation() != self.generation {
            return Err(Error::invalid_argument(
                "the window changed during the turn (a message was loaded, pushed, popped or replaced, or the \
                 window compacted, while the summarizer ran), or is not the window the turn started on; nothing \
                 was applied: start the turn again",
            ));
        }
        Ok(())
    }
}

/// A turn on a conversation ([`Turn`]) or on a window ([`WindowTurn`]),
/// driven alike: the C ABI, Node and uniffi each keep one handle for both
/// kinds, and only their `finish` differs. `W` is what the host keeps
/// beside a window's turn (its window handle, to give the result to at
/// `finish`; `()` when `finish` is handed the window).
#[derive(Debug)]
pub enum AnyTurn<W = ()> {
    /// A stateless turn (on a conversation given as JSON).
    Conversation(Box<Turn>),
    /// A window's turn, with the host's window handle.
    Window(Box<WindowTurn>, W),
}

impl<W> AnyTurn<W> {
    /// The summarizer request waiting for a reply, if any.
    pub fn call(&self) -> Option<&SummarizerCall> {
        match self {
            AnyTurn::Conversation(t) => t.call(),
            AnyTurn::Window(t, _) => t.call(),
        }
    }

    /// Hands the host's reply to the waiting request (see [`Turn::resume`]).
    pub fn resume(&mut self, reply: Reply) -> Result<()> {
        match self {
            AnyTurn::Conversation(t) => t.resume(reply),
            AnyTurn::Window(t, _) => t.resume(reply),
        }
    }

    /// The error for any call on a turn handle after its `finish`: the
    /// bindings keep an `Option<AnyTurn>` and say this once it is taken.
    pub fn finished() -> Error {
        Error::invalid_argument("the turn was finished")
    }
}

/// The window holds its model, budget and format; a turn's options that
/// try to set them are refused, never silently ignored. `model` may repeat
/// the window's own.
fn refuse_window_fields(window: &Window, o: &FitOptions) -> Result<()> {
    if o.api.is_some() {
        return Err(Error::invalid_argument(
            "options.api is for fit and stateless turns: a window counts in the API its format is written for",
        ));
    }
    let own = &window.model_info().model;
    if !o.model.is_empty() && &o.model != own {
        return Err(Error::invalid_argument(format!(
            "options.model {:?} is not the window's model {own:?}: a window turns with its own model",
            crate::text::clip(&o.model)
        )));
    }
    let set = [
        ("max_tokens", o.max_tokens.is_some()),
        ("reserve_output", o.reserve_output.is_some()),
        ("encoding", o.encoding.is_some()),
        ("context_window", o.context_window.is_some()),
        ("max_output_tokens", o.max_output_tokens.is_some()),
        ("chars_per_token", o.chars_per_token.is_some()),
        ("format", o.format.is_some()),
        ("target_ratio", o.target_ratio.is_some()),
        ("trigger_ratio", o.trigger_ratio.is_some()),
        ("carry", o.carry.is_some()),
    ];
    match set.iter().find(|(_, on)| *on) {
        Some((name, _)) => Err(Error::invalid_argument(format!(
            "options.{name} belongs to the window (its budget, set when it was made), not to a turn on it"
        ))),
        None => Ok(()),
    }
}

/// [`WindowTurn`] with a synchronous summarizer, on one borrowed window.
pub fn run_window(
    window: &mut Window,
    options: &FitOptions,
    mut summarizer: Option<&mut dyn FnMut(&SummarizerCall) -> Reply>,
) -> Result<TurnReport> {
    let mut t = WindowTurn::start(window, options)?;
    if let Some(f) = summarizer.as_mut() {
        while let Some(call) = t.call() {
            let reply = f(call);
            t.resume(reply)?;
        }
    }
    t.finish(window)
}

/// The report of a window turn below its trigger, from the cached counts.
fn unchanged(window: &Window, policy: &Policy) -> Result<TurnReport> {
    let pre = window.preflight(None)?;
    let c = window.conversation();
    let fit = FitReport {
        model: pre.model.clone(),
        exact: pre.exact,
        format: c.format,
        strategy: policy.strategy,
        max_tokens: pre.limit,
        reserved_output: pre.reserved_output,
        limit_tokens: pre.limit - pre.reserved_output,
        tokens_before: pre.prompt_tokens,
        tokens_after: pre.prompt_tokens,
        messages_before: c.messages.len(),
        messages_after: c.messages.len(),
        insufficient: false,
        target_tokens: pre.limit - pre.reserved_output,
        within_target: true,
        shortfall: None,
        changes: Vec::new(),
        protected: Vec::new(),
    };
    let prefix = pre.prompt_tokens.saturating_sub(pre.reply_priming);
    let cache = CacheImpact { first_changed: None, unchanged_prefix_tokens: prefix, invalidated_tokens: 0 };
    Ok(TurnReport {
        fit,
        fired: false,
        changed: false,
        summary: None,
        cache,
        carry: None,
        carried: None,
        carry_ignored: None,
    })
}

/// Runs a turn with a synchronous summarizer: while a request waits, calls
/// `summarizer` and resumes with its reply. `None`: the digest summarizes
/// (and the report says `no_summarizer`). For a model registered from its
/// files, the turn runs again with a tighter budget while its rendered
/// request is over the limit (`window::rendered`; the summarizer may be
/// asked again on each pass).
pub fn run(
    registry: &ModelRegistry,
    conversation: &str,
    options: &FitOptions,
    mut summarizer: Option<&mut dyn FnMut(&SummarizerCall) -> Reply>,
) -> Result<(Conversation, TurnReport)> {
    let mut report = None;
    if options.model.trim().is_empty() {
        return Err(Error::invalid_argument("options.model is required"));
    }
    let parsed = Conversation::parse(conversation, options.format)?;
    let fingerprints: Vec<String> = parsed.messages.iter().map(|m| carry::fingerprint(m.raw())).collect();
    let (c, fit) = crate::window::tighten_rendered(registry, options, |o| {
        let mut t = Turn::start_parsed_once(registry, parsed.clone(), fingerprints.clone(), o, None)?;
        if let Some(f) = summarizer.as_mut() {
            while let Some(call) = t.call() {
                let reply = f(call);
                t.resume(reply)?;
            }
        }
        let (c, r) = t.finish()?;
        let fit = r.fit.clone();
        report = Some(r);
        Ok((c, fit))
    })?;
    let mut report = report.ok_or_else(|| Error::internal("a turn ran no pass"))?;
    report.fit = fit;
    Ok((c, report))
}
