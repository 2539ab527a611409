//! The counting engine behind [`crate::Tokenizer`]: hand-written
//! pre-tokenization (`pretokenize.rs`) followed by a whole-piece lookup and,
//! for the minority of pieces that are not one token, byte-pair merging
//! (`bpe.rs`). One lazily built instance per encoding is shared by every
//! thread of the process; the hot path takes no lock.
//!
//! This module is the only place that knows how tokens are produced; the
//! public API in `tokens/mod.rs` depends on nothing here but `Engine`'s
//! methods, so a faster engine can replace this one without touching callers.

use std::cell::RefCell;
use std::sync::OnceLock;

use super::backtrack::{self, Tables};
use super::bpe::{self, Scratch};
use super::encoding::Encoding;
use super::pretokenize::{self, Pattern, Sink};
use super::vocab::Vocab;
use crate::{Error, Result};

pub(crate) struct Engine {
    pub(crate) encoding: Encoding,
    pub(crate) vocab: Vocab,
    pattern: Pattern,
    special: &'static [(&'static str, u32)],
    /// Tables of the linear-time encoder for long pieces, built on the
    /// first one (see `backtrack.rs`).
    backtrack: OnceLock<Tables>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Runs `f` with this thread's scratch buffers, or with fresh ones when the
/// thread-local is unavailable: during thread teardown (a host calling ctxkit
/// from a pthread key destructor, after Rust's TLS is destroyed) or when
/// re-entered. Correctness never depends on the cache; only speed does.
fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    let mut f = Some(f);
    let cached = SCRATCH.try_with(|cell| match cell.try_borrow_mut() {
        Ok(mut scratch) => f.take().map(|f| f(&mut scratch)),
        Err(_) => None,
    });
    match (cached, f) {
        (Ok(Some(r)), _) => r,
        (_, Some(f)) => f(&mut Scratch::default()),
        // `f` was taken, so the cached call ran and returned Some.
        (_, None) => unreachable!("scratch closure consumed without a result"),
    }
}

static ENGINES: [OnceLock<std::result::Result<Engine, Error>>; 4] =
    [OnceLock::new(), OnceLock::new(), OnceLock::new(), OnceLock::new()];

impl Engine {
    /// The process-wide engine for `encoding`, built on first use.
    pub(crate) fn get(encoding: Encoding) -> Result<&'static Engine> {
        let slot = Encoding::ALL.iter().position(|e| *e == encoding).unwrap_or(0);
        ENGINES[slot].get_or_init(|| Engine::build(encoding)).as_ref().map_err(Clone::clone)
    }

    fn build(encoding: Encoding) -> Result<Engine> {
        let vocab = Vocab::load(encoding.vocab_file())?;
        Ok(Engine {
            encoding,
            vocab,
            pattern: encoding.pretokenizer(),
            special: encoding.special_tokens(),
            backtrack: OnceLock::new(),
        })
    }

    /// Splits `text` into ordinary segments and recognized special tokens.
    /// With `recognize == false` the whole text is one ordinary segment.
    fn for_each_segment(
        &self,
        text: &str,
        recognize: bool,
        mut seg: impl FnMut(Segment<'_>) -> Result<bool>,
    ) -> Result<bool> {
        if !recognize {
            return seg(Segment::Text(text));
        }
        let mut rest = text;
        while let Some((at, len, id)) = self.next_special(rest) {
            if at > 0 && !seg(Segment::Text(&rest[..at]))? {
                return Ok(false);
            }
            if !seg(Segment::Special(id))? {
                return Ok(false);
            }
            rest = &rest[at + len..];
        }
        if rest.is_empty() {
            Ok(true)
        } else {
            seg(Segment::Text(rest))
        }
    }

    /// The leftmost special token in `s`: (offset, byte length, id).
    /// Ordinary text is never split anywhere else, because splitting it would
    /// change how the pre-tokenizer sees it.
    fn next_special(&self, s: &str) -> Option<(usize, usize, u32)> {
        let mut from = 0;
        while let Some(p) = s[from..].find("<|") {
            let at = from + p;
            if let Some((t, id)) = self.special.iter().find(|(t, _)| s[at..].starts_with(t)) {
                return Some((at, t.len(), *id));
            }
            from = at + 2;
        }
        None
    }

    /// Appends the token ids of `text` to `out`.
    pub(crate) fn encode(&self, text: &str, recognize: bool, out: &mut Vec<u32>) -> Result<()> {
        with_scratch(|scratch| {
            self.for_each_segment(text, recognize, |seg| match seg {
                Segment::Special(id) => {
                    out.push(id);
                    Ok(true)
                }
                Segment::Text(t) => {
                    // Prose averages over four bytes a token; reserving
                    // that much up front saves most regrowth.
                    out.reserve(t.len() / 4);
                    let mut sink = Encoder { engine: self, s: t.as_bytes(), scratch, out };
                    Ok(pretokenize::for_each_piece(self.pattern, t, &mut sink))
                }
            })
        })?;
        Ok(())
    }

    /// Appends the tokens of a piece that the short-piece lookup did not
    /// find (`missed`: as in [`Self::count_other`]).
    #[inline(never)]
    fn encode_other(&self, s: &[u8], a: usize, b: usize, missed: bool, scratch: &mut Scratch, out: &mut Vec<u32>) {
        if !missed {
            if let Some(r) = self.vocab.rank_at_general(s, a, b) {
                out.push(r);
                return;
            }
        }
        self.with_merged(s, a, b, scratch, |t| out.extend_from_slice(t));
    }

    /// Calls `f` with the tokens of a piece that is not one token: from this
    /// thread's piece cache (one lookup) or by merging, which then fills the
    /// cache for pieces it can hold.
    #[inline]
    fn with_merged<R>(&self, s: &[u8], a: usize, b: usize, scratch: &mut Scratch, f: impl FnOnce(&[u32]) -> R) -> R {
        let enc = self.encoding as u8;
        let piece = &s[a..b];
        if let Some(tokens) = scratch.pieces.get(enc, piece) {
            return f(tokens);
        }
        let mut tokens = std::mem::take(&mut scratch.tokens);
        tokens.clear();
        self.merge(s, a, b, scratch, |r| tokens.push(r));
        scratch.pieces.put(enc, piece, &tokens);
        let r = f(&tokens);
        scratch.tokens = tokens;
        r
    }

    /// Counts tokens in `text`, stopping once the count exceeds `limit`.
    /// Returns the count so far and whether it stopped early.
    pub(crate) fn count(&self, text: &str, recognize: bool, limit: usize) -> Result<(usize, bool)> {
        let mut total = 0usize;
        let finished = with_scratch(|scratch| {
            self.for_each_segment(text, recognize, |seg| match seg {
                Segment::Special(_) => {
                    total += 1;
                    Ok(total <= limit)
                }
                Segment::Text(t) => {
                    let mut sink = Counter { engine: self, s: t.as_bytes(), scratch, limit, total: &mut total };
                    Ok(pretokenize::for_each_piece(self.pattern, t, &mut sink))
                }
            })
        })?;
        Ok((total, !finished))
    }

    /// Adds the tokens of a piece that the short-piece lookup did not find
    /// to `total` (`missed`: the lookup found it is not one token, rather
    /// than leaving it to the general lookup); returns whether the count is
    /// still within `limit`.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn count_other(
        &self,
        s: &[u8],
        a: usize,
        b: usize,
        missed: bool,
        limit: usize,
        total: &mut usize,
        scratch: &mut Scratch,
    ) -> bool {
        if !missed && self.vocab.rank_at_general(s, a, b).is_some() {
            *total += 1;
            return *total <= limit;
        }
        // A long piece has at least this many tokens; when that already
        // passes the limit, merging it is wasted work, so the cost stays
        // proportional to the limit.
        let at_least = (b - a).div_ceil(self.vocab.max_token_len);
        if total.saturating_add(at_least) > limit {
            *total += at_least;
            return false;
        }
        *total += if b - a > super::piece_cache::MAX_PIECE {
            self.merge(s, a, b, scratch, |_| {})
        } else {
            self.with_merged(s, a, b, scratch, <[u32]>::len)
        };
        *total <= limit
    }

    /// Merges a piece that is not one token, calling `emit` with each
    /// token; returns the count. Short pieces run tiktoken's scan; long ones
    /// the backtracking encoder, whose work is linear in the piece.
    #[inline]
    fn merge(&self, s: &[u8], a: usize, b: usize, scratch: &mut Scratch, mut emit: impl FnMut(u32)) -> usize {
        if b - a > bpe::SHORT {
            let tables = self.backtrack.get_or_init(|| Tables::build(&self.vocab));
            if let Some(tokens) = backtrack::encode(tables, &self.vocab, s, a, b, &mut scratch.backtrack) {
                tokens.iter().for_each(|&t| emit(t));
                return tokens.len();
            }
        }
        bpe::merge(s, a, b, &self.vocab, scratch, emit)
    }

    /// The bytes of token `id` (ordinary or special), if it exists.
    pub(crate) fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        self.vocab.token_bytes(id).or_else(|| self.special.iter().find(|(_, s)| *s == id).map(|(t, _)| t.as_bytes()))
    }

    /// The id of the token whose bytes are exactly `bytes` (ordinary or
    /// special), if there is one.
    pub(crate) fn token_id(&self, bytes: &[u8]) -> Option<u32> {
        self.vocab.rank(bytes).or_else(|| self.special.iter().find(|(t, _)| t.as_bytes() == bytes).map(|(_, id)| *id))
    }

    /// Heap bytes held by this encoding: the vocabulary's lookup table, plus
    /// the long-piece tables once a long piece has needed them.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.vocab.heap_bytes() + self.backtrack.get().map_or(0, Tables::heap_bytes)
    }

    /// One past the highest id, special tokens included (tiktoken's `n_vocab`).
    pub(crate) fn vocab_size(&self) -> usize {
        let special_end = self.special.iter().map(|(_, id)| *id as usize + 1).max().unwrap_or(0);
        self.vocab.len().max(special_end)
    }
}

/// `encode`'s work per piece.
struct Encoder<'a> {
    engine: &'a Engine,
    s: &'a [u8],
    scratch: &'a mut Scratch,
    out: &'a mut Vec<u32>,
}

impl Sink for Encoder<'_> {
    /// Kept small so that it inlines into the pre-tokenizer's loop: most
    /// pieces are one token.
    #[inline(always)]
    fn piece(&mut self, a: usize, b: usize) -> bool {
        let short = self.engine.vocab.rank_at_short(self.s, a, b);
        if let Some(Some(r)) = short {
            // The grow path stays out of line, so `push` below is a store.
            if self.out.len() == self.out.capacity() {
                grow(self.out);
            }
            self.out.push(r);
        } else {
            self.engine.encode_other(self.s, a, b, short.is_some(), self.scratch, self.out);
        }
        true
    }
}

/// `count`'s work per piece.
struct Counter<'a> {
    engine: &'a Engine,
    s: &'a [u8],
    scratch: &'a mut Scratch,
    limit: usize,
    total: &'a mut usize,
}

impl Sink for Counter<'_> {
    /// Kept small so that it inlines into the pre-tokenizer's loop.
    #[inline(always)]
    fn piece(&mut self, a: usize, b: usize) -> bool {
        let short = self.engine.vocab.is_token_short(self.s, a, b);
        if short == Some(true) {
            *self.total += 1;
            return *self.total <= self.limit;
        }
        self.engine.count_other(self.s, a, b, short.is_some(), self.limit, self.total, self.scratch)
    }
}

/// Makes room in `out` for more ids; kept out of `encode`'s per-piece loop.
#[cold]
#[inline(never)]
fn grow(out: &mut Vec<u32>) {
    out.reserve(out.len().max(64));
}

enum Segment<'a> {
    Text(&'a str),
    Special(u32),
}
