//! Folding a multi-scale window's tiers (see `window::tiers`): rounds that
//! leave the immediate tier go into the session summary, a session summary
//! over its budget goes into the historical one, and when the whole would
//! pass the window's limit the fold goes further (only the newest round
//! kept verbatim, the session merged into the historical summary, the
//! historical summary cut to what is left) before giving up.

use super::{is_system, CompactReport, Window};
use crate::chat::{Conversation, Message};
use crate::window::tiers::{
    self, FoldRequest, Tier, TierBudgets, TierReport, TierState, HISTORICAL_HEADING, SESSION_HEADING,
};
use crate::window::{round_starts, Change, ChangeKind, DigestSection};
use crate::{Error, ErrorKind, Result};

/// A host summarizer: `None` (or an empty reply) means "use the digest".
pub(crate) type Summarize<'a> = dyn FnMut(&FoldRequest) -> Option<String> + 'a;

/// Where the conversation's tiers sit: leading system messages end at
/// `head`; the immediate tier starts at `imm`.
struct Layout {
    head: usize,
    imm: usize,
}

/// A fold worked out but not applied.
struct Planned {
    conversation: Conversation,
    counts: Vec<usize>,
    state: TierState,
    prompt: usize,
    changes: Vec<Change>,
}

impl Window {
    fn layout(&self) -> Layout {
        let msgs = &self.conversation.messages;
        let head = msgs.iter().take_while(|m| is_system(m)).count();
        let ctx = msgs.get(head).is_some_and(tiers::is_context);
        Layout { head, imm: head + usize::from(ctx) }
    }

    /// Re-reads the summaries from the conversation (after a load, a
    /// compaction or an edit): the context message is the truth.
    pub(super) fn resync_tiers(&mut self) {
        let layout = self.layout();
        let text = (layout.imm > layout.head).then(|| self.conversation.messages[layout.head].text());
        if let Some((_, state)) = &mut self.tiers {
            state.read(text.as_deref());
        }
    }

    /// Whether [`add`](Self::add) must fold: the immediate tier is over its
    /// budget with more than one round in it, or the window overflows.
    pub(super) fn tiers_due(&self) -> bool {
        let Some((b, _)) = &self.tiers else { return false };
        let layout = self.layout();
        let imm: usize = self.counts[layout.imm..].iter().sum();
        let rounds = round_starts(&self.conversation.messages[layout.imm..]).len();
        (imm > b.immediate && rounds > 1) || self.verdict() == super::Verdict::Overflow
    }

    /// The tier figures, when the window is multi-scale.
    pub(super) fn tier_report(&self) -> Result<Option<TierReport>> {
        let Some((b, s)) = &self.tiers else { return Ok(None) };
        let layout = self.layout();
        Ok(Some(TierReport {
            immediate_tokens: self.counts[layout.imm..].iter().sum(),
            session_tokens: tiers::section_tokens(SESSION_HEADING, &s.session, &self.acct)?,
            historical_tokens: tiers::section_tokens(HISTORICAL_HEADING, &s.historical, &self.acct)?,
            context_message_tokens: self.counts[layout.head..layout.imm].iter().sum(),
            immediate_budget: b.immediate,
            session_budget: b.session,
            historical_budget: b.historical,
            messages_folded: s.messages_folded,
            session_folds: s.session_folds,
            historical_folds: s.historical_folds,
            host_summaries: s.host_summaries,
        }))
    }

    /// Folds the tiers toward their budgets and within the window's limit,
    /// asking `summarize` for each summary (the digest when it declines).
    /// `DoesNotFit` when even the newest round, the system messages and a
    /// minimal context message pass the limit; the window is then unchanged.
    pub(super) fn fold_tiers(&mut self, summarize: &mut Summarize<'_>) -> Result<CompactReport> {
        let Some((b, _)) = self.tiers else {
            return Err(Error::internal("fold_tiers on a window without multi_scale"));
        };
        tiers::check_format(self.conversation.format)?;
        let tokens_before = self.prompt_tokens(0);
        let layout = self.layout();
        let imm = &self.conversation.messages[layout.imm..];
        let starts = round_starts(imm);
        let last = starts.last().copied().unwrap_or(0);
        let from = |k: usize| -> usize { self.counts[layout.imm + k..].iter().sum() };
        // Down to three quarters of the tier's budget, so the next fold is a
        // few rounds away rather than due on the next message (each fold is
        // a summarizer call for a host that writes them).
        let low = b.immediate - b.immediate / 4;
        let cut = starts.iter().copied().find(|&k| from(k) <= low).unwrap_or(last);
        let room = self.limit - self.reserved;
        let mut planned = None;
        for step in 0..4 {
            let cut = if step == 0 { cut } else { last };
            let hist_cap = if step == 3 {
                // What the context message may take beside everything else.
                let rest = self.prompt_without_tiers(&layout, cut);
                let frame = self.acct.message(&tiers::message(self.conversation.format, TIERS_LABEL_LINE, 0)?)?;
                Some(room.saturating_sub(rest + frame))
            } else {
                None
            };
            let p = self.plan(&layout, &b, cut, step >= 2, hist_cap, summarize)?;
            let fits = self.level(p.prompt).verdict != super::Verdict::Overflow;
            planned = Some(p);
            if fits {
                break;
            }
        }
        let p = planned.expect("the loop runs at least once");
        if self.level(p.prompt).verdict == super::Verdict::Overflow {
            return Err(Error::new(
                ErrorKind::DoesNotFit,
                format!(
                    "a multi-scale window cannot fit: the system messages, tools and the newest round take {} prompt tokens with the summaries cut to nothing, over the window's prompt room of {room}",
                    self.prompt_without_tiers(&layout, last)
                ),
            ));
        }
        let within = p.counts[layout.head..].iter().skip(usize::from(p.state.text().is_some())).sum::<usize>()
            <= b.immediate
            && tiers::section_tokens(SESSION_HEADING, &p.state.session, &self.acct)? <= b.session
            && tiers::section_tokens(HISTORICAL_HEADING, &p.state.historical, &self.acct)? <= b.historical;
        let changes = p.changes;
        self.touch();
        self.conversation = p.conversation;
        self.counts = p.counts;
        self.history_tokens =
            self.counts.iter().zip(&self.conversation.messages).filter(|(_, m)| !is_system(m)).map(|(n, _)| n).sum();
        self.system_tokens = self
            .counts
            .iter()
            .zip(&self.conversation.messages)
            .filter(|(_, m)| is_system(m))
            .map(|(n, _)| n)
            .sum::<usize>()
            + match &self.conversation.system {
                Some(s) => self.acct.system(s)?,
                None => 0,
            };
        if let Some((_, s)) = &mut self.tiers {
            *s = p.state;
        }
        let bound = self.bind(&crate::window::Policy::default());
        Ok(CompactReport {
            tokens_before,
            tokens_after: self.prompt_tokens(0),
            target_tokens: bound.target_tokens,
            limit_tokens: bound.limit_tokens,
            within_target: within,
            insufficient: false,
            shortfall: None,
            changes,
            protected: Vec::new(),
            tiers: self.tier_report()?,
        })
    }

    /// Prompt tokens of everything but the context message once the
    /// immediate tier starts at `cut` (relative to `layout.imm`).
    fn prompt_without_tiers(&self, layout: &Layout, cut: usize) -> usize {
        let kept: usize =
            self.counts[..layout.head].iter().sum::<usize>() + self.counts[layout.imm + cut..].iter().sum::<usize>();
        let system = match &self.conversation.system {
            Some(s) => self.acct.system(s).unwrap_or(0),
            None => 0,
        };
        kept + system + self.tools_tokens + self.acct.framing().reply_priming
    }

    /// The conversation after folding the immediate tier's messages before
    /// `cut`, merging the session into the historical summary when `merge`
    /// (or when the session outgrows its budget), and cutting the historical
    /// summary's section to `hist_cap` tokens when given.
    fn plan(
        &self,
        layout: &Layout,
        b: &TierBudgets,
        cut: usize,
        merge: bool,
        hist_cap: Option<usize>,
        summarize: &mut Summarize<'_>,
    ) -> Result<Planned> {
        let acct = &self.acct;
        let mut state = self.tiers.as_ref().map(|(_, s)| s.clone()).unwrap_or_default();
        let msgs = &self.conversation.messages;
        let folded = &msgs[layout.imm..layout.imm + cut];
        let mut changes = Vec::new();
        if !folded.is_empty() {
            let d = self.session_summary(folded, b.session, &mut state, summarize)?;
            for (i, m) in folded.iter().enumerate() {
                let index = layout.imm + i;
                changes.push(Change {
                    action: ChangeKind::Summarized,
                    index,
                    id: m.tool_calls.first().map(|c| c.id.clone()),
                    tokens: self.counts[index],
                    detail: "folded into the session summary".into(),
                });
            }
            state.messages_folded += folded.len();
            state.session_folds += 1;
            let combined = if state.session.is_empty() { d.clone() } else { format!("{}\n{d}", state.session) };
            if tiers::section_tokens(SESSION_HEADING, &combined, acct)? <= b.session {
                state.session = combined;
            } else {
                let old = std::mem::replace(&mut state.session, d);
                self.merge_historical(&mut state, &old, b.historical, summarize)?;
            }
        }
        if merge && !state.session.is_empty() {
            let old = std::mem::take(&mut state.session);
            self.merge_historical(&mut state, &old, b.historical, summarize)?;
        }
        if let Some(cap) = hist_cap {
            let least = tiers::section_overhead(HISTORICAL_HEADING, acct)? + 1;
            state.historical = if cap < least {
                String::new()
            } else {
                tiers::fit_section(HISTORICAL_HEADING, std::mem::take(&mut state.historical), cap, acct)?
            };
        }
        let format = self.conversation.format;
        let mut out: Vec<Message> = msgs[..layout.head].to_vec();
        let mut counts = self.counts[..layout.head].to_vec();
        let had = layout.imm > layout.head;
        if let Some(text) = state.text() {
            let m = tiers::message(format, &text, layout.head)?;
            counts.push(acct.message(&m)?);
            changes.push(Change {
                action: ChangeKind::InsertedSummary,
                index: layout.head,
                id: None,
                tokens: *counts.last().unwrap_or(&0),
                detail: format!(
                    "context message: historical {} and session {} tokens{}",
                    tiers::section_tokens(HISTORICAL_HEADING, &state.historical, acct)?,
                    tiers::section_tokens(SESSION_HEADING, &state.session, acct)?,
                    if had { ", replacing the previous one" } else { "" }
                ),
            });
            out.push(m);
        }
        out.extend_from_slice(&msgs[layout.imm + cut..]);
        counts.extend_from_slice(&self.counts[layout.imm + cut..]);
        let system = match &self.conversation.system {
            Some(s) => acct.system(s)?,
            None => 0,
        };
        let prompt = counts.iter().sum::<usize>() + system + self.tools_tokens + acct.framing().reply_priming;
        let mut conversation = self.conversation.clone();
        conversation.messages = out;
        Ok(Planned { conversation, counts, state, prompt, changes })
    }

    /// The summary of `folded` for the session tier: the host's when it
    /// gives one, else the digest; its section within `budget`.
    fn session_summary(
        &self,
        folded: &[Message],
        budget: usize,
        state: &mut TierState,
        summarize: &mut Summarize<'_>,
    ) -> Result<String> {
        let acct = &self.acct;
        let cap = budget.saturating_sub(tiers::section_overhead(SESSION_HEADING, acct)? + 1).max(1);
        let transcript: String = folded.iter().map(crate::window::transcript_lines).collect();
        let request = FoldRequest {
            tier: Tier::Session,
            prompt: format!(
                "Summarize these turns of an AI agent's session in at most {cap} tokens. They are leaving its context; keep requests, decisions, results, errors and identifiers exactly.\n\n{transcript}"
            ),
            max_tokens: cap,
        };
        let text = match summarize(&request).filter(|t| !t.trim().is_empty()) {
            Some(reply) => {
                state.host_summaries += 1;
                reply.trim().to_owned()
            }
            None => {
                let starts = round_starts(folded);
                crate::window::build_digest(folded, &starts, acct.tokenizer(), cap, &DigestSection::ALL)?.text
            }
        };
        let text = if text.trim().is_empty() { transcript.trim().to_owned() } else { text };
        tiers::fit_section(SESSION_HEADING, text, budget, acct)
    }

    /// Folds `session` into the historical summary, within `budget`.
    fn merge_historical(
        &self,
        state: &mut TierState,
        session: &str,
        budget: usize,
        summarize: &mut Summarize<'_>,
    ) -> Result<()> {
        if session.is_empty() {
            return Ok(());
        }
        let acct = &self.acct;
        let cap = budget.saturating_sub(tiers::section_overhead(HISTORICAL_HEADING, acct)? + 1).max(1);
        let joined =
            if state.historical.is_empty() { session.to_owned() } else { format!("{}\n{session}", state.historical) };
        let request = FoldRequest {
            tier: Tier::Historical,
            prompt: format!(
                "Condense this long-term summary of an AI agent's work (older part first, then the session just ended) into at most {cap} tokens; keep what later work depends on and identifiers exactly.\n\n{joined}"
            ),
            max_tokens: cap,
        };
        let text = match summarize(&request).filter(|t| !t.trim().is_empty()) {
            Some(reply) => {
                state.host_summaries += 1;
                reply.trim().to_owned()
            }
            None => joined,
        };
        state.historical = tiers::fit_section(HISTORICAL_HEADING, text, budget, acct)?;
        state.historical_folds += 1;
        Ok(())
    }
}

/// The label line alone: the context message's smallest form.
const TIERS_LABEL_LINE: &str = tiers::TIERS_LABEL;

#[cfg(test)]
mod tests;
