//! Documented input limits, checked before any allocation proportional to the
//! input. Exceeding one is [`crate::ErrorKind::LimitExceeded`], never an abort.
//!
//! The numbers are generous for agent workloads (a 64 MiB string is roughly
//! 16 million tokens, over ten times the largest context window shipped in the
//! model registry) while keeping a hostile caller from making turnfit allocate
//! without bound.

use crate::{Error, ErrorKind, Result};

/// Largest text, in bytes, accepted by tokenizer operations.
pub const MAX_TEXT_BYTES: usize = 64 * 1024 * 1024;

/// Largest tokenizer file, in bytes, that [`crate::pipeline::FileTokenizer`]
/// loads. The largest vocabularies shipped as `tokenizer.json` (Gemma 3's
/// 262k tokens) are about 33 MB; loading holds a few times the file's size.
pub const MAX_TOKENIZER_FILE_BYTES: usize = 256 * 1024 * 1024;

/// Largest JSON document, in bytes, accepted by any JSON entry point.
pub const MAX_JSON_BYTES: usize = 64 * 1024 * 1024;

/// Deepest JSON nesting accepted: arrays and objects may nest 127 levels;
/// the 128th is `LimitExceeded`. This is serde_json's own recursion guard
/// (a budget of 128 that refuses the level that would use it up), so the
/// parser never recurses deeper than that, whatever the input. Documented
/// as 128 until the at-the-limit test showed the guard's true bound.
pub const MAX_JSON_DEPTH: usize = 127;

/// Most messages in one conversation (a parsed document, or a window after
/// a push). The largest context window in the model registry is 2 Mi
/// tokens; 100,000 messages fill it at 21 tokens a message, below a typical
/// message with its framing, so no longer history could be sent to any
/// shipped model. The codecs count while reading the JSON and stop at one
/// past the limit, so a million-message document costs what 100,001
/// messages cost to read, not a million.
pub const MAX_MESSAGES: usize = 100_000;

/// Largest context window, reserved output, `max_tokens` or compaction
/// target accepted in a budget, in tokens (2^32 - 1: about 2,000 times the
/// largest window in the model registry, and small enough that every sum a
/// report makes of these figures fits a `u64` and an `i64` without wrapping).
/// Larger is `InvalidArgument` naming this limit.
pub const MAX_BUDGET_TOKENS: usize = u32::MAX as usize;

/// Largest synthetic tool-result text a repair inserts, in bytes of JSON:
/// the text as written, escapes included (a control character is six
/// bytes, `\u0001`). The text is a short note for the model ("the call
/// was interrupted"), not a result.
pub const MAX_SYNTHETIC_RESULT_BYTES: usize = 64 * 1024;

/// Most bytes of synthetic results one repair may add in total (the text's
/// JSON size, escapes included, times the unanswered calls), so a repair
/// can never amplify a conversation past what the window accepts back. The
/// repaired document as a whole is also held to [`MAX_JSON_BYTES`].
pub const MAX_SYNTHETIC_TOTAL_BYTES: usize = 16 * 1024 * 1024;

/// Most bytes of any caller input (a name, a key, a field) echoed into an
/// error message; longer input is cut (see `text::clip`).
pub const MAX_ECHO_BYTES: usize = 256;

/// Longest model name, encoding name, skill name or other identifier
/// accepted, in bytes. Longer is `InvalidArgument` before any lookup, so a
/// 4 MiB name costs nothing (it used to take seconds of close-match search).
pub const MAX_NAME_BYTES: usize = 256;

/// Largest number of token ids accepted by decode.
pub const MAX_DECODE_TOKENS: usize = MAX_TEXT_BYTES;

/// Largest skill file (`SKILL.md` or `<name>.md`), in bytes. Skills are
/// prompt text read into a model's context; a megabyte is far past any real
/// one (roughly 250,000 tokens) and keeps a hostile tree from making
/// discovery or a lazy body load read without bound. Checked on the opened
/// file's size before reading, and again while reading.
pub const MAX_SKILL_FILE_BYTES: usize = 1024 * 1024;

/// Largest YAML front-matter block, in bytes (between the `---` lines).
/// Discovery reads only this much of each file, so listing a folder never
/// reads bodies.
pub const MAX_FRONTMATTER_BYTES: usize = 64 * 1024;

/// Deepest YAML nesting in front-matter (mappings plus sequences). Real
/// front-matter is two levels (`metadata: {key: value}`).
pub const MAX_FRONTMATTER_DEPTH: usize = 8;

/// Most YAML nodes (scalars, mappings, sequences) in one front-matter block.
pub const MAX_FRONTMATTER_NODES: usize = 1024;

/// Most alias (`*name`) uses in one front-matter block; with the replay cap
/// below this rules out "billion laughs" expansion.
pub const MAX_FRONTMATTER_ALIASES: usize = 16;

/// Most events replayed from aliases in one front-matter block.
pub const MAX_FRONTMATTER_ALIAS_EVENTS: usize = 1024;

/// Most entries considered in one skills folder (skill folders, `.md` files
/// and anything else found at its top level).
pub const MAX_SKILLS_PER_FOLDER: usize = 1024;

/// Most strings in one special-token set (`allowed_special` or
/// `disallowed_special`); o200k_harmony, the largest encoding's list, has
/// 1,091 special tokens.
pub const MAX_SPECIAL_SET: usize = 4096;

/// Largest handoff document, in bytes. A handoff is a summary passed between
/// agents, not a transcript; a mebibyte leaves room for large key outputs.
pub const MAX_HANDOFF_BYTES: usize = 1024 * 1024;

/// Fails with `LimitExceeded` when `len` is over `limit`; `what` names the input.
/// Crate-private so `limits` stays constants only; front ends reach it as
/// `frontend::check_bytes`.
pub(crate) fn check(what: &str, len: usize, limit: usize) -> Result<()> {
    if len > limit {
        return Err(Error::new(ErrorKind::LimitExceeded, format!("{what} is {len} bytes; the limit is {limit}")));
    }
    Ok(())
}

/// Like [`check`] for counts of items rather than bytes.
pub(crate) fn check_items(what: &str, n: usize, limit: usize) -> Result<()> {
    if n > limit {
        return Err(Error::new(ErrorKind::LimitExceeded, format!("{what} has {n} items; the limit is {limit}")));
    }
    Ok(())
}

/// Longest agent name accepted by a call stack, in bytes.
pub const MAX_AGENT_NAME_BYTES: usize = 256;

/// Largest maximum depth a call stack may be configured with. Far beyond any
/// sane delegation chain; it bounds what a stored stack's JSON can make
/// turnfit rebuild.
pub const MAX_CALLSTACK_DEPTH: usize = 1_000_000;

/// Most circuit-breaker keys one breaker tracks (each key costs a few dozen
/// bytes; a key per provider/model/tool is the expected use).
pub const MAX_BREAKER_KEYS: usize = 10_000;

/// Longest breaker key, tool name or agent/workflow id in a trace, in bytes.
pub const MAX_KEY_BYTES: usize = 256;

/// Largest ring of recent spans a tracer may keep.
pub const MAX_TRACE_RING: usize = 1_000_000;

/// Most distinct tool names a tracer keeps metrics for (each costs one
/// fixed-size histogram, under 8 KiB).
pub const MAX_TRACE_TOOLS: usize = 1024;

/// Most spans a tracer keeps open (started, not yet ended) at once.
pub const MAX_OPEN_SPANS: usize = 100_000;

/// Error text kept per span record, in bytes; longer text is cut at a
/// character boundary and marked with an ellipsis.
pub const MAX_SPAN_ERROR_BYTES: usize = 4096;

/// Largest `excerpt_bytes` a tracer may be configured with: the bytes of a
/// span's input and of its output kept on its record.
pub const MAX_SPAN_EXCERPT_BYTES: usize = 16 * 1024;

/// Most bytes of excerpts a tracer's ring may hold in all
/// (`ring_size` x 2 x `excerpt_bytes`); a configuration over it is refused.
pub const MAX_TRACE_EXCERPT_BYTES: usize = 1 << 30;

/// Most tool definitions in a tool registry.
pub const MAX_TOOLS: usize = 4096;

/// Most agents with an allowlist in a tool registry.
pub const MAX_TOOLSET_AGENTS: usize = 4096;
