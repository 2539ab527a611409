//! The BPE model with HF `tokenizers`' semantics.
//!
//! HF merges only the pairs its `merges` list names, by their position in
//! the list, and the merged token is the vocabulary's id for the two
//! strings joined; tiktoken instead merges any adjacent pair whose
//! concatenation is a token, by that token's rank. The two agree on files
//! converted from tiktoken (Llama 3, gpt-oss) but not in general (Qwen's
//! and DeepSeek's lists were trained, not derived), so this model follows
//! HF's rule: a priority queue of (rank, position) pairs, lowest rank and
//! then leftmost first, with HF's own check for stale entries (the pair at
//! the position must still merge into the same id). O(n log n) in the
//! piece's length, so a long piece without splits (SentencePiece-style
//! files merge a whole text) stays fast.
//!
//! Symbols start as single bytes (byte-level files: the vocabulary was
//! converted back from GPT-2's alphabet) or single characters (other
//! files), with `<0xXX>` byte tokens or the unknown token for characters
//! the vocabulary lacks, as HF's `BPE::merge_word` does.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

/// Every model token's bytes, by id (what loaders return beside the model,
/// for decoding).
pub(crate) type TokenBytes = Vec<(u32, Vec<u8>)>;

/// How a piece's first symbols are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Units {
    /// One symbol per byte (byte-level files).
    Bytes,
    /// One symbol per character.
    Chars,
}

/// A loaded BPE model.
#[derive(Debug)]
pub(crate) struct Bpe {
    pub(crate) units: Units,
    /// Token bytes (raw bytes for byte-level files, UTF-8 otherwise) to id.
    pub(crate) vocab: FxHashMap<Box<[u8]>, u32>,
    /// (left, right) to (rank, merged id).
    pub(crate) merges: FxHashMap<(u32, u32), (u32, u32)>,
    /// The id of each single byte (`Units::Bytes`), `u32::MAX` when absent.
    pub(crate) byte_ids: [u32; 256],
    /// The id of each `<0xXX>` token, when the file has `byte_fallback`.
    pub(crate) fallback: Option<[u32; 256]>,
    pub(crate) unk: Option<u32>,
    pub(crate) fuse_unk: bool,
    /// A piece that is one token is that token, merges or not (Llama 3).
    pub(crate) ignore_merges: bool,
    /// No token has `▁` right after another character (see
    /// [`metaspace_runs`]), so no merge crosses the start of a run of `▁`
    /// and a piece is merged run by run.
    pub(crate) metaspace_runs: bool,
}

/// `▁` (U+2581), SentencePiece's space.
const METASPACE: &[u8] = "\u{2581}".as_bytes();

/// Whether no token of `tokens` has `▁` right after a character other than
/// `▁`. Then no merge can join the text before a run of `▁` to the run, so
/// cutting a piece before each such run changes nothing: the merges inside
/// each part are the same and in the same order (a merge's priority only
/// ranks it against merges in the same part, which it never touches
/// otherwise). SentencePiece-style files without a pre-tokenizer (Llama 2,
/// Mistral v1) hand the model the whole text as one piece; cut this way,
/// the merge heap holds a word at a time and the piece cache sees words.
pub(crate) fn metaspace_runs<'a>(mut tokens: impl Iterator<Item = &'a [u8]>) -> bool {
    !tokens.any(|t| run_starts(t).next().is_some())
}

/// Byte offsets in `piece` where a run of `▁` starts after another
/// character.
fn run_starts(piece: &[u8]) -> impl Iterator<Item = usize> + '_ {
    let mut from = 1;
    std::iter::from_fn(move || {
        while from + METASPACE.len() <= piece.len() {
            let i = from;
            from += 1;
            if &piece[i..i + METASPACE.len()] == METASPACE
                && (i < METASPACE.len() || &piece[i - METASPACE.len()..i] != METASPACE)
            {
                from = i + METASPACE.len();
                return Some(i);
            }
        }
        None
    })
}

/// Reusable buffers for [`Bpe::encode_piece`], and the pieces already
/// merged: text repeats its words, and a merge by ranks costs a heap walk
/// per piece (Qwen's and DeepSeek's files, whose pieces are not looked up
/// whole, spent a third of a count there). Bounded; kept by the tokenizer
/// across calls, one per slot (`scratch.rs`), so threads share nothing.
#[derive(Default)]
pub(crate) struct Scratch {
    ids: Vec<u32>,
    next: Vec<u32>,
    prev: Vec<u32>,
    heap: BinaryHeap<Reverse<(u32, u32, u32)>>,
    /// Piece bytes to the range of `cached_ids` holding its ids.
    cache: FxHashMap<Box<[u8]>, (u32, u32)>,
    cached_ids: Vec<u32>,
}

impl Scratch {
    /// Cuts the work buffers back to [`KEEP_SYMBOLS`] (the cache is bounded
    /// on its own).
    pub(crate) fn trim(&mut self) {
        if self.ids.capacity() > KEEP_SYMBOLS {
            *self = Scratch {
                cache: std::mem::take(&mut self.cache),
                cached_ids: std::mem::take(&mut self.cached_ids),
                ..Scratch::default()
            };
        }
    }
}

/// Symbols a kept scratch may hold room for (a long piece's buffers go).
const KEEP_SYMBOLS: usize = 4096;

const NONE: u32 = u32::MAX;
/// Pieces longer than this are merged every time (they rarely repeat).
const CACHE_MAX_PIECE: usize = 32;
/// Pieces remembered: at most this many entries of at most
/// `CACHE_MAX_PIECE` bytes and ids each (about 1 MiB at worst), then the
/// cache starts over.
const CACHE_MAX_ENTRIES: usize = 8192;

impl Bpe {
    /// Appends the ids of `piece` to `out`.
    pub(crate) fn encode_piece(&self, piece: &[u8], sc: &mut Scratch, out: &mut Vec<u32>) {
        if self.metaspace_runs {
            let mut start = 0;
            for i in run_starts(piece) {
                self.encode_part(&piece[start..i], sc, out);
                start = i;
            }
            self.encode_part(&piece[start..], sc, out);
        } else {
            self.encode_part(piece, sc, out);
        }
    }

    /// [`Bpe::encode_piece`] for a part no merge crosses out of.
    fn encode_part(&self, piece: &[u8], sc: &mut Scratch, out: &mut Vec<u32>) {
        if piece.is_empty() {
            return;
        }
        if self.ignore_merges {
            if let Some(&id) = self.vocab.get(piece) {
                out.push(id);
                return;
            }
        }
        let cacheable = piece.len() <= CACHE_MAX_PIECE;
        if cacheable {
            if let Some(&(start, len)) = sc.cache.get(piece) {
                out.extend_from_slice(&sc.cached_ids[start as usize..(start + len) as usize]);
                return;
            }
        }
        let before = out.len();
        sc.ids.clear();
        match self.units {
            Units::Bytes => sc.ids.extend(piece.iter().map(|&b| self.byte_ids[b as usize]).filter(|&id| id != NONE)),
            Units::Chars => self.char_symbols(piece, &mut sc.ids),
        }
        self.merge_all(sc);
        let mut i = 0;
        while i < sc.ids.len() {
            out.push(sc.ids[i]);
            i = sc.next[i] as usize;
        }
        if cacheable {
            if sc.cache.len() >= CACHE_MAX_ENTRIES {
                // Full: start over, so the cache follows the text being
                // counted now rather than the first text it saw.
                sc.cache.clear();
                sc.cached_ids.clear();
            }
            let start = sc.cached_ids.len() as u32;
            sc.cached_ids.extend_from_slice(&out[before..]);
            sc.cache.insert(piece.into(), (start, (out.len() - before) as u32));
        }
    }

    /// HF's `merge_word` start: each character's id, else its `<0xXX>`
    /// byte tokens, else the unknown token (runs fused when `fuse_unk`).
    /// HF flushes a pending unknown only before a known character or at the
    /// end, not before byte tokens; so does this.
    fn char_symbols(&self, piece: &[u8], ids: &mut Vec<u32>) {
        let s = std::str::from_utf8(piece).unwrap_or_default();
        let mut pending_unk = false;
        for (i, c) in s.char_indices() {
            let bytes = &piece[i..i + c.len_utf8()];
            if let Some(&id) = self.vocab.get(bytes) {
                if pending_unk {
                    ids.extend(self.unk);
                    pending_unk = false;
                }
                ids.push(id);
                continue;
            }
            if let Some(fb) = &self.fallback {
                if bytes.iter().all(|&b| fb[b as usize] != NONE) {
                    ids.extend(bytes.iter().map(|&b| fb[b as usize]));
                    continue;
                }
            }
            if self.unk.is_some() {
                if pending_unk && !self.fuse_unk {
                    ids.extend(self.unk);
                }
                pending_unk = true;
            }
        }
        if pending_unk {
            ids.extend(self.unk);
        }
    }

    /// HF's `Word::merge_all` without dropout, over `sc.ids` as a linked
    /// list; leaves `sc.next` pointing past each surviving symbol.
    fn merge_all(&self, sc: &mut Scratch) {
        let n = sc.ids.len();
        sc.next.clear();
        sc.next.extend(1..=n as u32);
        sc.prev.clear();
        sc.prev.extend((0..n as u32).map(|i| i.wrapping_sub(1)));
        sc.heap.clear();
        for i in 0..n.saturating_sub(1) {
            if let Some(&(rank, id)) = self.merges.get(&(sc.ids[i], sc.ids[i + 1])) {
                sc.heap.push(Reverse((rank, i as u32, id)));
            }
        }
        // `alive[i]` is HF's `len != 0`: merged-away symbols are marked by
        // pointing `prev` at themselves.
        while let Some(Reverse((_, pos, new_id))) = sc.heap.pop() {
            let i = pos as usize;
            if sc.prev[i] == pos {
                continue; // absorbed into the symbol before it
            }
            let j = sc.next[i] as usize;
            if j >= n {
                continue;
            }
            if self.merges.get(&(sc.ids[i], sc.ids[j])).is_none_or(|&(_, id)| id != new_id) {
                continue; // stale
            }
            sc.ids[i] = new_id;
            let after = sc.next[j];
            sc.next[i] = after;
            sc.prev[j] = j as u32;
            if (after as usize) < n {
                sc.prev[after as usize] = pos;
            }
            let p = sc.prev[i];
            if p != NONE {
                if let Some(&(rank, id)) = self.merges.get(&(sc.ids[p as usize], new_id)) {
                    sc.heap.push(Reverse((rank, p, id)));
                }
            }
            if (after as usize) < n {
                if let Some(&(rank, id)) = self.merges.get(&(new_id, sc.ids[after as usize])) {
                    sc.heap.push(Reverse((rank, pos, id)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(tokens: &[&str], merges: &[(&str, &str)]) -> Bpe {
        let vocab: FxHashMap<Box<[u8]>, u32> =
            tokens.iter().enumerate().map(|(i, t)| (t.as_bytes().into(), i as u32)).collect();
        let id = |s: &str| vocab[s.as_bytes()];
        let merges =
            merges.iter().enumerate().map(|(r, (a, b))| ((id(a), id(b)), (r as u32, id(&format!("{a}{b}"))))).collect();
        let mut byte_ids = [NONE; 256];
        for (b, slot) in byte_ids.iter_mut().enumerate() {
            if let Some(&i) = vocab.get(&[b as u8][..]) {
                *slot = i;
            }
        }
        Bpe {
            units: Units::Bytes,
            vocab,
            merges,
            byte_ids,
            fallback: None,
            unk: None,
            fuse_unk: false,
            ignore_merges: false,
            metaspace_runs: false,
        }
    }

    fn enc(m: &Bpe, s: &str) -> Vec<u32> {
        let mut out = Vec::new();
        m.encode_piece(s.as_bytes(), &mut Scratch::default(), &mut out);
        out
    }

    #[test]
    fn a_piece_merged_again_in_one_call_gives_the_same_ids() {
        let m = model(&["a", "b", "ab", "abab"], &[("a", "b"), ("ab", "ab")]);
        let mut sc = Scratch::default();
        let mut out = Vec::new();
        for piece in ["abab", "ab", "abab", "ba", "ba", "abab"] {
            m.encode_piece(piece.as_bytes(), &mut sc, &mut out);
        }
        assert_eq!(out, [3, 2, 3, 1, 0, 1, 0, 3]);
        assert_eq!(sc.cache.len(), 3, "each distinct piece remembered once");
        // A piece longer than the cache's limit is merged each time, not kept.
        let long = "ab".repeat(CACHE_MAX_PIECE);
        let mut a = Vec::new();
        m.encode_piece(long.as_bytes(), &mut sc, &mut a);
        assert_eq!(a, vec![3; CACHE_MAX_PIECE / 2]);
        assert_eq!(sc.cache.len(), 3);
    }

    #[test]
    fn a_full_cache_starts_over_and_a_trimmed_scratch_keeps_it() {
        let m = model(&["a", "b", "ab", "abab"], &[("a", "b"), ("ab", "ab")]);
        let mut sc = Scratch::default();
        // More distinct cacheable pieces than the cache holds: every answer
        // stays the merge's own, and the cache never grows past its bound.
        for n in 1..=CACHE_MAX_ENTRIES + 10 {
            let piece = format!("{}{}", "ab".repeat(n % 16 + 1), "b".repeat(n / 16 % 16));
            let mut got = Vec::new();
            m.encode_piece(piece.as_bytes(), &mut sc, &mut got);
            if n % 997 == 0 {
                assert_eq!(got, enc(&m, &piece), "{piece}");
            }
            assert!(sc.cache.len() <= CACHE_MAX_ENTRIES);
        }
        // A long piece grows the work buffers; trimming drops them and keeps
        // the cache.
        let kept = sc.cache.len();
        let mut out = Vec::new();
        m.encode_piece("ab".repeat(KEEP_SYMBOLS).as_bytes(), &mut sc, &mut out);
        sc.trim();
        assert!(sc.ids.capacity() <= KEEP_SYMBOLS);
        assert_eq!(sc.cache.len(), kept);
    }

    /// A character-unit model over `tokens` (each merge's halves and join
    /// must be tokens), with the run cut on when the vocabulary allows it.
    fn char_model(tokens: &[&str], merges: &[(&str, &str)]) -> Bpe {
        let mut m = model(tokens, merges);
        m.units = Units::Chars;
        m.metaspace_runs = metaspace_runs(m.vocab.keys().map(|k| &k[..]));
        m
    }

    #[test]
    fn cutting_before_runs_of_metaspace_changes_no_id() {
        let merges = [("▁", "a"), ("a", "b"), ("▁", "▁"), ("▁a", "b"), ("▁▁", "a"), ("b", "b")];
        let m = char_model(&["a", "b", "▁", "▁a", "ab", "▁▁", "▁ab", "▁▁a", "bb"], &merges);
        assert!(m.metaspace_runs);
        let whole = Bpe {
            metaspace_runs: false,
            ..model(&["a", "b", "▁", "▁a", "ab", "▁▁", "▁ab", "▁▁a", "bb"], &merges)
        };
        let whole = Bpe { units: Units::Chars, ..whole };
        // Every string of up to 7 symbols over {a, b, ▁}.
        let alphabet = ["a", "b", "▁"];
        for len in 1..=7u32 {
            for mut n in 0..3usize.pow(len) {
                let mut s = String::new();
                for _ in 0..len {
                    s.push_str(alphabet[n % 3]);
                    n /= 3;
                }
                assert_eq!(enc(&m, &s), enc(&whole, &s), "{s}");
            }
        }
        assert_eq!(run_starts("a▁▁b▁".as_bytes()).collect::<Vec<_>>(), [1, 8]);
        assert_eq!(run_starts("▁▁a".as_bytes()).count(), 0);
    }

    #[test]
    fn a_token_with_metaspace_inside_keeps_the_piece_whole() {
        // "b▁" crosses the start of a run: cutting there would lose it.
        let m = char_model(&["a", "b", "▁", "b▁"], &[("b", "▁")]);
        assert!(!m.metaspace_runs);
        assert_eq!(enc(&m, "ab▁"), [0, 3]);
    }

    #[test]
    fn merges_follow_the_list_not_the_vocabulary() {
        // "abc" is a token, but no listed merge makes it from "ab" + "c".
        let m = model(&["a", "b", "c", "ab", "bc", "abc"], &[("a", "b"), ("b", "c")]);
        assert_eq!(enc(&m, "abc"), [3, 2]);
        let mut m = m;
        m.ignore_merges = true;
        assert_eq!(enc(&m, "abc"), [5], "a piece that is a token is that token");
        assert_eq!(enc(&m, "abcabc"), [3, 2, 3, 2]);
    }

    #[test]
    fn lowest_rank_first_then_leftmost() {
        let m = model(&["a", "aa", "aaa"], &[("a", "a"), ("aa", "a")]);
        assert_eq!(enc(&m, "aaa"), [2]);
        assert_eq!(enc(&m, "aaaa"), [1, 1]);
        // Leftmost pairs first: "aa" "aa" "a", then only the second "aa"
        // has an "a" after it.
        assert_eq!(enc(&m, "aaaaa"), [1, 2]);
        let long = "a".repeat(100_000);
        assert_eq!(enc(&m, &long).len(), 50_000);
    }
}
