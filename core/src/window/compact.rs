//! Compaction: drop whole turns, by recency, relevance or both, until the
//! conversation fits a token target, without ever breaking the invariants of
//! DESIGN.md §5.
//!
//! The unit is the *turn*: a user message that carries no tool results,
//! through everything up to the next such message. Tool calls and their
//! results always sit inside one turn once the history is repaired (which
//! `compact` does first unless told not to), so dropping whole turns can
//! never separate a call from its result, parallel calls included. It also
//! keeps Anthropic histories alternating and starting with the user, and
//! makes every recency cut fall on a user-turn boundary.
//!
//! Always kept: system and developer messages, everything before the first
//! user turn, the latest user turn and whatever follows it, and pinned
//! messages (their whole turn). The result either fits the hard limit, or
//! the call fails with `DoesNotFit` naming what the kept parts cost.

use serde::{Deserialize, Serialize};

use super::repair::{Action, Change};
use super::{bm25, repair, tool_outputs, validate, Accountant, IssueKind};
use crate::chat::{Conversation, Message, Part, Role};
use crate::{Error, ErrorKind, Result};

/// How turns are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// Keep the newest turns that fit.
    #[default]
    Recency,
    /// Keep the turns most relevant to the latest user input (BM25, or the
    /// host's scores), in their original order.
    Relevance,
    /// Rank by `relevance_weight * relevance + (1 - relevance_weight) * recency`.
    Hybrid,
    /// Replace the oldest turns by one summary: the host's (two-phase, see
    /// `summarize`), or a deterministic extractive digest when `compact` is
    /// called directly.
    Summarize,
}

/// What to do and within what budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Policy {
    /// Selection strategy.
    pub strategy: Strategy,
    /// Prompt tokens to aim for.
    pub target_tokens: usize,
    /// Prompt tokens that must not be exceeded (the window minus reserved
    /// output); a result above it is an error.
    pub limit_tokens: usize,
    /// Cut every tool output longer than this first (head and tail kept).
    pub tool_output_max: Option<usize>,
    /// Always keep at least this many of the newest turns besides the latest.
    pub keep_last_turns: usize,
    /// Message indices (in the input) whose turns must be kept.
    pub pinned: Vec<usize>,
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
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            strategy: Strategy::Recency,
            target_tokens: 0,
            limit_tokens: 0,
            tool_output_max: None,
            keep_last_turns: 0,
            pinned: Vec::new(),
            repair: true,
            relevance_weight: 0.5,
            scores: None,
            min_reclaim: 0,
            summary_max_tokens: 500,
            summarizer_budget: 8000,
            summary_template: None,
            digest: super::digest::DigestOptions::default(),
        }
    }
}

/// The outcome of a compaction.
#[derive(Debug, Clone)]
pub struct Compacted {
    /// The compacted conversation, in the input's format.
    pub conversation: Conversation,
    /// Every change: repairs, truncations, dropped messages.
    pub changes: Vec<Change>,
    /// Prompt tokens before.
    pub tokens_before: usize,
    /// Prompt tokens after.
    pub tokens_after: usize,
    /// Whether the result is within `target_tokens`.
    pub within_target: bool,
    /// Whether fewer than `min_reclaim` tokens were reclaimed.
    pub insufficient: bool,
}

#[derive(Debug, Clone)]
pub(super) struct Turn {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) tokens: usize,
    pub(super) pinned: bool,
    pub(super) text: String,
}

pub(super) fn starts_turn(m: &Message) -> bool {
    m.role == Role::User && !m.parts.iter().any(|p| matches!(p, Part::ToolResult { .. })) && m.tool_call_id.is_none()
}

pub(super) fn turns(c: &Conversation, counts: &[usize], pinned_msgs: &[usize]) -> Vec<Turn> {
    let mut bounds: Vec<usize> = (0..c.messages.len()).filter(|&i| starts_turn(&c.messages[i])).collect();
    if bounds.first() != Some(&0) {
        bounds.insert(0, 0);
    }
    let last_user = bounds.last().copied().unwrap_or(0);
    let mut out = Vec::new();
    for (k, &start) in bounds.iter().enumerate() {
        let end = bounds.get(k + 1).copied().unwrap_or(c.messages.len());
        if start == end {
            continue;
        }
        let msgs = &c.messages[start..end];
        let pinned = !starts_turn(&msgs[0])
            || start == last_user
            || msgs.iter().any(|m| matches!(m.role, Role::System | Role::Developer))
            || pinned_msgs.iter().any(|&p| (start..end).contains(&p));
        out.push(Turn {
            start,
            end,
            tokens: counts[start..end].iter().sum(),
            pinned,
            text: msgs.iter().map(Message::text).collect::<Vec<_>>().join("\n"),
        });
    }
    out
}

/// The repaired, tool-cut working copy and what compaction knows about it.
pub(super) struct Prepared {
    pub(super) work: Conversation,
    pub(super) changes: Vec<Change>,
    pub(super) counts: Vec<usize>,
    pub(super) fixed: usize,
    pub(super) turns: Vec<Turn>,
    pub(super) target: usize,
    pub(super) tokens_before: usize,
    /// For each working message, its index in the input (None if repair made it).
    pub(super) origin: Vec<Option<usize>>,
}

/// Compacts `c` under `policy`, counting with `acct`. For
/// [`Strategy::Summarize`] the summary is the deterministic digest; use
/// `summarize::request_summary` and `apply_summary` for a host summary.
pub fn compact(c: &Conversation, policy: &Policy, acct: &Accountant) -> Result<Compacted> {
    if policy.strategy == Strategy::Summarize {
        return super::summarize::compact_with_digest(c, policy, acct);
    }
    let p = prepare(c, policy, acct)?;
    let scores = c_scores(policy, &p);
    let Prepared { work, mut changes, counts, fixed, turns: all, target, tokens_before, .. } = p;
    let total: usize = fixed + all.iter().map(|t| t.tokens).sum::<usize>();
    let keep = if total <= target {
        vec![true; all.len()]
    } else {
        select(&all, policy, target.saturating_sub(fixed), &scores)
    };
    let mut out = work.clone();
    out.messages.clear();
    let mut tokens_after = fixed;
    for (t, &k) in all.iter().zip(&keep) {
        for (i, &count) in counts.iter().enumerate().take(t.end).skip(t.start) {
            if k {
                tokens_after += count;
                out.messages.push(work.messages[i].clone());
            } else {
                changes.push(Change {
                    action: Action::DroppedMessage,
                    index: i,
                    id: None,
                    tokens: count,
                    detail: format!(
                        "dropped by {} compaction (turn starting at message {})",
                        strategy_name(policy.strategy),
                        t.start
                    ),
                });
            }
        }
    }
    finish(out, changes, tokens_before, tokens_after, fixed, &all, target, policy, acct)
}

/// Checks the result against the hard limit and builds the outcome.
#[allow(clippy::too_many_arguments)]
pub(super) fn finish(
    out: Conversation,
    changes: Vec<Change>,
    tokens_before: usize,
    tokens_after: usize,
    fixed: usize,
    all: &[Turn],
    target: usize,
    policy: &Policy,
    acct: &Accountant,
) -> Result<Compacted> {
    // `tokens_after` comes from cached per-message counts; tests (debug
    // builds) check it against a full recount.
    debug_assert_eq!(Some(tokens_after), acct.conversation(&out).ok(), "cached counts drifted");
    // The working copy has no orphans (it was valid or repaired), calls and
    // results pair per occurrence, and a valid history has no call open at
    // a turn boundary; so whole turns keep every call with its result, even
    // when the history reuses a tool-call id (which, before pairing per
    // occurrence, the `window_fit` fuzz target showed could leave a later
    // call of a reused id without its result). Checked anyway, so a broken
    // invariant is an error rather than a history the provider rejects.
    if let Some(i) =
        validate(&out).into_iter().find(|i| matches!(i.kind, IssueKind::OrphanedCall | IssueKind::OrphanedResult))
    {
        return Err(Error::internal(format!(
            "compaction would separate tool call '{}' from its result ({}); this is a bug in ctxkit, please report it with the input",
            i.id.as_deref().unwrap_or(""),
            i.detail
        )));
    }
    if tokens_after > policy.limit_tokens {
        let pinned: usize = all.iter().filter(|t| t.pinned).map(|t| t.tokens).sum();
        return Err(Error::new(
            ErrorKind::DoesNotFit,
            format!(
                "cannot fit {} prompt tokens: system, tools and framing take {fixed}, the latest turn and pinned messages {pinned}; \
                 {tokens_after} remain after compaction{}",
                policy.limit_tokens,
                if policy.tool_output_max.is_none() { " (a tool_output_max would cut long tool outputs)" } else { "" }
            ),
        ));
    }
    Ok(Compacted {
        within_target: tokens_after <= target,
        insufficient: tokens_before.saturating_sub(tokens_after) < policy.min_reclaim,
        conversation: out,
        changes,
        tokens_before,
        tokens_after,
    })
}

/// Validates the policy, repairs (or refuses), cuts tool outputs, and splits
/// the working copy into turns.
pub(super) fn prepare(c: &Conversation, policy: &Policy, acct: &Accountant) -> Result<Prepared> {
    if policy.limit_tokens == 0 {
        return Err(Error::invalid_argument("policy.limit_tokens must be positive"));
    }
    if !(0.0..=1.0).contains(&policy.relevance_weight) {
        return Err(Error::invalid_argument("policy.relevance_weight must be between 0 and 1"));
    }
    let target =
        if policy.target_tokens == 0 { policy.limit_tokens } else { policy.target_tokens.min(policy.limit_tokens) };
    // Every message is counted once here; later steps recount only the
    // messages they change, so fitting a long history costs one pass.
    let counts_in: Vec<usize> = c.messages.iter().map(|m| acct.message(m)).collect::<Result<_>>()?;
    let tokens_before = acct.overhead(c)? + counts_in.iter().sum::<usize>();
    let structural: Vec<_> = validate(c)
        .into_iter()
        .filter(|i| !matches!(i.kind, IssueKind::RoleSequence | IssueKind::DuplicateCallId))
        .collect();
    let unpaired_tool_message =
        c.messages.iter().any(|m| matches!(m.role, Role::Tool | Role::Function) && m.tool_call_id.is_none());
    let mut changes = Vec::new();
    let (mut work, mut counts, origin) = if structural.is_empty() && !unpaired_tool_message {
        (c.clone(), counts_in, (0..c.messages.len()).map(Some).collect::<Vec<_>>())
    } else if policy.repair {
        let r = repair::repair(c, None, acct)?;
        changes.extend(r.changes);
        let counts: Vec<usize> = r.conversation.messages.iter().map(|m| acct.message(m)).collect::<Result<_>>()?;
        let origin = origins(c, &r.conversation);
        (r.conversation, counts, origin)
    } else {
        let detail = structural.first().map_or_else(
            || "a tool message has no tool_call_id".to_owned(),
            |first| format!("message {}: {}", first.index, first.detail),
        );
        return Err(Error::invalid_argument(format!(
            "history has tool-structure issues (first: {detail}); repair it or allow repair"
        )));
    };
    let pinned_msgs: Vec<usize> =
        (0..work.messages.len()).filter(|&i| origin[i].is_some_and(|o| policy.pinned.contains(&o))).collect();
    if let Some(max) = policy.tool_output_max {
        let (t, ch) = tool_outputs::truncate_tool_outputs(&work, max, acct)?;
        work = t;
        for change in &ch {
            counts[change.index] = acct.message(&work.messages[change.index])?;
        }
        changes.extend(ch);
    }
    let fixed = acct.overhead(&work)?;
    let turns = turns(&work, &counts, &pinned_msgs);
    Ok(Prepared { work, changes, counts, fixed, turns, target, tokens_before, origin })
}

/// For each message of `after` (a repair of `before`), the index of the
/// identical message in `before`, if any: repair keeps untouched messages
/// as they were, so identity of their JSON finds them.
fn origins(before: &Conversation, after: &Conversation) -> Vec<Option<usize>> {
    let mut by_json: std::collections::HashMap<String, Vec<usize>> = std::collections::HashMap::new();
    for (i, m) in before.messages.iter().enumerate().rev() {
        by_json.entry(m.raw.to_string()).or_default().push(i);
    }
    after.messages.iter().map(|m| by_json.get_mut(&m.raw.to_string()).and_then(Vec::pop)).collect()
}

fn strategy_name(s: Strategy) -> &'static str {
    match s {
        Strategy::Recency => "recency",
        Strategy::Relevance => "relevance",
        Strategy::Hybrid => "hybrid",
        Strategy::Summarize => "summarize",
    }
}

/// Relevance per turn: the host's scores (max over the turn's messages,
/// mapped from input indices by message identity) or BM25 against the
/// latest user turn's text.
fn c_scores(policy: &Policy, p: &Prepared) -> Vec<f64> {
    if policy.strategy == Strategy::Recency || policy.strategy == Strategy::Summarize {
        return Vec::new();
    }
    if let Some(host) = &policy.scores {
        return p
            .turns
            .iter()
            .map(|t| {
                (t.start..t.end).filter_map(|i| p.origin[i]).filter_map(|j| host.get(j).copied()).fold(0.0, f64::max)
            })
            .collect();
    }
    let query = p
        .turns
        .iter()
        .rev()
        .find(|t| t.pinned && starts_turn(&p.work.messages[t.start]))
        .map_or("", |t| t.text.as_str());
    let docs: Vec<String> = p.turns.iter().map(|t| t.text.clone()).collect();
    bm25::scores(query, &docs)
}

/// Chooses turns to keep within `budget` tokens of messages.
pub(super) fn select(all: &[Turn], policy: &Policy, budget: usize, relevance: &[f64]) -> Vec<bool> {
    let mut keep: Vec<bool> = all.iter().map(|t| t.pinned).collect();
    let mut used: usize = all.iter().filter(|t| t.pinned).map(|t| t.tokens).sum();
    let optional: Vec<usize> = (0..all.len()).filter(|&i| !all[i].pinned).collect();
    // The newest `keep_last_turns` optional turns are kept regardless.
    for &i in optional.iter().rev().take(policy.keep_last_turns) {
        keep[i] = true;
        used += all[i].tokens;
    }
    let rest: Vec<usize> = optional.iter().rev().skip(policy.keep_last_turns).copied().collect(); // newest first
    match policy.strategy {
        Strategy::Recency | Strategy::Summarize => {
            for i in rest {
                if used + all[i].tokens > budget {
                    break; // contiguous: never keep an older turn past a gap
                }
                keep[i] = true;
                used += all[i].tokens;
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
            // Highest score first; ties go to the newer turn.
            ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            for (_, _, i) in ranked {
                if used + all[i].tokens <= budget {
                    keep[i] = true;
                    used += all[i].tokens;
                }
            }
        }
    }
    keep
}

#[cfg(test)]
mod tests;
