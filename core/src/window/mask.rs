//! Observation masking: the second step of compaction's ladder. An older
//! tool result's content is replaced by a short placeholder that names the
//! tool and what was removed, while the result itself stays, so the call
//! keeps its answer and the history stays valid. The agent keeps the record
//! of what it did and loses only the bulk of what came back, which is what
//! most of an agent loop's tokens are (Anthropic's `clear_tool_uses`
//! context edit and OpenHands' observation-masking condenser do the same).
//!
//! This module only plans: for each message, its masked form and cost.
//! Compaction decides which to use, masking only what it must, oldest
//! first (see `compact::assemble`).

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::rounds::Round;
use super::tool_outputs::{set_content, sites};
use super::Accountant;
use crate::chat::{Conversation, Message};
use crate::Result;

/// Which tool results compaction may mask.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct MaskOptions {
    /// Mask at all (false: go straight from truncation to dropping rounds).
    pub enabled: bool,
    /// The newest this-many tool results are never masked.
    pub keep_last: usize,
    /// Results of these tools are never masked.
    pub exclude_tools: Vec<String>,
    /// Results of at most this many tokens are never masked (the
    /// placeholder would save little).
    pub min_tokens: usize,
}

impl Default for MaskOptions {
    fn default() -> Self {
        MaskOptions { enabled: true, keep_last: 3, exclude_tools: Vec::new(), min_tokens: 50 }
    }
}

/// One masked result inside a masked message.
#[derive(Debug, Clone)]
pub(super) struct MaskedSite {
    pub(super) id: String,
    pub(super) tool: String,
    pub(super) tokens: usize,
}

/// A message with its maskable results masked.
#[derive(Debug, Clone)]
pub(super) struct Masked {
    pub(super) message: Message,
    pub(super) tokens: usize,
    pub(super) sites: Vec<MaskedSite>,
}

/// The placeholder a masked result gets.
pub(super) fn placeholder(tool: &str, tokens: usize) -> String {
    format!("[{tool} output of {tokens} tokens masked to save context; call the tool again if it is needed]")
}

/// For each working message, its masked form when it holds a result that
/// may be masked: not in a protected round, not among the newest
/// `keep_last` results, not from an excluded tool, above `min_tokens`.
/// Lowers each round's `min_tokens` accordingly. `results` holds each
/// message's result tokens from the one counting pass
/// (`Accountant::message_and_results`), so no result is counted again.
pub(super) fn plan(
    c: &Conversation,
    counts: &[usize],
    results: &[Vec<usize>],
    rounds: &mut [Round],
    opts: &MaskOptions,
    acct: &Accountant,
) -> Result<Vec<Option<Masked>>> {
    let mut out: Vec<Option<Masked>> = vec![None; c.messages.len()];
    if !opts.enabled {
        return Ok(out);
    }
    let mut protected = vec![false; c.messages.len()];
    for r in rounds.iter().filter(|r| r.protected.is_some()) {
        protected[r.start..r.end].iter_mut().for_each(|p| *p = true);
    }
    let names: FxHashMap<&str, &str> =
        c.messages.iter().flat_map(|m| m.tool_calls.iter().map(|t| (t.id.as_str(), t.name.as_str()))).collect();
    let all = sites(c);
    let exempt_from = all.len().saturating_sub(opts.keep_last);
    for (k, site) in all.iter().enumerate() {
        if k >= exempt_from || protected[site.message] {
            continue;
        }
        let tool = names.get(site.id).copied().or(c.messages[site.message].name.as_deref()).unwrap_or("tool");
        if opts.exclude_tools.iter().any(|t| t == tool) {
            continue;
        }
        let tokens = match results.get(site.message).and_then(|r| r.get(site.ordinal)) {
            Some(&n) => n,
            None => acct.text(&site.text)?,
        };
        if tokens <= opts.min_tokens {
            continue;
        }
        let base = out[site.message].as_ref().map_or(&c.messages[site.message], |m| &m.message);
        let message = set_content(base, site, &placeholder(tool, tokens), c.format)?;
        let mut sites_so_far = out[site.message].take().map(|m| m.sites).unwrap_or_default();
        sites_so_far.push(MaskedSite { id: site.id.to_owned(), tool: tool.to_owned(), tokens });
        out[site.message] = Some(Masked { message, tokens: 0, sites: sites_so_far });
    }
    // A mask that saves nothing is no mask.
    for (i, slot) in out.iter_mut().enumerate() {
        if let Some(m) = slot {
            m.tokens = acct.message(&m.message)?;
        }
        if slot.as_ref().is_some_and(|m| m.tokens >= counts[i]) {
            *slot = None;
        }
    }
    for r in rounds.iter_mut() {
        r.min_tokens = (r.start..r.end).map(|i| out[i].as_ref().map_or(counts[i], |m| m.tokens)).sum();
    }
    Ok(out)
}
