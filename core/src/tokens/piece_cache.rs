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

#[cfg(test)]
mod tests {
    use super::*;

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
}
