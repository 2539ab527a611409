//! llama.cpp's SentencePiece-style BPE for `llama`-type GGUF vocabularies
//! (`tokenizer.ggml.model == "llama"`: Llama 2, Mistral v1-v3, Phi-3).
//!
//! These files have no merge list: each token has a score, and the rule
//! (llama.cpp's `llm_tokenizer_spm`) is to start from the text's UTF-8
//! characters and repeatedly join the adjacent pair whose concatenation is
//! a token with the highest score, the leftmost on a tie. A symbol that is
//! not a token at the end is written as its bytes' `<0xXX>` tokens. This is
//! not HF's rule (a merge list in rank order) and the two can give other
//! ids for the same text (docs/formats.md), so a GGUF follows llama.cpp.
//!
//! Every pair is looked up at most once per merge around it, through a
//! binary heap, so a piece of n characters costs O(n log n) lookups, each
//! bounded by the longest token: long unsplit text (`"a" * 100000`) stays
//! linear in practice. `Scratch::work` counts the lookups for the tests.

use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

/// A loaded score-ordered vocabulary.
#[derive(Debug)]
pub(crate) struct Spm {
    /// Every token's text to its id (the last id wins for a text listed
    /// twice, as llama.cpp's `token_to_id` does); control and byte tokens
    /// included, since llama.cpp merges into any token.
    pub(crate) ids: FxHashMap<Box<[u8]>, u32>,
    /// Each id's score.
    pub(crate) scores: Vec<f32>,
    /// The token for each byte a symbol falls back to.
    pub(crate) byte_ids: [u32; 256],
    /// The longest token in bytes: a pair longer cannot be a token.
    pub(crate) max_len: usize,
}

/// A candidate merge, ordered as llama.cpp's `llm_bigram_spm::comparator`:
/// the highest score first, then the leftmost.
#[derive(Debug, PartialEq, Eq)]
struct Bigram {
    /// The score as an order-preserving integer (`f32::total_cmp`'s order).
    score: u32,
    left: u32,
    right: u32,
    /// The pair's length in bytes when it was queued: if either side has
    /// changed since, the lengths no longer add up and the entry is stale.
    size: u32,
}

impl Ord for Bigram {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.score.cmp(&o.score).then(o.left.cmp(&self.left))
    }
}

impl PartialOrd for Bigram {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

fn order_key(score: f32) -> u32 {
    let b = score.to_bits();
    if b & 0x8000_0000 != 0 {
        !b
    } else {
        b | 0x8000_0000
    }
}

/// One symbol: a byte range of the piece in a linked list.
#[derive(Debug, Clone, Copy)]
struct Symbol {
    start: u32,
    len: u32,
    prev: u32,
    next: u32,
}

const NONE: u32 = u32::MAX;

/// Reusable buffers for [`Spm::encode_piece`].
#[derive(Default)]
pub(crate) struct Scratch {
    symbols: Vec<Symbol>,
    heap: BinaryHeap<Bigram>,
    /// Vocabulary lookups and heap operations done so far (a work count
    /// for the linearity tests, not a time).
    pub(crate) work: u64,
}

impl Scratch {
    /// Drops the buffers of a long piece (a SentencePiece-style file merges
    /// a whole text at once), so a kept scratch stays small.
    pub(crate) fn trim(&mut self) {
        if self.symbols.capacity() > KEEP_SYMBOLS {
            *self = Scratch::default();
        }
    }
}

/// Symbols a kept scratch may hold room for.
const KEEP_SYMBOLS: usize = 4096;

impl Spm {
    /// Appends the ids of `piece` (already with `▁` for spaces) to `out`.
    pub(crate) fn encode_piece(&self, piece: &[u8], sc: &mut Scratch, out: &mut Vec<u32>) {
        if piece.is_empty() {
            return;
        }
        sc.symbols.clear();
        sc.heap.clear();
        let mut offs = 0usize;
        while offs < piece.len() {
            // llama.cpp's `unicode_len_utf8`: the length the lead byte
            // announces (1 for a stray continuation byte), cut at the end.
            let n = utf8_len(piece[offs]).min(piece.len() - offs);
            let i = sc.symbols.len() as u32;
            offs += n;
            sc.symbols.push(Symbol {
                start: (offs - n) as u32,
                len: n as u32,
                prev: i.wrapping_sub(1),
                next: if offs == piece.len() { NONE } else { i + 1 },
            });
        }
        for i in 1..sc.symbols.len() as u32 {
            self.try_add(piece, sc, i - 1, i);
        }
        while let Some(b) = sc.heap.pop() {
            sc.work += 1;
            let (l, r) = (b.left as usize, b.right as usize);
            let (ls, rs) = (sc.symbols[l], sc.symbols[r]);
            if ls.len == 0 || rs.len == 0 || ls.len + rs.len != b.size {
                continue;
            }
            sc.symbols[l].len += rs.len;
            sc.symbols[r].len = 0;
            sc.symbols[l].next = rs.next;
            if rs.next != NONE {
                sc.symbols[rs.next as usize].prev = b.left;
            }
            self.try_add(piece, sc, ls.prev, b.left);
            self.try_add(piece, sc, b.left, rs.next);
        }
        let mut i = 0u32;
        while i != NONE {
            let s = sc.symbols[i as usize];
            let text = &piece[s.start as usize..(s.start + s.len) as usize];
            match self.ids.get(text) {
                Some(&id) => out.push(id),
                // Every merged symbol is a token; a single character that
                // is not is written as its bytes (llama.cpp's `resegment`).
                None => out.extend(text.iter().map(|&b| self.byte_ids[b as usize])),
            }
            i = s.next;
        }
    }

    fn try_add(&self, piece: &[u8], sc: &mut Scratch, left: u32, right: u32) {
        if left == NONE || right == NONE {
            return;
        }
        let (l, r) = (sc.symbols[left as usize], sc.symbols[right as usize]);
        let size = l.len + r.len;
        if size as usize > self.max_len {
            return;
        }
        sc.work += 1;
        let text = &piece[l.start as usize..(l.start + size) as usize];
        if let Some(&id) = self.ids.get(text) {
            let score = self.scores.get(id as usize).copied().unwrap_or(0.0);
            sc.heap.push(Bigram { score: order_key(score), left, right, size });
        }
    }
}

fn utf8_len(lead: u8) -> usize {
    const LOOKUP: [usize; 16] = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4];
    LOOKUP[(lead >> 4) as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(tokens: &[(&str, f32)]) -> Spm {
        let mut ids = FxHashMap::default();
        let mut scores = Vec::new();
        let mut byte_ids = [NONE; 256];
        for b in 0..=255u8 {
            byte_ids[b as usize] = scores.len() as u32;
            ids.insert(format!("<0x{b:02X}>").into_bytes().into_boxed_slice(), scores.len() as u32);
            scores.push(0.0);
        }
        for (t, s) in tokens {
            ids.insert(t.as_bytes().into(), scores.len() as u32);
            scores.push(*s);
        }
        let max_len = ids.keys().map(|k| k.len()).max().unwrap_or(0);
        Spm { ids, scores, byte_ids, max_len }
    }

    fn enc(m: &Spm, s: &str, sc: &mut Scratch) -> Vec<u32> {
        let mut out = Vec::new();
        m.encode_piece(s.as_bytes(), sc, &mut out);
        out
    }

    #[test]
    fn highest_score_first_then_leftmost_then_bytes() {
        // 256..: a b c ab bc
        let m = model(&[("a", -1.0), ("b", -1.0), ("c", -1.0), ("ab", -3.0), ("bc", -2.0)]);
        let sc = &mut Scratch::default();
        assert_eq!(enc(&m, "abc", sc), [256, 260], "bc scores higher than ab");
        assert_eq!(enc(&m, "abab", sc), [259, 259]);
        // Tie: leftmost first.
        let m = model(&[("a", -1.0), ("aa", -2.0)]);
        assert_eq!(enc(&m, "aaa", sc), [257, 256]);
        // A character the vocabulary lacks becomes its UTF-8 bytes.
        assert_eq!(enc(&m, "é", sc), [0xC3, 0xA9]);
    }

    /// Work, not time: the lookups and heap operations for `"a" * n` grow
    /// linearly (a quadratic rule would make 4x the text cost 16x).
    #[test]
    fn long_unsplit_text_is_linear() {
        let m = model(&[("a", -1.0), ("aa", -2.0), ("aaaa", -3.0), ("aaaaaaaa", -4.0)]);
        let work = |n: usize| {
            let mut sc = Scratch::default();
            let ids = enc(&m, &"a".repeat(n), &mut sc);
            assert_eq!(ids.len(), n / 8);
            sc.work
        };
        let (w1, w4) = (work(25_000), work(100_000));
        assert!(w4 <= 4 * w1 + 100, "work for 4x the text: {w1} -> {w4}");
        assert!(w4 <= 10 * 100_000, "{w4} steps for 100000 characters");
    }
}
