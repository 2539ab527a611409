//! Byte-pair merging with tiktoken's exact semantics in O(n log n).
//!
//! tiktoken repeatedly merges the adjacent pair whose concatenation has the
//! lowest rank, leftmost first on ties, until no adjacent pair is a token.
//! Doing that with a linear scan per merge is quadratic, which a single
//! megabyte-long piece (a run of one letter, base64) turns into seconds.
//!
//! Here each part remembers the rank of the pair it starts (`pair_rank`), and
//! a min-heap holds `(rank, start)` packed into one `u64` so that ordering is
//! one integer compare and the heap stays small and cache-friendly. A popped
//! entry is current exactly when its start is still a part and that part's
//! pair still has the popped rank: ranks are in bijection with byte strings
//! and a part's pair only ever grows, so an equal rank means the very same
//! span. Popping the minimum (rank, start) among current pairs is therefore
//! the same choice tiktoken's leftmost-minimum scan makes.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

const NONE: u32 = u32::MAX;

/// Reusable buffers so that merging many pieces does not reallocate.
#[derive(Default)]
pub(crate) struct Scratch {
    next: Vec<u32>,
    prev: Vec<u32>,
    pair_rank: Vec<u32>,
    heap: Vec<Reverse<u64>>,
}

fn key(rank: u32, start: u32) -> Reverse<u64> {
    Reverse((u64::from(rank) << 32) | u64::from(start))
}

/// Merges `piece` (which is not itself a token) and calls `emit` with the
/// byte span of each final part, left to right. Returns the part count.
/// Pieces longer than `u32::MAX - 1` bytes are impossible here: inputs are
/// capped far below that by [`crate::limits::MAX_TEXT_BYTES`].
pub(crate) fn merge(
    piece: &[u8],
    ranks: &FxHashMap<Box<[u8]>, u32>,
    s: &mut Scratch,
    mut emit: impl FnMut(usize, usize),
) -> usize {
    let n = piece.len();
    if n <= 1 {
        if n == 1 {
            emit(0, 1);
        }
        return n;
    }
    let rank_of = |a: usize, b: usize| ranks.get(&piece[a..b]).copied().unwrap_or(NONE);
    s.next.clear();
    s.next.extend((1..=n).map(|i| i as u32));
    s.prev.clear();
    s.prev.extend((0..n).map(|i| (i as u32).wrapping_sub(1)));
    s.pair_rank.clear();
    s.pair_rank.extend((0..n).map(|i| if i + 2 <= n { rank_of(i, i + 2) } else { NONE }));
    let mut entries = std::mem::take(&mut s.heap);
    entries.clear();
    entries.extend(
        s.pair_rank.iter().enumerate().filter(|(_, r)| **r != NONE).map(|(i, r)| key(*r, i as u32)),
    );
    let mut heap = BinaryHeap::from(entries);

    let mut parts = n;
    while let Some(Reverse(k)) = heap.pop() {
        let (r, i) = ((k >> 32) as u32, k as u32 as usize);
        if s.pair_rank[i] != r {
            continue; // stale: the part at i was absorbed or its pair grew
        }
        // Merge the part after i into i.
        let j = s.next[i] as usize;
        let end = s.next[j] as usize;
        s.pair_rank[j] = NONE;
        s.next[i] = end as u32;
        if end < n {
            s.prev[end] = i as u32;
        }
        parts -= 1;
        let right = if end < n { rank_of(i, s.next[end] as usize) } else { NONE };
        s.pair_rank[i] = right;
        if right != NONE {
            heap.push(key(right, i as u32));
        }
        if i > 0 {
            let p = s.prev[i] as usize;
            let left = rank_of(p, end);
            s.pair_rank[p] = left;
            if left != NONE {
                heap.push(key(left, p as u32));
            }
        }
    }
    s.heap = heap.into_vec();

    let mut i = 0usize;
    while i < n {
        let end = s.next[i] as usize;
        emit(i, end);
        i = end;
    }
    parts
}
