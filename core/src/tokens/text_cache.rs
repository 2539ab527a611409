//! Token counts of whole texts seen again, per thread.
//!
//! Agent hosts count the same messages again every turn (the conversation
//! so far, a system prompt, a tool's output), and a count costs tens of
//! instructions per byte while comparing two texts costs a fraction of one.
//! The piece caches (`piece_cache.rs`) only skip merges: a repeated text is
//! still pre-tokenized and looked up piece by piece. This cache remembers the
//! count of a whole ordinary text segment (what lies between special tokens)
//! for its encoding, and answers a repeat with one slot probe and one
//! comparison of all its bytes.
//!
//! Exact: a hit needs the same encoding, the same length and the same bytes,
//! compared in full; the hash only picks the slot. The hash reads a fixed
//! number of bytes of the text (its ends and evenly spaced words), so a text
//! never seen costs the same few dozen instructions whatever its length, and
//! two texts that differ only between the sampled bytes share a slot, where
//! the comparison tells them apart.
//!
//! Bounded: the texts' bytes live in one ring buffer per thread, written in
//! order and overwritten oldest first (reserved, and filled as texts arrive), so the memory is the ring plus the
//! slot table whatever is counted: [`LARGE_RING`] (2 MiB) for each of the
//! first [`LARGE_RINGS`] threads that keep a text, [`SMALL_RING`] (256 KiB)
//! after that, plus [`SLOTS`] slots of 32 bytes (64 KiB); at most 30 MiB
//! for the 64 pooled scratches of a process. A text longer than an eighth of
//! its ring (256 KiB, or 32 KiB) or shorter than [`MIN_TEXT`] is never kept.
//!
//! Admission on the second sighting: the first count of a text records only
//! its hash in the slot, the second stores the bytes, the third is answered.
//! Text that never repeats costs the hash and one probe, and never evicts
//! what does repeat.

/// Shortest text kept, in bytes: below this counting costs little more
/// than the probe and comparison.
pub(crate) const MIN_TEXT: usize = 256;
/// Slots (a power of two), direct-mapped by hash.
const SLOTS: usize = 2048;
/// Bytes of ring for each of the first [`LARGE_RINGS`] threads.
const LARGE_RING: usize = 2 << 20;
/// Bytes of ring for later threads.
const SMALL_RING: usize = 256 << 10;
const LARGE_RINGS: usize = 8;
static LARGE_RINGS_TAKEN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[derive(Clone, Copy, Default)]
struct Slot {
    hash: u64,
    /// Where the text starts in the ring, counted in bytes ever written
    /// (its bytes are intact while fewer than a ring's worth followed).
    start: u64,
    len: u32,
    count: u32,
    /// Encoding index + 1; 0 marks an empty slot.
    encoding: u8,
    /// Whether the bytes were stored (else only the hash was seen once).
    stored: bool,
}

// The size the module doc gives.
const _: () = assert!(std::mem::size_of::<Slot>() == 32);

#[derive(Default)]
pub(crate) struct TextCache {
    /// Allocated on the first probe.
    slots: Vec<Slot>,
    /// The ring's bytes: reserved (not written, so it costs no memory yet)
    /// on the first text stored, filled as texts arrive, never longer than
    /// `cap`. Not zeroed up front: a thread's first stored text would pay
    /// for clearing the whole ring.
    ring: Vec<u8>,
    /// The ring's size (0 until the first text is stored).
    cap: usize,
    /// Bytes ever written to the ring (the next write goes at `head % cap`).
    head: u64,
}

/// A probed text: its hash, and the cached count when it was found.
pub(crate) struct Probe {
    hash: u64,
    pub(crate) count: Option<usize>,
}

const K: u64 = 0x517C_C1B7_2722_0A95;

#[inline(always)]
fn word(t: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(t[at..at + 8].try_into().unwrap_or([0; 8]))
}

/// Hash of the encoding, the length, the first and last 16 bytes and eight
/// words spread evenly between them (`t` has at least [`MIN_TEXT`] bytes).
fn hash(encoding: u8, t: &[u8]) -> u64 {
    let n = t.len();
    let mut h = ((u64::from(encoding) << 56) ^ n as u64).wrapping_mul(K);
    let step = (n - 8) / 9;
    let mut mix = |w: u64| h = (h.rotate_left(5) ^ w).wrapping_mul(K);
    mix(word(t, 0));
    mix(word(t, 8));
    for i in 1..=8 {
        mix(word(t, i * step));
    }
    mix(word(t, n - 16));
    mix(word(t, n - 8));
    h ^ (h >> 29)
}

impl TextCache {
    fn slot(&self, hash: u64) -> usize {
        (hash >> (64 - SLOTS.trailing_zeros())) as usize
    }

    /// The largest text this thread keeps (0 before its ring exists).
    fn max_text(&self) -> usize {
        self.cap / 8
    }

    /// Looks `text` up for `encoding` (an index); `None` when the text is
    /// too short or too long to be kept.
    #[inline]
    pub(crate) fn probe(&mut self, encoding: u8, text: &[u8]) -> Option<Probe> {
        if text.len() < MIN_TEXT || text.len() > LARGE_RING / 8 {
            return None;
        }
        if self.slots.is_empty() {
            self.slots = vec![Slot::default(); SLOTS];
        }
        let hash = hash(encoding, text);
        let s = self.slots[self.slot(hash)];
        let found = s.stored
            && s.hash == hash
            && s.encoding == encoding + 1
            && s.len as usize == text.len()
            && self.intact(s.start)
            && self.bytes(s.start, text.len()) == text;
        Some(Probe { hash, count: found.then_some(s.count as usize) })
    }

    /// Whether the ring bytes from `start` on have not been overwritten.
    fn intact(&self, start: u64) -> bool {
        self.head - start <= self.cap as u64
    }

    /// The stored bytes of a slot that is [`Self::intact`].
    fn bytes(&self, start: u64, len: usize) -> &[u8] {
        let at = (start % self.cap as u64) as usize;
        self.ring.get(at..at + len).unwrap_or_default()
    }

    /// Records that `text`, probed as `probe`, has `count` tokens: the
    /// hash alone the first time, the bytes when the slot already holds
    /// that hash for the same encoding and length.
    pub(crate) fn put(&mut self, probe: &Probe, encoding: u8, text: &[u8], count: usize) {
        let Ok(count) = u32::try_from(count) else { return };
        let i = self.slot(probe.hash);
        let s = self.slots[i];
        let seen = s.hash == probe.hash && s.encoding == encoding + 1 && s.len as usize == text.len();
        let mut new =
            Slot { hash: probe.hash, start: 0, len: text.len() as u32, count, encoding: encoding + 1, stored: false };
        if seen {
            if self.cap == 0 {
                let large = LARGE_RINGS_TAKEN.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < LARGE_RINGS;
                self.cap = if large { LARGE_RING } else { SMALL_RING };
                self.ring = Vec::with_capacity(self.cap);
            }
            if text.len() <= self.max_text() {
                let cap = self.cap as u64;
                // A text is stored whole: skip the ring's tail when it does not fit.
                if self.head % cap + text.len() as u64 > cap {
                    self.head += cap - self.head % cap;
                }
                let at = (self.head % cap) as usize;
                let end = at + text.len();
                if end > self.ring.len() {
                    // First lap: the ring grows (within its reservation).
                    self.ring.resize(end, 0);
                }
                self.ring[at..end].copy_from_slice(text);
                new.start = self.head;
                new.stored = true;
                self.head += text.len() as u64;
            }
        }
        self.slots[i] = new;
    }

    /// Forgets every text, keeping the memory.
    pub(crate) fn clear(&mut self) {
        self.slots.fill(Slot::default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(c: &mut TextCache, enc: u8, t: &[u8]) -> Option<usize> {
        c.probe(enc, t).and_then(|p| p.count)
    }

    /// Counts a text three times with `n` as its count: the third is a hit.
    fn see(c: &mut TextCache, enc: u8, t: &[u8], n: usize) {
        for _ in 0..2 {
            let p = c.probe(enc, t).unwrap();
            if p.count.is_none() {
                c.put(&p, enc, t, n);
            }
        }
    }

    #[test]
    fn answers_on_the_third_sighting_and_only_the_same_bytes() {
        let mut c = TextCache::default();
        let t = vec![b'a'; 20_000];
        let p = c.probe(0, &t).unwrap();
        assert_eq!(p.count, None);
        c.put(&p, 0, &t, 3);
        assert_eq!(count(&mut c, 0, &t), None, "the first count records the hash only");
        see(&mut c, 0, &t, 3);
        assert_eq!(count(&mut c, 0, &t), Some(3));
        // Another encoding, one byte more or less, one byte changed where
        // the hash does not look: all misses.
        assert_eq!(count(&mut c, 1, &t), None);
        assert_eq!(count(&mut c, 0, &t[1..]), None);
        let mut u = t.clone();
        u.push(b'a');
        assert_eq!(count(&mut c, 0, &u), None);
        let step = (t.len() - 8) / 9;
        let mut v = t.clone();
        v[step + 9] = b'b';
        assert_eq!(hash(0, &v), hash(0, &t), "the changed byte is between sampled words");
        assert_eq!(count(&mut c, 0, &v), None);
        // Too short, too long.
        assert!(c.probe(0, &t[..MIN_TEXT - 1]).is_none());
        assert!(c.probe(0, &vec![b'a'; LARGE_RING / 8 + 1]).is_none());
    }

    #[test]
    fn overwritten_texts_are_forgotten_and_the_ring_stays_bounded() {
        let mut c = TextCache::default();
        let texts: Vec<Vec<u8>> = (0..200u32).map(|i| format!("{i:08} {}", "x".repeat(20_000)).into_bytes()).collect();
        for (i, t) in texts.iter().enumerate() {
            see(&mut c, 0, t, i);
        }
        let ring = c.cap;
        assert!(ring == LARGE_RING || ring == SMALL_RING, "{ring}");
        assert!(c.ring.len() <= ring && c.ring.capacity() == ring);
        let mut hits = 0;
        for (i, t) in texts.iter().enumerate() {
            if let Some(n) = count(&mut c, 0, t) {
                assert_eq!(n, i);
                hits += 1;
            }
        }
        // 200 texts of 20 KB do not fit in the ring: only the last ones answer.
        assert!(hits > 0 && hits * 20_000 <= ring, "{hits}");
        assert!(count(&mut c, 0, &texts[0]).is_none());
        c.clear();
        assert!(count(&mut c, 0, &texts[199]).is_none());
        assert_eq!(c.cap, ring);
    }
}
