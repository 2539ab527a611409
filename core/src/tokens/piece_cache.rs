//! Memoized merges of whole pieces, per thread.
//!
//! Most pieces are a single token and never get here. The rest (long or rare
//! words, identifiers, CJK clauses) repeat heavily in real inputs: the same
//! identifiers through a code file, the same particles through Japanese
//! prose, the same conversation recounted each turn. Remembering the tokens
//! of recently merged pieces turns each repeat into a hash and a compare.
//!
//! The cache is direct-mapped (a colliding piece overwrites), holds pieces of
//! up to [`MAX_PIECE`] bytes that merged into at most [`MAX_TOKENS`] tokens,
//! and lives in the thread's scratch space, so there is no lock and no
//! sharing. A slot records the encoding it was filled for and the exact
//! piece bytes, and is only ever filled from a completed merge, so a hit
//! is always the merge's own answer.

/// Longest piece cached, in bytes (a 30-character CJK clause).
pub(crate) const MAX_PIECE: usize = 96;
/// Most tokens a cached piece may have.
const MAX_TOKENS: usize = 32;
/// Slots (a power of two). 4,096 slots of 228 bytes are 912 KiB per thread
/// that merges a cacheable piece. With 1,024 slots the multilingual
/// benchmark input, whose sentences repeat, cost 40% more instructions per
/// byte on cl100k_base (94.3 against 67.1; docs/benchmarks.md says how to
/// measure it).
const SLOTS: usize = 4096;

#[derive(Clone)]
struct Slot {
    /// Encoding index + 1; 0 marks an empty slot.
    encoding: u8,
    len: u8,
    count: u8,
    piece: [u8; MAX_PIECE],
    tokens: [u32; MAX_TOKENS],
}

// The size `SLOTS` documents.
const _: () = assert!(std::mem::size_of::<Slot>() == 228);

const EMPTY: Slot = Slot { encoding: 0, len: 0, count: 0, piece: [0; MAX_PIECE], tokens: [0; MAX_TOKENS] };

#[derive(Default)]
pub(crate) struct PieceCache {
    /// Allocated on the first cacheable piece, so threads that only count
    /// short English never pay for it.
    slots: Vec<Slot>,
}

#[inline]
fn slot_of(encoding: u8, piece: &[u8]) -> usize {
    let mut h = u64::from(encoding) ^ ((piece.len() as u64) << 8);
    let mut chunks = piece.chunks_exact(8);
    for c in &mut chunks {
        h = (h.rotate_left(5) ^ u64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).wrapping_mul(0x517C_C1B7_2722_0A95);
    }
    for &b in chunks.remainder() {
        h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x517C_C1B7_2722_0A95);
    }
    (h >> (64 - SLOTS.trailing_zeros())) as usize
}

impl PieceCache {
    /// The tokens of `piece` if they are cached for `encoding` (an index).
    #[inline]
    pub(crate) fn get(&self, encoding: u8, piece: &[u8]) -> Option<&[u32]> {
        if piece.len() > MAX_PIECE || self.slots.is_empty() {
            return None;
        }
        let slot = &self.slots[slot_of(encoding, piece)];
        (slot.encoding == encoding + 1 && slot.len as usize == piece.len() && &slot.piece[..piece.len()] == piece)
            .then(|| &slot.tokens[..slot.count as usize])
    }

    /// Forgets every piece, keeping the table's memory.
    pub(crate) fn clear(&mut self) {
        self.slots.iter_mut().for_each(|s| s.encoding = 0);
    }

    /// Remembers that `piece` merges into `tokens`; pieces or results too
    /// big for a slot are not stored.
    pub(crate) fn put(&mut self, encoding: u8, piece: &[u8], tokens: &[u32]) {
        if piece.len() > MAX_PIECE || tokens.len() > MAX_TOKENS {
            return;
        }
        if self.slots.is_empty() {
            self.slots = vec![EMPTY; SLOTS];
        }
        let slot = &mut self.slots[slot_of(encoding, piece)];
        slot.encoding = encoding + 1;
        slot.len = piece.len() as u8;
        slot.count = tokens.len() as u8;
        slot.piece[..piece.len()].copy_from_slice(piece);
        slot.tokens[..tokens.len()].copy_from_slice(tokens);
    }
}

/// Longest piece [`CountCache`] holds, in bytes: with its encoding and a
/// byte of length and count, it fills one 16-byte slot.
pub(crate) const COUNT_MAX_PIECE: usize = 14;
/// log2 of [`CountCache`]'s slots: 262,144 slots of 16 bytes, 4 MiB, for
/// each of the first [`LARGE_COUNT_CACHES`] threads that count a piece the
/// short lookup does not answer; later threads get [`SMALL_COUNT_BITS`]
/// (1 MiB), so the process holds at most 32 MiB plus 1 MiB per further
/// counting thread (the scratch pool keeps at most 64). On text without
/// repeated lines (docs/benchmarks.md) 4 MiB against 1 MiB took o200k_base
/// from about 0.70 to 1.10 of toktok-rs's speed: its distinct pieces
/// overflow the smaller table. The table is allocated zeroed, so pages
/// never written cost no memory.
const COUNT_BITS: u32 = 18;
const SMALL_COUNT_BITS: u32 = 16;
const LARGE_COUNT_CACHES: usize = 8;
static LARGE_COUNT_CACHES_TAKEN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Token counts of short pieces, per thread, for counting only.
///
/// [`PieceCache`] keeps the ids of merged pieces for encoding, in 228-byte
/// slots, and so holds only 4,096 of them. Counting needs a number, and a
/// piece of at most [`COUNT_MAX_PIECE`] bytes has at most that many tokens,
/// so piece, encoding, length and count pack into one `u128`: bytes 0-13
/// the piece (zero-padded), byte 14 the encoding index + 1, byte 15 the
/// length (low four bits) and the count (high four bits). Sixteen times as
/// many pieces fit in a quarter of the memory, which is what text without
/// repeated lines needs: its words and identifiers recur across the whole
/// text, far apart. The cache answers the pieces the short lookup leaves:
/// one token of 8 to 14 bytes (otherwise a probe in the large vocabulary
/// table and a compare against its token bytes, both often misses to
/// memory) and pieces that are not one token (otherwise a merge), of up to
/// seven bytes only once the vocabulary's table has no room left to record
/// them (`vocab.rs`). Open addressing over a pair of slots in one cache line; a new
/// piece goes into the first slot and moves its piece to the second (whose
/// piece is forgotten), so a pair holds its two newest pieces. A slot is
/// only ever filled from a completed count of exactly these bytes, so a
/// hit is always that count.
#[derive(Default)]
pub(crate) struct CountCache {
    /// Allocated (zeroed: all empty) on first use.
    slots: Vec<u128>,
    /// 64 - log2(slots.len()) once allocated.
    shift: u32,
}

/// Keeps the low `n` bytes, for `n` in `0..=16`.
static MASK: [u128; 17] = {
    let mut m = [0u128; 17];
    let mut i = 1;
    while i <= 16 {
        m[i] = if i == 16 { u128::MAX } else { (1u128 << (i * 8)) - 1 };
        i += 1;
    }
    m
};

/// The count bits of a slot.
const COUNT_FIELD: u128 = 0xF << 124;

impl CountCache {
    /// The key of `s[a..b]` (at most [`COUNT_MAX_PIECE`] bytes) for
    /// `encoding` (an index): one 16-byte load when `s` has the bytes.
    #[inline(always)]
    pub(crate) fn key(encoding: u8, s: &[u8], a: usize, b: usize) -> u128 {
        let n = b - a;
        debug_assert!(n > 0 && n <= COUNT_MAX_PIECE);
        let bytes = match s.get(a..a + 16) {
            Some(w) => u128::from_le_bytes(w.try_into().unwrap_or([0; 16])) & MASK[n],
            None => {
                let mut buf = [0u8; 16];
                buf[..n].copy_from_slice(&s[a..b]);
                u128::from_le_bytes(buf)
            }
        };
        Self::pack(bytes, encoding, n)
    }

    /// A key from the piece's bytes (zero-padded), its encoding index and
    /// its length.
    #[inline(always)]
    fn pack(bytes: u128, encoding: u8, n: usize) -> u128 {
        bytes | (u128::from(encoding) + 1) << 112 | (n as u128) << 120
    }

    #[inline(always)]
    fn home(&self, key: u128) -> usize {
        let h =
            (key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ ((key >> 64) as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        (h >> self.shift) as usize & !1
    }

    /// The cached count of the piece `key` stands for.
    #[inline(always)]
    pub(crate) fn get(&self, key: u128) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let i = self.home(key);
        let pair = self.slots.get(i..i + 2)?;
        pair.iter().find(|&&e| e & !COUNT_FIELD == key).map(|&e| (e >> 124) as usize)
    }

    /// [`Self::get`] of `s[a..b]` for `encoding` when the piece is at most
    /// [`COUNT_MAX_PIECE`] bytes and sixteen can be read from `a`; `None`
    /// otherwise too (the caller then takes the general path, which looks
    /// again). Small enough to inline into the counting loop: see
    /// `Counter::piece` in `engine.rs`.
    #[inline(always)]
    pub(crate) fn get_short(&self, encoding: u8, s: &[u8], a: usize, b: usize) -> Option<usize> {
        let n = b - a;
        if n > COUNT_MAX_PIECE || self.slots.is_empty() {
            return None;
        }
        let w = s.get(a..a + 16)?;
        self.get(Self::pack(u128::from_le_bytes(w.try_into().unwrap_or([0; 16])) & MASK[n], encoding, n))
    }

    /// Forgets every count, keeping the table's memory (benchmarks time a
    /// text never seen without the table's first allocation).
    pub(crate) fn clear(&mut self) {
        self.slots.fill(0);
    }

    /// Remembers that the piece `key` stands for has `count` tokens.
    pub(crate) fn put(&mut self, key: u128, count: usize) {
        if count > COUNT_MAX_PIECE {
            return; // cannot happen: a piece has at most one token per byte
        }
        if self.slots.is_empty() {
            let large =
                LARGE_COUNT_CACHES_TAKEN.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < LARGE_COUNT_CACHES;
            let bits = if large { COUNT_BITS } else { SMALL_COUNT_BITS };
            self.slots = vec![0; 1 << bits];
            self.shift = 64 - bits;
        }
        let i = self.home(key);
        // Slot `i` fills first, so an empty first slot means an empty pair.
        if self.slots[i] != 0 {
            self.slots[i + 1] = self.slots[i];
        }
        self.slots[i] = key | (count as u128) << 124;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `clear` (behind `tokens::clear_thread_caches`) forgets every entry
    /// and the tables work on afterwards.
    #[test]
    fn clear_forgets_and_keeps_working() {
        let mut p = PieceCache::default();
        p.put(0, b"hello", &[1, 2]);
        let mut c = CountCache::default();
        let k = CountCache::key(0, b"hello", 0, 5);
        c.put(k, 2);
        assert_eq!((p.get(0, b"hello"), c.get(k)), (Some(&[1, 2][..]), Some(2)));
        p.clear();
        c.clear();
        assert_eq!((p.get(0, b"hello"), c.get(k)), (None, None));
        p.put(0, b"hello", &[3]);
        c.put(k, 1);
        assert_eq!((p.get(0, b"hello"), c.get(k)), (Some(&[3][..]), Some(1)));
    }

    #[test]
    fn hits_only_the_same_piece_of_the_same_encoding() {
        let mut c = PieceCache::default();
        assert_eq!(c.get(0, b"hello"), None);
        c.put(0, b"hello", &[1, 2]);
        assert_eq!(c.get(0, b"hello"), Some(&[1, 2][..]));
        assert_eq!(c.get(1, b"hello"), None);
        assert_eq!(c.get(0, b"hellp"), None);
        assert_eq!(c.get(0, b"hell"), None);
        let long = [b'x'; MAX_PIECE + 1];
        c.put(0, &long, &[1]);
        assert_eq!(c.get(0, &long), None);
        c.put(0, b"many", &[7; MAX_TOKENS + 1]);
        assert_eq!(c.get(0, b"many"), None);
    }

    #[test]
    fn counts_hit_only_the_same_bytes_of_the_same_encoding() {
        let mut c = CountCache::default();
        let text = b"identifier_x identifier_y \xff";
        let k = |enc: u8, a: usize, b: usize| CountCache::key(enc, text, a, b);
        assert_eq!(c.get(k(0, 0, 12)), None);
        c.put(k(0, 0, 12), 3);
        assert_eq!(c.get(k(0, 0, 12)), Some(3));
        // Other bytes, another length, another encoding.
        assert_eq!(c.get(k(0, 13, 25)), None);
        assert_eq!(c.get(k(0, 0, 11)), None);
        assert_eq!(c.get(k(1, 0, 12)), None);
        // The same bytes read with and without room for a 16-byte load.
        let tail = &text[text.len() - 4..];
        assert_eq!(CountCache::key(2, text, text.len() - 4, text.len()), CountCache::key(2, tail, 0, 4));
        c.put(k(1, 0, 12), 14);
        assert_eq!(c.get(k(1, 0, 12)), Some(14));
        assert_eq!(c.get(k(0, 0, 12)), Some(3));
    }

    /// A full pair keeps its two newest pieces. It used to overwrite its
    /// first slot only, so the piece in the second slot stayed for good and
    /// a later text had half the room (left alone in an earlier stop).
    #[test]
    fn a_full_pair_keeps_its_two_newest_pieces() {
        let mut c = CountCache::default();
        c.put(CountCache::key(0, b"seed", 0, 4), 1); // allocates the table
        let home = c.home(CountCache::key(0, b"p0", 0, 2));
        let same: Vec<u128> = (0u32..)
            .map(|i| CountCache::key(0, format!("p{i}").as_bytes(), 0, format!("p{i}").len()))
            .filter(|&k| c.home(k) == home)
            .take(4)
            .collect();
        for (n, &k) in same.iter().enumerate() {
            c.put(k, n + 1);
        }
        let found: Vec<Option<usize>> = same.iter().map(|&k| c.get(k)).collect();
        assert_eq!(found, [None, None, Some(3), Some(4)]);
    }

    #[test]
    fn a_full_pair_keeps_answering_exactly() {
        // Many more pieces than slots: whatever is found must be the count
        // put for exactly those bytes (here the piece's first byte % 15).
        let mut c = CountCache::default();
        let pieces: Vec<[u8; 8]> =
            (0u64..300_000).map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).to_le_bytes()).collect();
        for p in &pieces {
            c.put(CountCache::key(0, p, 0, 8), usize::from(p[0] % 15));
        }
        let mut hits = 0;
        for p in &pieces {
            if let Some(n) = c.get(CountCache::key(0, p, 0, 8)) {
                assert_eq!(n, usize::from(p[0] % 15));
                hits += 1;
            }
        }
        assert!(hits > 1 << 14, "{hits}");
    }
}
