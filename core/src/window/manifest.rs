//! The change manifest every window operation returns: what was done to
//! which message (repair, truncation, masking, dropping, summarizing), and
//! what compaction kept on purpose. Its own file so repair, the tool-output
//! edits and compaction share it without depending on one another.

use serde::Serialize;

// The kind of a `Change` (its `action` field). Named for what it classifies
// so it does not share a name with `recovery::Action`; the schema keeps the
// definition name `Action` and this doc's first sentence as its description
// (both are part of schemas/), so the published shapes are unchanged.
/// What a repair or a compaction did to one message or block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(rename = "Action"))]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// A tool result was removed.
    DroppedResult,
    /// A synthetic tool result was inserted.
    SynthesizedResult,
    /// A tool result was moved next to its call.
    MovedResult,
    /// A message was removed (left empty by repair, or dropped by compaction).
    DroppedMessage,
    /// A tool result's content was cut to a token or byte budget.
    TruncatedResult,
    /// A tool result's content was replaced by a placeholder.
    ClearedResult,
    /// An older tool result was masked by compaction (observation masking):
    /// its content replaced by a placeholder naming the tool and its size.
    MaskedResult,
    /// A message was replaced by a summary.
    Summarized,
    /// The summary that replaced earlier messages was inserted.
    InsertedSummary,
    /// A message was joined to the one before it, of the same role: the
    /// model's chat template requires user and assistant turns to
    /// alternate, and compaction had left two in a row.
    MergedMessage,
}

/// One entry of a manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Change {
    /// What was done.
    pub action: ChangeKind,
    /// Index in the input conversation of the message concerned (for a
    /// synthesized result: the message holding the call).
    pub index: usize,
    /// Tool-call id, when the change concerns one.
    pub id: Option<String>,
    /// Tokens of the removed, moved or inserted content (for truncation,
    /// clearing and masking: the tokens taken out).
    pub tokens: usize,
    /// A sentence for humans.
    pub detail: String,
}

/// Why compaction kept a message whatever the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// A system or developer message.
    System,
    /// One of the first `keep_first` user messages (the task).
    Task,
    /// The latest user message.
    LatestUser,
    /// A message the caller pinned.
    Pinned,
    /// A tool call awaiting its result (`pending_calls`).
    PendingCall,
    /// One of the newest `keep_last_rounds` rounds.
    RecentRound,
    /// Inside the newest `keep_last_turns` user turns.
    RecentTurn,
    /// Among the newest `keep_last_messages` messages (rounded out to whole rounds).
    RecentMessage,
}

/// One protected round in a compaction report: the messages compaction
/// kept whatever the budget, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Protected {
    /// The first reason that applies (in [`Reason`] order).
    pub reason: Reason,
    /// Input indices of the round's messages (empty entries for messages
    /// repair made are left out).
    pub messages: Vec<usize>,
    /// Their tokens, after any truncation of tool outputs.
    pub tokens: usize,
}

/// What a compaction could not do as asked, and why. A target is a goal
/// and the limit is the wall: when the target cannot be reached (or the
/// summarize strategy has no room for a summary) but the turn fits the
/// limit, the turn fits the limit and this says what was given up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Shortfall {
    /// Which goal was given up.
    pub reason: ShortfallReason,
    /// A sentence for humans, with the figures.
    pub detail: String,
}

/// Why a compaction fell short of its target or strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ShortfallReason {
    /// What is kept whatever the budget (framing, tools, the system prompt,
    /// the task, the latest user message, pins, the newest rounds) takes
    /// more than the target: the result is over the target, within the
    /// limit.
    ProtectedOverTarget,
    /// The smallest summary did not fit beside what is kept within the
    /// target: it took its room beyond the target, within the limit.
    SummaryOverTarget,
    /// Not even the smallest summary fits beside what is kept within the
    /// limit: this compaction dropped rounds (recency) instead of
    /// summarizing them.
    NoRoomForSummary,
}
