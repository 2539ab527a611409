//! Byte-pair merging with tiktoken's exact semantics in O(n log n).
//!
//! tiktoken repeatedly merges the adjacent pair whose concatenation has the
//! lowest rank, leftmost first on ties, until no adjacent pair is a token.
//! Doing that with a linear scan per merge is quadratic, which a single
//! megabyte-long piece (a run of one letter, base64) turns into seconds. Here
//! the candidate pairs live in a min-heap keyed by (rank, start); entries made
//! stale by a neighbouring merge are skipped when popped. Because parts only
//! ever grow, a pair (start, end) is still current exactly when `start` is
//! still a part boundary and the part after next begins at `end`, and its rank
//! depends only on the bytes `start..end`. Popping the minimum (rank, start)
//! among current pairs is therefore the same choice tiktoken's scan makes.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

/// Reusable buffers so that merging many pieces does not reallocate.
#[derive(Default)]
pub(crate) struct Scratch {
    next: Vec<u32>,
    prev: Vec<u32>,
    alive: Vec<bool>,
    heap: BinaryHeap<Reverse<(u32, u32, u32)>>,
}

/// Merges `piece` (which is not itself a token) and calls `emit` with the
/// start offset of each final part, left to right. Returns the part count.
pub(crate) fn merge(
    piece: &[u8],
    ranks: &FxHashMap<Box<[u8]>, u32>,
    s: &mut Scratch,
    mut emit: impl FnMut(usize, usize),
) -> usize {
    let n = piece.len();
    debug_assert!(n <= u32::MAX as usize);
    if n <= 1 {
        if n == 1 {
            emit(0, 1);
        }
        return n;
    }
    s.next.clear();
    s.next.extend((1..=n).map(|i| i as u32));
    s.prev.clear();
    s.prev.extend((0..n).map(|i| (i as u32).wrapping_sub(1)));
    s.alive.clear();
    s.alive.resize(n, true);
    s.heap.clear();
    for i in 0..n - 1 {
        if let Some(&r) = ranks.get(&piece[i..i + 2]) {
            s.heap.push(Reverse((r, i as u32, (i + 2) as u32)));
        }
    }
    let mut parts = n;
    while let Some(Reverse((_, i, k))) = s.heap.pop() {
        let (iu, ku) = (i as usize, k as usize);
        if !s.alive[iu] {
            continue;
        }
        let j = s.next[iu] as usize;
        if j >= n || s.next[j] != k {
            continue;
        }
        // Merge the part at j into the part at i: i now spans i..k.
        s.alive[j] = false;
        s.next[iu] = k;
        if ku < n {
            s.prev[ku] = i;
        }
        parts -= 1;
        if iu > 0 {
            let p = s.prev[iu];
            if let Some(&r) = ranks.get(&piece[p as usize..ku]) {
                s.heap.push(Reverse((r, p, k)));
            }
        }
        if ku < n {
            let e = s.next[ku];
            if let Some(&r) = ranks.get(&piece[iu..e as usize]) {
                s.heap.push(Reverse((r, i, e)));
            }
        }
    }
    let mut i = 0usize;
    while i < n {
        let end = s.next[i] as usize;
        emit(i, end);
        i = end;
    }
    parts
}
