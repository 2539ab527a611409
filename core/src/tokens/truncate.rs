//! Truncation to a token budget that always cuts on token and UTF-8
//! boundaries and whose result, re-counted, fits the budget.
//!
//! Re-counting matters: BPE is not prefix-stable (cutting a piece changes how
//! the pre-tokenizer and the merges see its end), so "the first N ids,
//! decoded" can re-encode to more than N tokens. Each candidate is counted
//! again and shrunk by the excess until it fits; in practice the first
//! candidate almost always does.

use super::Tokenizer;
use crate::{Error, Result};

/// Which part of the text [`Tokenizer::truncate`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum TruncateSide {
    /// Keep the beginning.
    #[default]
    Head,
    /// Keep the end.
    Tail,
    /// Keep both ends with a marker between them saying how much was removed.
    Both,
}

/// The marker used by [`TruncateSide::Both`] when the caller gives none.
/// `{removed}` is replaced with the number of tokens taken out.
pub const DEFAULT_MARKER: &str = "\n[... {removed} tokens truncated ...]\n";

/// The outcome of a truncation; nothing is cut without being reported.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Truncation {
    /// The resulting text.
    pub text: String,
    /// Tokens in `text`, counted again (marker included).
    pub tokens: usize,
    /// Tokens in the input.
    pub original_tokens: usize,
    /// Tokens of the input that are not in `text`.
    pub removed_tokens: usize,
    /// Whether anything was removed.
    pub truncated: bool,
}

impl Tokenizer {
    /// Shortens `text` to at most `max_tokens` tokens, keeping `side`.
    ///
    /// For [`TruncateSide::Both`], `marker` is a template in which
    /// `{removed}` becomes the number of removed tokens ([`DEFAULT_MARKER`]
    /// when `None`); the marker's own tokens count against the budget, and a
    /// budget too small to hold it is an `InvalidArgument` error.
    pub fn truncate(
        &self,
        text: &str,
        max_tokens: usize,
        side: TruncateSide,
        marker: Option<&str>,
    ) -> Result<Truncation> {
        let ids = self.encode(text)?;
        let n = ids.len();
        if n <= max_tokens {
            return Ok(Truncation {
                text: text.to_owned(),
                tokens: n,
                original_tokens: n,
                removed_tokens: 0,
                truncated: false,
            });
        }
        let mut prefix = Vec::with_capacity(n + 1);
        prefix.push(0usize);
        for len in self.token_lengths(&ids) {
            prefix.push(prefix.last().copied().unwrap_or(0) + len);
        }
        let cut = Cuts { text, prefix: &prefix };
        let (out, tokens, kept) = match side {
            TruncateSide::Head => self.keep_head(&cut, max_tokens)?,
            TruncateSide::Tail => self.keep_tail(&cut, max_tokens)?,
            TruncateSide::Both => self.keep_both(&cut, max_tokens, marker.unwrap_or(DEFAULT_MARKER))?,
        };
        Ok(Truncation { text: out, tokens, original_tokens: n, removed_tokens: n - kept, truncated: true })
    }

    fn keep_head(&self, cut: &Cuts<'_>, max: usize) -> Result<(String, usize, usize)> {
        let mut k = max;
        loop {
            k = cut.boundary_at_or_before(k);
            let candidate = &cut.text[..cut.prefix[k]];
            let c = self.count(candidate)?;
            if c <= max {
                return Ok((candidate.to_owned(), c, k));
            }
            k -= (c - max).min(k).max(1);
        }
    }

    fn keep_tail(&self, cut: &Cuts<'_>, max: usize) -> Result<(String, usize, usize)> {
        let n = cut.tokens();
        let mut s = n - max;
        loop {
            s = cut.boundary_at_or_after(s);
            let candidate = &cut.text[cut.prefix[s]..];
            let c = self.count(candidate)?;
            if c <= max {
                return Ok((candidate.to_owned(), c, n - s));
            }
            s += (c - max).min(n - s).max(1);
        }
    }

    fn keep_both(&self, cut: &Cuts<'_>, max: usize, template: &str) -> Result<(String, usize, usize)> {
        let n = cut.tokens();
        let render = |removed: usize| template.replace("{removed}", &removed.to_string());
        let marker_tokens = self.count(&render(n))?;
        if marker_tokens >= max {
            return Err(Error::invalid_argument(format!(
                "max_tokens {max} leaves no room for the truncation marker ({marker_tokens} tokens)"
            )));
        }
        let avail = max - marker_tokens;
        let (mut h, mut t) = (avail - avail / 2, avail / 2);
        loop {
            let hk = cut.boundary_at_or_before(h);
            let ts = cut.boundary_at_or_after(n - t).max(hk);
            let removed = ts - hk;
            let mut out = String::with_capacity(cut.prefix[hk] + template.len() + cut.text.len() - cut.prefix[ts]);
            out.push_str(&cut.text[..cut.prefix[hk]]);
            out.push_str(&render(removed));
            out.push_str(&cut.text[cut.prefix[ts]..]);
            let c = self.count(&out)?;
            if c <= max {
                return Ok((out, c, n - removed));
            }
            if h + t == 0 {
                return Err(Error::invalid_argument(format!(
                    "max_tokens {max} leaves no room for the truncation marker ({c} tokens)"
                )));
            }
            for _ in 0..(c - max).max(1) {
                if h >= t && h > 0 {
                    h -= 1;
                } else {
                    t = t.saturating_sub(1);
                }
            }
        }
    }
}

/// Token boundaries of one encoded text, as byte offsets.
struct Cuts<'a> {
    text: &'a str,
    /// `prefix[k]` is the byte length of the first `k` tokens.
    prefix: &'a [usize],
}

impl Cuts<'_> {
    fn tokens(&self) -> usize {
        self.prefix.len() - 1
    }

    /// The largest `j <= k` whose token boundary is also a character boundary.
    fn boundary_at_or_before(&self, mut k: usize) -> usize {
        while k > 0 && !self.text.is_char_boundary(self.prefix[k]) {
            k -= 1;
        }
        k
    }

    /// The smallest `j >= k` whose token boundary is also a character boundary.
    fn boundary_at_or_after(&self, mut k: usize) -> usize {
        let n = self.tokens();
        while k < n && !self.text.is_char_boundary(self.prefix[k]) {
            k += 1;
        }
        k
    }
}
