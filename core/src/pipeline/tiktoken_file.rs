//! tiktoken-format files (`<base64 token> <rank>` per line): Llama 3's
//! `tokenizer.model`, Qwen's `qwen.tiktoken`.
//!
//! Such a file holds ranks only: no split rules, no special tokens, so they
//! come from a named preset (`presets.rs`) or a regex given by the caller.
//! tiktoken merges any adjacent pair whose concatenation is a token, by that
//! token's rank, and takes a piece that is one token as that token. Both are
//! expressed in the pipeline's BPE model: every split of every token into
//! two tokens becomes a merge ranked by the whole token's rank, and
//! `ignore_merges` is set. Ranks are the ids.

use rustc_hash::FxHashMap;

use super::bpe::{Bpe, TokenBytes, Units};
use crate::{Error, ErrorKind, Result};

fn bad(file: &str, what: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::InvalidArgument, format!("{file}: {what}"))
}

/// Standard base64 with padding, as tiktoken files write it.
pub(crate) fn base64(s: &[u8]) -> Option<Vec<u8>> {
    if s.is_empty() || !s.len().is_multiple_of(4) {
        return None;
    }
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let chunks = s.len() / 4;
    for (k, q) in s.chunks(4).enumerate() {
        let pad = if k + 1 == chunks { q.iter().rev().take_while(|&&c| c == b'=').count() } else { 0 };
        if pad > 2 {
            return None;
        }
        let mut n = 0u32;
        for &c in &q[..4 - pad] {
            n = (n << 6) | val(c)?;
        }
        n <<= 6 * pad as u32;
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..4 - pad]);
    }
    Some(out)
}

/// Whether `bytes` look like a tiktoken file: the first line is a base64
/// token and a number.
pub(crate) fn looks_like(bytes: &[u8]) -> bool {
    let line = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
    let mut it = line.trim_ascii_end().split(|&b| b == b' ');
    matches!((it.next(), it.next(), it.next()), (Some(t), Some(r), None) if base64(t).is_some() && !r.is_empty() && r.iter().all(u8::is_ascii_digit))
}

/// The BPE model of a tiktoken file, and its tokens by id (for decoding).
pub(crate) fn load(bytes: &[u8], file: &str) -> Result<(Bpe, TokenBytes)> {
    let mut tokens: Vec<(u32, Vec<u8>)> = Vec::new();
    let mut vocab: FxHashMap<Box<[u8]>, u32> = FxHashMap::default();
    for (n, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        let mut it = line.split(|&b| b == b' ');
        let (Some(t), Some(r), None) = (it.next(), it.next(), it.next()) else {
            return Err(bad(file, format_args!("line {}: not `<base64 token> <rank>`", n + 1)));
        };
        let token = base64(t).ok_or_else(|| bad(file, format_args!("line {}: the token is not base64", n + 1)))?;
        let rank: u32 = std::str::from_utf8(r)
            .ok()
            .filter(|r| r.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|r| r.parse().ok())
            .filter(|&r| r < u32::MAX)
            .ok_or_else(|| bad(file, format_args!("line {}: the rank is not a number below 2^32 - 1", n + 1)))?;
        if vocab.insert(token.clone().into_boxed_slice(), rank).is_some() {
            return Err(bad(file, format_args!("line {}: the token appears twice", n + 1)));
        }
        tokens.push((rank, token));
    }
    if tokens.is_empty() {
        return Err(bad(file, "no tokens"));
    }
    Ok((model(vocab, &tokens, 0, file)?, tokens))
}

/// tiktoken's rule as the pipeline's BPE model, for the ranks of `vocab`
/// (bytes to rank; `tokens` the same pairs in file order), each id being
/// the rank plus `shift` (Tekken files number their ranks after their
/// special tokens).
pub(crate) fn model(
    vocab: FxHashMap<Box<[u8]>, u32>,
    tokens: &[(u32, Vec<u8>)],
    shift: u32,
    file: &str,
) -> Result<Bpe> {
    let mut byte_ids = [u32::MAX; 256];
    for (b, slot) in byte_ids.iter_mut().enumerate() {
        *slot = vocab.get(&[b as u8][..]).copied().ok_or_else(|| {
            bad(file, format_args!("no token for byte 0x{b:02X}, which every tiktoken vocabulary has"))
        })?;
    }
    let mut merges = FxHashMap::default();
    for (rank, t) in tokens {
        for cut in 1..t.len() {
            if let (Some(&a), Some(&b)) = (vocab.get(&t[..cut]), vocab.get(&t[cut..])) {
                merges.insert((a + shift, b + shift), (*rank, *rank + shift));
            }
        }
    }
    let vocab = if shift == 0 { vocab } else { vocab.into_iter().map(|(k, v)| (k, v + shift)).collect() };
    for id in &mut byte_ids {
        *id += shift;
    }
    Ok(Bpe {
        units: Units::Bytes,
        vocab,
        merges,
        byte_ids,
        fallback: None,
        unk: None,
        fuse_unk: false,
        ignore_merges: true,
        metaspace_runs: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_as_tiktoken_writes_it() {
        assert_eq!(base64(b"IQ==").unwrap(), b"!");
        assert_eq!(base64(b"aGk=").unwrap(), b"hi");
        assert_eq!(base64(b"aGV5").unwrap(), b"hey");
        assert_eq!(base64(b"a==="), None);
        assert_eq!(base64(b"a?=="), None);
        assert_eq!(base64(b""), None);
    }
}
