//! Parsing tiktoken rank files into the two lookup directions BPE needs.

use base64::Engine as _;
use rustc_hash::FxHashMap;

use crate::{Error, Result};

/// Byte string to rank, and rank to byte string.
///
/// Ranks are dense (p50k_base has one hole, at the id of `<|endoftext|>`), so
/// the reverse direction is a flat byte arena plus offsets instead of 100k
/// small vectors. A hole is an empty span: no BPE token has zero bytes.
pub(crate) struct Vocab {
    pub(crate) ranks: FxHashMap<Box<[u8]>, u32>,
    bytes: Vec<u8>,
    offsets: Vec<u32>,
    /// Length in bytes of the longest token; a piece of `n` bytes therefore
    /// has at least `ceil(n / max_token_len)` tokens.
    pub(crate) max_token_len: usize,
}

impl Vocab {
    pub(crate) fn parse(file: &str) -> Result<Vocab> {
        let b64 = base64::engine::general_purpose::STANDARD;
        let lines = file.lines().filter(|l| !l.is_empty());
        let mut ranks = FxHashMap::default();
        ranks.reserve(file.len() / 12);
        let mut bytes = Vec::with_capacity(file.len() / 2);
        let mut offsets = vec![0u32];
        for (line_no, line) in lines.enumerate() {
            let bad = || Error::internal(format!("corrupt rank file at line {}", line_no + 1));
            let (token, rank) = line.split_once(' ').ok_or_else(bad)?;
            let token = b64.decode(token).map_err(|_| bad())?;
            let rank: u32 = rank.parse().map_err(|_| bad())?;
            let next = offsets.len() - 1;
            // Ranks must increase; a small gap is a hole (an id used by a
            // special token), anything else means the file is damaged.
            if token.is_empty() || (rank as usize) < next || rank as usize > next + 16 {
                return Err(bad());
            }
            let end = offsets[next];
            offsets.resize(rank as usize + 1, end);
            bytes.extend_from_slice(&token);
            offsets.push(u32::try_from(bytes.len()).map_err(|_| bad())?);
            ranks.insert(token.into_boxed_slice(), rank);
        }
        let max_token_len = ranks.keys().map(|k| k.len()).max().unwrap_or(1);
        Ok(Vocab { ranks, bytes, offsets, max_token_len })
    }

    /// One past the highest ordinary rank.
    pub(crate) fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The bytes of ordinary token `rank`, if it exists.
    pub(crate) fn token_bytes(&self, rank: u32) -> Option<&[u8]> {
        let r = rank as usize;
        if r >= self.len() {
            return None;
        }
        let (a, b) = (self.offsets[r] as usize, self.offsets[r + 1] as usize);
        (a < b).then(|| &self.bytes[a..b])
    }

    /// Bytes held by the vocabulary, for memory reporting.
    pub(crate) fn heap_bytes(&self) -> usize {
        // Each map entry holds a boxed slice (pointer + length + payload) and a
        // rank; the arena and offsets are flat.
        self.ranks.capacity() * (std::mem::size_of::<(Box<[u8]>, u32)>() + 1)
            + self.bytes.len() * 2
            + self.offsets.len() * 4
    }
}
