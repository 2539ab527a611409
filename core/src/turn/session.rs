//! A fit session: the history a host fits turn after turn, kept parsed
//! between turns so a turn costs what changed (issue 52).
//!
//! An agent's history grows by a few messages a step, while a stateless
//! [`Turn`] parses, fingerprints and counts all of it every time: the cost
//! of a step grew with the run. A [`FitSession`] keeps the parsed messages,
//! their carry fingerprints and their token counts. The host says what
//! changed ("the first `keep` messages are as last time, then these"), and
//! [`FitSession::start`] runs the same turn as [`Turn::start`] on the whole
//! history, reading and counting only the new messages. The result is the
//! stateless turn's, always (a property test holds the two equal over
//! random histories, edits and budgets): the session only skips work whose
//! result it already has.
//!
//! Messages are parsed one step at a time, so a step's new messages must
//! read the same alone as inside the whole document: the OpenAI Chat and AI
//! SDK formats, where every array element is one message. Other formats
//! (Responses items merge into messages) are refused with `InvalidArgument`
//! on an update; a host sends their full history instead.

use crate::chat::{Conversation, Format};
use crate::window::carry;
use crate::window::{Counted, FitOptions};
use crate::{Error, ModelRegistry, Result};

use super::Turn;

/// What a session keeps of its history.
#[derive(Debug, Clone)]
pub struct FitSession {
    conversation: Conversation,
    fingerprints: Vec<String>,
    counts: Vec<Option<Counted>>,
    /// What the kept counts were counted with (see [`counting_key`]).
    counted_with: Option<String>,
}

/// What one step of a session did, for the host's report and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SessionStep {
    /// Messages kept from the previous step.
    pub kept: usize,
    /// Messages read in this step.
    pub added: usize,
    /// Messages dropped from the end (an edit inside the kept history).
    pub dropped: usize,
}

impl FitSession {
    /// A session on a whole conversation (JSON in any of the six formats;
    /// `format` as [`Conversation::parse`] takes it).
    pub fn new(conversation: &str, format: Option<Format>) -> Result<FitSession> {
        let conversation = Conversation::parse(conversation, format)?;
        let fingerprints = conversation.messages.iter().map(|m| carry::fingerprint(m.raw())).collect();
        let counts = vec![None; conversation.messages.len()];
        Ok(FitSession { conversation, fingerprints, counts, counted_with: None })
    }

    /// The messages the session holds.
    pub fn len(&self) -> usize {
        self.conversation.messages.len()
    }

    /// Whether the session holds no message.
    pub fn is_empty(&self) -> bool {
        self.conversation.messages.is_empty()
    }

    /// The format the session reads and writes.
    pub fn format(&self) -> Format {
        self.conversation.format
    }

    /// Keeps the first `keep` messages and appends `new_messages` (a JSON
    /// array of messages in the session's format): only they are read.
    /// `keep` past the held messages is `InvalidArgument`, as is an update
    /// of a format whose array elements are not one message each. On an
    /// error the session is unchanged.
    pub fn update(&mut self, keep: usize, new_messages: &str) -> Result<SessionStep> {
        let held = self.len();
        if keep > held {
            return Err(Error::invalid_argument(format!(
                "keep {keep} is more than the {held} messages the session holds"
            )));
        }
        let format = self.conversation.format;
        if !matches!(format, Format::OpenAi | Format::AiSdk) {
            return Err(Error::invalid_argument(format!(
                "a fit session updates {format:?} histories only whole (new messages may join earlier ones): \
                 start a new session on the full history"
            )));
        }
        let added = Conversation::parse(new_messages, Some(format))?;
        if added.system.is_some() || !added.tools.is_empty() {
            return Err(Error::invalid_argument(
                "new_messages: a session update is a JSON array of messages (no system or tools)",
            ));
        }
        let total = keep + added.messages.len();
        if total > crate::limits::MAX_MESSAGES {
            return Err(Error::new(
                crate::ErrorKind::LimitExceeded,
                format!(
                    "the session would hold {total} messages; the limit is {} (MAX_MESSAGES)",
                    crate::limits::MAX_MESSAGES
                ),
            ));
        }
        let n = added.messages.len();
        self.conversation.messages.truncate(keep);
        self.fingerprints.truncate(keep);
        self.counts.truncate(keep);
        for m in added.messages {
            self.fingerprints.push(carry::fingerprint(m.raw()));
            self.conversation.messages.push(m);
            self.counts.push(None);
        }
        Ok(SessionStep { kept: keep, added: n, dropped: held - keep })
    }

    /// Starts this step's turn: the same turn as [`Turn::start`] on the
    /// held history (carry, summarizer and all), with the kept counts.
    /// Options that change how messages count (model, encoding, API,
    /// characters per token, a custom model's figures) drop the kept
    /// counts; a host counter registered in `registry` after a session
    /// started is the host's to announce by starting a new session.
    pub fn start(&mut self, registry: &ModelRegistry, options: &FitOptions) -> Result<Turn> {
        if let Some(f) = options.format {
            if f != self.conversation.format {
                return Err(Error::invalid_argument(format!(
                    "options.format {f:?} is not the session's {:?}",
                    self.conversation.format
                )));
            }
        }
        let key = counting_key(options);
        if self.counted_with.as_deref() != Some(key.as_str()) {
            self.counts.iter_mut().for_each(|k| *k = None);
        }
        // On an error the counts may be partial: count afresh next time.
        self.counted_with = None;
        let t = Turn::start_parsed(
            registry,
            self.conversation.clone(),
            self.fingerprints.clone(),
            options,
            Some(&mut self.counts),
        )?;
        self.counted_with = Some(key);
        Ok(t)
    }
}

/// The options a message's count depends on, as one string.
fn counting_key(o: &FitOptions) -> String {
    format!(
        "{:?}|{:?}|{:?}|{:?}|{:?}|{:?}",
        o.model, o.encoding, o.api, o.chars_per_token, o.context_window, o.max_output_tokens
    )
}

#[cfg(test)]
mod tests;
