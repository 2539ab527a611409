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
//! starts with the summary label).
//!
//! A carry is checked before it is trusted (issue 48): it records where its
//! run started (`index`), and is applied only when the history still holds
//! that run at that index (one comparison of `replaced.len()` fingerprints,
//! so matching is linear in the history whatever the carry) and when the
//! run touches no round the policy always keeps (system and developer
//! messages, the task, the newest user message, pins, calls awaiting their
//! result). A real turn never makes a carry over those, but a stale,
//! corrupted or hand-made one could remove them whatever the budget.
//! Otherwise the history is fitted as given and the report's
//! `carry_ignored` says why.
//!
//! Fingerprints are of each message's JSON as given (object keys in any
//! order), so a host that converts the same message twice, or hands back
//! copies, finds it again; they are never sent anywhere.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::manifest::{Change, ChangeKind};
use super::Policy;
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
    /// The input index of the run's first message in the history the
    /// carry was made from: the run is looked for there only, so a carry
    /// that no longer matches where it was made is ignored, never trusted.
    /// A carry without it (made before it was recorded) cannot be checked
    /// and is ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    /// The message holding the summary, in the conversation's format.
    pub summary: Value,
}

/// Reads `options.carry` so that an error in it names it: serde's message
/// alone ("invalid type: string, expected struct Carry") does not say which
/// option was wrong. Limit and depth errors pass as they are (their kind is
/// read from their start).
pub(crate) fn deserialize_named<'de, D>(d: D) -> std::result::Result<Option<Carry>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    Option::<Carry>::deserialize(d).map_err(|e| {
        let msg = e.to_string();
        if msg.starts_with(crate::json::LIMIT_MARK) || msg.starts_with("recursion limit exceeded") {
            return e;
        }
        // serde_json adds the position again to the outer error.
        let msg = match msg.rsplit_once(" at line ") {
            Some((head, pos)) if pos.split(" column ").all(|n| n.bytes().all(|b| b.is_ascii_digit())) => head,
            _ => &msg,
        };
        <D::Error as serde::de::Error>::custom(format_args!("options.carry: {msg}"))
    })
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

/// Why `options.carry` was not applied (the turn report's
/// `carry_ignored`): the history was fitted as given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CarryIgnored {
    /// `not_found`: the history does not hold the run at `index` (another
    /// conversation, an edited or stale history); `protected`: the run
    /// holds a message the policy always keeps.
    pub reason: CarryIgnoredReason,
    /// What did not match, in words.
    pub detail: String,
}

/// The reasons of [`CarryIgnored`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum CarryIgnoredReason {
    /// The run is not at the carry's `index` in this history.
    NotFound,
    /// The run would replace a message the policy always keeps.
    Protected,
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

/// What [`apply`] did: the fingerprints of the history to fit, and the
/// carry applied or why it was not.
pub(crate) type Outcome = (Vec<String>, std::result::Result<Applied, Option<CarryIgnored>>);

/// Replaces the run of `c`'s messages that `carry` stands for with its
/// summary message, when the run is at `carry.index` and touches no round
/// `policy` always keeps. `fingerprints`: those of `c`'s messages. Returns
/// the fingerprints of the history to fit (the summary's in place of the
/// run) and where the carry was applied, or why it was not (nothing
/// changes). `InvalidArgument` for a malformed carry or a summary that is
/// not a message of `c`'s format.
pub(crate) fn apply(
    c: &mut Conversation,
    carry: &Carry,
    fingerprints: Vec<String>,
    policy: &Policy,
) -> Result<Outcome> {
    check(carry)?;
    // A malformed summary is refused wherever the run is (the caller's
    // argument, whatever the history).
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
    let n = carry.replaced.len();
    let Some(at) = carry.index else {
        let detail = "the carry records no index (it was made by an earlier turnfit): where its run was cannot be \
                      checked, so it is not applied"
            .to_owned();
        return Ok((fingerprints, Err(Some(CarryIgnored { reason: CarryIgnoredReason::NotFound, detail }))));
    };
    // Anchored: one comparison of the run, however long the history.
    let here = at.checked_add(n).and_then(|end| fingerprints.get(at..end));
    if here != Some(&carry.replaced[..]) {
        let detail = match here {
            None => format!(
                "the carry's {n} messages from index {at} are past the end of the history ({} messages)",
                fingerprints.len()
            ),
            Some(h) => {
                let k = h.iter().zip(&carry.replaced).position(|(a, b)| a != b).unwrap_or(0);
                format!("input message {} is not the carry's message {k} (the run of {n} from index {at})", at + k)
            }
        };
        return Ok((fingerprints, Err(Some(CarryIgnored { reason: CarryIgnoredReason::NotFound, detail }))));
    }
    if let Some((i, why)) = kept_in(c, at..at + n, policy) {
        let detail = format!("input message {i} in the carry's run ({at} to {}) is {why}", at + n - 1);
        return Ok((fingerprints, Err(Some(CarryIgnored { reason: CarryIgnoredReason::Protected, detail }))));
    }
    let mut fitted = Vec::with_capacity(fingerprints.len() + 1 - n);
    fitted.extend_from_slice(&fingerprints[..at]);
    fitted.push(fingerprint(summary.raw()));
    fitted.extend_from_slice(&fingerprints[at + n..]);
    c.messages.splice(at..at + n, [summary]);
    Ok((fitted, Ok(Applied { at: Carried { index: at, messages: n }, fingerprints, carry: carry.clone() })))
}

/// The first message of `run` in a round `policy` keeps whatever the
/// budget, and why: the reasons no budget relaxes (system, task, newest
/// user message, pins, calls awaiting their result). The recent rounds are
/// left out: compaction may relax them, and they age as the history grows.
fn kept_in(c: &Conversation, run: std::ops::Range<usize>, policy: &Policy) -> Option<(usize, &'static str)> {
    use super::manifest::Reason;
    let awaiting: Vec<usize> = (0..c.messages.len())
        .filter(|&i| c.messages[i].tool_calls.iter().any(|t| policy.pending_calls.contains(&t.id)))
        .collect();
    let prot = super::rounds::Protection {
        keep_system: policy.keep_system,
        keep_first: policy.keep_first,
        keep_last_rounds: 0,
        keep_last_turns: 0,
        keep_last_messages: 0,
        pinned: &policy.pinned,
        awaiting: &awaiting,
        summary_label: policy.summary_label.as_deref().unwrap_or(super::summary_message::DEFAULT_LABEL),
    };
    let counts = vec![0; c.messages.len()];
    super::rounds::rounds(c, &counts, &prot).into_iter().find_map(|r| {
        let why = match r.protected? {
            Reason::System => "a system message",
            Reason::Task => "the task (keep_first)",
            Reason::LatestUser => "in the round of the latest user message",
            Reason::Pinned => "pinned",
            Reason::PendingCall => "a call awaiting its result",
            Reason::RecentRound | Reason::RecentTurn | Reason::RecentMessage => return None,
        };
        let i = run.start.max(r.start);
        (i < run.end.min(r.end)).then_some((i, why))
    })
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

    /// Where input message `i` is in the fitted history when it is kept as
    /// itself; `None` for a message of the carried run.
    pub(crate) fn kept_index(&self, i: usize) -> Option<usize> {
        let Carried { index, messages } = self.at;
        (!(index..index + messages).contains(&i)).then(|| self.fitted_index(i))
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
    let index = replaced[0];
    let replaced = replaced.iter().map(|&k| input.get(k).cloned()).collect::<Option<Vec<_>>>()?;
    Some(Carry { replaced, index: Some(index), summary: summary.raw().clone() })
}
