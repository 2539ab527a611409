//! Carrying a summary from one turn to the next when the host keeps the
//! full history and sends only the fitted request (a framework's model
//! input filter: LangChain's `wrapModelCall`, the OpenAI Agents SDK's
//! `callModelInputFilter`, the AI SDK's `prepareStep`). Without it each
//! call over the trigger summarizes the same old span again, and below the
//! trigger the span is sent whole again.
//!
//! A turn's report hands back a [`Carry`]: the fingerprints of the input
//! messages its summary replaced, in order, and the message holding the
//! summary as the turn wrote it. Passed in the next turn's options, the run
//! of messages with those fingerprints, found again in the history, is
//! replaced by that message before the turn fits: below the trigger it is
//! sent as it is; over it the core folds it into the next summary (it
//! starts with the summary label). A history where the run is not found
//! (another conversation, an edited one) is fitted as given.
//!
//! Fingerprints are of each message's JSON as given (object keys in any
//! order), so a host that converts the same message twice, or hands back
//! copies, finds it again; they are never sent anywhere.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::manifest::{Change, ChangeKind};
use crate::chat::{Conversation, Message, Part};
use crate::{Error, Result};

/// What a turn carries to the next (`options.carry`, the turn report's
/// `carry`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Carry {
    /// Fingerprints (16 hex digits) of the input messages the summary
    /// stands for, in order: a run of consecutive messages.
    pub replaced: Vec<String>,
    /// The message holding the summary, in the conversation's format.
    pub summary: Value,
}

/// Where a turn's carry was applied: input messages `index` to
/// `index + messages - 1` were sent as the carried summary, which stands at
/// `index` in the history the turn fitted (its figures are of that history).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Carried {
    /// The first input message of the run.
    pub index: usize,
    /// How many input messages the carried summary stood for.
    pub messages: usize,
}

/// A carry applied to a conversation: the run it replaced and what it was.
#[derive(Debug, Clone)]
pub(crate) struct Applied {
    pub(crate) at: Carried,
    /// The input's fingerprints, before the run was replaced.
    fingerprints: Vec<String>,
    carry: Carry,
}

/// FNV-1a, 64 bits: stable across builds and platforms (the host may keep a
/// carry across processes), and enough to tell messages of one history apart.
struct Fnv(u64);

impl Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// `v` with object keys sorted, each value tagged with its kind.
    fn value(&mut self, v: &Value) {
        match v {
            Value::Null => self.write(b"n"),
            Value::Bool(b) => self.write(if *b { b"t" } else { b"f" }),
            Value::Number(n) => {
                self.write(b"#");
                self.write(n.to_string().as_bytes());
                self.write(b";");
            }
            Value::String(s) => self.string(s),
            Value::Array(a) => {
                self.write(b"[");
                a.iter().for_each(|x| self.value(x));
                self.write(b"]");
            }
            Value::Object(o) => {
                let mut keys: Vec<&String> = o.keys().collect();
                keys.sort();
                self.write(b"{");
                for k in keys {
                    self.string(k);
                    self.value(&o[k]);
                }
                self.write(b"}");
            }
        }
    }

    fn string(&mut self, s: &str) {
        self.write(b"\"");
        self.write(&(s.len() as u64).to_le_bytes());
        self.write(s.as_bytes());
    }
}

/// A message's fingerprint: 16 hex digits over its JSON.
pub fn fingerprint(raw: &Value) -> String {
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    h.value(raw);
    format!("{:016x}", h.0)
}

fn check(carry: &Carry) -> Result<()> {
    if carry.replaced.is_empty() {
        return Err(Error::invalid_argument(
            "options.carry.replaced is empty: a carry stands for at least one message",
        ));
    }
    if carry.replaced.len() > crate::limits::MAX_MESSAGES {
        return Err(Error::new(
            crate::ErrorKind::LimitExceeded,
            format!(
                "options.carry.replaced has {} fingerprints, over MAX_MESSAGES ({})",
                carry.replaced.len(),
                crate::limits::MAX_MESSAGES
            ),
        ));
    }
    if let Some(bad) = carry
        .replaced
        .iter()
        .find(|f| f.len() != 16 || !f.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
    {
        return Err(Error::invalid_argument(format!(
            "options.carry.replaced: '{}' is not a fingerprint (16 lowercase hex digits, as a turn report's carry has)",
            crate::text::clip(bad)
        )));
    }
    Ok(())
}

/// Replaces the run of `c`'s messages that `carry` stands for with its
/// summary message. `fingerprints`: those of `c`'s messages. Returns the
/// fingerprints of the history to fit (the summary's in place of the run)
/// and where the carry was applied: `None` when the run is not in `c`
/// (nothing changes). `InvalidArgument` for a malformed carry or a summary
/// that is not a message of `c`'s format.
pub(crate) fn apply(
    c: &mut Conversation,
    carry: &Carry,
    fingerprints: Vec<String>,
) -> Result<(Vec<String>, Option<Applied>)> {
    check(carry)?;
    let n = carry.replaced.len();
    let found = (0..fingerprints.len().saturating_sub(n - 1)).find(|&i| fingerprints[i..i + n] == carry.replaced[..]);
    let Some(at) = found else { return Ok((fingerprints, None)) };
    let text = serde_json::to_string(&carry.summary)
        .map_err(|e| Error::invalid_argument(format!("options.carry.summary: {e}")))?;
    let summary = c.parse_message(&text).map_err(|e| {
        // An option, not the conversation: a bad summary is the caller's argument.
        let kind = match e.kind() {
            crate::ErrorKind::LimitExceeded => crate::ErrorKind::LimitExceeded,
            _ => crate::ErrorKind::InvalidArgument,
        };
        Error::new(kind, format!("options.carry.summary: {}", e.message()))
    })?;
    let mut fitted = Vec::with_capacity(fingerprints.len() + 1 - n);
    fitted.extend_from_slice(&fingerprints[..at]);
    fitted.push(fingerprint(summary.raw()));
    fitted.extend_from_slice(&fingerprints[at + n..]);
    c.messages.splice(at..at + n, [summary]);
    Ok((fitted, Some(Applied { at: Carried { index: at, messages: n }, fingerprints, carry: carry.clone() })))
}

impl Applied {
    /// The input index of message `i` of the fitted history (the carried
    /// summary: the run's first).
    pub(crate) fn input_index(&self, i: usize) -> usize {
        let Carried { index, messages } = self.at;
        if i <= index {
            i
        } else {
            i + messages - 1
        }
    }

    /// Where input message `i` is in the fitted history (a message of the
    /// run: the carried summary).
    pub(crate) fn fitted_index(&self, i: usize) -> usize {
        let Carried { index, messages } = self.at;
        if i < index {
            i
        } else if i < index + messages {
            index
        } else {
            i - (messages - 1)
        }
    }

    /// The input indices message `i` of the fitted history stands for.
    pub(crate) fn input_indices(&self, i: usize) -> std::ops::Range<usize> {
        let Carried { index, messages } = self.at;
        if i == index {
            index..index + messages
        } else {
            let k = self.input_index(i);
            k..k + 1
        }
    }

    /// `changes` (indices of the fitted history) with input indices; an
    /// entry on the carried summary says so.
    pub(crate) fn remap_changes(&self, changes: &mut [Change]) {
        for c in changes {
            if c.index == self.at.index {
                c.detail = format!(
                    "{} (the carried summary of input messages {} to {})",
                    c.detail,
                    self.at.index,
                    self.at.index + self.at.messages - 1
                );
            }
            c.index = self.input_index(c.index);
        }
    }
}

/// The carry for the next turn: after a turn that wrote a summary, the
/// input messages it replaced (the carried run expanded to what it stood
/// for) and the message holding it; after one that sent the carried summary
/// unchanged, the same carry; else none. `fitted`: the fingerprints of the
/// history the turn fitted (the carried summary in place of its run),
/// `output` its result, `changes` its manifest (indices of `fitted`),
/// `label` the summary label. A summary whose messages are not one run of
/// the input, or whose span holds a result the turn synthesized (the host
/// may still add the real one), is not carried: the next turn fits the
/// history as given.
pub(crate) fn next(
    fitted: &[String],
    output: &[Message],
    changes: &[Change],
    label: &str,
    applied: Option<&Applied>,
) -> Option<Carry> {
    // Messages written back as read: in order, else anywhere (a moved result).
    // One the manifest says went (summarized, dropped) is never matched: a
    // summary that reads as the one it folded is still the new one.
    let mut kept = vec![false; fitted.len()];
    for c in changes {
        let gone = matches!(c.action, ChangeKind::Summarized | ChangeKind::DroppedMessage | ChangeKind::DroppedResult);
        if gone && c.index < kept.len() {
            kept[c.index] = true;
        }
    }
    let went = kept.clone();
    let mut fresh = Vec::new();
    let mut cursor = 0;
    for (j, o) in output.iter().enumerate() {
        let f = fingerprint(o.raw());
        let hit = (cursor..fitted.len())
            .find(|&k| !kept[k] && fitted[k] == f)
            .or_else(|| (0..fitted.len()).find(|&k| !kept[k] && fitted[k] == f));
        match hit {
            Some(k) => {
                kept[k] = true;
                cursor = cursor.max(k + 1);
            }
            None => fresh.push(j),
        }
    }
    let label = label.trim_end();
    let holds_summary = |m: &Message| {
        !label.is_empty() && m.parts.iter().any(|p| matches!(p, Part::Text(t) if t.trim_start().starts_with(label)))
    };
    for (k, w) in went.iter().enumerate() {
        if *w {
            kept[k] = false;
        }
    }
    let Some(summary) = fresh.iter().map(|&j| &output[j]).find(|m| holds_summary(m)) else {
        // No new summary: the carried one, when it went out as it came.
        let a = applied?;
        return kept.get(a.at.index).copied().unwrap_or(false).then(|| a.carry.clone());
    };
    let rewritten = |k: usize| {
        changes.iter().any(|c| {
            c.index == k
                && matches!(
                    c.action,
                    ChangeKind::TruncatedResult | ChangeKind::MaskedResult | ChangeKind::ClearedResult
                )
        })
    };
    let mut replaced: Vec<usize> = Vec::new();
    // A result cut before it was summarized went with its span.
    for k in (0..fitted.len()).filter(|&k| !kept[k] && (went[k] || !rewritten(k))) {
        match applied {
            Some(a) => replaced.extend(a.input_indices(k)),
            None => replaced.push(k),
        }
    }
    let synthesized = changes.iter().any(|c| {
        c.action == ChangeKind::SynthesizedResult
            && replaced.contains(&applied.map_or(c.index, |a| a.input_index(c.index)))
    });
    let one_run = replaced.windows(2).all(|w| w[1] == w[0] + 1);
    if replaced.is_empty() || !one_run || synthesized {
        return None;
    }
    let input = applied.map_or(fitted, |a| &a.fingerprints[..]);
    let replaced = replaced.iter().map(|&k| input.get(k).cloned()).collect::<Option<Vec<_>>>()?;
    Some(Carry { replaced, summary: summary.raw().clone() })
}
