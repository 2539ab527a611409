//! The summarized span read as rounds: what the assistant said it would do,
//! each call with its outcome, and the user's requests. Works on the neutral
//! message model, so OpenAI `tool` messages and Anthropic `tool_result`
//! blocks pair the same way (by call id, anywhere in the span).

use rustc_hash::FxHashMap;

use super::calls::{self, CallView};
use super::outcome::{classify, shorten, Outcome};
use crate::chat::{Message, Part, Role};

/// One call in the span.
#[derive(Debug, Clone)]
pub struct Call {
    /// The round it belongs to (0-based within the span).
    pub round: usize,
    /// Tool name.
    pub name: String,
    /// Arguments, read.
    pub view: CallView,
    /// What its result says; None when the span holds no result for it.
    pub outcome: Option<Outcome>,
}

/// One round: an assistant message with its results, or a lone message.
#[derive(Debug, Clone, Default)]
pub struct Round {
    /// The assistant's first sentence, if it said anything.
    pub intent: Option<String>,
    /// Indices into [`Analysis::calls`].
    pub calls: Vec<usize>,
    /// Whether an assistant message is in the round.
    pub assistant: bool,
}

/// A user request made inside the span.
#[derive(Debug, Clone)]
pub struct Request {
    /// The round it opens.
    pub round: usize,
    /// Its text, whitespace-normalized (cut later if long).
    pub text: String,
}

/// The span, read.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    /// Messages in the span.
    pub messages: usize,
    /// Rounds, oldest first.
    pub rounds: Vec<Round>,
    /// Every call, oldest first.
    pub calls: Vec<Call>,
    /// User requests, oldest first.
    pub requests: Vec<Request>,
    /// Texts facts are looked for in, tagged with their round: decoded call
    /// arguments, result texts and user requests.
    pub sources: Vec<(usize, String)>,
}

/// Labels agents put before their reasoning, skipped when looking for the
/// stated intent.
const LABELS: &[&str] = &["discussion", "thought", "thoughts", "reasoning", "analysis", "plan"];

/// The first sentence of what the assistant said.
pub fn intent(text: &str) -> Option<String> {
    let mut t = text.trim_start();
    loop {
        let first_line = t.lines().next().unwrap_or("").trim();
        let label = first_line.trim_end_matches(':').trim().to_ascii_lowercase();
        if !first_line.is_empty() && LABELS.contains(&label.as_str()) {
            t = t[t.find('\n').map_or(t.len(), |i| i + 1)..].trim_start();
            continue;
        }
        for l in LABELS {
            if label.starts_with(l) && first_line.len() > l.len() && first_line.as_bytes()[l.len()] == b':' {
                t = t[l.len() + 1..].trim_start();
            }
        }
        break;
    }
    let sentence_end = |t: &str| {
        t.char_indices()
            .find(|&(i, c)| {
                c == '\n' || (matches!(c, '.' | '?' | '!') && t[i + c.len_utf8()..].starts_with(char::is_whitespace))
            })
            .map_or(t.len(), |(i, c)| if c == '\n' { i } else { i + 1 })
    };
    let mut end = sentence_end(t);
    // "Good!", "Excellent." say nothing about intent: take the next sentence.
    while t[..end].split_whitespace().count() <= 2 && end < t.len() {
        let rest = t[end..].trim_start();
        if rest.is_empty() {
            break;
        }
        t = rest;
        end = sentence_end(t);
    }
    let s = shorten(&t[..end], 160);
    (!s.is_empty()).then_some(s)
}

fn user_text(m: &Message) -> String {
    let texts: Vec<&str> = m
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    texts.join("\n")
}

/// Reads `messages`, split into rounds at `starts` (indices into
/// `messages`; 0 is implied).
pub fn analyze(messages: &[Message], starts: &[usize]) -> Analysis {
    let mut a = Analysis { messages: messages.len(), ..Analysis::default() };
    let mut bounds: Vec<usize> = starts.iter().copied().filter(|&s| s < messages.len()).collect();
    bounds.push(0);
    bounds.sort_unstable();
    bounds.dedup();
    // Call id -> the call waiting for its result (a reused id pairs with the
    // latest call that has none yet).
    let mut open: FxHashMap<String, Vec<usize>> = FxHashMap::default();
    for (r, &start) in bounds.iter().enumerate() {
        let end = bounds.get(r + 1).copied().unwrap_or(messages.len());
        let mut round = Round::default();
        for m in &messages[start..end] {
            match m.role {
                Role::Assistant => {
                    round.assistant = true;
                    if round.intent.is_none() {
                        round.intent = m.parts.iter().find_map(|p| match p {
                            Part::Text(t) => intent(t),
                            _ => None,
                        });
                    }
                    for c in &m.tool_calls {
                        let view = calls::view(&c.name, &c.arguments);
                        for s in &view.strings {
                            a.sources.push((r, s.clone()));
                        }
                        open.entry(c.id.clone()).or_default().push(a.calls.len());
                        round.calls.push(a.calls.len());
                        a.calls.push(Call { round: r, name: c.name.clone(), view, outcome: None });
                    }
                }
                // An AI SDK `tool` message: one result per part.
                Role::Tool
                    if m.tool_call_id.is_none() && m.parts.iter().any(|p| matches!(p, Part::ToolResult { .. })) =>
                {
                    for p in &m.parts {
                        if let Part::ToolResult { id, text, is_error } = p {
                            settle(&mut a, &mut open, id, classify(text, *is_error));
                            a.sources.push((r, text.clone()));
                        }
                    }
                }
                Role::Tool | Role::Function => {
                    let text = m.text();
                    let id = m.tool_call_id.clone().unwrap_or_default();
                    settle(&mut a, &mut open, &id, classify(&text, false));
                    a.sources.push((r, text));
                }
                Role::User => {
                    for p in &m.parts {
                        if let Part::ToolResult { id, text, is_error } = p {
                            settle(&mut a, &mut open, id, classify(text, *is_error));
                            a.sources.push((r, text.clone()));
                        }
                    }
                    let text = user_text(m);
                    if !text.trim().is_empty() {
                        // What the user wrote is grounded too (the assistant's
                        // prose is not: it may name files that do not exist).
                        a.sources.push((r, text.clone()));
                        a.requests
                            .push(Request { round: r, text: text.split_whitespace().collect::<Vec<_>>().join(" ") });
                    }
                }
                Role::System | Role::Developer => {}
            }
        }
        a.rounds.push(round);
    }
    a
}

fn settle(a: &mut Analysis, open: &mut FxHashMap<String, Vec<usize>>, id: &str, outcome: Outcome) {
    if let Some(k) = open.get_mut(id).and_then(|v| if v.is_empty() { None } else { Some(v.remove(0)) }) {
        a.calls[k].outcome = Some(outcome);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intents() {
        assert_eq!(intent("I'll open the file. Then edit it.").as_deref(), Some("I'll open the file."));
        assert_eq!(intent("DISCUSSION\nLet me run it.\n```\nls\n```").as_deref(), Some("Let me run it."));
        assert_eq!(intent("Thought: check card.py first. ok").as_deref(), Some("check card.py first."));
        assert_eq!(intent("Version 1.5 is out").as_deref(), Some("Version 1.5 is out"));
        assert_eq!(intent("   "), None);
        assert_eq!(intent("Excellent! Now run the tests.").as_deref(), Some("Now run the tests."));
        assert_eq!(intent("Done.").as_deref(), Some("Done."));
    }
}
