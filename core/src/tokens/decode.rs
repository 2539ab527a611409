//! Ids back to bytes and text: one token's bytes, a list's bytes, text in
//! three modes for bytes that are not UTF-8, and text with the character
//! offset of each token (tiktoken's `decode_single_token_bytes`,
//! `decode_bytes`, `decode(errors=...)` and `decode_with_offsets`).
//!
//! A token can hold part of a multi-byte character, so the bytes of an
//! arbitrary slice of ids need not be UTF-8; that is why the byte forms
//! exist and why text decoding has a mode.

use super::Tokenizer;
use crate::limits::{self, MAX_DECODE_TOKENS, MAX_TEXT_BYTES};
use crate::{Error, ErrorKind, Result};

/// What [`Tokenizer::decode`] does when token bytes are not valid UTF-8,
/// which happens when a sequence starts or ends inside a multi-byte character.
/// The modes are Python's `bytes.decode` error handlers, which tiktoken's
/// `decode(tokens, errors=...)` passes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DecodeMode {
    /// Replace each invalid sequence with U+FFFD, as tiktoken's `decode` does
    /// (one per maximal ill-formed subsequence, Python's `errors="replace"`).
    #[default]
    Replace,
    /// Fail with `InvalidUtf8`, naming the byte offset and the token index.
    Strict,
    /// Drop the bytes that are not part of a valid character (Python's
    /// `errors="ignore"`).
    Ignore,
}

impl DecodeMode {
    /// The mode by its Python name: `"replace"`, `"strict"` or `"ignore"`.
    pub fn from_name(name: &str) -> Result<DecodeMode> {
        match name {
            "replace" => Ok(DecodeMode::Replace),
            "strict" => Ok(DecodeMode::Strict),
            "ignore" => Ok(DecodeMode::Ignore),
            other => Err(Error::new(
                ErrorKind::InvalidArgument,
                format!("decode mode '{}' is not one of replace, strict, ignore", crate::text::clip(other)),
            )),
        }
    }
}

impl Tokenizer {
    /// The bytes of one token, ordinary or special (tiktoken's
    /// `decode_single_token_bytes`). Fails with `UnknownToken` for an id
    /// that is not in the vocabulary (past the end, or one of the unused ids
    /// inside it, such as cl100k_base's 100256).
    pub fn token_bytes(&self, id: u32) -> Result<&'static [u8]> {
        self.engine.token_bytes(id).ok_or_else(|| self.unknown_id(id, None))
    }

    fn unknown_id(&self, id: u32, index: Option<usize>) -> Error {
        let at = index.map(|i| format!(" at index {i}")).unwrap_or_default();
        Error::new(
            ErrorKind::UnknownToken,
            format!("token id {id}{at} is not in {} (valid ids are below {})", self.encoding(), self.vocab_size()),
        )
    }

    /// The exact bytes of `ids`, concatenated, with no UTF-8 requirement
    /// (tiktoken's `decode_bytes`). Fails with `UnknownToken` on an id that
    /// is not in the vocabulary, and with `LimitExceeded` when the bytes would
    /// be over [`MAX_TEXT_BYTES`] (the largest text the tokenizer accepts
    /// back); the size is summed before anything is allocated, so a long
    /// list of long tokens cannot make decode allocate gigabytes.
    pub fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>> {
        limits::check_items("token list", ids.len(), MAX_DECODE_TOKENS)?;
        let mut total = 0usize;
        for (i, &id) in ids.iter().enumerate() {
            let bytes = self.engine.token_bytes(id).ok_or_else(|| self.unknown_id(id, Some(i)))?;
            total = total.saturating_add(bytes.len());
        }
        limits::check("decoded text", total, MAX_TEXT_BYTES)?;
        let mut out = Vec::with_capacity(total);
        for &id in ids {
            out.extend_from_slice(self.engine.token_bytes(id).unwrap_or_default());
        }
        Ok(out)
    }

    /// The text of `ids`. A single token can hold part of a multi-byte
    /// character, so a slice of a valid encoding may not be valid UTF-8;
    /// `mode` says whether that is replaced with U+FFFD, dropped, or an error.
    pub fn decode(&self, ids: &[u32], mode: DecodeMode) -> Result<String> {
        let bytes = self.decode_bytes(ids)?;
        let e = match String::from_utf8(bytes) {
            Ok(s) => return Ok(s),
            Err(e) => e,
        };
        match mode {
            DecodeMode::Replace => {
                // U+FFFD is 3 bytes, so replacement can grow the text up to
                // threefold; the result must still be a text turnfit accepts.
                let s = String::from_utf8_lossy(e.as_bytes()).into_owned();
                limits::check("decoded text", s.len(), MAX_TEXT_BYTES)?;
                Ok(s)
            }
            // Rust's chunks split at the same maximal ill-formed
            // subsequences as Python's decoder, so the same bytes go.
            DecodeMode::Ignore => Ok(e.as_bytes().utf8_chunks().map(|c| c.valid()).collect()),
            DecodeMode::Strict => Err(self.not_utf8(ids, e.utf8_error().valid_up_to())),
        }
    }

    fn not_utf8(&self, ids: &[u32], offset: usize) -> Error {
        let index = self.token_at_byte(ids, offset);
        Error::new(
            ErrorKind::InvalidUtf8,
            format!(
                "decoded tokens are not valid UTF-8 at byte offset {offset} \
                 (token index {index}); decode with replacement to get U+FFFD instead"
            ),
        )
    }

    /// The text of `ids` (which must be valid UTF-8: `InvalidUtf8`
    /// otherwise, as in [`DecodeMode::Strict`]) and, per token, the offset
    /// in characters (Unicode scalar values) of where it starts: tiktoken's
    /// `decode_with_offsets`. A token that starts inside a character (its
    /// first byte is a UTF-8 continuation byte) gets the offset of that
    /// character; tiktoken's rule, reproduced exactly: the characters before
    /// the token, less one when its first byte is a continuation byte, never
    /// below zero.
    pub fn decode_with_offsets(&self, ids: &[u32]) -> Result<(String, Vec<usize>)> {
        let bytes = self.decode_bytes(ids)?;
        let text = String::from_utf8(bytes).map_err(|e| self.not_utf8(ids, e.utf8_error().valid_up_to()))?;
        let is_continuation = |b: u8| (0x80..0xC0).contains(&b);
        let mut chars = 0usize;
        let mut offsets = Vec::with_capacity(ids.len());
        for &id in ids {
            let token = self.engine.token_bytes(id).unwrap_or_default();
            let starts_inside = token.first().is_some_and(|&b| is_continuation(b));
            offsets.push(chars.saturating_sub(usize::from(starts_inside)));
            chars += token.iter().filter(|&&b| !is_continuation(b)).count();
        }
        Ok((text, offsets))
    }

    /// The index of the token whose bytes hold byte `offset` of the decoded
    /// ids (`ids.len()` past the end).
    pub(super) fn token_at_byte(&self, ids: &[u32], offset: usize) -> usize {
        let mut end = 0;
        for (i, &id) in ids.iter().enumerate() {
            end += self.engine.token_bytes(id).map_or(0, <[u8]>::len);
            if end > offset {
                return i;
            }
        }
        ids.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Encoding;

    fn cl100k() -> Tokenizer {
        Tokenizer::new(Encoding::Cl100kBase).unwrap()
    }

    #[test]
    fn token_bytes_of_ordinary_special_and_unknown_ids() {
        let t = cl100k();
        assert_eq!(t.token_bytes(15339).unwrap(), b"hello");
        assert_eq!(t.token_bytes(100257).unwrap(), b"<|endoftext|>");
        for bad in [100256, 100261, 100275, 100277, u32::MAX] {
            let e = t.token_bytes(bad).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::UnknownToken, "{bad}");
            assert!(e.message().contains(&format!("token id {bad} is not in cl100k_base")), "{e}");
        }
        // o200k_harmony's id 200018 has two names; the first listed wins, as in tiktoken.
        let h = Tokenizer::new(Encoding::O200kHarmony).unwrap();
        assert_eq!(h.token_bytes(200018).unwrap(), b"<|endofprompt|>");
        assert_eq!(h.token_bytes(201087).unwrap(), b"<|reserved_201087|>");
        assert!(h.token_bytes(201088).is_err());
    }

    #[test]
    fn decode_modes_on_a_split_character() {
        let t = cl100k();
        // "👍" is three tokens (tiktoken's test_encode_surrogate_pairs); the
        // first alone is part of a character.
        assert_eq!(t.encode("👍").unwrap(), [9468, 239, 235]);
        let ids = t.encode("a👍b").unwrap();
        let cut = [t.encode("a").unwrap(), vec![9468], t.encode("b").unwrap()].concat();
        let bytes = t.decode_bytes(&cut).unwrap();
        assert!(std::str::from_utf8(&bytes).is_err());
        assert_eq!(t.decode(&cut, DecodeMode::Ignore).unwrap(), "ab");
        assert_eq!(t.decode(&cut, DecodeMode::Replace).unwrap().chars().filter(|&c| c == '\u{fffd}').count(), 1);
        assert_eq!(t.decode(&cut, DecodeMode::Strict).unwrap_err().kind(), ErrorKind::InvalidUtf8);
        assert_eq!(t.decode(&ids, DecodeMode::Ignore).unwrap(), "a👍b");
    }

    #[test]
    fn decode_mode_names() {
        assert_eq!(DecodeMode::from_name("ignore").unwrap(), DecodeMode::Ignore);
        assert_eq!(DecodeMode::from_name("strict").unwrap(), DecodeMode::Strict);
        assert_eq!(DecodeMode::from_name("replace").unwrap(), DecodeMode::Replace);
        assert_eq!(DecodeMode::from_name("Ignore").unwrap_err().kind(), ErrorKind::InvalidArgument);
    }

    /// The examples of tiktoken's own tests/test_offsets.py.
    #[test]
    fn offsets_as_tiktoken_tests_them() {
        let t = cl100k();
        let offsets = |s: &str| {
            let (text, o) = t.decode_with_offsets(&t.encode(s).unwrap()).unwrap();
            assert_eq!(text, s);
            o
        };
        assert_eq!(offsets("hello world"), [0, 5]);
        assert_eq!(offsets("我非常渴望与人工智能一起工作"), [0, 1, 2, 3, 3, 4, 4, 5, 6, 7, 8, 8, 9, 10, 11, 12, 13]);
        assert_eq!(offsets("நடிகர் சூர்யா"), [0, 0, 1, 1, 2, 3, 4, 4, 5, 6, 7, 8, 8, 9, 9, 10, 11, 12, 12]);
        assert_eq!(offsets(" Ġ除"), [0, 1]);
        let r = t.with_special_tokens(crate::SpecialTokens::Recognize);
        let s = "hello world<|endoftext|> green cow";
        assert_eq!(r.decode_with_offsets(&r.encode(s).unwrap()).unwrap().1, [0, 5, 11, 24, 30]);
    }

    #[test]
    fn offsets_refuse_what_is_not_utf8_and_unknown_ids() {
        let t = cl100k();
        let lone = t.token_id(b"\xe6").unwrap();
        let e = t.decode_with_offsets(&[15339, lone]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidUtf8);
        assert!(e.message().contains("byte offset 5 (token index 1)"), "{e}");
        assert_eq!(t.decode_with_offsets(&[100256]).unwrap_err().kind(), ErrorKind::UnknownToken);
        assert_eq!(t.decode_with_offsets(&[]).unwrap(), (String::new(), vec![]));
    }
}
