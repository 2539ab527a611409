//! Which result answers which tool call, shared by validation and repair so
//! the two always agree.
//!
//! Ids are not always unique: legacy OpenAI function calls use the function
//! name as the id, and some hosts reuse call ids. Each call *occurrence* is
//! therefore paired on its own:
//!
//! 1. walking the messages in order, a result answers the nearest preceding
//!    call of its id that is still unanswered (within one message, the
//!    earliest such call first), so a result in place after its call stays
//!    paired with that call even when an earlier call used the same id;
//! 2. a result left over answers the earliest still-unanswered call of its
//!    id that comes *after* it (a result before its call);
//! 3. any other result is a duplicate (its id has calls, all answered) or an
//!    orphan (no call has its id).
//!
//! With unique ids this is the plain "the result for id X answers the call
//! X" rule; with reused ids it reports the later call's missing result
//! instead of hiding it behind the earlier call's (found by the `window_fit`
//! fuzz target, docs/reliability.md finding 3).

use std::collections::HashMap;

use crate::chat::Conversation;

/// One tool call in the conversation.
#[derive(Debug, Clone)]
pub(super) struct CallAt<'a> {
    /// Index of the message making the call.
    pub(super) msg: usize,
    /// The call id.
    pub(super) id: &'a str,
    /// The tool name.
    pub(super) name: &'a str,
    /// Index into [`Pairing::results`] of the result that answers it.
    pub(super) answer: Option<usize>,
}

/// What a result does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fate {
    /// It answers call `call` (index into [`Pairing::calls`]); `early` when
    /// it comes before that call.
    Answers { call: usize, early: bool },
    /// Every call with its id is answered by another result.
    Duplicate,
    /// No call has its id.
    Orphan,
}

/// One result in the conversation.
#[derive(Debug, Clone)]
pub(super) struct ResultAt<'a> {
    /// Index of the message holding it.
    pub(super) msg: usize,
    /// Position among that message's results (`Message::result_ids`), which
    /// for Anthropic is also its position among the `tool_result` blocks.
    pub(super) nth: usize,
    /// The id it names.
    pub(super) id: &'a str,
    /// Its pairing.
    pub(super) fate: Fate,
}

/// Every call and every result of a conversation, paired.
#[derive(Debug, Clone)]
pub(super) struct Pairing<'a> {
    /// Calls in message order, then position.
    pub(super) calls: Vec<CallAt<'a>>,
    /// Results in message order, then position.
    pub(super) results: Vec<ResultAt<'a>>,
}

impl<'a> Pairing<'a> {
    /// Pairs the calls and results of `c` (see the module docs).
    pub(super) fn of(c: &'a Conversation) -> Pairing<'a> {
        // Sized once for every call: grown from empty, the maps rehashed
        // every id several times (issue 36: a sixth of validating a
        // 25,000-message transcript).
        let n: usize = c.messages.iter().map(|m| m.tool_calls.len()).sum();
        let mut calls: Vec<CallAt<'a>> = Vec::with_capacity(n);
        let mut results: Vec<ResultAt<'a>> = Vec::with_capacity(n);
        // Unanswered calls made so far, per id; the top is the nearest
        // (calls of one message are pushed last-first, so the earliest
        // position of the latest message is on top).
        let mut open: HashMap<&'a str, Vec<usize>> = HashMap::with_capacity(n);
        // Every call per id in order, for step 2.
        let mut by_id: HashMap<&'a str, Vec<usize>> = HashMap::with_capacity(n);
        let mut leftover: Vec<usize> = Vec::new();
        for (i, m) in c.messages.iter().enumerate() {
            for (nth, id) in m.result_ids().into_iter().enumerate() {
                let r = results.len();
                let fate = match open.get_mut(id).and_then(Vec::pop) {
                    Some(k) => {
                        calls[k].answer = Some(r);
                        Fate::Answers { call: k, early: false }
                    }
                    None => {
                        leftover.push(r);
                        Fate::Orphan // settled in step 2
                    }
                };
                results.push(ResultAt { msg: i, nth, id, fate });
            }
            let first = calls.len();
            for call in &m.tool_calls {
                by_id.entry(call.id.as_str()).or_default().push(calls.len());
                calls.push(CallAt { msg: i, id: &call.id, name: &call.name, answer: None });
            }
            for k in (first..calls.len()).rev() {
                open.entry(calls[k].id).or_default().push(k);
            }
        }
        // Leftovers come in message order, so per id a cursor that only
        // moves forward finds each one's call: a call it passes is either
        // answered or not after this result, and so not after any later one
        // (a rescan from the start would be quadratic for many early results
        // of one reused id).
        let mut cursor: HashMap<&'a str, usize> = HashMap::new();
        for r in leftover {
            let (msg, id) = (results[r].msg, results[r].id);
            let Some(same) = by_id.get(id) else {
                continue; // an orphan
            };
            let at = cursor.entry(id).or_insert(0);
            while *at < same.len() && (calls[same[*at]].msg <= msg || calls[same[*at]].answer.is_some()) {
                *at += 1;
            }
            let later = same.get(*at).copied();
            results[r].fate = match later {
                Some(k) => {
                    calls[k].answer = Some(r);
                    Fate::Answers { call: k, early: true }
                }
                None => Fate::Duplicate,
            };
        }
        Pairing { calls, results }
    }

    /// The result answering call `k`, if any.
    pub(super) fn answer(&self, k: usize) -> Option<&ResultAt<'a>> {
        self.calls[k].answer.map(|r| &self.results[r])
    }
}
