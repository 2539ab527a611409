//! The stateful window: one model, one budget, a conversation whose every
//! message count is cached, so appending costs the new message only.

use serde::{Deserialize, Serialize};

use super::Accountant;
use crate::chat::{Conversation, Format, Message, Role};
use crate::events::{BudgetCrossing, Compaction, Event, Observer, Repair};
use crate::limits::{MAX_BUDGET_TOKENS, MAX_MESSAGES};
use crate::models::ModelInfo;
use crate::{Error, ErrorKind, Result};

/// Budget settings. Ratios are fractions of the context window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct Budget {
    /// Context window in tokens; 0 means "the model's".
    pub context_window: usize,
    /// Tokens kept free for the reply; `None` means the model's maximum
    /// output, capped at a quarter of the window (4,096 when unknown).
    pub reserved_output: Option<usize>,
    /// Utilization at or above which `preflight` says `should_compact`.
    pub trigger_ratio: f64,
    /// Utilization compaction aims for.
    pub target_ratio: f64,
    /// A custom model: the encoding to count with when the registry does
    /// not know the model name (with `context_window` for its window; see
    /// `ModelRegistry::resolve`). Ignored for a known model, as
    /// `turnfit_registry_lookup`'s fallback encoding is.
    pub encoding: Option<crate::Encoding>,
    /// A custom model's maximum output tokens (replacing the registry's),
    /// which the reserved output defaults from; positive, at most
    /// `MAX_BUDGET_TOKENS`.
    pub max_output_tokens: Option<usize>,
    /// Count text as its characters divided by this, rounded down (seed
    /// 002's `len(text) // 4`: 4), instead of with the model's encoding;
    /// framing stays the model's and counts are estimates. A host counter
    /// registered with the model wins. See `FitOptions::chars_per_token`
    /// for why exact counts are the default.
    pub chars_per_token: Option<f64>,
    /// Multi-scale context (immediate, session and historical tiers, each
    /// with its budget); absent: off, and the window compacts as before.
    /// See docs/formats.md, "Multi-scale context".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multi_scale: Option<super::MultiScale>,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            context_window: 0,
            reserved_output: None,
            trigger_ratio: 0.8,
            target_ratio: 0.5,
            encoding: None,
            max_output_tokens: None,
            chars_per_token: None,
            multi_scale: None,
        }
    }
}

pub use crate::events::payload::Verdict;

/// A pre-flight report: token totals by component and the verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Preflight {
    /// The model the window is for.
    pub model: String,
    /// Whether the counts are exact (OpenAI encodings) or an estimate.
    pub exact: bool,
    /// System prompt tokens (Anthropic `system`, OpenAI system/developer messages).
    pub system: usize,
    /// Tool-definition tokens.
    pub tools: usize,
    /// All other messages already in the window.
    pub history: usize,
    /// The message about to be sent, if one was given.
    pub new_input: usize,
    /// Reply priming (3 tokens).
    pub reply_priming: usize,
    /// Sum of the above: the prompt as counted.
    pub prompt_tokens: usize,
    /// `prompt_tokens` times the calibration factor, for estimated models
    /// that have been calibrated; otherwise equal to `prompt_tokens`.
    pub calibrated_prompt_tokens: usize,
    /// The calibration factor in use (1.0 when none).
    pub calibration: f64,
    /// Tokens reserved for the reply.
    pub reserved_output: usize,
    /// The context window.
    pub limit: usize,
    /// `limit - (calibrated prompt + reserved)`; negative when overflowing.
    pub remaining: i64,
    /// `(calibrated prompt + reserved) / limit`: the share of the window the
    /// request takes once the reply has its room (what the verdict reads).
    pub utilization: f64,
    /// `system + tools + history + new_input`: the messages alone, without
    /// the reply priming (document 000's `current_tokens`; 0 for an empty
    /// window).
    pub message_tokens: usize,
    /// `message_tokens` (times the calibration) `/ limit`: document 000's
    /// `utilization`, 0.0 for an empty window. Reported beside `utilization`,
    /// which stays the figure the verdict uses: a prompt that leaves no room
    /// for the reply fails at the provider all the same.
    pub message_utilization: f64,
    /// Tokens at which compaction is triggered.
    pub trigger_tokens: usize,
    /// Tokens compaction aims for.
    pub target_tokens: usize,
    /// The verdict.
    pub verdict: Verdict,
    /// Each tier's tokens and budget, and the fold counts, for a window
    /// with `multi_scale`; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tiers: Option<super::TierReport>,
}

/// What [`Window::compact`] did.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum CompactOutcome {
    /// The window's conversation was compacted in place.
    Done {
        /// Prompt tokens before and after, and every change.
        report: CompactReport,
    },
    /// The summarize strategy needs the host's summary: call the model with
    /// `request.prompt`, then [`Window::apply_summary`] with `request.id`.
    NeedsSummary {
        /// What to summarize and the prompt to use.
        request: super::summarize::SummaryRequest,
    },
}

/// Figures and manifest of a window compaction.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CompactReport {
    /// Prompt tokens before.
    pub tokens_before: usize,
    /// Prompt tokens after.
    pub tokens_after: usize,
    /// The prompt-token target (target ratio of the window, less reserved output).
    pub target_tokens: usize,
    /// The hard prompt-token limit (the window less reserved output).
    pub limit_tokens: usize,
    /// Whether the result is within the target.
    pub within_target: bool,
    /// Whether fewer tokens than `min_reclaim` were reclaimed.
    pub insufficient: bool,
    /// What could not be done as asked (the target, a summary's room), and
    /// why; absent when nothing was given up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shortfall: Option<super::Shortfall>,
    /// Every change.
    pub changes: Vec<super::Change>,
    /// The rounds kept whatever the budget, and why.
    pub protected: Vec<super::Protected>,
    /// For a multi-scale window: the tiers after the fold (which replaces
    /// compaction there); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tiers: Option<super::TierReport>,
}

/// What [`Window::add`] did.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Added {
    /// The added message's tokens.
    pub tokens: usize,
    /// The compaction that made room, when one ran.
    pub compacted: Option<CompactReport>,
}

/// A generation number no window has had (see [`Window::generation`]).
fn next_generation() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// A conversation bound to a model and a budget, with cached counts.
#[derive(Debug, Clone)]
pub struct Window {
    acct: Accountant,
    info: ModelInfo,
    budget: Budget,
    limit: usize,
    reserved: usize,
    conversation: Conversation,
    counts: Vec<usize>,
    system_tokens: usize,
    history_tokens: usize,
    tools_tokens: usize,
    calibration: f64,
    pending: Option<(super::summarize::Pending, super::Policy)>,
    /// Renewed by every call that changes the conversation, so a turn that
    /// ran while the window changed can tell (see [`Window::generation`]).
    generation: u64,
    observer: Observer,
    /// Where the last compaction left the window (its total with the
    /// reserve) when it could not reach the target; `None` after one that
    /// did, and after the conversation is replaced. [`Window::add`]
    /// compacts again only past this plus the trigger's gap, or on overflow.
    settled: Option<usize>,
    /// The model's own prompt counter, for a model registered from its
    /// files: preflight's total is its count of the request.
    prompt_model: Option<std::sync::Arc<dyn crate::models::PromptModel>>,

    /// Multi-scale context: the checked tier budgets and the summaries
    /// (`None`: off).
    tiers: Option<(super::tiers::TierBudgets, super::tiers::TierState)>,
}

/// `LimitExceeded` when a window would hold `n` messages, more than
/// [`MAX_MESSAGES`].
fn check_message_count(n: usize) -> Result<()> {
    if n > MAX_MESSAGES {
        return Err(Error::new(
            ErrorKind::LimitExceeded,
            format!("the window would hold {n} messages; the limit is {MAX_MESSAGES} (MAX_MESSAGES)"),
        ));
    }
    Ok(())
}

/// `InvalidArgument` when a budget figure is over [`MAX_BUDGET_TOKENS`], so
/// every sum a report makes of budget figures stays far from wrapping.
pub(crate) fn check_budget_tokens(what: &str, n: usize) -> Result<()> {
    if n > MAX_BUDGET_TOKENS {
        return Err(Error::invalid_argument(format!(
            "{what} is {n} tokens; the limit is {MAX_BUDGET_TOKENS} (MAX_BUDGET_TOKENS)"
        )));
    }
    Ok(())
}

fn is_system(m: &Message) -> bool {
    matches!(m.role, Role::System | Role::Developer)
}

impl Window {
    /// An empty window for `model` as the registry describes it, counting
    /// with the model's encoding and the published framing constants.
    /// The budget's `encoding` and `max_output_tokens` describe a custom
    /// model (see [`crate::ModelRegistry::resolve`]).
    pub fn for_model(registry: &crate::ModelRegistry, model: &str, budget: Budget) -> Result<Window> {
        check_budget_tokens("context_window", budget.context_window)?;
        let custom = crate::CustomModel {
            encoding: budget.encoding,
            context_window: (budget.context_window > 0).then_some(budget.context_window),
            max_output_tokens: budget.max_output_tokens,
        };
        let info = registry.resolve(model, &custom)?;
        let acct = Accountant::for_resolved(registry, &info, None)?;
        let prompt_model = registry.prompt_model(&info);
        Ok(Window { prompt_model, ..Window::new(acct, info, budget)? })
    }

    /// The model the window counts for, as resolved.
    pub fn model_info(&self) -> &ModelInfo {
        &self.info
    }

    /// An empty window (OpenAI format until a conversation is loaded).
    /// The budget's `chars_per_token` replaces `acct`'s encoding counts
    /// (not a host counter), and makes the counts estimates.
    pub fn new(mut acct: Accountant, mut info: ModelInfo, budget: Budget) -> Result<Window> {
        if let (Some(c), true) = (budget.chars_per_token, acct.counter().is_encoding()) {
            acct = acct.with_counter(crate::models::Counter::chars(c)?);
            info.exact = false;
        }
        if !(0.0..=1.0).contains(&budget.trigger_ratio) || !(0.0..=1.0).contains(&budget.target_ratio) {
            return Err(Error::invalid_argument("trigger_ratio and target_ratio must be between 0 and 1"));
        }
        if budget.target_ratio > budget.trigger_ratio {
            return Err(Error::invalid_argument("target_ratio must not exceed trigger_ratio"));
        }
        check_budget_tokens("context_window", budget.context_window)?;
        if let Some(r) = budget.reserved_output {
            check_budget_tokens("reserved_output", r)?;
        }
        let limit = if budget.context_window > 0 {
            budget.context_window
        } else {
            info.context_window.map(|c| c as usize).ok_or_else(|| {
                Error::invalid_argument(format!(
                    "model '{}' has no known context window; give context_window",
                    info.model
                ))
            })?
        };
        let reserved = budget
            .reserved_output
            .unwrap_or_else(|| (info.max_output_tokens.map_or(4096, |m| m as usize)).min(limit / 4));
        if reserved >= limit {
            return Err(Error::invalid_argument(format!(
                "reserved_output {reserved} leaves no room in a {limit}-token window"
            )));
        }
        let tiers = match &budget.multi_scale {
            Some(ms) => Some((super::tiers::check(ms, limit, reserved, &acct)?, Default::default())),
            None => None,
        };
        let conversation = Conversation::parse("[]", Some(Format::OpenAi))?;
        Ok(Window {
            acct,
            info,
            budget,
            limit,
            reserved,
            conversation,
            counts: Vec::new(),
            system_tokens: 0,
            history_tokens: 0,
            tools_tokens: 0,
            calibration: 1.0,
            pending: None,
            generation: next_generation(),
            observer: Observer::none(),
            settled: None,
            prompt_model: None,

            tiers,
        })
    }

    /// Sets the observer that receives this window's events (`compacted`,
    /// `repaired`, `budget_crossed`; see [`crate::events`]). A clone of the
    /// window keeps reporting to the same observer.
    pub fn set_observer(&mut self, observer: Observer) {
        self.observer = observer;
    }

    /// Replaces the window's conversation, counting every message once.
    /// More than [`MAX_MESSAGES`] messages is `LimitExceeded` (a parsed
    /// conversation never has that many; one built in code, or grown by a
    /// repair's synthetic results, might), and the window is unchanged.
    pub fn load(&mut self, conversation: Conversation) -> Result<()> {
        let before = self.verdict();
        self.load_counted(conversation)?;
        self.note_crossing("load", before);
        Ok(())
    }

    /// [`load`](Self::load) without the `budget_crossed` check (compaction
    /// and repair report their own events).
    fn load_counted(&mut self, conversation: Conversation) -> Result<()> {
        check_message_count(conversation.messages.len())?;
        self.touch();
        self.settled = None;
        let mut counts = Vec::with_capacity(conversation.messages.len());
        let (mut sys, mut hist) = (0, 0);
        for m in &conversation.messages {
            let n = self.acct.message(m)?;
            if is_system(m) {
                sys += n
            } else {
                hist += n
            }
            counts.push(n);
        }
        if let Some(s) = &conversation.system {
            sys += self.acct.system(s)?;
        }
        self.tools_tokens = self.acct.request_tools(&conversation)?;
        self.system_tokens = sys;
        self.history_tokens = hist;
        self.counts = counts;
        self.conversation = conversation;
        self.resync_tiers();
        Ok(())
    }

    /// Appends a message, counting only it. A window already holding
    /// [`MAX_MESSAGES`] messages refuses it with `LimitExceeded`.
    pub fn push(&mut self, m: Message) -> Result<usize> {
        check_message_count(self.counts.len() + 1)?;
        let before = self.verdict();
        self.touch();
        let n = self.acct.message(&m)?;
        if is_system(&m) {
            self.system_tokens += n
        } else {
            self.history_tokens += n
        }
        self.counts.push(n);
        self.conversation.messages.push(m);
        self.resync_tiers();
        self.note_crossing("push", before);
        Ok(n)
    }

    /// Adds a message to a chat window, compacting first when it would take
    /// the window past its trigger (seed 000's `add_message(...,
    /// auto_prune=True)`). The message is appended, then, if the verdict is
    /// no longer `fits`, the window is compacted under `policy` with the new
    /// message as the latest user message (so the previous latest loses
    /// that protection and the window ends at its target, not over it). The
    /// summarize strategy summarizes with the digest here; a turn
    /// (`turnfit::turn`) hands the span to the host's model. When the
    /// window cannot be made to fit, nothing changes and the error says
    /// why.
    ///
    /// A target out of reach does not re-fire on every message: when the
    /// last compaction ended over its target at a total of S (what is kept
    /// whatever the budget is that large), the window compacts again only
    /// once its total reaches S plus the trigger's gap (trigger less
    /// target tokens), the room the compaction was meant to make, or when
    /// it would overflow. Until then the verdict still says
    /// `should_compact`, and `compact` still runs when called.
    ///
    /// On a multi-scale window (`multi_scale` in the budget) the policy is
    /// not used: when the immediate tier passes its budget, or the window
    /// would overflow, the oldest rounds are folded into the session
    /// summary (and it into the historical one) by the digest; see
    /// [`add_with`](Self::add_with) for the host's summarizer.
    pub fn add(&mut self, m: Message, policy: &super::Policy) -> Result<Added> {
        self.add_with(m, policy, &mut |_| None)
    }

    /// [`add`](Self::add) with the host's summarizer for a multi-scale
    /// window's folds: `summarize` gets each summary to write and returns
    /// its text, or `None` (or empty text) for the digest. A reply longer
    /// than `max_tokens` is cut to it. Other windows never call it.
    pub fn add_with(
        &mut self,
        m: Message,
        policy: &super::Policy,
        summarize: &mut dyn FnMut(&super::FoldRequest) -> Option<String>,
    ) -> Result<Added> {
        let tokens = self.push(m)?;
        if self.tiers.is_some() {
            if !self.tiers_due() {
                return Ok(Added { tokens, compacted: None });
            }
            return match self.fold_tiers(summarize) {
                Ok(r) => Ok(Added { tokens, compacted: Some(r) }),
                Err(e) => {
                    self.pop();
                    Err(e)
                }
            };
        }
        let now = self.level(self.prompt_tokens(0));
        if now.verdict == Verdict::Fits || (now.verdict != Verdict::Overflow && now.total < self.refire_at()) {
            return Ok(Added { tokens, compacted: None });
        }
        let bound = self.bind(policy);
        match super::compact(&self.conversation, &bound, &self.acct) {
            Ok(r) => Ok(Added { tokens, compacted: Some(self.adopt(r, &bound)?) }),
            Err(e) => {
                self.pop();
                Err(e)
            }
        }
    }

    /// The total at which [`add`](Self::add) compacts again after a
    /// compaction that could not reach its target (0: no such compaction).
    fn refire_at(&self) -> usize {
        let Some(settled) = self.settled else { return 0 };
        let trigger = (self.limit as f64 * self.budget.trigger_ratio).floor() as usize;
        let target = (self.limit as f64 * self.budget.target_ratio).floor() as usize;
        settled.saturating_add(trigger.saturating_sub(target))
    }

    /// Parses `text` in the window's format and [`add`](Self::add)s it.
    pub fn add_json(&mut self, text: &str, policy: &super::Policy) -> Result<Added> {
        let m = self.conversation.parse_message(text)?;
        self.add(m, policy)
    }

    /// The fit options that describe this window's model and budget (and
    /// its trigger and target ratios): what a turn on the window runs with,
    /// the caller's policy and turn settings added.
    pub fn fit_options(&self) -> super::FitOptions {
        super::FitOptions {
            model: self.info.model.clone(),
            max_tokens: Some(self.limit),
            reserve_output: Some(self.reserved),
            encoding: Some(self.info.encoding),
            context_window: Some(self.limit),
            max_output_tokens: self.info.max_output_tokens.map(|m| m as usize),
            format: Some(self.conversation.format),
            trigger_ratio: Some(self.budget.trigger_ratio),
            target_ratio: Some(self.budget.target_ratio),
            ..super::FitOptions::default()
        }
    }

    /// Discards a pending summary request and renews the generation: the
    /// conversation is about to change.
    fn touch(&mut self) {
        self.pending = None;
        self.generation = next_generation();
    }

    /// A number that changes whenever the conversation may have changed
    /// (load, push, pop, replace, compact, repair). A turn started on the
    /// window records it, and applies its result only if it is unchanged.
    /// Numbers are unique across windows (one process-wide counter), so a
    /// turn handed a window other than its own is refused too; a clone
    /// shares its original's number until either changes, and then holds
    /// the same conversation.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Whether a compaction would run now: the verdict is no longer
    /// `fits` (prompt plus reserved output at the trigger, or over the
    /// limit). From the cached counts; nothing is recounted.
    pub fn over_trigger(&self) -> bool {
        self.verdict() != Verdict::Fits
    }

    /// Removes and returns the last message.
    pub fn pop(&mut self) -> Option<Message> {
        self.touch();
        let m = self.conversation.messages.pop()?;
        let n = self.counts.pop().unwrap_or(0);
        if is_system(&m) {
            self.system_tokens -= n
        } else {
            self.history_tokens -= n
        }
        self.resync_tiers();
        Some(m)
    }

    /// Replaces message `i`, recounting only it.
    pub fn replace(&mut self, i: usize, m: Message) -> Result<Message> {
        if i >= self.counts.len() {
            return Err(Error::invalid_argument(format!(
                "message index {i} is out of range (window holds {})",
                self.counts.len()
            )));
        }
        let before = self.verdict();
        self.touch();
        let n = self.acct.message(&m)?;
        let old_n = self.counts[i];
        let old = std::mem::replace(&mut self.conversation.messages[i], m);
        if is_system(&old) {
            self.system_tokens -= old_n
        } else {
            self.history_tokens -= old_n
        }
        if is_system(&self.conversation.messages[i]) {
            self.system_tokens += n
        } else {
            self.history_tokens += n
        }
        self.counts[i] = n;
        self.resync_tiers();
        self.note_crossing("replace", before);
        Ok(old)
    }

    /// The policy `compact` runs: the caller's, with the window's own limit
    /// (context window less reserved output) and target (target ratio of the
    /// window, less reserved output) unless the caller set them.
    fn bind(&self, policy: &super::Policy) -> super::Policy {
        let limit = self.limit - self.reserved;
        let target = ((self.limit as f64 * self.budget.target_ratio) as usize).saturating_sub(self.reserved).max(1);
        super::Policy {
            limit_tokens: if policy.limit_tokens == 0 { limit } else { policy.limit_tokens },
            target_tokens: if policy.target_tokens == 0 { target } else { policy.target_tokens },
            ..policy.clone()
        }
    }

    /// Compacts the window's conversation under `policy` (see
    /// [`super::compact`]). For the summarize strategy this returns a summary
    /// request and keeps it pending until [`apply_summary`](Self::apply_summary);
    /// any other call on the window's contents discards it.
    ///
    /// On a multi-scale window this folds the tiers instead (see
    /// [`add`](Self::add)), whatever the policy, and is always `Done`.
    pub fn compact(&mut self, policy: &super::Policy) -> Result<CompactOutcome> {
        if self.tiers.is_some() {
            return Ok(CompactOutcome::Done { report: self.fold_tiers(&mut |_| None)? });
        }
        let policy = self.bind(policy);
        self.touch();
        if policy.strategy == super::Strategy::Summarize {
            if let Some(p) = super::summarize::request_summary(&self.conversation, &policy, &self.acct)? {
                let request = p.request.clone();
                self.pending = Some((p, policy));
                return Ok(CompactOutcome::NeedsSummary { request });
            }
        }
        let r = super::compact(&self.conversation, &policy, &self.acct)?;
        Ok(CompactOutcome::Done { report: self.adopt(r, &policy)? })
    }

    /// Completes a pending summarize compaction with the host's summary.
    pub fn apply_summary(&mut self, id: &str, summary: &str) -> Result<CompactReport> {
        crate::text::check_name("summary id", id)?;
        let Some((pending, policy)) = self.pending.take() else {
            return Err(Error::invalid_argument(
                "no summary is pending on this window (call compact with the summarize strategy first)",
            ));
        };
        match super::summarize::apply_summary(&pending, id, summary, &policy, &self.acct) {
            Ok(r) => self.adopt(r, &policy),
            Err(e) => {
                // A wrong id leaves the request pending; other errors end it.
                if e.kind() == crate::ErrorKind::InvalidArgument {
                    self.pending = Some((pending, policy));
                }
                Err(e)
            }
        }
    }

    fn adopt(&mut self, mut r: super::Compacted, policy: &super::Policy) -> Result<CompactReport> {
        // A model registered from its files: keep the order of roles its
        // template enforces (`window::alternation`).
        if let Some(model) = &self.prompt_model {
            let changes = r.changes.len();
            super::alternation::settle(&mut r, model.turn_order(), &self.acct)?;
            if r.changes.len() > changes {
                r.tokens_after = self.acct.conversation(&r.conversation)?;
            }
        }
        let event = self.observer.is_set().then(|| compaction_event(&r, policy.strategy));
        let report = CompactReport {
            tokens_before: r.tokens_before,
            tokens_after: r.tokens_after,
            target_tokens: policy.target_tokens,
            limit_tokens: policy.limit_tokens,
            within_target: r.within_target,
            insufficient: r.insufficient,
            shortfall: r.shortfall,
            changes: r.changes,
            protected: r.protected,
            tiers: None,
        };
        self.load_counted(r.conversation)?;
        if !report.within_target {
            self.settled = Some(self.level(self.prompt_tokens(0)).total);
        }
        if let Some(e) = event {
            self.observer.emit(|| Event::Compacted(e));
        }
        Ok(report)
    }

    /// Structural issues in the window's conversation.
    pub fn validate(&self) -> Vec<super::Issue> {
        super::validate(&self.conversation)
    }

    /// Repairs the window's conversation in place and returns the manifest.
    pub fn repair(&mut self, synthetic: Option<&str>) -> Result<Vec<super::Change>> {
        let r = super::repair(&self.conversation, synthetic, &self.acct)?;
        if !r.changes.is_empty() {
            let (before, tokens_before) = (self.verdict(), self.prompt_tokens(0));
            self.load_counted(r.conversation)?;
            let tokens_after = self.prompt_tokens(0);
            self.observer.emit(|| Event::Repaired(repair_event(&r.changes, tokens_before, tokens_after)));
            self.note_crossing("repair", before);
        }
        Ok(r.changes)
    }

    /// Parses `text` in the window's format and appends it (see [`push`](Self::push)).
    pub fn push_json(&mut self, text: &str) -> Result<usize> {
        let m = self.conversation.parse_message(text)?;
        self.push(m)
    }

    /// The conversation as it stands.
    pub fn conversation(&self) -> &Conversation {
        &self.conversation
    }

    /// Cached token count of each message.
    pub fn message_tokens(&self) -> &[usize] {
        &self.counts
    }

    /// The accountant (tokenizer and framing).
    pub fn accountant(&self) -> &Accountant {
        &self.acct
    }

    /// Records the prompt-token count the provider reported for the window's
    /// current conversation. For estimated models this sets the correction
    /// factor (reported / counted) applied to later pre-flights; for exact
    /// models the factor stays 1.0 and the return value is the discrepancy.
    pub fn calibrate(&mut self, reported_prompt_tokens: usize) -> Result<f64> {
        let counted = self.prompt_tokens(0);
        if counted == 0 || reported_prompt_tokens == 0 {
            return Err(Error::invalid_argument(
                "calibration needs a non-empty conversation and a positive reported count",
            ));
        }
        let factor = reported_prompt_tokens as f64 / counted as f64;
        if !(0.25..=4.0).contains(&factor) {
            return Err(Error::invalid_argument(format!(
                "reported {reported_prompt_tokens} tokens for a conversation counted as {counted}: a factor of {factor:.2} is implausible; was it the same conversation?"
            )));
        }
        if !self.exact() {
            self.calibration = factor;
        }
        Ok(factor)
    }

    fn prompt_tokens(&self, new_input: usize) -> usize {
        // Saturating: each term is bounded by the text limits, but the sum is
        // a report figure and must never wrap (on 32-bit targets it could).
        [self.system_tokens, self.tools_tokens, self.history_tokens, new_input, self.acct.framing().reply_priming]
            .into_iter()
            .fold(0usize, usize::saturating_add)
    }

    /// Calibrated prompt, total with the reserve, trigger and verdict for a
    /// prompt of `prompt` tokens.
    fn level(&self, prompt: usize) -> Level {
        // `as usize` from f64 saturates; the sum saturates too, and `limit`
        // is at most MAX_BUDGET_TOKENS, so `remaining` cannot wrap.
        let calibrated = (prompt as f64 * self.calibration).ceil() as usize;
        let total = calibrated.saturating_add(self.reserved);
        let trigger = (self.limit as f64 * self.budget.trigger_ratio).floor() as usize;
        let verdict = if total > self.limit {
            Verdict::Overflow
        } else if total >= trigger {
            Verdict::ShouldCompact
        } else {
            Verdict::Fits
        };
        Level { calibrated, total, trigger, verdict }
    }

    /// The verdict of the conversation as it stands.
    fn verdict(&self) -> Verdict {
        self.level(self.prompt_tokens(0)).verdict
    }

    /// Emits `budget_crossed` when the verdict went up since `before`.
    fn note_crossing(&self, operation: &'static str, before: Verdict) {
        if !self.observer.is_set() {
            return;
        }
        let now = self.level(self.prompt_tokens(0));
        if rank(now.verdict) > rank(before) {
            self.observer.emit(|| {
                Event::BudgetCrossed(BudgetCrossing {
                    operation,
                    from: before,
                    to: now.verdict,
                    total_tokens: now.total,
                    trigger_tokens: now.trigger,
                    limit: self.limit,
                })
            });
        }
    }

    /// Whether the counts are exact: the model's encoding is, the format's
    /// framing is measured ([`Format::counts_exactly`]), and the request
    /// holds no shape the accounting only estimates
    /// ([`Accountant::estimate_reasons`]).
    fn exact(&self) -> bool {
        self.info.exact
            && self.conversation.format.counts_exactly()
            && self.acct.estimate_reasons(&self.conversation).is_empty()
    }

    /// The pre-flight report, optionally counting a message about to be sent.
    /// For a model registered from its files, `prompt_tokens` and the
    /// verdict are its template's count of the request (`exact` unless its
    /// server renders with a template of its own); the components stay the
    /// per-message figures.
    pub fn preflight(&self, new_input: Option<&Message>) -> Result<Preflight> {
        let new_n = new_input.map(|m| self.acct.message(m)).transpose()?.unwrap_or(0);
        let rendered = self.rendered_count(new_input)?;
        let prompt = rendered.unwrap_or_else(|| self.prompt_tokens(new_n));
        let Level { calibrated, total, trigger, verdict } = self.level(prompt);
        let message = self.system_tokens + self.tools_tokens + self.history_tokens + new_n;
        Ok(Preflight {
            model: self.info.model.clone(),
            exact: match (&rendered, &self.prompt_model) {
                (Some(_), Some(model)) => model.exact(),
                _ => self.exact() && !new_input.is_some_and(|m| self.acct.message_estimated(m)),
            },
            system: self.system_tokens,
            tools: self.tools_tokens,
            history: self.history_tokens,
            new_input: new_n,
            reply_priming: self.acct.framing().reply_priming,
            prompt_tokens: prompt,
            calibrated_prompt_tokens: calibrated,
            calibration: self.calibration,
            reserved_output: self.reserved,
            limit: self.limit,
            remaining: i64::try_from(self.limit as i128 - total as i128).unwrap_or(i64::MIN),
            utilization: total as f64 / self.limit as f64,
            message_tokens: message,
            message_utilization: message as f64 * self.calibration / self.limit as f64,
            trigger_tokens: trigger,
            target_tokens: (self.limit as f64 * self.budget.target_ratio).floor() as usize,
            verdict,
            tiers: self.tier_report()?,
        })
    }
}

impl Window {
    /// The template's count of the request with `new_input` appended, for a
    /// window whose model has a prompt counter and whose conversation is
    /// OpenAI Chat (what templates render); `None` otherwise.
    fn rendered_count(&self, new_input: Option<&Message>) -> Result<Option<usize>> {
        let Some(model) = &self.prompt_model else { return Ok(None) };
        if self.conversation.format != Format::OpenAi {
            return Ok(None);
        }
        let mut request = self.conversation.to_value();
        if let Some(m) = new_input {
            let list = match &mut request {
                serde_json::Value::Object(o) => o.get_mut("messages"),
                other => Some(other),
            };
            if let Some(serde_json::Value::Array(list)) = list {
                list.push(m.raw().clone());
            }
        }
        model.count_request(&request).map(Some)
    }
}

/// What [`Window::level`] works out.
struct Level {
    calibrated: usize,
    total: usize,
    trigger: usize,
    verdict: Verdict,
}

fn rank(v: Verdict) -> u8 {
    match v {
        Verdict::Fits => 0,
        Verdict::ShouldCompact => 1,
        Verdict::Overflow => 2,
    }
}

fn count(changes: &[super::Change], actions: &[super::ChangeKind]) -> usize {
    changes.iter().filter(|c| actions.contains(&c.action)).count()
}

fn compaction_event(r: &super::Compacted, strategy: super::Strategy) -> Compaction {
    use super::ChangeKind::*;
    Compaction {
        strategy,
        tokens_before: r.tokens_before,
        tokens_after: r.tokens_after,
        messages_dropped: count(&r.changes, &[DroppedMessage, Summarized]),
        results_masked: count(&r.changes, &[MaskedResult, ClearedResult]),
        results_truncated: count(&r.changes, &[TruncatedResult]),
        summarized: count(&r.changes, &[InsertedSummary]) > 0,
        within_target: r.within_target,
    }
}

fn repair_event(changes: &[super::Change], tokens_before: usize, tokens_after: usize) -> Repair {
    use super::ChangeKind::*;
    Repair {
        results_added: count(changes, &[SynthesizedResult]),
        results_removed: count(changes, &[DroppedResult]),
        results_moved: count(changes, &[MovedResult]),
        messages_removed: count(changes, &[DroppedMessage]),
        tokens_before,
        tokens_after,
    }
}

#[cfg(test)]
mod tests;
mod tiers;
