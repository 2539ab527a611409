//! The counting engine behind [`crate::Tokenizer`]: hand-written
//! pre-tokenization (`pretokenize.rs`) followed by a whole-piece lookup and,
//! for the minority of pieces that are not one token, byte-pair merging
//! (`bpe.rs`). One lazily built instance per encoding is shared by every
//! thread of the process; the hot path takes no contended lock.
//!
//! This module is the only place that knows how tokens are produced; the
//! public API in `tokens/mod.rs` depends on nothing here but `Engine`'s
//! methods, so a faster engine can replace this one without touching callers.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use super::backtrack::{self, Tables};
use super::bpe::{self, Scratch};
use super::encoding::Encoding;
use super::piece_cache::{CountCache, COUNT_MAX_PIECE};
use super::pretokenize::{self, Pattern, Sink};
use super::vocab::{ShortCount, Vocab};
use crate::{Error, Result};

pub(crate) struct Engine {
    pub(crate) encoding: Encoding,
    pub(crate) vocab: Vocab,
    pattern: Pattern,
    special: &'static [(&'static str, u32)],
    /// The special tokens sorted by text, for [`Engine::next_special`]
    /// (o200k_harmony has over a thousand).
    special_sorted: Vec<(&'static str, u32)>,
    /// The special tokens sorted by id (stable: of two names for one id the
    /// first listed comes first), for [`Engine::token_bytes`].
    special_by_id: Vec<(u32, &'static str)>,
    /// Tables of the linear-time encoder for long pieces, built on the
    /// first one (see `backtrack.rs`); shared by encodings with the same ranks.
    backtrack: &'static OnceLock<Tables>,
}

/// Scratch buffers live in a process-wide pool of slots, not in a
/// `thread_local!` with a destructor: a thread whose first turnfit call runs
/// inside a pthread key destructor registers its TLS destructor after glibc
/// has run them, so a thread-local scratch (about 1 MiB) leaked with every
/// such thread (issue 14). Each thread is given a slot once (a `const`
/// thread-local index, which needs no destructor); up to [`POOL_SLOTS`]
/// threads never share one, and beyond that two threads on one slot at the
/// same moment make the later one use fresh buffers. The pool is bounded
/// (at most `POOL_SLOTS` scratches for the life of the process) and reused
/// by later threads.
const POOL_SLOTS: usize = 64;

static POOL: [parking_lot::Mutex<Option<Box<Scratch>>>; POOL_SLOTS] =
    [const { parking_lot::Mutex::new(None) }; POOL_SLOTS];
static NEXT_SLOT: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static SLOT: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// This thread's number, handed out in the order threads first ask (0 when
/// the thread is exiting): pools of per-thread scratch space index their
/// slots by it modulo their size, so threads spread over the slots.
pub(crate) fn thread_slot() -> usize {
    SLOT.try_with(|s| {
        if s.get() == usize::MAX {
            s.set(NEXT_SLOT.fetch_add(1, Ordering::Relaxed));
        }
        s.get()
    })
    .unwrap_or(0)
}

/// Runs `f` with this thread's pooled scratch buffers, or with fresh ones
/// when its slot is busy (re-entered, or shared with another running
/// thread). Correctness never depends on the cache; only speed does.
fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    match POOL[thread_slot() % POOL_SLOTS].try_lock() {
        Some(mut guard) => f(guard.get_or_insert_with(Box::default)),
        None => f(&mut Scratch::default()),
    }
}

/// Empties this thread's caches (`tokens::clear_thread_caches`): the count,
/// piece and text tables keep their memory (a thread allocates them once; what
/// is measured is a text never seen), the rest of the scratch starts over.
pub(crate) fn clear_thread_scratch() {
    with_scratch(|scratch| {
        let (mut counts, mut pieces) = (std::mem::take(&mut scratch.counts), std::mem::take(&mut scratch.pieces));
        let mut texts = std::mem::take(&mut scratch.texts);
        counts.clear();
        pieces.clear();
        texts.clear();
        *scratch = Scratch::default();
        scratch.counts = counts;
        scratch.pieces = pieces;
        scratch.texts = texts;
    });
}

/// Forgets the short pieces every loaded vocabulary recorded as not one
/// token (`Vocab::short_count`), for `tokens::clear_thread_caches`.
pub(crate) fn forget_recorded_pieces() {
    VOCABS.iter().filter_map(|v| v.get()).flatten().for_each(Vocab::forget_short_pieces);
}

const N: usize = Encoding::ALL.len();
static ENGINES: [OnceLock<std::result::Result<Engine, Error>>; N] = [const { OnceLock::new() }; N];

/// One loaded vocabulary and one set of long-piece tables per rank file,
/// shared by every encoding that uses it (see [`Encoding::ranks`]).
static VOCABS: [OnceLock<std::result::Result<Vocab, Error>>; N] = [const { OnceLock::new() }; N];
static TABLES: [OnceLock<Tables>; N] = [const { OnceLock::new() }; N];

fn slot(encoding: Encoding) -> usize {
    Encoding::ALL.iter().position(|e| *e == encoding).unwrap_or(0)
}

impl Engine {
    /// The process-wide engine for `encoding`, built on first use.
    pub(crate) fn get(encoding: Encoding) -> Result<&'static Engine> {
        ENGINES[slot(encoding)].get_or_init(|| Engine::build(encoding)).as_ref().map_err(Clone::clone)
    }

    fn build(encoding: Encoding) -> Result<Engine> {
        let base = slot(encoding.ranks());
        let vocab = VOCABS[base].get_or_init(|| Vocab::load(encoding.vocab_file())).as_ref().map_err(Clone::clone)?;
        let special = encoding.special_tokens();
        let mut special_sorted = special.to_vec();
        special_sorted.sort_unstable();
        let mut special_by_id: Vec<(u32, &'static str)> = special.iter().map(|&(t, id)| (id, t)).collect();
        special_by_id.sort_by_key(|&(id, _)| id);
        Ok(Engine {
            encoding,
            vocab: vocab.clone(),
            pattern: encoding.pretokenizer(),
            special,
            special_sorted,
            special_by_id,
            backtrack: &TABLES[base],
        })
    }

    /// Splits `text` into ordinary segments and the special tokens `allow`
    /// recognizes. With [`Allow::None`] the whole text is one ordinary segment.
    fn for_each_segment(
        &self,
        text: &str,
        allow: Allow<'_>,
        mut seg: impl FnMut(Segment<'_>) -> Result<bool>,
    ) -> Result<bool> {
        if matches!(allow, Allow::None) {
            return seg(Segment::Text(text));
        }
        let mut rest = text;
        while let Some((at, len, id)) = self.next_special(rest, allow) {
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

    /// The leftmost special token in `s` that `allow` recognizes: (offset,
    /// byte length, id). Ordinary text is never split anywhere else, because
    /// splitting it would change how the pre-tokenizer sees it. Every special
    /// token is `<|`, a name without `|>`, then `|>` (a unit test checks
    /// this), so the only candidate at a `<|` is the text up to the next
    /// `|>`, and no special token is a prefix of another. A special token
    /// `allow` refuses is skipped, as tiktoken's search resumes after the
    /// start of a match that is not in `allowed_special`.
    pub(crate) fn next_special(&self, s: &str, allow: Allow<'_>) -> Option<(usize, usize, u32)> {
        let mut from = 0;
        while let Some(p) = s[from..].find("<|") {
            let at = from + p;
            if let Some(end) = s[at + 2..].find("|>") {
                let candidate = &s[at..at + 2 + end + 2];
                if let Ok(i) = self.special_sorted.binary_search_by(|(t, _)| (*t).cmp(candidate)) {
                    if allow.permits(candidate) {
                        return Some((at, candidate.len(), self.special_sorted[i].1));
                    }
                }
            } else {
                return None;
            }
            from = at + 2;
        }
        None
    }

    /// Appends the token ids of `text` to `out`.
    pub(crate) fn encode(&self, text: &str, allow: Allow<'_>, out: &mut Vec<u32>) -> Result<()> {
        with_scratch(|scratch| {
            self.for_each_segment(text, allow, |seg| match seg {
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
    pub(crate) fn count(&self, text: &str, allow: Allow<'_>, limit: usize) -> Result<(usize, bool)> {
        let mut total = 0usize;
        let finished = with_scratch(|scratch| {
            self.for_each_segment(text, allow, |seg| match seg {
                Segment::Special(_) => {
                    total += 1;
                    Ok(total <= limit)
                }
                Segment::Text(t) => Ok(self.count_text(t, scratch, limit, &mut total)),
            })
        })?;
        Ok((total, !finished))
    }

    /// Adds the tokens of an ordinary segment to `total`, from the thread's
    /// text cache when it was counted before (see `text_cache.rs`); returns
    /// whether the count is still within `limit`.
    fn count_text(&self, t: &str, scratch: &mut Scratch, limit: usize, total: &mut usize) -> bool {
        let enc = self.encoding as u8;
        let probe = scratch.texts.probe(enc, t.as_bytes());
        if let Some(n) = probe.as_ref().and_then(|p| p.count) {
            // A repeat that passes the limit is counted again: where a
            // count stops must not depend on what this thread counted before.
            if total.saturating_add(n) <= limit {
                *total += n;
                return true;
            }
        }
        let before = *total;
        let finished = self.count_pieces(t, scratch, limit, total);
        if let Some(p) = probe.filter(|p| finished && p.count.is_none()) {
            scratch.texts.put(&p, enc, t.as_bytes(), *total - before);
        }
        finished
    }

    /// Adds the tokens of an ordinary segment to `total`, piece by piece.
    #[inline(never)]
    fn count_pieces(&self, t: &str, scratch: &mut Scratch, limit: usize, total: &mut usize) -> bool {
        let mut sink = Counter { engine: self, s: t.as_bytes(), scratch, limit, total };
        pretokenize::for_each_piece(self.pattern, t, &mut sink)
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
        if b - a <= COUNT_MAX_PIECE {
            let key = CountCache::key(self.encoding as u8, s, a, b);
            let n = match scratch.counts.get(key) {
                Some(n) => n,
                None => {
                    let n = self.count_piece(s, a, b, missed, scratch);
                    scratch.counts.put(key, n);
                    n
                }
            };
            *total += n;
            return *total <= limit;
        }
        // A piece longer than every token is not one: skip the probe, which
        // hashes the whole piece (20 KB of `a` is one piece).
        if !missed && b - a <= self.vocab.max_token_len && self.vocab.rank_at_general(s, a, b).is_some() {
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

    /// Adds the tokens of a piece of up to seven bytes that is not one
    /// token and that the vocabulary's table does not hold yet (`at`: its
    /// key and the empty slot that ended its probe run), and records it
    /// there while the table has room; after that, the thread's count cache
    /// keeps it. Returns whether the count is still within `limit`.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn count_absent(
        &self,
        s: &[u8],
        a: usize,
        b: usize,
        at: (u64, usize),
        limit: usize,
        total: &mut usize,
        scratch: &mut Scratch,
    ) -> bool {
        if !self.vocab.has_room() {
            return self.count_other(s, a, b, true, limit, total, scratch);
        }
        let n = self.merge(s, a, b, scratch, |_| {});
        self.vocab.remember_short(at.0, at.1, n);
        *total += n;
        *total <= limit
    }

    /// The token count of a short piece the short lookup did not answer
    /// (`missed`: as in [`Self::count_other`]).
    #[inline]
    fn count_piece(&self, s: &[u8], a: usize, b: usize, missed: bool, scratch: &mut Scratch) -> usize {
        if !missed && self.vocab.rank_at_general(s, a, b).is_some() {
            return 1;
        }
        self.merge(s, a, b, scratch, |_| {})
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

    /// Appends the ids of `text` encoded ordinarily and returns how many of
    /// them the last piece of the pre-tokenizer gave (0 for empty text):
    /// tiktoken's `encode(text, set())` with its `last_piece_token_len`,
    /// which `_encode_bytes` needs.
    pub(crate) fn encode_ordinary_last_piece(&self, text: &str, out: &mut Vec<u32>) -> usize {
        with_scratch(|scratch| {
            let mut sink =
                LastPiece { start: out.len(), inner: Encoder { engine: self, s: text.as_bytes(), scratch, out } };
            pretokenize::for_each_piece(self.pattern, text, &mut sink);
            sink.inner.out.len() - sink.start
        })
    }

    /// Appends the tokens of `bytes` merged as one piece, with no
    /// pre-tokenization: one token when the bytes are a token, else the
    /// byte-pair merges (tiktoken's `byte_pair_encode`). Any bytes, UTF-8 or
    /// not; every single byte is a token, so the result is never empty for
    /// non-empty input.
    pub(crate) fn encode_piece_bytes(&self, bytes: &[u8], out: &mut Vec<u32>) {
        if bytes.is_empty() {
            return;
        }
        with_scratch(|scratch| self.encode_other(bytes, 0, bytes.len(), false, scratch, out));
    }

    /// The bytes of token `id` (ordinary or special), if it exists.
    pub(crate) fn token_bytes(&self, id: u32) -> Option<&'static [u8]> {
        self.vocab.token_bytes(id).or_else(|| {
            let i = self.special_by_id.partition_point(|&(s, _)| s < id);
            self.special_by_id.get(i).filter(|&&(s, _)| s == id).map(|&(_, t)| t.as_bytes())
        })
    }

    /// Whether `id` is one of the encoding's special tokens.
    pub(crate) fn is_special(&self, id: u32) -> bool {
        self.special_by_id.binary_search_by_key(&id, |&(s, _)| s).is_ok()
    }

    /// The ordinary token with `id`, if there is one (not a special token).
    pub(crate) fn ordinary_token_bytes(&self, id: u32) -> Option<&'static [u8]> {
        self.vocab.token_bytes(id)
    }

    /// One past the highest ordinary id.
    pub(crate) fn ordinary_len(&self) -> usize {
        self.vocab.len()
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

/// [`Encoder`] that remembers where the last piece's tokens start.
struct LastPiece<'a> {
    start: usize,
    inner: Encoder<'a>,
}

impl Sink for LastPiece<'_> {
    fn piece(&mut self, a: usize, b: usize) -> bool {
        self.start = self.inner.out.len();
        self.inner.piece(a, b)
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
    /// Kept small so that it inlines into the pre-tokenizer's loop. A piece
    /// the short lookup does not answer is looked up in the count cache
    /// here, inline, before `count_other` is called (issue 36): on text
    /// without repeated lines a warm count of 16 MiB (4.8M tokens) reaches the
    /// count cache for 879k pieces and 99% of those are hits, which the out-of-line
    /// call made cost about 110 instructions each (six registers saved, three
    /// arguments on the stack, a 0.8 KB frame for the merge). Instructions per
    /// warm count of 16 MiB with o200k_base (callgrind, the second count
    /// minus the first): unique prose 522.9M to 480.6M (-8.1%), unique code
    /// 587M to 568M, code 471M to 461M, prose 388M to 380M. A miss, or a
    /// piece too near the text's end for the 16-byte load, looks again in
    /// `count_other`; a hit adds the count `count_other` would have added and
    /// stops at the same limit.
    ///
    /// What was tried first and did not pay (docs/benchmarks.md): collecting
    /// 32 pieces and touching all their vocabulary (and count-cache) slots
    /// in a tight loop before probing them, so that their cache misses
    /// overlap. It was slower (7-28% in a process's CPU time, 19-46% in
    /// `peers` on the unique rows): the simulated misses show why, the
    /// counting loop is not waiting on memory (0.65M misses of a simulated
    /// 1 MiB L2 per warm count of those 16 MiB), and the batching itself
    /// costs instructions.
    #[inline(always)]
    fn piece(&mut self, a: usize, b: usize) -> bool {
        // Most pieces are a token in the first two slots of their probe
        // run: that test alone first, as a `bool`, keeps prose as fast as
        // before pieces were recorded (with `short_count` first, prose took
        // 6-8% longer; docs/benchmarks.md).
        if self.engine.vocab.is_token_first_slots(self.s, a, b) {
            *self.total += 1;
            return *self.total <= self.limit;
        }
        match self.engine.vocab.short_count(self.s, a, b) {
            ShortCount::Known(n) => {
                *self.total += n;
                return *self.total <= self.limit;
            }
            ShortCount::Absent(key, slot) => {
                return self.engine.count_absent(self.s, a, b, (key, slot), self.limit, self.total, self.scratch);
            }
            ShortCount::General => {}
        }
        if let Some(n) = self.scratch.counts.get_short(self.engine.encoding as u8, self.s, a, b) {
            *self.total += n;
            return *self.total <= self.limit;
        }
        self.engine.count_other(self.s, a, b, false, self.limit, self.total, self.scratch)
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

/// Which special tokens [`Engine::encode`] and [`Engine::count`] recognize
/// in text: none, every one, or those a set names (tiktoken's
/// `allowed_special`; names that are not special tokens have no effect).
#[derive(Clone, Copy)]
pub(crate) enum Allow<'a> {
    None,
    All,
    Only(&'a std::collections::BTreeSet<String>),
    /// Every special token but those named (tiktoken's default
    /// `disallowed_special`: all that `allowed_special` leaves out).
    AllBut(&'a std::collections::BTreeSet<String>),
}

impl Allow<'_> {
    fn permits(self, token: &str) -> bool {
        match self {
            Allow::None => false,
            Allow::All => true,
            Allow::Only(set) => set.contains(token),
            Allow::AllBut(set) => !set.contains(token),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A text counted again is answered by the text cache from its third
    /// count on (the first records its hash, the second its bytes). On a
    /// scratch of its own: the pool may hand a test thread a fresh one.
    #[test]
    fn a_text_counted_again_is_answered_by_the_text_cache() {
        let e = Engine::get(Encoding::O200kBase).unwrap();
        let text = "The quick brown fox jumps over the lazy dog. ".repeat(20);
        let mut scratch = Scratch::default();
        let enc = e.encoding as u8;
        let mut counts = Vec::new();
        for _ in 0..3 {
            let mut total = 0;
            assert!(e.count_text(&text, &mut scratch, usize::MAX, &mut total));
            counts.push(total);
        }
        let n = e.count(&text, Allow::None, usize::MAX).unwrap().0;
        assert_eq!(counts, [n, n, n]);
        assert_eq!(scratch.texts.probe(enc, text.as_bytes()).and_then(|p| p.count), Some(n));
        scratch.texts.clear();
        assert_eq!(scratch.texts.probe(enc, text.as_bytes()).and_then(|p| p.count), None);
    }

    /// Counts with the text cache warm equal counts with it empty and the
    /// encoder's length: for texts that differ in one byte where the cache's
    /// hash does not look, for the same text in every encoding, around
    /// special tokens, at every limit, and after the ring has wrapped.
    #[test]
    fn counts_with_the_text_cache_warm_equal_counts_without_it() {
        let prose = "Byte-pair encoding: the café's naïve résumé, 東京の天気は晴れ, ".repeat(12);
        let mut texts = vec![prose.clone(), "a".repeat(20_000), format!("{prose}<|endoftext|>{prose}")];
        // Same length and the same sampled bytes, one byte different.
        let mut other = prose.clone().into_bytes();
        let i = prose.len() / 9 + 9;
        other[i] = if other[i] == b'x' { b'y' } else { b'x' };
        if let Ok(other) = String::from_utf8(other) {
            texts.push(other);
        }
        let all = std::collections::BTreeSet::new();
        for enc in Encoding::ALL {
            let e = Engine::get(enc).unwrap();
            for allow in [Allow::None, Allow::All, Allow::AllBut(&all)] {
                let cold: Vec<usize> = texts
                    .iter()
                    .map(|t| {
                        clear_thread_scratch();
                        e.count(t, allow, usize::MAX).unwrap().0
                    })
                    .collect();
                for (t, &n) in texts.iter().zip(&cold) {
                    let mut ids = Vec::new();
                    e.encode(t, allow, &mut ids).unwrap();
                    assert_eq!(ids.len(), n, "{enc}");
                }
                for _ in 0..3 {
                    for (t, &n) in texts.iter().zip(&cold) {
                        assert_eq!(e.count(t, allow, usize::MAX).unwrap(), (n, false), "{enc}");
                    }
                }
                for (t, &n) in texts.iter().zip(&cold) {
                    for limit in [0, 1, n / 2, n - 1, n, n + 1] {
                        let warm = e.count(t, allow, limit).unwrap();
                        clear_thread_scratch();
                        assert_eq!(warm, e.count(t, allow, limit).unwrap(), "{enc} limit {limit}");
                        e.count(t, allow, usize::MAX).unwrap();
                        e.count(t, allow, usize::MAX).unwrap();
                    }
                }
            }
        }
        // Wrap the ring many times over; every count stays exact.
        let e = Engine::get(Encoding::Cl100kBase).unwrap();
        clear_thread_scratch();
        let many: Vec<String> = (0..300).map(|i| format!("{i} {}", "lorem ipsum dolor ".repeat(400 + i % 7))).collect();
        let cold: Vec<usize> = many.iter().map(|t| e.count(t, Allow::None, usize::MAX).unwrap().0).collect();
        for _ in 0..3 {
            for (t, &n) in many.iter().zip(&cold).rev() {
                assert_eq!(e.count(t, Allow::None, usize::MAX).unwrap().0, n);
            }
        }
    }

    /// Where a count with a limit stops, modelled piece by piece: each
    /// piece's tokens merged on their own (`encode_piece_bytes`), and a
    /// long piece that is not one token counted as its lower bound
    /// (`count_other`) when that bound alone passes the limit.
    fn count_by_pieces(e: &Engine, text: &str, limit: usize) -> (usize, bool) {
        struct Spans(Vec<(usize, usize)>);
        impl Sink for Spans {
            fn piece(&mut self, a: usize, b: usize) -> bool {
                self.0.push((a, b));
                true
            }
        }
        let mut spans = Spans(Vec::new());
        pretokenize::for_each_piece(e.pattern, text, &mut spans);
        let mut total = 0;
        for (a, b) in spans.0 {
            let mut ids = Vec::new();
            e.encode_piece_bytes(&text.as_bytes()[a..b], &mut ids);
            if b - a > COUNT_MAX_PIECE && ids.len() > 1 {
                let at_least = (b - a).div_ceil(e.vocab.max_token_len);
                if total + at_least > limit {
                    return (total + at_least, true);
                }
            }
            total += ids.len();
            if total > limit {
                return (total, true);
            }
        }
        (total, false)
    }

    /// A count with a limit stops at the same piece, with the same total,
    /// whatever path each piece takes (the short lookup, the count cache's
    /// inlined hit, `count_other`, a long merge), with the caches cold and
    /// warm: every limit from 0 past the total, on texts whose last pieces
    /// sit within 16 bytes of the end (where the 8- and 16-byte loads do not
    /// fit), of every length from 1 byte up, with long pieces.
    #[test]
    fn counts_stop_at_the_same_piece_at_every_limit() {
        let mut texts: Vec<String> = vec![
            "The quick brown fox jumps over the lazy dog; identifiers_like_this and CamelCaseNames, 12345678 \
             numbers, naïve café 東京の天気は晴れ, tabs\tand\r\nnewlines!!"
                .into(),
            "fn count_pieces(&self, t: &str) -> bool { let total = 0usize; total.saturating_add(1) }\n".into(),
            format!("x {} y {} z", "a".repeat(300), "ab".repeat(90)),
            format!("{}extraordinarily", " ".repeat(40)),
        ];
        // Every prefix of a short mixed text (lengths 1 to 40).
        let short = "Hi there, counting_cache 42 tokens é.";
        texts.extend((1..=short.len()).filter(|&n| short.is_char_boundary(n)).map(|n| short[..n].to_string()));
        for enc in [Encoding::Cl100kBase, Encoding::O200kBase, Encoding::R50kBase] {
            let e = Engine::get(enc).unwrap();
            for t in &texts {
                let n = count_by_pieces(e, t, usize::MAX).0;
                let mut ids = Vec::new();
                e.encode(t, Allow::None, &mut ids).unwrap();
                assert_eq!(ids.len(), n, "{enc} {t:?}");
                for limit in 0..=n + 1 {
                    let want = count_by_pieces(e, t, limit);
                    clear_thread_scratch();
                    assert_eq!(e.count(t, Allow::None, limit).unwrap(), want, "{enc} cold, limit {limit}, {t:?}");
                    e.count(t, Allow::None, usize::MAX).unwrap();
                    assert_eq!(e.count(t, Allow::None, limit).unwrap(), want, "{enc} warm, limit {limit}, {t:?}");
                }
            }
        }
    }

    /// Short pieces that are not one token are recorded in the shared
    /// vocabulary table as they are counted (`Vocab::short_count`), by every
    /// thread at once. Counts stay those of the encoder, whose rank lookups
    /// walk the same probe runs, on threads racing to record the same and
    /// different pieces.
    #[test]
    fn counts_stay_exact_while_threads_record_short_pieces() {
        // Pieces of two to seven bytes that are rarely one token: letters,
        // digits and punctuation from a fixed generator.
        let texts: Vec<String> = (0..16u64)
            .map(|t| {
                let mut x = 0x9E37_79B9_7F4A_7C15u64.wrapping_mul(t % 4 + 1);
                let mut s = String::new();
                for _ in 0..3000 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let len = 2 + (x % 6) as usize;
                    s.push(' ');
                    for k in 0..len {
                        s.push(b"qxzjkvwQXZ09_#"[((x >> (8 * k)) % 14) as usize] as char);
                    }
                }
                s
            })
            .collect();
        for enc in [Encoding::Cl100kBase, Encoding::O200kBase, Encoding::R50kBase] {
            let e = Engine::get(enc).unwrap();
            let want: Vec<usize> = texts
                .iter()
                .map(|t| {
                    let mut ids = Vec::new();
                    e.encode(t, Allow::None, &mut ids).unwrap();
                    ids.len()
                })
                .collect();
            std::thread::scope(|s| {
                for k in 0..8 {
                    let (texts, want) = (&texts, &want);
                    s.spawn(move || {
                        for round in 0..3 {
                            for (i, t) in texts.iter().enumerate().skip(k % 4) {
                                assert_eq!(
                                    e.count(t, Allow::None, usize::MAX).unwrap().0,
                                    want[i],
                                    "{enc:?} {i} {round}"
                                );
                            }
                        }
                    });
                }
            });
            // The encoder's lookups walk runs that now hold those pieces.
            for (t, &n) in texts.iter().zip(&want) {
                let mut ids = Vec::new();
                e.encode(t, Allow::None, &mut ids).unwrap();
                assert_eq!(ids.len(), n);
            }
        }
    }

    #[test]
    fn encodings_with_the_same_ranks_share_one_vocabulary() {
        for e in Encoding::ALL {
            let (a, b) = (Engine::get(e).unwrap(), Engine::get(e.ranks()).unwrap());
            assert!(a.vocab.shares_tables_with(&b.vocab), "{e}");
            assert!(std::ptr::eq(a.backtrack, b.backtrack), "{e}");
            assert_eq!(a.encoding, e);
        }
        let (o, c) = (Engine::get(Encoding::O200kBase).unwrap(), Engine::get(Encoding::Cl100kBase).unwrap());
        assert!(!o.vocab.shares_tables_with(&c.vocab));
    }

    /// Where counting's time goes on the issue-36 inputs: the pre-tokenizer
    /// alone (a sink that only sums piece lengths), then with the short-piece
    /// vocabulary probe, against a whole count, in this thread, warm, median
    /// of 7; and the distinct pieces of each input by kind. It is how
    /// docs/benchmarks.md knows that text without repeated lines is slow in
    /// the lookups, not in the pre-tokenizer. Not a check (no timing is
    /// asserted); run it with
    /// `cargo test --release -p turnfit --lib where_counting_time_goes -- --ignored --nocapture`
    /// after `python3 bench/gen_big_inputs.py` (or with `TURNFIT_BENCH_INPUTS`).
    #[test]
    #[ignore = "a measurement: needs the benchmark inputs and a release build"]
    fn where_counting_time_goes() {
        struct Lengths(usize);
        impl Sink for Lengths {
            #[inline(always)]
            fn piece(&mut self, a: usize, b: usize) -> bool {
                self.0 += b - a;
                true
            }
        }
        /// The short-piece probe of every piece, as counting makes it first.
        struct Probes<'a>(&'a Engine, &'a [u8], usize);
        impl Sink for Probes<'_> {
            #[inline(always)]
            fn piece(&mut self, a: usize, b: usize) -> bool {
                self.2 += usize::from(self.0.vocab.short_count(self.1, a, b) == ShortCount::Known(1));
                true
            }
        }
        /// Each distinct piece and whether it is one token.
        struct Kinds<'a>(&'a Engine, &'a [u8], std::collections::HashMap<&'a [u8], bool>);
        impl<'a> Sink for Kinds<'a> {
            fn piece(&mut self, a: usize, b: usize) -> bool {
                let p: &'a [u8] = &self.1[a..b];
                let token = self.0.vocab.rank(p).is_some();
                self.2.insert(p, token);
                true
            }
        }
        let dir = std::env::var_os("TURNFIT_BENCH_INPUTS")
            .map_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/inputs"), Into::into)
            .join("big");
        let median = |f: &mut dyn FnMut()| {
            let mut t: Vec<f64> = (0..7)
                .map(|_| {
                    let start = std::time::Instant::now();
                    f();
                    start.elapsed().as_secs_f64()
                })
                .collect();
            t.sort_by(f64::total_cmp);
            t[3]
        };
        for enc in [Encoding::Cl100kBase, Encoding::O200kBase] {
            let e = Engine::get(enc).unwrap();
            for input in ["prose", "code", "unique_prose", "unique_code"] {
                let Ok(text) = std::fs::read_to_string(dir.join(format!("{input}.txt"))) else {
                    println!("skipped: no {}/{input}.txt (python3 bench/gen_big_inputs.py)", dir.display());
                    return;
                };
                let pre = median(&mut || {
                    let mut sink = Lengths(0);
                    pretokenize::for_each_piece(e.pattern, std::hint::black_box(&text), &mut sink);
                    assert_eq!(sink.0, text.len());
                });
                let probes = median(&mut || {
                    let mut sink = Probes(e, text.as_bytes(), 0);
                    pretokenize::for_each_piece(e.pattern, std::hint::black_box(&text), &mut sink);
                    std::hint::black_box(sink.2);
                });
                let count = median(&mut || {
                    std::hint::black_box(e.count(std::hint::black_box(&text), Allow::None, usize::MAX).unwrap());
                });
                println!(
                    "{enc} {input}: pre-tokenizer {pre:.4} s, with short probes {probes:.4} s, count {count:.4} s, \
                     lookups {:.4} s",
                    count - pre
                );
                let mut kinds = Kinds(e, text.as_bytes(), Default::default());
                pretokenize::for_each_piece(e.pattern, &text, &mut kinds);
                let mut n = [0usize; 4]; // short non-token, short token, long non-token, long token
                for (p, token) in &kinds.2 {
                    n[usize::from(p.len() > 7) * 2 + usize::from(*token)] += 1;
                }
                println!(
                    "  distinct pieces {}: up to 7 bytes {} tokens + {} not, longer {} tokens + {} not",
                    kinds.2.len(),
                    n[1],
                    n[0],
                    n[3],
                    n[2]
                );
            }
        }
    }
}
