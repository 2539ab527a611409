//! Linear-time byte-pair encoding of long pieces by backtracking.
//!
//! tiktoken's merge loop is quadratic, and even a priority queue pays a push
//! and a pop for almost every input byte of a long piece (a megabyte of one
//! letter, a run of spaces). This module computes the same tokens without
//! replaying the merges, following the algorithm GitHub published with its
//! `bpe` crate (van Antwerpen and Neubeck, "So many tokens, so little
//! time", 2024):
//!
//! * Every token `t` of these vocabularies is produced by one last merge of
//!   two smaller tokens, its *split* `(l, r)`. Undoing merges one at a time
//!   gives each token's merge tree.
//! * Two adjacent tokens `a b` are *compatible* when byte-pair merging
//!   `bytes(a) ++ bytes(b)` yields exactly `[a, b]`. That is decided from the
//!   two merge trees alone ([`Tables::compatible`]): walking down the trees
//!   in the order the merges happened, no merge across the boundary may come
//!   earlier than the merges that built `a` and `b`.
//! * The BPE result is the one tokenization of the piece in which every
//!   adjacent pair is compatible. Taking the longest token at each position
//!   and, when the next one is not compatible, trying its next shorter
//!   prefix token (backtracking when none is left) finds it; a bitfield
//!   marks the positions from which no compatible continuation exists, so
//!   every position fails at most once and the work stays linear.
//!
//! The tables are built from the vocabulary on the first long piece an
//! encoding sees (a few milliseconds), not at load, so short-text users never
//! pay for them. Exactness is checked three ways in the tests: every token
//! encodes to itself, random and hostile long pieces agree with the
//! merge-queue algorithm in `bpe.rs`, and the oracle suite compares whole
//! texts with tiktoken-rs.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

use super::vocab::Vocab;

const NONE: u32 = u32::MAX;

/// Per-encoding tables for [`encode`].
///
/// Only the filter is built up front (one sequential pass over the
/// vocabulary). A token's shorter prefix and its split are worked out the
/// first time the encoder needs them and remembered: a megabyte of one
/// letter touches a few dozen tokens, not the whole vocabulary, so a first
/// long piece stays cheap. The memo slots are atomics written with the one
/// value the vocabulary determines, so threads racing to fill a slot agree
/// and nothing is locked.
pub(crate) struct Tables {
    /// Two one-bit-per-hash filters over byte strings of two or more bytes
    /// (see [`Filter`]): the multi-byte tokens, and the proper prefixes of
    /// multi-byte tokens. The longest-match search walks forward while the
    /// text read so far is a prefix of some token and probes the vocabulary
    /// only where a token may end, so it costs about one filter test per
    /// byte of the match; the filters (1 MiB together) stay in cache where
    /// the vocabulary table does not.
    filter: Filter,
    /// The longest token that is a proper prefix of each token (`NONE` for
    /// single bytes): the next candidate when a token does not fit.
    /// `UNKNOWN` until first needed.
    next_prefix: Vec<AtomicU32>,
    /// The two tokens each token was last merged from, `l << 32 | r`;
    /// `(t, t)` for single bytes and holes. `UNKNOWN_SPLIT` until first
    /// needed.
    split: Vec<AtomicU64>,
}

const UNKNOWN: u32 = u32::MAX - 1;
const UNKNOWN_SPLIT: u64 = u64::MAX;

/// log2 of each filter's size in bits: 4 Mi bits, under 10% occupied by
/// o200k_base's 200,000 tokens and their roughly 300,000 distinct prefixes.
const FILTER_BITS: u32 = 22;
const TOKEN: usize = 0;
const PREFIX: usize = 1;

/// Membership filters with one hash function: a clear bit proves a byte
/// string is not in the set, a set bit only suggests it (the vocabulary
/// then decides). The hash is built a byte at a time, so walking forward
/// through the text costs one step per byte. The two sets share one
/// allocation, interleaved per word so that one cache line answers both.
struct Filter {
    bits: Vec<u64>,
}

impl Filter {
    fn new() -> Filter {
        Filter { bits: vec![0; 2 << (FILTER_BITS - 6)] }
    }

    #[inline(always)]
    fn start(c: u8) -> u64 {
        Filter::step(0x243F_6A88_85A3_08D3, c)
    }

    /// Multiplication carries every input bit into the top bits, which are
    /// the ones used.
    #[inline(always)]
    fn step(h: u64, c: u8) -> u64 {
        (h.rotate_left(9) ^ u64::from(c)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    #[inline(always)]
    fn slot(h: u64) -> (usize, u64) {
        let i = h >> (64 - FILTER_BITS);
        ((i / 64) as usize * 2, 1u64 << (i % 64))
    }

    fn insert(&mut self, set: usize, h: u64) {
        let (w, bit) = Filter::slot(h);
        self.bits[w + set] |= bit;
    }

    #[inline(always)]
    fn contains(&self, set: usize, h: u64) -> bool {
        let (w, bit) = Filter::slot(h);
        self.bits[w + set] & bit != 0
    }
}

impl Tables {
    /// Builds the filter; everything else is filled on demand.
    pub(crate) fn build(v: &Vocab) -> Tables {
        let n = v.len();
        let mut filter = Filter::new();
        for r in 0..n as u32 {
            let Some(t) = v.token_bytes(r) else { continue };
            if t.len() >= 2 {
                let mut h = Filter::start(t[0]);
                for (l, &c) in t.iter().enumerate().skip(1) {
                    h = Filter::step(h, c);
                    filter.insert(if l + 1 == t.len() { TOKEN } else { PREFIX }, h);
                }
            }
        }
        Tables {
            filter,
            next_prefix: (0..n).map(|_| AtomicU32::new(UNKNOWN)).collect(),
            split: (0..n).map(|_| AtomicU64::new(UNKNOWN_SPLIT)).collect(),
        }
    }

    /// The longest token that is a proper prefix of token `t`, or `NONE`.
    #[inline]
    fn next_prefix(&self, v: &Vocab, t: u32) -> u32 {
        let known = self.next_prefix[t as usize].load(Relaxed);
        if known != UNKNOWN {
            return known;
        }
        let bytes = v.token_bytes(t).unwrap_or_default();
        let found = (1..bytes.len()).rev().find_map(|l| v.rank_at(bytes, 0, l)).unwrap_or(NONE);
        self.next_prefix[t as usize].store(found, Relaxed);
        found
    }

    /// The last merge that makes token `t`, `(t, t)` for a single byte.
    #[inline]
    fn split(&self, v: &Vocab, t: u32) -> (u32, u32) {
        let known = self.split[t as usize].load(Relaxed);
        if known != UNKNOWN_SPLIT {
            return ((known >> 32) as u32, known as u32);
        }
        let (l, r) = self.find_split(v, t);
        self.split[t as usize].store(u64::from(l) << 32 | u64::from(r), Relaxed);
        (l, r)
    }

    /// The longest prefix token `l` of token `id` whose remainder is a token
    /// `r`, both of lower rank, that byte-pair merging would leave side by
    /// side. Recursion (through [`Tables::compatible`]) only reaches tokens
    /// that are shorter than `id`, so it ends, at most a token length deep.
    fn find_split(&self, v: &Vocab, id: u32) -> (u32, u32) {
        let Some(t) = v.token_bytes(id) else { return (id, id) };
        let mut l = self.next_prefix(v, id);
        while l != NONE {
            let at = v.token_len(l);
            if let Some(r) = v.rank_at(t, at, t.len()) {
                // Limit `id`: only merges that come before `id` itself count.
                if l < id && r < id && self.compatible(v, t, at, (l, r), id, None) {
                    return (l, r);
                }
            }
            l = self.next_prefix(v, l);
        }
        (id, id)
    }

    /// Whether byte-pair merging `bytes(a) ++ bytes(b)` gives `[a, b]`;
    /// the two tokens meet at `s[at]`.
    ///
    /// Walks both merge trees back towards single bytes, always undoing the
    /// later of the two outermost merges. `limit` is the rank a merge across
    /// the boundary would have to beat: if the two current parts are
    /// exactly the split of a token of lower rank than the merge just
    /// undone, BPE would have joined them first, so `a b` cannot be its
    /// output. When both sides are single bytes, nothing crossed first.
    /// (`first_limit` is `NONE` for text; [`Tables::find_split`] passes the
    /// token it is splitting, which its own parts trivially make.)
    #[inline]
    fn compatible(
        &self,
        v: &Vocab,
        s: &[u8],
        at: usize,
        (mut a, mut b): (u32, u32),
        first_limit: u32,
        mut memo: Option<&mut JoinMemo>,
    ) -> bool {
        let mut limit = first_limit;
        let (mut la, mut lb) = (v.token_len(a), v.token_len(b));
        loop {
            // In text the join's full answer is memoized; while splitting a
            // token, joins at or past `limit` are not worked out at all,
            // which is what keeps that recursion on shorter tokens.
            let joined = match memo.as_deref_mut() {
                Some(m) => m.get_or(a, b, || self.join(v, s, at - la, at + lb, (a, b), NONE)),
                None => self.join(v, s, at - la, at + lb, (a, b), limit),
            };
            if joined < limit {
                return false;
            }
            // Undo the later merge: `a`'s (its right part stays next to the
            // boundary) or `b`'s (its left part does); a single byte has no
            // merge to undo, so the other side goes instead. Equal ranks go
            // to the leftmost pair, so a boundary merge beats a merge inside
            // `b` of the same rank (limit `b + 1`) but not one inside `a`
            // (limit `a`).
            if a > b {
                limit = a;
                let right = self.split(v, a).1;
                if right == a {
                    limit = b + 1;
                    let left = self.split(v, b).0;
                    if left == b {
                        return true;
                    }
                    (b, lb) = (left, v.token_len(left));
                } else {
                    (a, la) = (right, v.token_len(right));
                }
            } else {
                limit = b + 1;
                let left = self.split(v, b).0;
                if left == b {
                    limit = a;
                    let right = self.split(v, a).1;
                    if right == a {
                        return true;
                    }
                    (a, la) = (right, v.token_len(right));
                } else {
                    (b, lb) = (left, v.token_len(left));
                }
            }
        }
    }

    /// The token below `limit` whose last merge joins `pair`, spelled
    /// `s[from..to]`, or `NONE`: the text is a token, and that token's
    /// split is the pair.
    #[inline]
    fn join(&self, v: &Vocab, s: &[u8], from: usize, to: usize, pair: (u32, u32), limit: u32) -> u32 {
        // Most spans across a boundary are not tokens; the filter says so
        // from cache, where the vocabulary probe would go to memory.
        let h = s[from + 1..to].iter().fold(Filter::start(s[from]), |h, &c| Filter::step(h, c));
        if !self.filter.contains(TOKEN, h) {
            return NONE;
        }
        match v.rank_at(s, from, to) {
            Some(t) if t < limit && self.split(v, t) == pair => t,
            _ => NONE,
        }
    }

    /// The longest token at `s[at..end]` (`at < end`): forward while the
    /// text is a prefix of some token (by the filter), then back from the
    /// furthest point to the first length the vocabulary confirms. `hashes`
    /// holds the filter hash of each length read.
    ///
    /// Also returns how many bytes the walk read and whether it stopped
    /// because the filter ruled out every longer token (rather than at the
    /// piece's end or the longest token length): then the answer depends on
    /// those bytes alone.
    #[inline]
    fn longest(&self, v: &Vocab, s: &[u8], at: usize, end: usize, hashes: &mut [u64]) -> (u32, usize, bool) {
        let limit = (end - at).min(hashes.len() - 1);
        let mut h = Filter::start(s[at]);
        let mut far = 1;
        let mut stopped = false;
        while far < limit {
            h = Filter::step(h, s[at + far]);
            far += 1;
            hashes[far] = h;
            if !self.filter.contains(PREFIX, h) {
                stopped = true;
                break;
            }
        }
        for l in (2..=far).rev() {
            if self.filter.contains(TOKEN, hashes[l]) {
                if let Some(r) = v.rank_at(s, at, at + l) {
                    return (r, far, stopped);
                }
            }
        }
        (v.byte_rank[usize::from(s[at])], far, stopped)
    }

    /// [`Tables::longest`] through `memo` (see [`LongestMemo`]).
    #[inline]
    fn longest_memo(
        &self,
        v: &Vocab,
        s: &[u8],
        at: usize,
        end: usize,
        hashes: &mut [u64],
        memo: &mut LongestMemo,
    ) -> u32 {
        let Some(window) = s.get(at..at + AHEAD).filter(|_| at + AHEAD <= end) else {
            return self.longest(v, s, at, end, hashes).0;
        };
        let key = u128::from_le_bytes(window.try_into().unwrap_or([0; AHEAD]));
        let slot = LongestMemo::slot(key);
        let (k, r) = memo.slots[slot];
        if k == key && r != NONE {
            return r;
        }
        let (r, far, stopped) = self.longest(v, s, at, end, hashes);
        if stopped && far <= AHEAD {
            memo.slots[slot] = (key, r);
        }
        r
    }

    /// Heap bytes held by the tables.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.filter.bits.capacity() * 8 + self.next_prefix.capacity() * 4 + self.split.capacity() * 8
    }
}

/// Candidate tokens [`encode`] may try per input byte before it hands the
/// piece back to the merge queue.
pub(crate) const STEPS_PER_BYTE: usize = 64;

/// Reusable buffers for [`encode`].
#[derive(Default)]
pub(crate) struct Scratch {
    /// Bit `i` set: a compatible tokenization of the rest may start at `i`.
    open: Vec<u64>,
    tokens: Vec<u32>,
    /// Filter hashes by match length, for [`Tables::longest`].
    hashes: Vec<u64>,
    memo: JoinMemo,
    /// Whole answers of [`Tables::compatible`] by token pair.
    pairs: PairMemo,
    /// Whole answers of [`Tables::longest`] by the sixteen bytes ahead.
    ahead: LongestMemo,
}

/// A per-thread, direct-mapped memo of [`Tables::compatible`] for text, by
/// token pair. In text, whether `a b` is compatible depends on the two ids
/// alone (the bytes on either side of the boundary are theirs), so one
/// lookup replaces the walk down both merge trees, which consults
/// [`JoinMemo`] once per level. Long pieces repeat a few pairs constantly
/// (a run of one letter: one pair). Keyed like [`JoinMemo`]; the owner check
/// is shared with it through [`Scratch`].
pub(crate) struct PairMemo {
    /// `(a << 32 | b) << 1 | answer`; `u64::MAX` is empty (no pair of real
    /// ids shifted left gives it).
    slots: Vec<u64>,
}

const PAIR_SLOTS: usize = 4096;

impl Default for PairMemo {
    fn default() -> Self {
        PairMemo { slots: vec![u64::MAX; PAIR_SLOTS] }
    }
}

impl PairMemo {
    #[inline(always)]
    fn get_or(&mut self, a: u32, b: u32, compatible: impl FnOnce() -> bool) -> bool {
        let key = u64::from(a) << 32 | u64::from(b);
        let slot = &mut self.slots[(key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 52) as usize];
        if *slot != u64::MAX && *slot >> 1 == key {
            return *slot & 1 == 1;
        }
        let answer = compatible();
        *slot = key << 1 | u64::from(answer);
        answer
    }
}

/// A per-thread, direct-mapped memo of [`Tables::longest`] by the sixteen
/// bytes that follow a position. The longest-match walk reads forward until
/// the filter says no token goes on; when that happens within those sixteen
/// bytes (and inside the piece), the answer depends on them alone, so the
/// same sixteen bytes again (a run of one character, a repeated separator
/// or indentation) get it with one compare instead of the walk and its
/// vocabulary probes.
pub(crate) struct LongestMemo {
    slots: Vec<(u128, u32)>,
}

const AHEAD: usize = 16;
const AHEAD_SLOTS: usize = 1024;

impl Default for LongestMemo {
    fn default() -> Self {
        // A key is 16 bytes of text; the all-zero key with rank `NONE`
        // never matches a real answer (the lookup also checks the rank).
        LongestMemo { slots: vec![(0, NONE); AHEAD_SLOTS] }
    }
}

impl LongestMemo {
    #[inline(always)]
    fn slot(key: u128) -> usize {
        let h =
            (key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ ((key >> 64) as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        (h >> (64 - AHEAD_SLOTS.trailing_zeros())) as usize
    }
}

/// A per-thread, direct-mapped memo of [`Tables::join`] by token pair.
/// Compatibility walks end in the small tokens near a boundary, and those
/// pairs recur constantly (in a run of one letter, almost every walk is the
/// same), so most joins are answered without hashing the text. Slots carry
/// the encoding's tables address, since ids mean different bytes in
/// different encodings.
pub(crate) struct JoinMemo {
    slots: Vec<(u64, u32)>,
    owner: usize,
}

const MEMO_SLOTS: usize = 4096;

impl Default for JoinMemo {
    fn default() -> Self {
        JoinMemo { slots: vec![(u64::MAX, NONE); MEMO_SLOTS], owner: 0 }
    }
}

impl JoinMemo {
    /// Empties the memo unless it was last filled for `owner`.
    /// Whether the memo was last filled for `owner`; empties it if not.
    fn claim(&mut self, owner: usize) -> bool {
        if self.owner != owner {
            self.slots.fill((u64::MAX, NONE));
            self.owner = owner;
            return false;
        }
        true
    }

    #[inline(always)]
    fn get_or(&mut self, a: u32, b: u32, join: impl FnOnce() -> u32) -> u32 {
        let key = u64::from(a) << 32 | u64::from(b);
        let slot = &mut self.slots[(key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 52) as usize];
        if slot.0 == key {
            return slot.1;
        }
        let joined = join();
        *slot = (key, joined);
        joined
    }
}

/// Encodes `s[a..b]` into `sc.tokens`, which it returns.
///
/// `None` means the search gave up: it found no compatible tokenization
/// (impossible for a vocabulary whose every token encodes to itself, which
/// the tests check for every encoding), or it tried more than
/// [`STEPS_PER_BYTE`] candidates per byte. The bitfield bounds how often a
/// position can fail, but not how often a forward run is redone after one,
/// so the budget is what makes linear time a guarantee rather than an
/// observation; the caller then merges with the O(n log n) queue. Real and
/// hostile inputs alike stay far below it (about 2 candidates per token).
pub(crate) fn encode<'a>(
    t: &Tables,
    v: &Vocab,
    s: &[u8],
    a: usize,
    b: usize,
    sc: &'a mut Scratch,
) -> Option<&'a [u32]> {
    encode_within(t, v, s, a, b, sc, STEPS_PER_BYTE)
}

fn encode_within<'a>(
    t: &Tables,
    v: &Vocab,
    s: &[u8],
    a: usize,
    b: usize,
    sc: &'a mut Scratch,
    steps_per_byte: usize,
) -> Option<&'a [u32]> {
    let n = b - a;
    sc.open.clear();
    sc.open.resize(n / 64 + 1, u64::MAX);
    sc.tokens.clear();
    sc.hashes.resize(v.max_token_len + 1, 0);
    if !sc.memo.claim(t as *const Tables as usize) {
        // The ids in the other memos belong to another encoding.
        sc.pairs.slots.fill(u64::MAX);
        sc.ahead.slots.fill((0, NONE));
    }
    let open = &mut sc.open;
    let tokens = &mut sc.tokens;
    let hashes = &mut sc.hashes;
    let memo = &mut sc.memo;
    let pairs = &mut sc.pairs;
    let ahead = &mut sc.ahead;
    let is_open = |open: &[u64], i: usize| open[i / 64] >> (i % 64) & 1 == 1;

    let mut budget = n.saturating_mul(steps_per_byte);
    let mut pos = 0usize;
    let mut next = t.longest_memo(v, s, a, b, hashes, ahead);
    loop {
        let last = tokens.last().copied();
        let mut tok = next;
        loop {
            budget = budget.checked_sub(1)?;
            let end = pos + v.token_len(tok);
            if is_open(open, end)
                && last.is_none_or(|l| pairs.get_or(l, tok, || t.compatible(v, s, a + pos, (l, tok), NONE, Some(memo))))
            {
                tokens.push(tok);
                pos = end;
                if pos == n {
                    return Some(tokens);
                }
                next = t.longest_memo(v, s, a + pos, b, hashes, ahead);
                break;
            }
            let shorter = t.next_prefix(v, tok);
            if shorter != NONE {
                tok = shorter;
                continue;
            }
            // Nothing from `pos` fits after `last`: no compatible
            // tokenization continues from here, so back up one token and
            // try its shorter prefixes.
            open[pos / 64] &= !(1u64 << (pos % 64));
            let undone = tokens.pop()?;
            pos -= v.token_len(undone);
            next = undone;
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::bpe;
    use crate::tokens::Encoding;

    fn merged(v: &Vocab, s: &[u8]) -> Vec<u32> {
        let mut out = Vec::new();
        bpe::merge_long(s, 0, s.len(), v, &mut bpe::Scratch::default(), |r| out.push(r));
        out
    }

    #[test]
    fn every_token_encodes_to_itself_and_splits_into_two_earlier_tokens() {
        for e in Encoding::ALL {
            let v = Vocab::load(e.vocab_file()).unwrap();
            let t = Tables::build(&v);
            let mut sc = Scratch::default();
            for r in 0..v.len() as u32 {
                let Some(bytes) = v.token_bytes(r) else { continue };
                assert_eq!(encode(&t, &v, bytes, 0, bytes.len(), &mut sc), Some(&[r][..]), "{e} token {r} {bytes:?}");
                // Only single bytes are unmerged; every other token is the
                // concatenation of two tokens of lower rank.
                let (l, x) = t.split(&v, r);
                if bytes.len() == 1 {
                    assert_eq!((l, x), (r, r), "{e} byte token {r}");
                } else {
                    assert!(l < r && x < r, "{e} token {r} splits into ({l}, {x})");
                    let joined = [v.token_bytes(l).unwrap_or_default(), v.token_bytes(x).unwrap_or_default()].concat();
                    assert_eq!(joined, bytes, "{e} token {r}");
                }
            }
        }
    }

    /// Long pieces of many shapes agree with the merge-queue algorithm
    /// (itself checked against tiktoken-rs by the oracle tests). Small
    /// alphabets make deep merge trees and many near-ties, which is where a
    /// wrong compatibility rule would show.
    #[test]
    fn long_pieces_agree_with_merging() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut rnd = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let alphabets: [&[&str]; 9] = [
            &["a"],
            &[" "],
            &["a", "b"],
            &[" ", "\n", "\t"],
            &["ab", "ba", "a", "b", "aa"],
            &["=", "-", "=-", "_"],
            &["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"],
            &["q", "w", "e", "r", "t", "y", "u", "i", "o", "p", "a", "s", "d", "f", "g", "h", "j", "k", "l", "z", "x"],
            &["A", "z", "0", "+", "/", "Q", "k", "9", "é", "日", "本", "ー", "ä", "\u{1F600}"],
        ];
        for e in Encoding::ALL {
            let v = Vocab::load(e.vocab_file()).unwrap();
            let t = Tables::build(&v);
            let mut sc = Scratch::default();
            for case in 0..1500 {
                let alphabet = alphabets[case % alphabets.len()];
                let target = 65 + rnd(if case % 10 == 0 { 4000 } else { 300 });
                let mut text = String::new();
                while text.len() < target {
                    text.push_str(alphabet[rnd(alphabet.len())]);
                }
                let s = text.as_bytes();
                let want = merged(&v, s);
                assert_eq!(encode(&t, &v, s, 0, s.len(), &mut sc), Some(&want[..]), "{e} case {case}: {text:?}");
            }
        }
    }

    /// The memo slots are filled lazily by whichever thread needs them
    /// first; threads racing on fresh tables must all get the same answer.
    #[test]
    fn threads_filling_fresh_tables_agree() {
        let v = Vocab::load(Encoding::Cl100kBase.vocab_file()).unwrap();
        let t = Tables::build(&v);
        let texts: Vec<String> = (0..16)
            .map(|i| match i % 4 {
                0 => "a".repeat(500 + i),
                1 => " ".repeat(300 + i),
                2 => "xqzjvkwpfh".repeat(40 + i),
                _ => "=-".repeat(100 + i),
            })
            .collect();
        let want: Vec<Vec<u32>> = texts.iter().map(|x| merged(&v, x.as_bytes())).collect();
        std::thread::scope(|scope| {
            for k in 0..8 {
                let (t, v, texts, want) = (&t, &v, &texts, &want);
                scope.spawn(move || {
                    let mut sc = Scratch::default();
                    for i in (0..texts.len()).map(|i| (i + k * 5) % texts.len()) {
                        let s = texts[i].as_bytes();
                        assert_eq!(encode(t, v, s, 0, s.len(), &mut sc), Some(&want[i][..]));
                    }
                });
            }
        });
    }

    /// Out of budget, the encoder gives the piece back instead of an answer
    /// (the engine then merges it with the queue).
    #[test]
    fn an_exhausted_budget_gives_the_piece_back() {
        let v = Vocab::load(Encoding::Cl100kBase.vocab_file()).unwrap();
        let t = Tables::build(&v);
        let s = " ".repeat(200);
        let mut sc = Scratch::default();
        assert_eq!(encode_within(&t, &v, s.as_bytes(), 0, s.len(), &mut sc, 0), None);
        let want = merged(&v, s.as_bytes());
        assert_eq!(encode(&t, &v, s.as_bytes(), 0, s.len(), &mut sc), Some(&want[..]));
    }
}
