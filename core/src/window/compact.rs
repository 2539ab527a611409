//! Compaction: make a conversation fit a token target, least lossy step
//! first, without ever breaking the tool-call invariants (every call keeps
//! its result, nothing is reordered).
//!
//! The ladder, in one pass, every step in the manifest:
//! 1. repair the tool structure (or refuse, when told not to repair);
//! 2. cut tool outputs longer than `tool_output_max_bytes` bytes, then
//!    those longer than an explicit `tool_output_max` tokens, by structure
//!    (head and tail lines, and the error, failure and summary lines
//!    between them; see `tool_outputs::structured`);
//! 3. when the history is over its target (compaction runs): cut every
//!    tool output longer than the default cap (a quarter of the prompt
//!    limit, when `tool_output_max` is not set), protected rounds and the
//!    newest round included, and if the protected rounds alone are still
//!    over the target, cut their tool outputs to one level that makes them
//!    fit (see [`cut_to_fit`]); with `recency`, an output its mask covers
//!    is cut only when step 4 keeps it unmasked (see [`deferrable`]);
//! 4. mask older tool results (`mask`, see `mask`), oldest first, only as
//!    far as needed;
//! 5. drop (or, for `summarize`, summarize) the rounds the strategy ranks
//!    lowest (see `rounds` for what a round is and what protects one);
//! 6. if what is protected still exceeds the limit, the newest rounds,
//!    turns and messages lose their protection, oldest first, and go the
//!    way of step 5.
//!
//! The result fits the hard limit, or the call fails with `DoesNotFit`
//! naming each irreducible part and its cost: framing and tool
//! definitions, the system prompt, the task, the latest user message and
//! the host's pins are the only things that can make a conversation not
//! fit (with `tool_output_max: 0`, uncut tool outputs in protected rounds
//! too).

use std::borrow::Cow;

use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

use super::manifest::{Change, ChangeKind, Protected, Reason, Shortfall, ShortfallReason};
use super::mask::{self, MaskOptions, Masked};
use super::rounds::{self, is_user_input, Protection, Round};
use super::summary_message::{self, SummaryRole};
use super::{bm25, repair, tool_outputs, validate, Accountant, IssueKind};
use crate::chat::{Conversation, Message, Role};
use crate::{Error, ErrorKind, Result};

pub use crate::events::payload::Strategy;

/// What to do and within what budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct Policy {
    /// Selection strategy.
    pub strategy: Strategy,
    /// Prompt tokens to aim for.
    pub target_tokens: usize,
    /// Prompt tokens that must not be exceeded (the window minus reserved
    /// output); a result above it is an error.
    pub limit_tokens: usize,
    /// Cut every tool output longer than this many tokens first, by
    /// structure: head and tail lines, and the error, failure, traceback
    /// and summary lines between them, with a marker naming the tool and
    /// the tokens and lines cut. Absent: the default cap, a quarter of the
    /// prompt limit, applied only when the history is over its target
    /// (protected rounds and the newest round included). 0: tool outputs
    /// are never cut, not even to make protected rounds fit.
    pub tool_output_max: Option<usize>,
    /// Cut every tool output longer than this many bytes of UTF-8 first,
    /// before the token cap (head and tail kept, the marker included in
    /// the bytes, never inside a character): a size cap that needs no
    /// tokenizer, as hosts set one (design 001: 10 KB).
    pub tool_output_max_bytes: Option<usize>,
    /// Keep the first this-many user messages (the task); 0 keeps none.
    pub keep_first: usize,
    /// Keep the newest this-many rounds (the model's last action and what
    /// came back).
    pub keep_last_rounds: usize,
    /// Keep the newest this-many user turns besides the latest, and the
    /// latest turn whole (a turn runs from a user message to the next): the
    /// meaning this option had when the turn was compaction's unit.
    pub keep_last_turns: usize,
    /// Keep the newest this-many messages, rounded out to whole rounds.
    pub keep_last_messages: usize,
    /// Message indices (in the input) whose rounds must be kept.
    pub pinned: Vec<usize>,
    /// When compaction runs, keep only what is protected (system, task,
    /// latest user message, pins, the `keep_last_*` rounds) and drop, or
    /// summarize, everything else, whatever the token target: "keep the
    /// last N messages" (`keep_last_messages`, snapped to whole rounds)
    /// with no target to tune, as Semantic Kernel's reducers, Koog's
    /// `FromLastNMessages` and seed 002's `compress(keep_recent=10)` do.
    /// The limit still holds: protection is lifted, oldest first, if the
    /// kept rounds alone exceed it.
    pub keep_only_protected: bool,
    /// Keep system and developer messages whatever the budget [default
    /// true]. False makes them rounds like any other, dropped or
    /// summarized as the strategy ranks them (and counted by
    /// `keep_last_rounds` / `keep_last_messages`): seed 002's
    /// `compress(keep_system=False)`. A top-level system prompt
    /// (Anthropic's and Bedrock's `system`, Gemini's `systemInstruction`,
    /// Responses' `instructions`) is part of the request, not of the
    /// history, and is always kept. Why true by default: the system prompt
    /// holds the agent's instructions and rules; a request that lost it
    /// changes what the model does, not only what it remembers, and a
    /// summary of it is weaker than the text.
    pub keep_system: bool,
    /// Ids of tool calls awaiting their result (an approval, a long-running
    /// job): their rounds are kept whatever the budget, and they get no
    /// synthetic result, so the result that arrives later pairs with them.
    /// Other unanswered calls still get one (the provider refuses a call
    /// with no result).
    pub pending_calls: Vec<String>,
    /// Observation masking of older tool results.
    pub mask: MaskOptions,
    /// Repair tool structure first (default); when false, a history with
    /// structural issues is refused instead.
    pub repair: bool,
    /// Weight of relevance in [`Strategy::Hybrid`], 0 to 1.
    pub relevance_weight: f64,
    /// Host relevance per input message index (replaces BM25 when given).
    pub scores: Option<Vec<f64>>,
    /// If compaction reclaims fewer tokens than this, the result says so
    /// (`insufficient: true`) so a caller does not loop on it.
    pub min_reclaim: usize,
    /// Summarize: tokens the summary may take.
    pub summary_max_tokens: usize,
    /// Summarize: tokens the summarizer prompt may take (the transcript is
    /// cut, head and tail kept, to fit).
    pub summarizer_budget: usize,
    /// Summarize: prompt template with `{transcript}` (and optionally
    /// `{digest}` and `{max_tokens}`).
    pub summary_template: Option<String>,
    /// Summarize: the deterministic digest's budget and sections.
    pub digest: super::digest::DigestOptions,
    /// Summarize: the role of the summary message.
    pub summary_role: SummaryRole,
    /// Summarize: the line that starts the summary message [default:
    /// "[Summary of earlier conversation]"].
    pub summary_label: Option<String>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            strategy: Strategy::Recency,
            target_tokens: 0,
            limit_tokens: 0,
            tool_output_max: None,
            tool_output_max_bytes: None,
            keep_first: 1,
            keep_last_rounds: 1,
            keep_last_turns: 0,
            keep_last_messages: 0,
            pinned: Vec::new(),
            keep_only_protected: false,
            keep_system: true,
            pending_calls: Vec::new(),
            mask: MaskOptions::default(),
            repair: true,
            relevance_weight: 0.5,
            scores: None,
            min_reclaim: 0,
            summary_max_tokens: 500,
            summarizer_budget: 8000,
            summary_template: None,
            digest: super::digest::DigestOptions::default(),
            summary_role: SummaryRole::User,
            summary_label: None,
        }
    }
}

/// The outcome of a compaction.
#[derive(Debug, Clone)]
pub struct Compacted {
    /// The compacted conversation, in the input's format.
    pub conversation: Conversation,
    /// Every change: repairs, truncations, masks, dropped messages.
    pub changes: Vec<Change>,
    /// The rounds kept whatever the budget, and why.
    pub protected: Vec<Protected>,
    /// Prompt tokens before.
    pub tokens_before: usize,
    /// Prompt tokens after.
    pub tokens_after: usize,
    /// The prompt-token target the compaction aimed at.
    pub target_tokens: usize,
    /// Whether the result is within `target_tokens`.
    pub within_target: bool,
    /// Whether fewer than `min_reclaim` tokens were reclaimed.
    pub insufficient: bool,
    /// What could not be done as asked (the target, a summary), and why;
    /// `None` when nothing was given up.
    pub shortfall: Option<Shortfall>,
}

/// The repaired, tool-cut working copy and what compaction knows about it.
#[derive(Debug, Clone)]
pub(super) struct Prepared {
    pub(super) work: Conversation,
    pub(super) changes: Vec<Change>,
    /// Tokens of each working message.
    pub(super) counts: Vec<usize>,
    /// Each working message's masked form, when it may be masked.
    pub(super) masks: Vec<Option<Masked>>,
    /// Framing, tools and a top-level system prompt.
    pub(super) fixed: usize,
    pub(super) rounds: Vec<Round>,
    pub(super) target: usize,
    pub(super) tokens_before: usize,
    /// For each working message, its index in the input (None if repair made it).
    pub(super) origin: Vec<Option<usize>>,
    /// Each working message's tool-result tokens, in order.
    pub(super) results: Vec<Vec<usize>>,
    /// Pinned working messages.
    pub(super) pinned: Vec<usize>,
    /// Working messages holding a call that awaits its result.
    pub(super) awaiting: Vec<usize>,
    /// Starts of the rounds whose keep-newest protection was lifted to
    /// make the rest fit (step 6 of the ladder).
    pub(super) relaxed: Vec<usize>,
    /// Set by a step that gave up its goal to stay within the limit.
    pub(super) shortfall: Option<Shortfall>,
    /// Results over the default cap whose cut waits for assembly, by
    /// working message: their result ordinals (see [`cut_to_fit`]). Their
    /// counts and masks are those of the uncut output.
    pub(super) deferred: FxHashMap<usize, Vec<usize>>,
    /// The cap a deferred result is cut to.
    pub(super) deferred_cap: usize,
}

impl Prepared {
    /// The input index a change to working message `i` reports: its own,
    /// or for a message repair made, the nearest input message before it.
    pub(super) fn input_index(&self, i: usize) -> usize {
        self.origin[..=i.min(self.origin.len().saturating_sub(1))].iter().rev().find_map(|o| *o).unwrap_or(0)
    }

    /// Tokens of the protected rounds.
    pub(super) fn protected_tokens(&self) -> usize {
        self.rounds.iter().filter(|r| r.protected.is_some()).map(|r| r.tokens).sum()
    }
}

/// A compacted message list on its way to [`finish`].
pub(super) struct Draft {
    pub(super) messages: Vec<Message>,
    pub(super) changes: Vec<Change>,
    pub(super) tokens_after: usize,
}

/// Steps 3 and 4 of the ladder on a prepared copy, dropping what the
/// strategy does not keep.
pub(super) fn compact_prepared(mut p: Prepared, policy: &Policy, acct: &Accountant) -> Result<Compacted> {
    let scores = round_scores(policy, &p);
    let budget = p.target.saturating_sub(p.fixed);
    let keep = select(&p.rounds, policy, budget, &scores);
    // The working messages are moved into the result, not copied.
    let owned = std::mem::take(&mut p.work.messages);
    let mut d = assemble(&p, &keep, budget, Some(owned), acct)?;
    let strategy = strategy_name(policy.strategy);
    for (r, _) in p.rounds.iter().zip(&keep).filter(|(_, k)| !**k) {
        for i in r.start..r.end {
            d.changes.push(Change {
                action: ChangeKind::DroppedMessage,
                index: p.input_index(i),
                id: None,
                tokens: p.counts[i],
                detail: format!("dropped by {strategy} compaction (round at message {})", p.input_index(r.start)),
            });
        }
    }
    finish(&p, d, policy, acct)
}

/// The kept rounds' messages, masked as little as the budget allows: every
/// maskable result of a kept round starts masked, then results are
/// restored newest first while they fit `budget` (tokens for messages).
/// Masking is thus only ever what the budget needs, and falls on the
/// oldest results. A message with deferred cuts (see [`deferrable`]) is
/// restored only if it fits with each deferred result at the cap, and is
/// cut then: a cut is made only for an output that is kept unmasked.
/// `owned`: the working messages, when the caller gives them up (kept
/// ones are moved rather than copied).
pub(super) fn assemble(
    p: &Prepared,
    keep: &[bool],
    budget: usize,
    mut owned: Option<Vec<Message>>,
    acct: &Accountant,
) -> Result<Draft> {
    // The deferred cuts read the working messages, which the caller may
    // have handed over as `owned`.
    let holder = match p.deferred.is_empty() {
        false => owned.take().map(|v| p.work.with_messages(v)),
        true => None,
    };
    let work = holder.as_ref().unwrap_or(&p.work);
    let kept: Vec<&Round> = p.rounds.iter().zip(keep).filter(|(_, k)| **k).map(|(r, _)| r).collect();
    let mut used: usize = kept.iter().map(|r| r.min_tokens).sum();
    let mut masked = vec![false; p.counts.len()];
    for r in &kept {
        for (slot, m) in masked[r.start..r.end].iter_mut().zip(&p.masks[r.start..r.end]) {
            *slot = m.is_some();
        }
    }
    // The deferred cuts made, by working message: its cut form, its tokens
    // and the changes the cut reports.
    let mut cuts: FxHashMap<usize, (Message, usize, Vec<Change>)> = FxHashMap::default();
    let names = if p.deferred.is_empty() { FxHashMap::default() } else { tool_outputs::tool_names(work) };
    for r in kept.iter().rev() {
        for i in (r.start..r.end).rev() {
            let Some(m) = &p.masks[i] else { continue };
            let full = match p.deferred.get(&i) {
                None => p.counts[i],
                Some(ordinals) => {
                    let over: usize = ordinals
                        .iter()
                        .filter_map(|&o| p.results[i].get(o))
                        .map(|&n| n.saturating_sub(p.deferred_cap))
                        .sum();
                    if used + p.counts[i].saturating_sub(over).saturating_sub(m.tokens) > budget {
                        continue; // stays masked, never cut
                    }
                    let cut = cut_deferred(p, work, i, ordinals, &names, acct)?;
                    let tokens = cut.1;
                    cuts.insert(i, cut);
                    tokens
                }
            };
            let extra = full.saturating_sub(m.tokens);
            if used + extra <= budget {
                used += extra;
                masked[i] = false;
            }
        }
    }
    // A kept message with deferred cuts but no mask (not expected: a
    // deferred result is one its mask covers) is cut all the same, and
    // counted as cut.
    for r in &kept {
        for i in r.start..r.end {
            if let (None, Some(ordinals)) = (&p.masks[i], p.deferred.get(&i)) {
                let cut = cut_deferred(p, work, i, ordinals, &names, acct)?;
                used = used.saturating_sub(p.counts[i]) + cut.1;
                cuts.insert(i, cut);
            }
        }
    }
    drop(names);
    if let Some(h) = holder {
        owned = Some(h.messages);
    }
    let mut changes = p.changes.clone();
    let mut messages = Vec::with_capacity(kept.iter().map(|r| r.end - r.start).sum());
    let mut owned = owned.map(|v| v.into_iter().enumerate());
    for r in &kept {
        for (i, (mask, &is_masked)) in (r.start..r.end).zip(p.masks[r.start..r.end].iter().zip(&masked[r.start..r.end]))
        {
            // The owned message `i` (those before it, dropped, go with it).
            let mut take = || owned.as_mut().and_then(|it| it.find(|(j, _)| *j == i)).map(|(_, m)| m);
            match (mask, is_masked) {
                (Some(m), true) => {
                    for s in &m.sites {
                        changes.push(Change {
                            action: ChangeKind::MaskedResult,
                            index: p.input_index(i),
                            id: Some(s.id.clone()),
                            tokens: s.tokens,
                            detail: format!(
                                "output of {} ({} tokens) replaced by a placeholder (observation masking)",
                                s.tool, s.tokens
                            ),
                        });
                    }
                    messages.push(m.message.clone());
                }
                _ => match cuts.remove(&i) {
                    Some((cut, _, cut_changes)) => {
                        changes.extend(cut_changes);
                        messages.push(cut);
                    }
                    None => messages.push(take().unwrap_or_else(|| p.work.messages[i].clone())),
                },
            }
        }
    }
    Ok(Draft { messages, changes, tokens_after: p.fixed + used })
}

/// Working message `i` with its deferred results (`ordinals`) cut to the
/// deferred cap: the message, its tokens, and the changes (indexed by
/// input message).
fn cut_deferred(
    p: &Prepared,
    work: &Conversation,
    i: usize,
    ordinals: &[usize],
    names: &FxHashMap<&str, &str>,
    acct: &Accountant,
) -> Result<(Message, usize, Vec<Change>)> {
    let sites = tool_outputs::message_sites(work, i);
    let (edits, mut changes) = tool_outputs::cut_sites(work, sites, names, acct, &p.results, |s| {
        ordinals.contains(&s.ordinal).then_some(p.deferred_cap)
    })?;
    let message = edits.into_iter().last().map_or_else(|| work.messages[i].clone(), |(_, m)| m);
    let tokens = acct.message(&message)?;
    for c in &mut changes {
        c.index = p.input_index(i);
    }
    Ok((message, tokens, changes))
}

/// Checks the result against the hard limit and builds the outcome.
pub(super) fn finish(p: &Prepared, d: Draft, policy: &Policy, acct: &Accountant) -> Result<Compacted> {
    let out = p.work.with_messages(d.messages);
    let tokens_after = d.tokens_after;
    // `tokens_after` comes from cached per-message counts; tests (debug
    // builds) check it against a full recount.
    debug_assert_eq!(Some(tokens_after), acct.conversation(&out).ok(), "cached counts drifted");
    // The working copy has no orphans (it was valid or repaired), calls and
    // results pair per occurrence, and results sit right after their calls,
    // inside the call's round; so whole rounds keep every call with its
    // result, even when the history reuses a tool-call id. Checked anyway,
    // so a broken invariant is an error rather than a history the provider
    // rejects.
    let awaited = |i: &super::Issue| {
        i.kind == IssueKind::OrphanedCall && i.id.as_ref().is_some_and(|id| policy.pending_calls.contains(id))
    };
    if let Some(i) = validate(&out)
        .into_iter()
        .find(|i| matches!(i.kind, IssueKind::OrphanedCall | IssueKind::OrphanedResult) && !awaited(i))
    {
        return Err(Error::internal(format!(
            "compaction would separate tool call '{}' from its result ({}); this is a bug in turnfit, please report it with the input",
            i.id.as_deref().unwrap_or(""),
            i.detail
        )));
    }
    if tokens_after > policy.limit_tokens {
        return Err(does_not_fit(p, policy, acct, tokens_after));
    }
    let shortfall = p.shortfall.clone().or_else(|| {
        (tokens_after > p.target).then(|| Shortfall {
            reason: ShortfallReason::ProtectedOverTarget,
            detail: format!(
                "{tokens_after} prompt tokens, over the target of {} and within the limit of {}: what is kept \
                 whatever the budget takes {} (framing, tools and the top-level system prompt {}; {})",
                p.target,
                policy.limit_tokens,
                p.fixed + p.protected_tokens(),
                p.fixed,
                rounds::describe_protected(&p.rounds, &p.origin),
            ),
        })
    });
    Ok(Compacted {
        shortfall,
        target_tokens: p.target,
        within_target: tokens_after <= p.target,
        insufficient: p.tokens_before.saturating_sub(tokens_after) < policy.min_reclaim,
        protected: rounds::protected_entries(&p.rounds, &p.origin),
        conversation: out,
        changes: d.changes,
        tokens_before: p.tokens_before,
        tokens_after,
    })
}

/// The `DoesNotFit` error: each irreducible part and its cost (framing,
/// tool definitions, the system prompt, then the protected rounds by
/// reason), and what remained.
pub(super) fn does_not_fit(p: &Prepared, policy: &Policy, acct: &Accountant, tokens_after: usize) -> Error {
    let tools = acct.request_tools(&p.work).unwrap_or(0);
    let system = p.work.system.as_deref().map_or(Ok(0), |s| acct.system(s)).unwrap_or(0);
    let framing = p.fixed.saturating_sub(tools + system);
    let mut parts = vec![format!("framing {framing}")];
    if tools > 0 {
        parts.push(format!("tool definitions {tools}"));
    }
    if system > 0 {
        parts.push(format!("the system prompt {system}"));
    }
    let protected = rounds::describe_protected(&p.rounds, &p.origin);
    if protected != "nothing" {
        parts.push(protected);
    }
    let cut = if policy.tool_output_max == Some(0) { "; tool_output_max is 0, so no tool output was cut" } else { "" };
    Error::new(
        ErrorKind::DoesNotFit,
        format!(
            "cannot fit {} prompt tokens: what is kept whatever the budget takes {}: {}; {tokens_after} remain after \
             compaction{cut} (raise the budget, or lower keep_first or the pins)",
            policy.limit_tokens,
            p.fixed + p.protected_tokens(),
            parts.join(", "),
        ),
    )
}

/// Validates the policy, repairs (or refuses), cuts tool outputs, splits
/// the working copy into rounds and plans the masks. An owned conversation
/// becomes the working copy as it is; a borrowed one is copied.
pub(super) fn prepare(c: Cow<'_, Conversation>, policy: &Policy, acct: &Accountant) -> Result<Prepared> {
    prepare_cached(c, policy, acct, None)
}

/// A message's tokens and the tokens of each tool result it carries (what
/// [`prepare`] counts once per message).
pub(crate) type Counted = (usize, Vec<usize>);

/// [`prepare`] with counts a caller kept from an earlier fit (a fit
/// session: `turn::session`): `cache[i]`, when `Some`, is message `i`'s
/// count, taken instead of counting it again; on return `cache` holds
/// every message's count, for the next call. The caller vouches that a
/// kept count is of the same message under the same accountant.
pub(crate) fn prepare_cached(
    c: Cow<'_, Conversation>,
    policy: &Policy,
    acct: &Accountant,
    cache: Option<&mut Vec<Option<Counted>>>,
) -> Result<Prepared> {
    if policy.limit_tokens == 0 {
        return Err(Error::invalid_argument("policy.limit_tokens must be positive"));
    }
    if !(0.0..=1.0).contains(&policy.relevance_weight) {
        return Err(Error::invalid_argument("policy.relevance_weight must be between 0 and 1"));
    }
    let target =
        if policy.target_tokens == 0 { policy.limit_tokens } else { policy.target_tokens.min(policy.limit_tokens) };
    // Every message is counted once here, with the tokens of each tool
    // result it carries (masking needs those); later steps recount only
    // the messages they change, so fitting a long history costs one pass.
    let count = |m: &Message| -> Result<(usize, Vec<usize>)> {
        let mut results = Vec::new();
        Ok((acct.message_and_results(m, &mut results)?, results))
    };
    let counted: Vec<Counted> = match cache {
        None => c.messages.iter().map(count).collect::<Result<_>>()?,
        Some(cache) => {
            let counted: Vec<Counted> = c
                .messages
                .iter()
                .enumerate()
                .map(|(i, m)| match cache.get(i) {
                    Some(Some(k)) => Ok(k.clone()),
                    _ => count(m),
                })
                .collect::<Result<_>>()?;
            *cache = counted.iter().cloned().map(Some).collect();
            counted
        }
    };
    let (counts_in, results_in): (Vec<usize>, Vec<Vec<usize>>) = counted.into_iter().unzip();
    let tokens_before = acct.overhead(&c)? + counts_in.iter().sum::<usize>();
    let is_pending = |i: &super::Issue| {
        i.kind == IssueKind::OrphanedCall && i.id.as_ref().is_some_and(|id| policy.pending_calls.contains(id))
    };
    let structural: Vec<_> = validate(&c)
        .into_iter()
        .filter(|i| !matches!(i.kind, IssueKind::RoleSequence | IssueKind::DuplicateCallId) && !is_pending(i))
        .collect();
    let unpaired_tool_message = c.format != crate::chat::Format::AiSdk
        && c.messages.iter().any(|m| matches!(m.role, Role::Tool | Role::Function) && m.tool_call_id.is_none());
    let mut changes = Vec::new();
    let (mut work, mut counts, mut results, origin) = if structural.is_empty() && !unpaired_tool_message {
        let origin = (0..c.messages.len()).map(Some).collect::<Vec<_>>();
        (c.into_owned(), counts_in, results_in, origin)
    } else if policy.repair {
        let r = repair::repair_keeping(&c, None, acct, &policy.pending_calls)?;
        changes.extend(r.changes);
        // Untouched messages keep their count; only what repair made or
        // edited is counted again.
        let (counts, results): (Vec<usize>, Vec<Vec<usize>>) = r
            .conversation
            .messages
            .iter()
            .zip(&r.origin)
            .map(|(m, o)| match o {
                Some(j) if c.messages[*j].raw() == m.raw() => Ok((counts_in[*j], results_in[*j].clone())),
                _ => count(m),
            })
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .unzip();
        (r.conversation, counts, results, r.origin)
    } else {
        let detail = structural.first().map_or_else(
            || "a tool message has no tool_call_id".to_owned(),
            |first| format!("message {}: {}", first.index, first.detail),
        );
        return Err(Error::invalid_argument(format!(
            "history has tool-structure issues (first: {detail}); repair it or allow repair"
        )));
    };
    let pinned: Vec<usize> =
        (0..work.messages.len()).filter(|&i| origin[i].is_some_and(|o| policy.pinned.contains(&o))).collect();
    let awaiting: Vec<usize> = (0..work.messages.len())
        .filter(|&i| work.messages[i].tool_calls.iter().any(|t| policy.pending_calls.contains(&t.id)))
        .collect();
    // The byte cap first (it needs no tokenizer and leaves less to count),
    // then the token cap on what is left.
    let caps: [(Option<usize>, CutFn); 2] = [
        (policy.tool_output_max_bytes, tool_outputs::truncate_bytes_counted),
        (policy.tool_output_max.filter(|&n| n > 0), tool_outputs::truncate_counted),
    ];
    for (max, truncate) in caps {
        let Some(max) = max else { continue };
        let (t, ch) = truncate(&work, max, acct, &results)?;
        work = t;
        for mut change in ch {
            let i = change.index;
            (counts[i], results[i]) = count(&work.messages[i])?;
            change.index = origin[..=i].iter().rev().find_map(|o| *o).unwrap_or(0);
            changes.push(change);
        }
    }
    let fixed = acct.overhead(&work)?;
    let mut p = Prepared {
        work,
        changes,
        counts,
        masks: Vec::new(),
        fixed,
        rounds: Vec::new(),
        target,
        tokens_before,
        origin,
        results,
        pinned,
        awaiting,
        relaxed: Vec::new(),
        shortfall: None,
        deferred: FxHashMap::default(),
        deferred_cap: 0,
    };
    plan_rounds(&mut p, policy, acct)?;
    if policy.keep_only_protected {
        // The target is what is protected (and, to summarize, the room a
        // summary takes), so every other round goes.
        let summary = if policy.strategy == Strategy::Summarize {
            summary_message::overhead(p.work.format, policy.summary_label.as_deref(), policy.summary_role, acct)?
                + policy.summary_max_tokens
        } else {
            0
        };
        p.target = p.target.min(p.fixed + p.protected_tokens() + summary).max(1);
    }
    Ok(p)
}

/// Splits the working copy into rounds, marks the protected ones and plans
/// the masks (again, after tool outputs were cut or protection lifted).
fn plan_rounds(p: &mut Prepared, policy: &Policy, acct: &Accountant) -> Result<()> {
    let prot = Protection {
        keep_system: policy.keep_system,
        keep_first: policy.keep_first,
        keep_last_rounds: policy.keep_last_rounds,
        keep_last_turns: policy.keep_last_turns,
        keep_last_messages: policy.keep_last_messages,
        pinned: &p.pinned,
        awaiting: &p.awaiting,
        summary_label: policy.summary_label.as_deref().unwrap_or(summary_message::DEFAULT_LABEL),
    };
    let mut rounds = rounds::rounds(&p.work, &p.counts, &prot);
    for r in rounds.iter_mut().filter(|r| p.relaxed.contains(&r.start)) {
        r.protected = None;
    }
    p.masks = mask::plan(&p.work, &p.counts, &p.results, &mut rounds, &policy.mask, acct)?;
    p.rounds = rounds;
    Ok(())
}

/// Smallest cap the ladder cuts a tool output to: room for the marker and
/// a few lines.
const MIN_CUT_TOKENS: usize = 64;

/// Tokens a cut's markers may add, per output, when choosing the level.
const MARKER_ALLOWANCE: usize = 48;

/// The default `tool_output_max` for a prompt limit: a quarter of it.
pub(super) fn default_tool_output_max(limit_tokens: usize) -> usize {
    (limit_tokens / 4).max(MIN_CUT_TOKENS)
}

/// Step 3 of the ladder, and step 6: when the working copy is over its
/// target, cuts tool outputs over the default cap (every round), then
/// those of the protected rounds to one level that makes the protected
/// rounds fit the target less `reserve` (room the summarize strategy
/// needs); if the protected rounds still exceed the limit, lifts the
/// keep-newest protection, oldest round first. Nothing happens when the
/// copy is within its target, and no output is cut with
/// `tool_output_max: 0`.
pub(super) fn cut_to_fit(p: &mut Prepared, policy: &Policy, acct: &Accountant, reserve: usize) -> Result<()> {
    if p.fixed + p.counts.iter().sum::<usize>() <= p.target {
        return Ok(());
    }
    if policy.tool_output_max != Some(0) {
        let cap = match policy.tool_output_max {
            None => default_tool_output_max(policy.limit_tokens),
            Some(n) => n,
        };
        let goal = p.target.saturating_sub(reserve);
        let dropped = certainly_dropped(p, policy);
        // A few passes: the level is chosen from per-result counts, and a
        // cut's markers and line boundaries can leave it a little over.
        for pass in 0..4 {
            let protected = protected_messages(p);
            let default_cap_at =
                |i: usize| (pass == 0 && policy.tool_output_max.is_none() && i >= dropped).then_some(cap);
            let over = (p.fixed + p.protected_tokens()).saturating_sub(goal);
            let sizes: Vec<usize> = tool_outputs::sites(&p.work)
                .iter()
                .filter(|s| protected[s.message])
                .filter_map(|s| p.results.get(s.message).and_then(|r| r.get(s.ordinal)).copied())
                .collect();
            let level = if over == 0 { cap } else { water_level(&sizes, over).min(cap) }.max(MIN_CUT_TOKENS);
            let defer = if pass == 0 { deferrable(p, policy, &protected, dropped, cap) } else { FxHashSet::default() };
            let (edits, changes) = tool_outputs::cut_edits(&p.work, acct, &p.results, |s| {
                let default_cap = default_cap_at(s.message);
                if defer.contains(&(s.message, s.ordinal)) {
                    None
                } else if protected[s.message] {
                    (over > 0 || default_cap.is_some()).then_some(level)
                } else {
                    default_cap
                }
            })?;
            for (i, ordinal) in defer {
                p.deferred.entry(i).or_default().push(ordinal);
                p.deferred_cap = cap;
            }
            if changes.is_empty() {
                break;
            }
            for (i, m) in edits {
                p.work.messages[i] = m;
            }
            for mut change in changes {
                let i = change.index;
                let mut results = Vec::new();
                p.counts[i] = acct.message_and_results(&p.work.messages[i], &mut results)?;
                p.results[i] = results;
                change.index = p.input_index(i);
                p.changes.push(change);
            }
            plan_rounds(p, policy, acct)?;
            if over == 0 {
                break;
            }
        }
    }
    lift_protection(p, policy, acct, reserve)
}

/// The results of pass 0 of [`cut_to_fit`] whose default-cap cut is left
/// to assembly, by (working message, result ordinal): with recency, those
/// over the cap in unprotected rounds that their message's mask covers.
/// Most of them end masked or dropped, and a cut of a log that ends as a
/// placeholder is wasted work (issue 52: cutting them was most of `fit`
/// on agent transcripts with long logs). Assembly plans each with the cap
/// as its size, an upper bound, and cuts it only when that fits (see
/// [`assemble`]); meanwhile its count, and the number its placeholder
/// names, are the uncut output's. The other strategies cut them all:
/// relevance reads the cut text, and summarize decides from the cut
/// counts whether to summarize at all.
fn deferrable(
    p: &Prepared,
    policy: &Policy,
    protected: &[bool],
    dropped: usize,
    cap: usize,
) -> FxHashSet<(usize, usize)> {
    if policy.strategy != Strategy::Recency || policy.tool_output_max.is_some() {
        return FxHashSet::default();
    }
    let sites = tool_outputs::sites(&p.work);
    // A history that reuses a call id: a mask site is matched by id, so a
    // deferred output could be restored or counted as another output of
    // the same id (the reused-id property test found cached counts 3,001
    // against a recount of 2,654). Such histories cut up front, as before.
    let mut seen = FxHashSet::default();
    if !sites.iter().all(|s| seen.insert(s.id)) {
        return FxHashSet::default();
    }
    sites
        .into_iter()
        .filter(|s| s.message >= dropped && !protected[s.message])
        .filter(|s| p.results.get(s.message).and_then(|r| r.get(s.ordinal)).is_some_and(|&n| n > cap))
        .filter(|s| p.masks[s.message].as_ref().is_some_and(|m| m.sites.iter().any(|x| x.id == s.id)))
        .map(|s| (s.message, s.ordinal))
        .collect()
}

/// Undoes what [`cut_to_fit`] lifted to leave `reserve` tokens for a
/// summary, and lifts only what the limit itself needs: for a summarize
/// compaction that found no room for a summary and drops rounds instead,
/// so it keeps the newest rounds exactly as recency would.
pub(super) fn without_summary_reserve(p: &mut Prepared, policy: &Policy, acct: &Accountant) -> Result<()> {
    if p.relaxed.is_empty() {
        return Ok(());
    }
    p.relaxed.clear();
    plan_rounds(p, policy, acct)?;
    lift_protection(p, policy, acct, 0)
}

/// Step 6 of the ladder: lifts the keep-newest protection, oldest round
/// first, while the protected rounds exceed the limit less `reserve`.
fn lift_protection(p: &mut Prepared, policy: &Policy, acct: &Accountant, reserve: usize) -> Result<()> {
    let limit = policy.limit_tokens.saturating_sub(reserve);
    while p.fixed + p.protected_tokens() > limit {
        let Some(r) = p
            .rounds
            .iter()
            .find(|r| matches!(r.protected, Some(Reason::RecentRound | Reason::RecentTurn | Reason::RecentMessage)))
        else {
            break;
        };
        p.relaxed.push(r.start);
        plan_rounds(p, policy, acct)?;
    }
    Ok(())
}

/// The first working message that recency may keep: every unprotected
/// round before it goes whatever its tool outputs are cut to, because the
/// parts of the newer rounds that no cut or mask reduces (framing, text,
/// calls) already fill the limit, and recency keeps newest rounds only
/// (see [`select`]). Their outputs are not cut (issue 52: cutting every
/// long log of a 44 MB history to keep the newest few was most of `fit`).
/// 0 (cut all) for the other strategies, which may keep any round.
fn certainly_dropped(p: &Prepared, policy: &Policy) -> usize {
    if policy.strategy != Strategy::Recency {
        return 0;
    }
    let floor = |r: &Round| -> usize {
        (r.start..r.end).map(|i| p.counts[i].saturating_sub(p.results[i].iter().sum::<usize>())).sum()
    };
    let mut used = p.fixed + p.rounds.iter().filter(|r| r.protected.is_some()).map(floor).sum::<usize>();
    let room = policy.limit_tokens.max(p.target);
    for r in p.rounds.iter().rev().filter(|r| r.protected.is_none()) {
        used += floor(r);
        if used > room {
            return r.end;
        }
    }
    0
}

/// Which working messages belong to protected rounds.
fn protected_messages(p: &Prepared) -> Vec<bool> {
    let mut out = vec![false; p.work.messages.len()];
    for r in p.rounds.iter().filter(|r| r.protected.is_some()) {
        out[r.start..r.end].iter_mut().for_each(|x| *x = true);
    }
    out
}

/// The highest level `c` such that cutting every size above `c` to `c`
/// saves at least `over` tokens, each cut output also paying
/// [`MARKER_ALLOWANCE`] for its markers; 0 when no level does.
fn water_level(sizes: &[usize], over: usize) -> usize {
    let saves = |c: usize| {
        let (cut, n) = sizes.iter().filter(|&&t| t > c).fold((0usize, 0usize), |(s, n), &t| (s + (t - c), n + 1));
        cut >= over + n * MARKER_ALLOWANCE
    };
    let (mut lo, mut hi) = (0usize, sizes.iter().copied().max().unwrap_or(0));
    if !saves(0) {
        return 0;
    }
    // Invariant: saves(lo); the answer is in lo..=hi.
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if saves(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// A tool-output cut: the conversation, the cap, the accountant and the
/// known result tokens in; the edited copy and its changes out.
type CutFn = fn(&Conversation, usize, &Accountant, &[Vec<usize>]) -> Result<(Conversation, Vec<Change>)>;

pub(super) fn strategy_name(s: Strategy) -> &'static str {
    match s {
        Strategy::Recency => "recency",
        Strategy::Relevance => "relevance",
        Strategy::Hybrid => "hybrid",
        Strategy::Summarize => "summarize",
    }
}

/// Relevance per round: the host's scores (max over the round's messages,
/// by input index) or BM25 against the latest user message's text.
fn round_scores(policy: &Policy, p: &Prepared) -> Vec<f64> {
    if policy.strategy == Strategy::Recency || policy.strategy == Strategy::Summarize {
        return Vec::new();
    }
    if let Some(host) = &policy.scores {
        return p
            .rounds
            .iter()
            .map(|r| {
                (r.start..r.end).filter_map(|i| p.origin[i]).filter_map(|j| host.get(j).copied()).fold(0.0, f64::max)
            })
            .collect();
    }
    let query = p.work.messages.iter().rev().find(|m| is_user_input(m)).map(Message::text).unwrap_or_default();
    let docs: Vec<String> = p
        .rounds
        .iter()
        .map(|r| p.work.messages[r.start..r.end].iter().map(Message::text).collect::<Vec<_>>().join("\n"))
        .collect();
    bm25::scores(&query, &docs)
}

/// Chooses rounds to keep within `budget` tokens of messages, each eligible
/// round costing its masked size (masking comes before dropping).
pub(super) fn select(all: &[Round], policy: &Policy, budget: usize, relevance: &[f64]) -> Vec<bool> {
    let mut keep: Vec<bool> = all.iter().map(|r| r.protected.is_some()).collect();
    let mut used: usize = all.iter().filter(|r| r.protected.is_some()).map(|r| r.tokens).sum();
    let rest: Vec<usize> = (0..all.len()).rev().filter(|&i| all[i].protected.is_none()).collect(); // newest first
    match policy.strategy {
        Strategy::Recency | Strategy::Summarize => {
            for i in rest {
                if used + all[i].min_tokens > budget {
                    break; // contiguous: never keep an older round past a gap
                }
                keep[i] = true;
                used += all[i].min_tokens;
            }
        }
        Strategy::Relevance | Strategy::Hybrid => {
            let n = rest.len().max(1) as f64;
            let max_rel = rest.iter().map(|&i| relevance[i]).fold(0.0, f64::max);
            let w = if policy.strategy == Strategy::Relevance { 1.0 } else { policy.relevance_weight };
            let mut ranked: Vec<(f64, usize, usize)> = rest
                .iter()
                .enumerate()
                .map(|(age, &i)| {
                    let rel = if max_rel > 0.0 { relevance[i] / max_rel } else { 0.0 };
                    let rec = 1.0 - age as f64 / n;
                    (w * rel + (1.0 - w) * rec, age, i)
                })
                .collect();
            // Highest score first; ties go to the newer round.
            ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            for (_, _, i) in ranked {
                if used + all[i].min_tokens <= budget {
                    keep[i] = true;
                    used += all[i].min_tokens;
                }
            }
        }
    }
    keep
}

#[cfg(test)]
mod deferred;
#[cfg(test)]
mod loops;
#[cfg(test)]
mod tests;
