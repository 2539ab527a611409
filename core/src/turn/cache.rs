//! Prompt-cache impact: how much of the request a provider has cached
//! (OpenAI's and Anthropic's prefix caches) survives a compaction. The
//! prefix up to the first changed message is byte-identical, so its tokens
//! stay cached; everything after is paid again. A host can weigh a
//! compaction's saving against that.

use serde::Serialize;

use crate::window::{Accountant, Compacted};
use crate::Result;

/// What a turn's changes cost the prompt cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CacheImpact {
    /// Input index of the first message that changed (dropped, cut,
    /// masked, summarized, or followed by a synthetic result); absent when
    /// nothing changed.
    pub first_changed: Option<usize>,
    /// Tokens of the unchanged prefix: tool definitions, the system
    /// prompt and the messages before `first_changed` (all of the prompt
    /// when nothing changed, reply priming aside).
    pub unchanged_prefix_tokens: usize,
    /// Prompt tokens before the turn that are not in that prefix: what a
    /// prefix cache loses.
    pub invalidated_tokens: usize,
}

/// The impact of `c`'s changes. Every change is in the manifest with the
/// input index it touched, so the first changed message is the smallest
/// index there; a synthetic result counts from its call's message (one
/// message early: the estimate errs toward less cached).
pub(super) fn impact(c: &Compacted, acct: &Accountant) -> Result<CacheImpact> {
    let first = c.changes.iter().map(|ch| ch.index).min();
    let before = c.tokens_before.saturating_sub(acct.framing().reply_priming);
    if first.is_none() {
        // Nothing changed: the request is the input, whose tokens were
        // counted once already (recounting them cost a fit session's
        // unchanged step as much as the first).
        return Ok(CacheImpact { first_changed: None, unchanged_prefix_tokens: before, invalidated_tokens: 0 });
    }
    let out = &c.conversation;
    let fixed = acct.overhead(out)?.saturating_sub(acct.framing().reply_priming);
    let upto = first.unwrap_or(out.messages.len()).min(out.messages.len());
    let mut prefix = fixed;
    for m in &out.messages[..upto] {
        prefix += acct.message(m)?;
    }
    Ok(CacheImpact {
        first_changed: first,
        unchanged_prefix_tokens: prefix.min(before),
        invalidated_tokens: before.saturating_sub(prefix),
    })
}
