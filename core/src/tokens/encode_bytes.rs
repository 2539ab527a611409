//! Encoding bytes that need not be UTF-8, with tiktoken's `_encode_bytes`
//! semantics (tiktoken `src/py.rs`, 0.14.0), so ids match it on any input.
//!
//! The pre-tokenizer works on characters, so bytes that are not UTF-8 cannot
//! be split the usual way. tiktoken's answer, reproduced step by step:
//!
//! 1. Valid UTF-8 is encoded ordinarily (special-token text is plain text).
//! 2. Otherwise the valid prefix (up to the first invalid byte) is encoded
//!    ordinarily, remembering how many tokens its last piece gave.
//! 3. That last piece is unstable: the bytes after it might have joined it.
//!    When its first token is all spaces, tabs and newlines, the run of such
//!    tokens before it joins it too (a split the regex would drop,
//!    cl100k_base's `\s*[\r\n]+`).
//! 4. The unstable tokens' bytes plus every byte after the valid prefix
//!    (invalid or not) are merged as one piece, without pre-tokenization:
//!    one token if they are one, else byte-pair merges.
//!
//! Step 4 is why the result can differ from encoding any text: a valid tail
//! after the first invalid byte is merged as bytes too. Decoding the ids
//! always gives the input back.

use super::Tokenizer;
use crate::limits::{self, MAX_TEXT_BYTES};
use crate::Result;

impl Tokenizer {
    /// The token ids of `bytes`, UTF-8 or not, exactly as tiktoken's
    /// `Encoding._encode_bytes` gives them (see the module docs). Special
    /// tokens are never recognized. `decode_bytes` of the result is `bytes`.
    /// Fails only with `LimitExceeded` for input over 64 MiB.
    pub fn encode_bytes(&self, bytes: &[u8]) -> Result<Vec<u32>> {
        limits::check("bytes", bytes.len(), MAX_TEXT_BYTES)?;
        let valid = match std::str::from_utf8(bytes) {
            Ok(text) => return self.with_special_tokens(super::SpecialTokens::Ordinary).encode(text),
            Err(e) => e.valid_up_to(),
        };
        let prefix = std::str::from_utf8(&bytes[..valid]).unwrap_or_default();
        let mut tokens = Vec::with_capacity(bytes.len() / 4 + 1);
        let mut last = self.engine.encode_ordinary_last_piece(prefix, &mut tokens);
        let all_space = |id: &u32| {
            self.engine.ordinary_token_bytes(*id).is_some_and(|b| b.iter().all(|c| matches!(c, b' ' | b'\n' | b'\t')))
        };
        if last > 0 && all_space(&tokens[tokens.len() - last]) {
            while last < tokens.len() && all_space(&tokens[tokens.len() - last - 1]) {
                last += 1;
            }
        }
        let mut unstable = Vec::new();
        for id in tokens.drain(tokens.len() - last..) {
            unstable.extend_from_slice(self.engine.token_bytes(id).unwrap_or_default());
        }
        unstable.extend_from_slice(&bytes[valid..]);
        self.engine.encode_piece_bytes(&unstable, &mut tokens);
        Ok(tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Encoding;

    /// tiktoken's tests/test_encoding.py::test_encode_bytes.
    #[test]
    fn tiktoken_examples() {
        let t = Tokenizer::new(Encoding::Cl100kBase).unwrap();
        assert_eq!(t.encode_bytes(b" \xec\x8b\xa4\xed").unwrap(), [62085]);
        for i in 0..10 {
            let b = vec![0x80u8; i];
            assert_eq!(t.decode_bytes(&t.encode_bytes(&b).unwrap()).unwrap(), b);
        }
    }

    #[test]
    fn utf8_input_is_ordinary_encoding() {
        let t = Tokenizer::new(Encoding::O200kBase).unwrap().with_special_tokens(crate::SpecialTokens::Recognize);
        let text = "hello <|endoftext|> world";
        assert_eq!(
            t.encode_bytes(text.as_bytes()).unwrap(),
            t.with_special_tokens(Default::default()).encode(text).unwrap()
        );
        assert_eq!(t.encode_bytes(b"").unwrap(), Vec::<u32>::new());
    }

    #[test]
    fn round_trips_arbitrary_bytes_for_every_encoding() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for e in Encoding::ALL {
            let t = Tokenizer::new(e).unwrap();
            for _ in 0..200 {
                let n = (next() % 200) as usize;
                let alphabet = b" \n\ta\xc3\xa9\xe6\x88\x91\x80\xff<|>";
                let b: Vec<u8> = (0..n).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]).collect();
                assert_eq!(t.decode_bytes(&t.encode_bytes(&b).unwrap()).unwrap(), b, "{e} {b:?}");
            }
        }
    }

    #[test]
    fn oversized_input_is_a_limit() {
        let t = Tokenizer::new(Encoding::R50kBase).unwrap();
        let big = vec![0xffu8; MAX_TEXT_BYTES + 1];
        assert_eq!(t.encode_bytes(&big).unwrap_err().kind(), crate::ErrorKind::LimitExceeded);
    }
}
