//! Mechanical repair of tool-call structure, with a manifest of every change.
//!
//! - a tool call with no result gets a synthetic result (configurable text,
//!   flagged as an error for Anthropic) placed where the provider expects it;
//! - a result that answers no call, or answers an already answered call, is
//!   dropped;
//! - a result that is out of place (before its call, or separated from it)
//!   is moved next to its call.
//!
//! Results already in place are left byte for byte as they were. Calls and
//! results are paired per occurrence, as `validate` pairs them, so a reused
//! call id is handled like any other: each of its calls ends up with exactly
//! one result. The reuse itself, and Anthropic role-order problems, are
//! reported by `validate` but not changed: fixing them would mean rewriting
//! what the model said.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Value};

use super::manifest::{Change, ChangeKind};
use super::pairing::{Fate, Pairing};
use super::Accountant;
use crate::chat::{self, Conversation, Format, Message, Part, Role};
use crate::limits::{MAX_JSON_BYTES, MAX_SYNTHETIC_RESULT_BYTES, MAX_SYNTHETIC_TOTAL_BYTES};
use crate::Result;

/// The default text of a synthetic tool result.
pub const DEFAULT_SYNTHETIC_RESULT: &str = "Tool call was interrupted before it returned.";

/// The repaired conversation and what changed.
#[derive(Debug, Clone)]
pub struct Repaired {
    /// The conversation after repair, in the input's format.
    pub conversation: Conversation,
    /// Every change, in output order.
    pub changes: Vec<Change>,
    /// For each output message, the index of the input message it is (None
    /// for a message the repair made: a synthetic result, or a user message
    /// built to carry moved results). Compaction maps pins, scores and
    /// manifest indices through it.
    pub origin: Vec<Option<usize>>,
}

/// Repairs `c` (see the module docs). `synthetic` is the text of inserted
/// results ([`DEFAULT_SYNTHETIC_RESULT`] when None). Calls and results are
/// paired per occurrence as `validate` pairs them (see `pairing`), so a
/// history that reuses a call id gets a synthetic result for each of its
/// unanswered calls, and each result stays with, or moves to, the call it
/// answers.
pub fn repair(c: &Conversation, synthetic: Option<&str>, acct: &Accountant) -> Result<Repaired> {
    repair_keeping(c, synthetic, acct, &[])
}

/// [`repair`], leaving the calls whose ids are in `pending` unanswered
/// (awaiting approval, long-running): a result that arrives later pairs
/// with them, so none is made up now.
pub(crate) fn repair_keeping(
    c: &Conversation,
    synthetic: Option<&str>,
    acct: &Accountant,
    pending: &[String],
) -> Result<Repaired> {
    let text = synthetic.unwrap_or(DEFAULT_SYNTHETIC_RESULT);
    // Limits count what the repair writes: the text as a JSON string, its
    // escapes included (issue 33, cause H: 64 KiB of U+0001 is 384 KiB of
    // `\u0001`), not its raw bytes.
    let escaped = escaped_len(text) - 2; // its quotes are the envelope's
    if escaped > MAX_SYNTHETIC_RESULT_BYTES {
        return Err(crate::Error::new(
            crate::ErrorKind::LimitExceeded,
            format!(
                "synthetic_result is {escaped} bytes escaped as JSON ({} bytes of text); the limit is \
                 {MAX_SYNTHETIC_RESULT_BYTES} (MAX_SYNTHETIC_RESULT_BYTES)",
                text.len()
            ),
        ));
    }
    // Calls awaiting approval (AI SDK) are pending too.
    let awaiting = chat::awaiting_approval(c);
    let pending_all: Vec<String>;
    let pending = if awaiting.is_empty() {
        pending
    } else {
        pending_all = pending.iter().cloned().chain(awaiting).collect();
        &pending_all[..]
    };
    let p = Pairing::of(c);
    // Checked before anything is built: a repair must not turn a document
    // the window accepts into one it refuses (issue 14: 70 unanswered calls
    // times a 1 MiB text made 73 MB).
    let unanswered =
        (0..p.calls.len()).filter(|&k| p.answer(k).is_none() && !pending.iter().any(|id| id == p.calls[k].id)).count();
    let added = unanswered.saturating_mul(escaped);
    if added > MAX_SYNTHETIC_TOTAL_BYTES {
        return Err(crate::Error::new(
            crate::ErrorKind::LimitExceeded,
            format!(
                "repair would add {unanswered} synthetic results of {escaped} bytes escaped as JSON ({added} \
                 bytes); the limit is {MAX_SYNTHETIC_TOTAL_BYTES} (MAX_SYNTHETIC_TOTAL_BYTES)"
            ),
        ));
    }
    let result_parts = c
        .messages
        .iter()
        .enumerate()
        .flat_map(|(i, m)| {
            m.parts
                .iter()
                .filter(|p| matches!(p, Part::ToolResult { .. }))
                .enumerate()
                .map(move |(nth, p)| ((i, nth), p))
        })
        .collect();
    let mut r = Repairer { c, acct, text, p, result_parts, changes: Vec::new(), pending };
    r.note_dropped()?;
    let (messages, origin) =
        if c.format.results_are_messages() { r.flat()? } else { r.anthropic()? }.into_iter().unzip();
    let mut conversation = c.clone();
    conversation.messages = messages;
    if !r.changes.is_empty() {
        // What the window would be handed back: the whole document as
        // written, under the limit every conversation is read with. Only a
        // repair that changed something pays for the measurement.
        let len = escaped_len(&conversation.to_value());
        if len > MAX_JSON_BYTES {
            return Err(crate::Error::new(
                crate::ErrorKind::LimitExceeded,
                format!(
                    "the repaired conversation would be {len} bytes of JSON; the limit is {MAX_JSON_BYTES} \
                     (MAX_JSON_BYTES), which loading it back would refuse"
                ),
            ));
        }
    }
    Ok(Repaired { conversation, changes: r.changes, origin })
}

/// Bytes `value` takes as compact JSON, as turnfit writes it (a string's
/// escapes included, its quotes too), counted without building the text.
fn escaped_len<T: serde::Serialize + ?Sized>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut n = Count(0);
    // Writing to a counter cannot fail: a `Value` or a `str` always serializes.
    let _ = serde_json::to_writer(&mut n, value);
    n.0
}

struct Repairer<'a> {
    c: &'a Conversation,
    acct: &'a Accountant,
    text: &'a str,
    /// Ids of calls awaiting their result: never given a synthetic one.
    pending: &'a [String],
    p: Pairing<'a>,
    /// Each message's `tool_result` parts by (message, nth), indexed once:
    /// looking one up by scanning its message for every moved or dropped
    /// result is quadratic when one message answers many parallel calls.
    result_parts: HashMap<(usize, usize), &'a Part>,
    changes: Vec<Change>,
}

impl<'a> Repairer<'a> {
    fn note(&mut self, action: ChangeKind, index: usize, id: &str, tokens: usize, detail: String) {
        self.changes.push(Change { action, index, id: Some(id.to_owned()), tokens, detail });
    }

    /// Records every result that answers no call (orphans, and results for
    /// calls another result answers) as dropped, in message order.
    fn note_dropped(&mut self) -> Result<()> {
        for k in 0..self.p.results.len() {
            let (i, nth, id, fate) =
                (self.p.results[k].msg, self.p.results[k].nth, self.p.results[k].id, self.p.results[k].fate);
            let detail = match fate {
                Fate::Answers { .. } => continue,
                Fate::Orphan => format!("result for '{id}' answers no tool call"),
                Fate::Duplicate => format!("second result for '{id}'"),
            };
            let t = self.result_tokens(i, nth)?;
            self.note(ChangeKind::DroppedResult, i, id, t, detail);
        }
        Ok(())
    }

    /// Tokens of the `nth` result of message `i` (a whole tool message, or
    /// one `tool_result` block).
    fn result_tokens(&self, i: usize, nth: usize) -> Result<usize> {
        let m = &self.c.messages[i];
        if matches!(m.role, Role::Tool | Role::Function) && self.c.format != Format::AiSdk {
            return self.acct.message(m);
        }
        match self.result_parts.get(&(i, nth)) {
            Some(p) => self.acct.part(p),
            None => Ok(0),
        }
    }

    /// Whether call `k`'s result is where Anthropic wants it: after the
    /// call, in the user message right after the call's message (what
    /// `validate` accepts as in place); for the AI SDK, in a `tool` message
    /// after the call with only `tool` messages between.
    fn anthropic_in_place(&self, k: usize) -> bool {
        let ci = self.p.calls[k].msg;
        let format = self.c.format;
        self.p.answer(k).is_some_and(|r| {
            matches!(r.fate, Fate::Answers { early: false, .. })
                && if format == Format::AiSdk {
                    r.msg > ci && self.c.messages[ci + 1..=r.msg].iter().all(|m| m.role == Role::Tool)
                } else {
                    r.msg == ci + 1 && self.c.messages[r.msg].role == Role::User
                }
        })
    }

    /// Results as messages of their own (OpenAI Chat `tool` messages,
    /// Responses output items), round by round (`rounds::bounds`): the
    /// round's own messages, then the results answering its calls: those
    /// already in the round in their order, then moved and synthetic ones.
    fn flat(&mut self) -> Result<Vec<(Message, Option<usize>)>> {
        let msgs = &self.c.messages;
        let is_result = |m: &Message| matches!(m.role, Role::Tool | Role::Function);
        // The result (index into `p.results`) each tool message carries.
        let mut result_in: HashMap<usize, usize> = HashMap::new();
        for (k, r) in self.p.results.iter().enumerate() {
            result_in.insert(r.msg, k);
        }
        let mut out = Vec::with_capacity(msgs.len());
        for (start, end) in super::rounds::bounds(self.c) {
            out.extend((start..end).filter(|&i| !is_result(&msgs[i])).map(|i| (msgs[i].clone(), Some(i))));
            let own = self.p.calls.partition_point(|c| c.msg < start)..self.p.calls.partition_point(|c| c.msg < end);
            let mut emitted = vec![false; own.len()];
            // Results already in place: the round's own result messages.
            for (j, r) in msgs.iter().enumerate().take(end).skip(start) {
                let fate = result_in.get(&j).map(|&k| self.p.results[k].fate);
                if let Some(Fate::Answers { call, early: false }) = fate {
                    if own.contains(&call) && !emitted[call - own.start] {
                        emitted[call - own.start] = true;
                        out.push((r.clone(), Some(j)));
                    }
                }
            }
            for k in own.clone() {
                if emitted[k - own.start] {
                    continue;
                }
                let (ci, id, name) = (self.p.calls[k].msg, self.p.calls[k].id, self.p.calls[k].name);
                if let Some(j) = self.p.answer(k).map(|r| r.msg) {
                    let t = self.acct.message(&msgs[j])?;
                    self.note(
                        ChangeKind::MovedResult,
                        j,
                        id,
                        t,
                        format!("result for '{id}' moved next to its call in message {ci}"),
                    );
                    out.push((msgs[j].clone(), Some(j)));
                } else if self.pending.iter().any(|p| p == id) {
                    // Awaiting its result: left unanswered.
                } else {
                    let raw = chat::synthetic_result_message(self.c.format, &msgs[ci], id, self.text);
                    let msg = chat::message_from_value(self.c.format, raw, ci)?;
                    let t = self.acct.message(&msg)?;
                    self.note(
                        ChangeKind::SynthesizedResult,
                        ci,
                        id,
                        t,
                        format!("synthetic result for unanswered call '{id}' ({name})"),
                    );
                    out.push((msg, None));
                }
            }
            // A result message without an id answers nothing we can pair.
            for (i, m) in msgs.iter().enumerate().take(end).skip(start) {
                if is_result(m) && m.tool_call_id.is_none() {
                    let t = self.acct.message(m)?;
                    self.changes.push(Change {
                        action: ChangeKind::DroppedResult,
                        index: i,
                        id: None,
                        tokens: t,
                        detail: "tool message has no tool_call_id".into(),
                    });
                }
            }
        }
        Ok(out)
    }

    fn anthropic(&mut self) -> Result<Vec<(Message, Option<usize>)>> {
        let msgs = &self.c.messages;
        // Blocks to take out of each message, as (message, nth tool_result
        // block): dropped results, and results that belong in another message.
        let mut remove: HashSet<(usize, usize)> = HashSet::new();
        for r in &self.p.results {
            let keep_here = match r.fate {
                Fate::Answers { call, early: false } => self.anthropic_in_place(call),
                _ => false,
            };
            if !keep_here {
                remove.insert((r.msg, r.nth));
            }
        }
        let format = self.c.format;
        let key = chat::blocks_key(format);
        let blocks = result_blocks(format, msgs);
        // What each call message's answer must receive from elsewhere.
        let mut incoming: HashMap<usize, Vec<Value>> = HashMap::new();
        for k in 0..self.p.calls.len() {
            let (ci, id, name) = (self.p.calls[k].msg, self.p.calls[k].id, self.p.calls[k].name);
            match self.p.answer(k).map(|r| (r.msg, r.nth)) {
                Some(_) if self.anthropic_in_place(k) => {}
                Some((ri, nth)) => {
                    let block = blocks.get(&(ri, nth)).map_or(Value::Null, |b| (*b).clone());
                    let t = self.result_tokens(ri, nth)?;
                    self.note(
                        ChangeKind::MovedResult,
                        ri,
                        id,
                        t,
                        format!("result for '{id}' moved next to its call in message {ci}"),
                    );
                    incoming.entry(ci).or_default().push(block);
                }
                None if self.pending.iter().any(|p| p == id) => {}
                None => {
                    let block = chat::synthetic_result_block(format, &msgs[ci], id, self.text);
                    let t = self.acct.part(&Part::ToolResult {
                        id: id.to_owned(),
                        text: self.text.to_owned(),
                        is_error: true,
                    })?;
                    self.note(
                        ChangeKind::SynthesizedResult,
                        ci,
                        id,
                        t,
                        format!("synthetic result for unanswered call '{id}' ({name})"),
                    );
                    incoming.entry(ci).or_default().push(block);
                }
            }
        }
        let mut out = Vec::with_capacity(msgs.len());
        let mut pending: Option<Vec<Value>> = None;
        for (i, m) in msgs.iter().enumerate() {
            let takes_out = (0..m.result_ids().len()).any(|nth| remove.contains(&(i, nth)));
            let mut raw = m.raw().clone();
            if takes_out {
                if let Some(blocks) = raw.get_mut(key).and_then(Value::as_array_mut) {
                    let mut nth = 0;
                    blocks.retain(|b| {
                        if !chat::is_result_block(format, b) {
                            return true;
                        }
                        nth += 1;
                        !remove.contains(&(i, nth - 1))
                    });
                }
            }
            if let Some(blocks) = pending.take() {
                if chat::holds_results(format, m) {
                    insert_results(format, &mut raw, blocks);
                } else {
                    out.push((user_message(format, blocks, i)?, None));
                }
            }
            let emptied = takes_out && raw.get(key).and_then(Value::as_array).is_some_and(Vec::is_empty);
            if emptied {
                let t = self.acct.message(m)?;
                self.changes.push(Change {
                    action: ChangeKind::DroppedMessage,
                    index: i,
                    id: None,
                    tokens: t,
                    detail: "message held only results that were dropped or moved".into(),
                });
            } else if takes_out || &raw != m.raw() {
                out.push((chat::message_from_value(format, raw, i)?, Some(i)));
            } else {
                out.push((m.clone(), Some(i)));
            }
            if let Some(blocks) = incoming.remove(&i) {
                pending = Some(blocks);
            }
        }
        if let Some(blocks) = pending {
            out.push((user_message(format, blocks, msgs.len())?, None));
        }
        Ok(out)
    }
}

/// Every message's `tool_result` blocks by (message index, nth result
/// block). Built once per repair: finding a block by scanning its message
/// for every moved result is quadratic when one message answers many
/// parallel calls (scripts/growth.sh, `repair/parallel/anthropic`).
fn result_blocks(format: Format, msgs: &[Message]) -> HashMap<(usize, usize), &Value> {
    let mut map = HashMap::new();
    for (i, m) in msgs.iter().enumerate() {
        let Some(content) = m.raw().get(chat::blocks_key(format)).and_then(Value::as_array) else { continue };
        for (nth, b) in content.iter().filter(|b| chat::is_result_block(format, b)).enumerate() {
            map.insert((i, nth), b);
        }
    }
    map
}

/// Puts result blocks after the user message's leading tool results (Anthropic
/// wants tool results before any other content; Gemini's function responses
/// go first the same way).
fn insert_results(format: Format, raw: &mut Value, blocks: Vec<Value>) {
    let key = chat::blocks_key(format);
    let content = raw.get_mut(key);
    let arr = match content {
        Some(Value::Array(a)) => a,
        Some(other) => {
            let text = other.take();
            *other = if text.is_string() { json!([{"type": "text", "text": text}]) } else { json!([]) };
            other.as_array_mut().expect("just built an array")
        }
        None => {
            raw[key] = json!([]);
            raw[key].as_array_mut().expect("just built an array")
        }
    };
    let at = arr.iter().take_while(|b| chat::is_result_block(format, b)).count();
    // One splice: inserting the blocks one by one shifts the tail once per
    // block (quadratic for many parallel results).
    arr.splice(at..at, blocks);
}

fn user_message(format: Format, blocks: Vec<Value>, index: usize) -> Result<Message> {
    chat::message_from_value(format, chat::user_blocks_message(format, blocks), index)
}

#[cfg(test)]
mod tests;
