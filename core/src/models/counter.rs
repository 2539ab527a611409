//! How text is counted for a model (issue 34): by default with the model's
//! encoding, which is exact for OpenAI's models and a stated estimate for
//! the others; or by a characters-per-token rule, the estimate a ported
//! host's thresholds were tuned on (seed 002: 4 characters a token); or by
//! the host's own counter, registered with a model whose tokenizer is not
//! public (seed 000's `token_counter`).
//!
//! Only text goes through the counter: the framing around it (per message,
//! per name, reply priming, tool-definition constants) stays the model's.
//! Cuts (tool outputs, the summary, truncation) are still made in the
//! model's encoding and then counted with the counter, so a cut may be
//! repeated or a round dropped where the counts disagree; the limit holds
//! either way, as every result is re-counted.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use crate::{Error, ErrorKind, Result, Tokenizer};

/// Most characters per token a `chars_per_token` estimate may take (and
/// the fewest is its inverse): beyond that a count is no longer a count.
pub const MAX_CHARS_PER_TOKEN: f64 = 1000.0;

/// Tokens a host count may exceed the text's bytes by (special tokens a
/// host tokenizer adds, such as a beginning-of-sequence token).
pub const HOST_COUNT_SLACK: usize = 64;

/// The host's counting function: text in, tokens out, or a message saying
/// why not (the front end's conversion of a thrown exception).
pub type HostCountFn = dyn Fn(&str) -> std::result::Result<usize, String> + Send + Sync;

/// A host's own counter, registered with a model
/// ([`crate::ModelRegistry::register_with_counter`]).
#[derive(Clone)]
pub struct HostCounter {
    model: String,
    f: Arc<HostCountFn>,
}

impl std::fmt::Debug for HostCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostCounter").field("model", &self.model).finish_non_exhaustive()
    }
}

impl PartialEq for HostCounter {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.f, &other.f)
    }
}

thread_local! {
    /// Set while a host counter runs on this thread.
    static IN_HOST_COUNTER: Cell<bool> = const { Cell::new(false) };
}

/// Whether a host counter is running on this thread: a front end refuses
/// any call into turnfit made from inside one (see [`check_not_counting`]).
pub fn in_host_counter() -> bool {
    IN_HOST_COUNTER.with(Cell::get)
}

/// `InvalidArgument` when called from inside a host counter, naming `what`:
/// a counter runs while turnfit holds the window or turn it counts for, so
/// a call back into turnfit could wait on that lock forever. Front ends
/// call this on entry; the core's own counter calls check it too.
pub fn check_not_counting(what: &str) -> Result<()> {
    if in_host_counter() {
        return Err(Error::invalid_argument(format!(
            "{what} was called from inside a host counter; a counter must not call back into turnfit (it runs while \
             turnfit holds what it counts for)"
        )));
    }
    Ok(())
}

/// Clears the flag when the counter returns or unwinds.
struct Running;

impl Drop for Running {
    fn drop(&mut self) {
        IN_HOST_COUNTER.with(|c| c.set(false));
    }
}

impl HostCounter {
    /// A counter for `model` calling `f`.
    pub fn new(model: &str, f: impl Fn(&str) -> std::result::Result<usize, String> + Send + Sync + 'static) -> Self {
        HostCounter { model: model.to_ascii_lowercase(), f: Arc::new(f) }
    }

    /// The model it was registered for.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Calls the host: a failure (`Err`) or a re-entered counter is
    /// `InvalidArgument` naming the model, a panic `Internal`; a count
    /// above the text's bytes plus [`HOST_COUNT_SLACK`] is refused too (a
    /// tokenizer makes at most one token a byte, plus a few special ones,
    /// so it is a bug in the counter, and it could overflow the sums a
    /// report makes).
    pub fn count(&self, text: &str) -> Result<usize> {
        if in_host_counter() {
            return Err(Error::invalid_argument(format!(
                "the host counter for '{}' re-entered turnfit's counting",
                self.model
            )));
        }
        IN_HOST_COUNTER.with(|c| c.set(true));
        let running = Running;
        let r = catch_unwind(AssertUnwindSafe(|| (self.f)(text)));
        drop(running);
        match r {
            Ok(Ok(n)) if n <= text.len() + HOST_COUNT_SLACK => Ok(n),
            Ok(Ok(n)) => Err(Error::invalid_argument(format!(
                "the host counter for '{}' returned {n} tokens for {} bytes of text; a count is at most the bytes plus {HOST_COUNT_SLACK}",
                self.model,
                text.len()
            ))),
            Ok(Err(why)) => Err(Error::invalid_argument(format!("the host counter for '{}' failed: {why}", self.model))),
            Err(_) => Err(Error::new(ErrorKind::Internal, format!("the host counter for '{}' panicked", self.model))),
        }
    }
}

/// How an accountant counts text.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Counter {
    /// The model's encoding (exact for OpenAI's models).
    #[default]
    Encoding,
    /// Characters (Unicode scalar values) divided by this, rounded down:
    /// seed 002's `len(text) // 4` with 4.
    Chars(f64),
    /// The host's own counter.
    Host(HostCounter),
}

impl Counter {
    /// The characters-per-token estimate, checked: finite, between
    /// `1 / MAX_CHARS_PER_TOKEN` and [`MAX_CHARS_PER_TOKEN`].
    pub fn chars(per_token: f64) -> Result<Counter> {
        if !per_token.is_finite() || !(1.0 / MAX_CHARS_PER_TOKEN..=MAX_CHARS_PER_TOKEN).contains(&per_token) {
            return Err(Error::invalid_argument(format!(
                "chars_per_token {per_token} is not between {} and {MAX_CHARS_PER_TOKEN}",
                1.0 / MAX_CHARS_PER_TOKEN
            )));
        }
        Ok(Counter::Chars(per_token))
    }

    /// Tokens of `text`; `tok` is the model's encoding.
    pub fn count(&self, tok: &Tokenizer, text: &str) -> Result<usize> {
        match self {
            Counter::Encoding => tok.count(text),
            Counter::Chars(per) => {
                crate::limits::check("text", text.len(), crate::limits::MAX_TEXT_BYTES)?;
                Ok((text.chars().count() as f64 / per).floor() as usize)
            }
            Counter::Host(h) => {
                crate::limits::check("text", text.len(), crate::limits::MAX_TEXT_BYTES)?;
                h.count(text)
            }
        }
    }

    /// Whether counts are the model's encoding's (the only ones that can be
    /// exact without the host's word).
    pub fn is_encoding(&self) -> bool {
        matches!(self, Counter::Encoding)
    }
}
