//! Byte-pair merging with tiktoken's exact semantics.
//!
//! tiktoken repeatedly merges the adjacent pair whose concatenation has the
//! lowest rank, leftmost first on ties, until no adjacent pair is a token.
//! Every part is a token at every step, and the rank of a merged part is the
//! rank of the pair that produced it, so ids come out of the merge without a
//! second lookup.
//!
//! Pieces that are not a token by themselves are short in ordinary text, so
//! [`merge`] runs tiktoken's own scan on fixed arrays for them. A linear scan
//! per merge is quadratic, though, which a single megabyte-long piece (a run
//! of one letter, base64) would turn into minutes; long pieces use
//! [`merge_long`] instead: each part remembers the rank of the pair it
//! starts (`pair_rank`), and a priority queue ([`Queue`]) yields pending
//! pairs by `(rank, start)`. A popped entry is
//! current exactly when its start is still a part and that part's pair still
//! has the popped rank: ranks are in bijection with byte strings and a
//! part's pair only ever grows, so an equal rank means the very same span.
//! Popping the minimum (rank, start) among current pairs is therefore the
//! same choice tiktoken's leftmost-minimum scan makes.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::vocab::Vocab;

const NONE: u32 = u32::MAX;
/// Pieces up to this many bytes use the scan on stack arrays.
pub(crate) const SHORT: usize = 64;

/// Reusable buffers so that merging many long pieces does not reallocate.
#[derive(Default)]
pub(crate) struct Scratch {
    next: Vec<u32>,
    prev: Vec<u32>,
    pair_rank: Vec<u32>,
    token: Vec<u32>,
    queue: Queue,
    pairs: PairCache,
    /// Whole pieces merged recently (see `piece_cache.rs`).
    pub(crate) pieces: super::piece_cache::PieceCache,
    /// Token counts of short pieces, for counting (see `piece_cache.rs`).
    pub(crate) counts: super::piece_cache::CountCache,
    /// Token counts of whole texts seen again (see `text_cache.rs`).
    pub(crate) texts: super::text_cache::TextCache,
    /// The tokens of the piece being merged, before they go to the cache.
    pub(crate) tokens: Vec<u32>,
    /// Buffers of the backtracking encoder for long pieces.
    pub(crate) backtrack: super::backtrack::Scratch,
}

/// Merges `s[a..b]` (at least one byte; usually not a token itself) and calls
/// `emit` with the rank of each final token, left to right. Returns the
/// token count. `s` may extend past `b`; only `s[a..b]` is merged.
#[inline]
pub(crate) fn merge(
    s: &[u8],
    a: usize,
    b: usize,
    vocab: &Vocab,
    scratch: &mut Scratch,
    emit: impl FnMut(u32),
) -> usize {
    if b - a <= SHORT {
        merge_short(s, a, b, vocab, emit)
    } else {
        merge_long(s, a, b, vocab, scratch, emit)
    }
}

fn merge_short(s: &[u8], a: usize, b: usize, vocab: &Vocab, mut emit: impl FnMut(u32)) -> usize {
    const END: u8 = u8::MAX;
    let n = b - a;
    // Parts are a linked list over byte offsets from `a`: the part starting
    // at k ends at next[k], is token token[k], and pair[k] is the rank of it
    // and the part after it together. Merging relinks instead of shifting.
    let mut next = [0u8; SHORT + 1];
    let mut token = [0u32; SHORT];
    let mut pair = [NONE; SHORT];
    for k in 0..n {
        next[k] = (k + 1) as u8;
        token[k] = vocab.byte_rank[s[a + k] as usize];
    }
    for (k, p) in pair.iter_mut().enumerate().take(n.saturating_sub(1)) {
        *p = vocab.pair_rank(s[a + k], s[a + k + 1]);
    }
    let rank = |i: usize, j: usize| vocab.merge_rank(s, a + i, a + j);
    let mut parts = n;
    loop {
        // The leftmost lowest pair, and the part before it.
        let (mut best, mut at, mut before) = (NONE, 0usize, END);
        let (mut k, mut prev) = (0usize, END);
        while (next[k] as usize) < n {
            if pair[k] < best {
                best = pair[k];
                at = k;
                before = prev;
            }
            prev = k as u8;
            k = next[k] as usize;
        }
        if best == NONE {
            break;
        }
        let end = next[next[at] as usize] as usize;
        next[at] = end as u8;
        token[at] = best;
        parts -= 1;
        pair[at] = if end < n { rank(at, next[end] as usize) } else { NONE };
        if before != END {
            pair[before as usize] = rank(before as usize, end);
        }
    }
    let mut k = 0;
    while k < n {
        emit(token[k]);
        k = next[k] as usize;
    }
    parts
}

/// The pending pairs of one rank, by start position. Pairs are mostly
/// created in increasing position order (the merge sweeps left to right
/// through each rank), so they go on a sorted run in O(1); the rare earlier
/// position goes to a small heap beside it.
#[derive(Default)]
struct Bucket {
    run: Vec<u32>,
    head: usize,
    late: BinaryHeap<Reverse<u32>>,
    active: bool,
}

impl Bucket {
    fn push(&mut self, pos: u32) {
        if self.head == self.run.len() {
            self.run.clear();
            self.head = 0;
        }
        match self.run.last() {
            Some(&last) if pos < last => self.late.push(Reverse(pos)),
            _ => self.run.push(pos),
        }
    }

    fn pop(&mut self) -> Option<u32> {
        let from_run = self.run.get(self.head).copied();
        match (from_run, self.late.peek()) {
            (Some(a), Some(&Reverse(b))) if b < a => self.late.pop().map(|r| r.0),
            (Some(a), _) => {
                self.head += 1;
                Some(a)
            }
            (None, Some(_)) => self.late.pop().map(|r| r.0),
            (None, None) => None,
        }
    }
}

/// Memoized pair lookups for [`merge_long`]: the span of two adjacent parts
/// is exactly the concatenation of their tokens, so `(left, right)` token
/// ids determine whether it is a token. Long pieces (runs of one character,
/// base64) ask about the same few pairs over and over; a direct-mapped
/// table answers those without hashing bytes. Emptied for every piece
/// (by bumping an epoch, not by clearing memory), because ids mean different
/// bytes in different encodings.
struct PairCache {
    /// (key, epoch, rank) per slot.
    slots: Vec<(u64, u32, u32)>,
    epoch: u32,
}

const PAIR_SLOTS: usize = 4096;

impl Default for PairCache {
    fn default() -> Self {
        PairCache { slots: vec![(0, 0, NONE); PAIR_SLOTS], epoch: 0 }
    }
}

impl PairCache {
    fn clear(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.slots.fill((0, 0, NONE));
            self.epoch = 1;
        }
    }

    #[inline]
    fn get_or(&mut self, left: u32, right: u32, lookup: impl FnOnce() -> u32) -> u32 {
        let key = (u64::from(left) << 32) | u64::from(right);
        let slot = &mut self.slots[(key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 52) as usize];
        if slot.0 == key && slot.1 == self.epoch {
            return slot.2;
        }
        let r = lookup();
        *slot = (key, self.epoch, r);
        r
    }
}

const RECENT: usize = 1024;

/// Pending pairs grouped by rank: a heap of the ranks that have pending
/// pairs, and per rank a [`Bucket`]. Popping gives the minimum
/// (rank, position), exactly the order a single heap of pairs would, but a
/// pop costs O(log ranks) instead of O(log pairs) and touches memory
/// sequentially; a megabyte of one letter has a handful of distinct ranks
/// and a million pairs.
#[derive(Default)]
struct Queue {
    buckets: Vec<Bucket>,
    used: usize,
    index: rustc_hash::FxHashMap<u32, u32>,
    /// Direct-mapped (rank, bucket) memo in front of `index`: a long piece
    /// pushes to a few ranks over and over, and this avoids hashing them.
    recent: Vec<(u32, u32)>,
    /// (rank << 32) | bucket.
    ranks: BinaryHeap<Reverse<u64>>,
}

impl Queue {
    fn clear(&mut self) {
        for b in &mut self.buckets[..self.used] {
            b.run.clear();
            b.head = 0;
            b.late.clear();
            b.active = false;
        }
        self.used = 0;
        self.index.clear();
        self.recent.clear();
        self.recent.resize(RECENT, (NONE, 0));
        self.ranks.clear();
    }

    fn push(&mut self, rank: u32, pos: u32) {
        let slot = rank as usize % RECENT;
        let b = if self.recent[slot].0 == rank {
            self.recent[slot].1
        } else {
            let used = &mut self.used;
            let buckets = &mut self.buckets;
            let b = *self.index.entry(rank).or_insert_with(|| {
                if *used == buckets.len() {
                    buckets.push(Bucket::default());
                }
                *used += 1;
                (*used - 1) as u32
            });
            self.recent[slot] = (rank, b);
            b
        };
        let bucket = &mut self.buckets[b as usize];
        bucket.push(pos);
        if !bucket.active {
            bucket.active = true;
            self.ranks.push(Reverse((u64::from(rank) << 32) | u64::from(b)));
        }
    }

    /// The pending pair with the lowest (rank, position).
    fn pop(&mut self) -> Option<(u32, u32)> {
        while let Some(&Reverse(top)) = self.ranks.peek() {
            let bucket = &mut self.buckets[top as u32 as usize];
            if let Some(pos) = bucket.pop() {
                return Some(((top >> 32) as u32, pos));
            }
            bucket.active = false;
            self.ranks.pop();
        }
        None
    }
}

/// The merge for long pieces, O(n log r) for r distinct ranks. Pieces longer
/// than `u32::MAX - 1` bytes are impossible: inputs are capped far below
/// that by [`crate::limits::MAX_TEXT_BYTES`].
pub(crate) fn merge_long(
    s: &[u8],
    a: usize,
    b: usize,
    vocab: &Vocab,
    sc: &mut Scratch,
    mut emit: impl FnMut(u32),
) -> usize {
    let n = b - a;
    let rank_of = |i: usize, j: usize| vocab.merge_rank(s, a + i, a + j);
    sc.next.clear();
    sc.next.extend((1..=n).map(|i| i as u32));
    sc.prev.clear();
    sc.prev.extend((0..n).map(|i| (i as u32).wrapping_sub(1)));
    sc.token.clear();
    sc.token.extend(s[a..b].iter().map(|&c| vocab.byte_rank[c as usize]));
    let pairs = &mut sc.pairs;
    pairs.clear();
    sc.pair_rank.clear();
    let token = &sc.token;
    sc.pair_rank.extend((0..n).map(|i| {
        if i + 2 <= n {
            pairs.get_or(token[i], token[i + 1], || rank_of(i, i + 2))
        } else {
            NONE
        }
    }));
    let q = &mut sc.queue;
    q.clear();
    for (i, &r) in sc.pair_rank.iter().enumerate() {
        if r != NONE {
            q.push(r, i as u32);
        }
    }

    let mut parts = n;
    while let Some((r, i)) = q.pop() {
        let i = i as usize;
        if sc.pair_rank[i] != r {
            continue; // stale: the part at i was absorbed or its pair grew
        }
        // Merge the part after i into i.
        let j = sc.next[i] as usize;
        let end = sc.next[j] as usize;
        sc.pair_rank[j] = NONE;
        sc.next[i] = end as u32;
        sc.token[i] = r;
        if end < n {
            sc.prev[end] = i as u32;
        }
        parts -= 1;
        // The left neighbour first: positions then reach each rank's bucket
        // in increasing order, which keeps them on the sorted run.
        if i > 0 {
            let p = sc.prev[i] as usize;
            let left = pairs.get_or(sc.token[p], r, || rank_of(p, end));
            sc.pair_rank[p] = left;
            if left != NONE {
                q.push(left, p as u32);
            }
        }
        let right = if end < n { pairs.get_or(r, sc.token[end], || rank_of(i, sc.next[end] as usize)) } else { NONE };
        sc.pair_rank[i] = right;
        if right != NONE {
            q.push(right, i as u32);
        }
    }

    let mut i = 0usize;
    while i < n {
        emit(sc.token[i]);
        i = sc.next[i] as usize;
    }
    parts
}
