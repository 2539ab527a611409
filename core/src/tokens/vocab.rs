//! The vocabulary of one encoding: rank to bytes, and bytes to rank.
//!
//! **Storage.** Ranks are dense, so the embedded file (`core/data/*.vocab`,
//! generated from OpenAI's `.tiktoken` files and checked against them by
//! `core/tests/vocab_files.rs`) is just every token's length followed by
//! every token's bytes, in rank order: 0.8 MB for cl100k_base instead of the
//! 1.7 MB base64 text, and loading it is a prefix sum instead of 100,000
//! base64 decodes and allocations. The bytes stay in the binary's read-only
//! data; nothing is copied.
//!
//! **Lookup.** Counting asks "is this byte string a token?" once per piece
//! and once per candidate merge, so the map is an open-addressing table
//! specialised for it. A slot's 64-bit key holds the token's length (top
//! byte) and its first seven bytes, so for the great majority of lookups a
//! single integer compare both finds the slot and proves the match; longer
//! tokens compare their remaining bytes against the arena. The table is kept
//! at most half full, and the key is read straight out of the caller's text
//! with one unaligned 8-byte load when the text has room.
//!
//! **Pieces that are not one token.** Counting asks of a short piece how
//! many tokens it is, and the probe that finds it is not one token ends on
//! an empty slot. Counting records the piece's count there (its own kind of
//! key, which no token key equals), up to a quarter of the slots per
//! vocabulary, shared by every thread: the next time, the same probe finds
//! the count. On text without repeated lines (issue 36) this saves the
//! second cache miss, in the thread's count cache, that each rare one cost
//! (docs/benchmarks.md).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use crate::{Error, Result};

const MAGIC: &[u8; 8] = b"TURNFIT1";
const EMPTY: u64 = 0;
const K: u64 = 0x9E37_79B9_7F4A_7C15;

/// The top byte of a key that is not a token: this bit, the piece's count
/// in bits 3-5 and its length (2 to 7) in bits 0-2, so 0x92 to 0xBF. A token
/// key's top byte is the token's length, at most 128 in every encoding
/// (`Vocab::load` refuses longer), so the two kinds never meet.
const NOT_ONE: u64 = 0x80;
const COUNT_BITS: u64 = 7 << 3;

/// What [`Vocab::short_count`] found.
#[derive(Debug, PartialEq)]
pub(crate) enum ShortCount {
    /// The piece is this many tokens.
    Known(usize),
    /// Not a token and not recorded: its key, and the empty slot that
    /// ended its probe run (for [`Vocab::remember_short`]).
    Absent(u64, usize),
    /// Longer than seven bytes or too near the end: ask the general way.
    General,
}

/// The table key of `s[a..b]` when it is at most seven bytes and eight can be
/// read from `a` (the bytes, then the length in the top byte); `None` sends
/// the caller to the general lookup.
#[inline(always)]
fn short_key(s: &[u8], a: usize, b: usize) -> Option<u64> {
    let n = b - a;
    if n > 7 {
        return None;
    }
    let w = s.get(a..a + 8)?;
    let w = u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
    Some((w & ((1u64 << (n * 8)) - 1)) | ((n as u64) << 56))
}

///
/// The tables are reference-counted so that encodings sharing ranks
/// (`o200k_harmony` and `o200k_base`, `p50k_edit` and `p50k_base`, `gpt2`
/// and `r50k_base`) share one copy: cloning a `Vocab` copies pointers.
#[derive(Clone)]
pub(crate) struct Vocab {
    /// Token bytes in rank order (borrowed from the embedded file).
    bytes: &'static [u8],
    /// `offsets[r]..offsets[r + 1]` is token `r`; an empty span is a hole
    /// (p50k_base's rank 50256 belongs to `<|endoftext|>`).
    offsets: Arc<[u32]>,
    /// The key of each slot. Keys and ranks are apart so that the probes,
    /// most of them misses during merges, walk 8-byte entries: twice as
    /// many per cache line, and half the memory (2 MiB for cl100k_base)
    /// competing for cache. Counting a piece that is one token never
    /// touches the ranks.
    ///
    /// Empty slots also take pieces of up to seven bytes that are not one
    /// token, with their count (see [`Vocab::short_count`]), so that a
    /// rare one costs the probe it needed anyway instead of a second miss
    /// in a thread's count cache. Atomic for that: every thread probes the
    /// same table, a slot only ever goes from empty to a whole key, and no
    /// key is removed, so every probe run keeps its tokens before its first
    /// empty slot.
    keys: Arc<[AtomicU64]>,
    /// How many more of those entries the table takes.
    room: Arc<AtomicUsize>,
    /// The rank of each slot's token.
    ranks: Arc<[u32]>,
    shift: u32,
    /// The rank of each single byte (every byte is a token in every encoding).
    pub(crate) byte_rank: [u32; 256],
    /// The rank of each two-byte token by its bytes (`u32::MAX`: none). The
    /// merge starts by looking up every adjacent pair of a piece, most of
    /// them misses; in this 256 KiB table that is one load that stays in
    /// cache, where the hash table's slot is often a miss to memory.
    pair: Arc<[u32]>,
    /// Length in bytes of the longest token; a piece of `n` bytes therefore
    /// has at least `ceil(n / max_token_len)` tokens.
    pub(crate) max_token_len: usize,
}

/// Key of a non-empty byte string: length in the top byte, first seven
/// bytes below it (little-endian, zero-padded).
#[inline]
fn key_of(p: &[u8]) -> u64 {
    let mut buf = [0u8; 8];
    let n = p.len().min(7);
    buf[..n].copy_from_slice(&p[..n]);
    u64::from_le_bytes(buf) | ((p.len().min(255) as u64) << 56)
}

/// The key of `s[a..b]`, reading eight bytes at once when `s` has them.
#[inline]
fn key_at(s: &[u8], a: usize, b: usize) -> u64 {
    let n = b - a;
    if let Some(w) = s.get(a..a + 8) {
        let w = u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
        let keep = n.min(7) * 8;
        (w & ((1u64 << keep) - 1)) | ((n.min(255) as u64) << 56)
    } else {
        key_of(&s[a..b])
    }
}

/// The last eight bytes of a piece of at least eight bytes.
#[inline(always)]
fn last8(p: &[u8]) -> u64 {
    let n = p.len();
    u64::from_le_bytes(p[n - 8..].try_into().unwrap_or([0; 8]))
}

/// Slot index for a key; bytes past the seventh are folded in so that long
/// tokens sharing a prefix and a length spread out. Up to 15 bytes the key
/// and the last eight bytes cover the whole piece, so one extra load does.
#[inline(always)]
fn hash(key: u64, p: &[u8]) -> u64 {
    let mut h = key;
    if p.len() > 7 {
        if p.len() > 15 {
            for c in p[7..p.len() - 8].chunks(8) {
                let mut buf = [0u8; 8];
                buf[..c.len()].copy_from_slice(c);
                h = (h.rotate_left(23) ^ u64::from_le_bytes(buf)).wrapping_mul(K);
            }
        }
        h = (h.rotate_left(23) ^ last8(p)).wrapping_mul(K);
    }
    h.wrapping_mul(K)
}

impl Vocab {
    /// Loads an embedded `.vocab` file (see the module docs for the layout).
    pub(crate) fn load(file: &'static [u8]) -> Result<Vocab> {
        let bad = |what: &str| Error::internal(format!("corrupt embedded vocabulary: {what}"));
        if file.len() < 12 || &file[..8] != MAGIC {
            return Err(bad("bad header"));
        }
        let n = u32::from_le_bytes([file[8], file[9], file[10], file[11]]) as usize;
        let lengths = file.get(12..12 + n).ok_or_else(|| bad("truncated lengths"))?;
        let bytes = &file[12 + n..];
        let mut offsets = Vec::with_capacity(n + 1);
        let mut at = 0u32;
        offsets.push(0);
        for &l in lengths {
            at += u32::from(l);
            offsets.push(at);
        }
        if at as usize != bytes.len() {
            return Err(bad("lengths do not add up to the token bytes"));
        }
        let slots = (n * 2).next_power_of_two().max(1024);
        let mask = slots - 1;
        let shift = 64 - slots.trailing_zeros();
        let token = |r: u32| {
            let (a, b) = (offsets[r as usize] as usize, offsets[r as usize + 1] as usize);
            (a < b).then(|| &bytes[a..b])
        };
        let mut keys = vec![EMPTY; slots];
        let mut ranks = vec![0u32; slots];
        let mut byte_rank = [u32::MAX; 256];
        let mut pair = vec![u32::MAX; 1 << 16];
        for r in 0..n as u32 {
            let Some(t) = token(r) else { continue };
            let key = key_of(t);
            let mut i = (hash(key, t) >> shift) as usize;
            while keys[i] != EMPTY {
                if keys[i] == key && token(ranks[i]) == Some(t) {
                    return Err(bad("duplicate token"));
                }
                i = (i + 1) & mask;
            }
            keys[i] = key;
            ranks[i] = r;
            match *t {
                [b] => byte_rank[b as usize] = r,
                [b0, b1] => pair[usize::from(b0) << 8 | usize::from(b1)] = r,
                _ => {}
            }
        }
        if lengths.iter().any(|&l| l > 128) {
            return Err(bad("a token longer than 128 bytes"));
        }
        if byte_rank.contains(&u32::MAX) {
            return Err(bad("a single byte is not a token"));
        }
        Ok(Vocab {
            bytes,
            offsets: offsets.into(),
            room: Arc::new(AtomicUsize::new(keys.len() / 4)),
            keys: keys.into_iter().map(AtomicU64::new).collect(),
            ranks: ranks.into(),
            shift,
            byte_rank,
            pair: pair.into(),
            max_token_len: lengths.iter().copied().max().unwrap_or(1).max(1) as usize,
        })
    }

    /// Whether token `rank`, whose key equals `p`'s (so the length and the
    /// first seven bytes agree), is `p`.
    #[inline(always)]
    fn tail_eq(&self, rank: u32, p: &[u8]) -> bool {
        if p.len() <= 7 {
            return true;
        }
        let Some(t) = self.token_bytes(rank) else { return false };
        if p.len() <= 15 {
            last8(t) == last8(p)
        } else {
            t[7..] == p[7..]
        }
    }

    /// The rank of the two bytes `b0 b1` as one token, or `u32::MAX`.
    #[inline(always)]
    pub(crate) fn pair_rank(&self, b0: u8, b1: u8) -> u32 {
        self.pair[usize::from(b0) << 8 | usize::from(b1)]
    }

    /// The rank of `s[a..b]` for the merges (`u32::MAX`: not a token). Two-
    /// byte spans, the merges' commonest question and mostly misses, go to
    /// the direct table.
    #[inline(always)]
    pub(crate) fn merge_rank(&self, s: &[u8], a: usize, b: usize) -> u32 {
        if b - a == 2 {
            self.pair_rank(s[a], s[a + 1])
        } else {
            self.rank_at(s, a, b).unwrap_or(u32::MAX)
        }
    }

    /// The rank of `s[a..b]` if it is a token (`a < b`).
    #[inline(always)]
    pub(crate) fn rank_at(&self, s: &[u8], a: usize, b: usize) -> Option<u32> {
        match self.rank_at_short(s, a, b) {
            Some(found) => found,
            None => self.rank_at_general(s, a, b),
        }
    }

    /// [`Self::rank_at`] for the common case: `None` outside it, else the
    /// answer (so a miss is not looked up twice).
    ///
    /// Most pieces are at most seven bytes with eight readable: their key
    /// is one masked load, it is the whole piece (no tail to compare), and
    /// its hash is one multiply, so this is small enough to inline into the
    /// callers' loops. Longer pieces, and pieces too near the text's end
    /// for the 8-byte load, take the general path.
    #[inline(always)]
    #[allow(clippy::option_option)] // "not this path" differs from "no token"
    pub(crate) fn rank_at_short(&self, s: &[u8], a: usize, b: usize) -> Option<Option<u32>> {
        self.slot_short(s, a, b).map(|slot| slot.map(|i| self.ranks[i]))
    }

    /// Whether `s[a..b]` is a token, when [`Self::short_count`] would
    /// answer (`None` otherwise): the tests' view of counting's short probe.
    #[cfg(test)]
    pub(crate) fn is_token_short(&self, s: &[u8], a: usize, b: usize) -> Option<bool> {
        match self.short_count(s, a, b) {
            ShortCount::General => None,
            found => Some(found == ShortCount::Known(1)),
        }
    }

    /// How many tokens `s[a..b]` is, when it is at most seven bytes with
    /// eight readable from `a`: one for a token, and the count of a piece
    /// that is not one token when the table holds it (from
    /// [`Self::remember_short`]).
    #[inline(always)]
    pub(crate) fn short_count(&self, s: &[u8], a: usize, b: usize) -> ShortCount {
        let Some(key) = short_key(s, a, b) else { return ShortCount::General };
        let mask = self.keys.len() - 1;
        let i = (key.wrapping_mul(K) >> self.shift) as usize;
        // The first two slots in one test: a token is in one of them far
        // more often than not, so this branch predicts well, where testing
        // them one by one mispredicted on text without repeated lines
        // (issue 36: o200k_base's count of unique prose from about 0.087 to
        // 0.079 s per 16 MiB).
        let (k0, k1) = (self.keys[i].load(Relaxed), self.keys[(i + 1) & mask].load(Relaxed));
        if (k0 == key) | (k1 == key) {
            return ShortCount::Known(1);
        }
        self.short_count_on(key, i)
    }

    /// The rest of [`Self::short_count`]'s probe run, from slot `i`.
    #[inline(always)]
    fn short_count_on(&self, key: u64, mut i: usize) -> ShortCount {
        let mask = self.keys.len() - 1;
        let other = key | NOT_ONE << 56;
        loop {
            let k = self.keys[i].load(Relaxed);
            if k == key {
                return ShortCount::Known(1);
            }
            if k & !(COUNT_BITS << 56) == other {
                return ShortCount::Known((k >> 59 & 7) as usize);
            }
            if k == EMPTY {
                return ShortCount::Absent(key, i);
            }
            i = (i + 1) & mask;
        }
    }

    /// Whether `s[a..b]` is a token in the first two slots of its probe
    /// run (false when [`Self::short_count`] would not answer).
    #[inline(always)]
    pub(crate) fn is_token_first_slots(&self, s: &[u8], a: usize, b: usize) -> bool {
        let Some(key) = short_key(s, a, b) else { return false };
        let mask = self.keys.len() - 1;
        let i = (key.wrapping_mul(K) >> self.shift) as usize;
        (self.keys[i].load(Relaxed) == key) | (self.keys[(i + 1) & mask].load(Relaxed) == key)
    }

    /// Whether [`Self::remember_short`] may still record a piece.
    #[inline]
    pub(crate) fn has_room(&self) -> bool {
        self.room.load(Relaxed) > 0
    }

    /// Records that the piece of [`ShortCount::Absent`]'s `key` is `count`
    /// tokens (2 to 7: it is not one), in the empty slot `slot` that ended
    /// its probe run, while the table has room; another thread may have
    /// taken the slot since, and then nothing is recorded.
    #[cold]
    pub(crate) fn remember_short(&self, key: u64, slot: usize, count: usize) {
        debug_assert!((2..=7).contains(&count) && key >> 56 <= 7);
        if self.room.load(Relaxed) == 0 {
            return;
        }
        let entry = key | (NOT_ONE | (count as u64) << 3) << 56;
        if self.keys[slot].compare_exchange(EMPTY, entry, Relaxed, Relaxed).is_ok() {
            // Fewer than one entry per thread past the bound: harmless.
            let _ = self.room.fetch_update(Relaxed, Relaxed, |r| r.checked_sub(1));
        }
    }

    /// Empties the slots [`Self::remember_short`] filled. Safe while other
    /// threads probe: the tokens went in before any such piece, so no
    /// token's probe run passes through one, and a piece recorded past a
    /// slot emptied here is only recorded again.
    pub(crate) fn forget_short_pieces(&self) {
        for k in self.keys.iter() {
            let v = k.load(Relaxed);
            if v >> 56 > NOT_ONE {
                let _ = k.compare_exchange(v, EMPTY, Relaxed, Relaxed);
            }
        }
        self.room.store(self.keys.len() / 4, Relaxed);
    }

    /// The slot of `s[a..b]` for [`Self::rank_at_short`].
    #[inline(always)]
    #[allow(clippy::option_option)]
    fn slot_short(&self, s: &[u8], a: usize, b: usize) -> Option<Option<usize>> {
        let key = short_key(s, a, b)?;
        let mask = self.keys.len() - 1;
        // `hash(key, p)` for a piece of at most seven bytes.
        let mut i = (key.wrapping_mul(K) >> self.shift) as usize;
        loop {
            let k = self.keys[i].load(Relaxed);
            if k == key {
                return Some(Some(i));
            }
            if k == EMPTY {
                return Some(None);
            }
            i = (i + 1) & mask;
        }
    }

    #[inline(never)]
    pub(crate) fn rank_at_general(&self, s: &[u8], a: usize, b: usize) -> Option<u32> {
        // Longer than every token; and a key of 146 to 191 bytes could equal
        // a not-a-token entry's (`short_count`).
        if b - a > self.max_token_len {
            return None;
        }
        let key = key_at(s, a, b);
        let p = &s[a..b];
        let mask = self.keys.len() - 1;
        let mut i = (hash(key, p) >> self.shift) as usize;
        loop {
            let k = self.keys[i].load(Relaxed);
            if k == key && self.tail_eq(self.ranks[i], p) {
                return Some(self.ranks[i]);
            }
            if k == EMPTY {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// The rank of `p` if it is a token.
    pub(crate) fn rank(&self, p: &[u8]) -> Option<u32> {
        if p.is_empty() {
            return None;
        }
        self.rank_at(p, 0, p.len())
    }

    /// Length in bytes of token `rank` (0 for a hole or an unknown rank).
    #[inline(always)]
    pub(crate) fn token_len(&self, rank: u32) -> usize {
        let r = rank as usize;
        match (self.offsets.get(r), self.offsets.get(r + 1)) {
            (Some(&a), Some(&b)) => (b - a) as usize,
            _ => 0,
        }
    }

    /// One past the highest ordinary rank.
    pub(crate) fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The bytes of ordinary token `rank`, if it exists.
    #[inline]
    pub(crate) fn token_bytes(&self, rank: u32) -> Option<&'static [u8]> {
        let r = rank as usize;
        let (a, b) = (*self.offsets.get(r)? as usize, *self.offsets.get(r + 1)? as usize);
        let bytes: &'static [u8] = self.bytes;
        (a < b).then(|| &bytes[a..b])
    }

    /// Whether `self` and `other` are one loaded vocabulary (clones share).
    #[cfg(test)]
    pub(crate) fn shares_tables_with(&self, other: &Vocab) -> bool {
        Arc::ptr_eq(&self.keys, &other.keys) && Arc::ptr_eq(&self.offsets, &other.offsets)
    }

    /// Heap bytes this vocabulary allocated (the token bytes themselves stay
    /// in the binary's read-only data and are not counted).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.offsets.len() * 4 + self.keys.len() * 8 + self.ranks.len() * 4 + self.pair.len() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::Encoding;

    #[test]
    fn every_token_is_found_at_its_rank_and_non_tokens_are_not() {
        for e in Encoding::ALL {
            let v = Vocab::load(e.vocab_file()).unwrap();
            for r in 0..v.len() as u32 {
                if let Some(t) = v.token_bytes(r) {
                    assert_eq!(v.rank(t), Some(r), "{e} rank {r}");
                    // Inside a longer text (the fast 8-byte key path).
                    let mut padded = t.to_vec();
                    padded.extend_from_slice(b"\xffpadding");
                    assert_eq!(v.rank_at(&padded, 0, t.len()), Some(r));
                    if let [b0, b1] = *t {
                        assert_eq!(v.pair_rank(b0, b1), r);
                    }
                }
            }
            assert_eq!(v.rank(b"\xff\xfe\xfd\xfc this is no token at all"), None);
            assert_eq!(v.rank(b"hellohellohello"), None);
            let pairs = (0..=255u8).flat_map(|a| (0..=255u8).map(move |b| [a, b]));
            let found = pairs.filter(|p| v.pair_rank(p[0], p[1]) != u32::MAX).inspect(|p| {
                assert_eq!(v.rank(p), Some(v.pair_rank(p[0], p[1])));
            });
            assert_eq!(found.count(), (0..v.len() as u32).filter(|&r| v.token_len(r) == 2).count(), "{e}");
        }
    }

    #[test]
    fn the_short_membership_test_agrees_with_the_full_lookup() {
        // `is_token_short` tests the first two slots at once, then walks on:
        // every token of up to seven bytes (some sit far down a probe run)
        // and strings next to them that are not tokens.
        for e in [Encoding::Cl100kBase, Encoding::O200kBase, Encoding::R50kBase] {
            let v = Vocab::load(e.vocab_file()).unwrap();
            let mut far = 0;
            for r in 0..v.len() as u32 {
                let Some(t) = v.token_bytes(r).filter(|t| t.len() <= 7) else { continue };
                let mut padded = t.to_vec();
                padded.extend_from_slice(b"\xffpadding");
                assert_eq!(v.is_token_short(&padded, 0, t.len()), Some(true), "{e} rank {r}");
                let key = key_of(t);
                let home = (key.wrapping_mul(K) >> v.shift) as usize;
                far += usize::from(
                    v.keys[home].load(Relaxed) != key && v.keys[(home + 1) & (v.keys.len() - 1)].load(Relaxed) != key,
                );
                for last in [0u8, b'q', 0x80, 0xff] {
                    let mut other = padded.clone();
                    other[t.len() - 1] = last;
                    let want = v.rank(&other[..t.len()]).is_some();
                    assert_eq!(v.is_token_short(&other, 0, t.len()), Some(want), "{e} {other:?}");
                }
            }
            assert!(far > 100, "{e}: only {far} tokens past their first two slots");
            // Too long, or too near the end for the eight-byte load: not answered here.
            assert_eq!(v.is_token_short(b"abcdefghijk", 0, 8), None);
            assert_eq!(v.is_token_short(b"abc", 0, 3), None);
        }
    }

    /// A piece recorded as not one token is found with its count, and
    /// every token, the recorded pieces and their neighbours are looked up
    /// as before; the table stops taking pieces when its room is spent.
    #[test]
    fn recorded_short_pieces_keep_every_lookup_exact() {
        let v = Vocab::load(Encoding::Cl100kBase.vocab_file()).unwrap();
        let pad = |p: &[u8]| [p, b"\xffpadding"].concat();
        let mut recorded = Vec::new();
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        while recorded.len() < 2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let n = 2 + (x % 6) as usize;
            let p: Vec<u8> = (0..n).map(|k| b"qxzjkvQXZ#"[((x >> (8 * k)) % 10) as usize]).collect();
            if v.rank(&p).is_some() || recorded.contains(&p) {
                continue;
            }
            match v.short_count(&pad(&p), 0, n) {
                ShortCount::Absent(key, slot) => v.remember_short(key, slot, 2 + n % 6),
                other => panic!("{p:?}: {other:?} before it was recorded"),
            }
            recorded.push(p);
        }
        for p in &recorded {
            assert_eq!(v.short_count(&pad(p), 0, p.len()), ShortCount::Known(2 + p.len() % 6), "{p:?}");
            assert_eq!((v.rank(p), v.is_token_short(&pad(p), 0, p.len())), (None, Some(false)), "{p:?}");
        }
        for r in 0..v.len() as u32 {
            let Some(t) = v.token_bytes(r) else { continue };
            assert_eq!(v.rank(t), Some(r));
            if t.len() <= 7 {
                assert_eq!(v.short_count(&pad(t), 0, t.len()), ShortCount::Known(1), "rank {r}");
            }
        }
        v.forget_short_pieces();
        for p in &recorded {
            assert!(matches!(v.short_count(&pad(p), 0, p.len()), ShortCount::Absent(..)), "{p:?} still recorded");
        }
        assert!((1..v.len() as u32).filter_map(|r| v.token_bytes(r)).all(|t| v.rank(t).is_some()));
        v.room.store(0, Relaxed);
        let fresh = b"#qq#zz#";
        let ShortCount::Absent(key, slot) = v.short_count(&pad(fresh), 0, 7) else { panic!("recorded already") };
        assert!(!v.has_room());
        v.remember_short(key, slot, 3);
        assert!(matches!(v.short_count(&pad(fresh), 0, 7), ShortCount::Absent(..)), "recorded with no room");
    }

    #[test]
    fn corrupt_files_are_errors_not_panics() {
        for bad in [&b""[..], b"TURNFIT0\0\0\0\0", b"TURNFIT1\x05\0\0\0\x01", b"TURNFIT1\x01\0\0\0\x02a"] {
            assert!(Vocab::load(bad).is_err());
        }
        // Every byte a token, plus one of 129 bytes: its key's top byte
        // would be that of a recorded piece (`short_count`), so it is refused.
        let file = |long: usize| {
            let mut f = b"TURNFIT1".to_vec();
            f.extend_from_slice(&257u32.to_le_bytes());
            f.extend(std::iter::repeat_n(1u8, 256));
            f.push(long as u8);
            f.extend(0..=255u8);
            f.extend(std::iter::repeat_n(b'a', long));
            f
        };
        assert!(Vocab::load(Box::leak(file(128).into_boxed_slice())).is_ok());
        let Err(e) = Vocab::load(Box::leak(file(129).into_boxed_slice())) else { panic!("a 129-byte token loaded") };
        assert!(e.to_string().contains("longer than 128 bytes"), "{e}");
    }
}
