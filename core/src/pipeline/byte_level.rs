//! GPT-2's byte-to-character alphabet (HF `ByteLevel`).
//!
//! Byte-level vocabularies spell every byte as a printable character so that
//! token strings are valid text in JSON: printable Latin-1 bytes stand for
//! themselves, the other 68 bytes are shifted to U+0100 and up, in byte
//! order. The pipeline never builds those strings for text: it converts the
//! vocabulary back to raw bytes once, at load time, and merges the text's
//! own bytes.

/// Whether byte `b` stands for itself in the alphabet.
fn printable(b: u8) -> bool {
    matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF)
}

/// The character that spells byte `b`.
pub(crate) fn byte_to_char(b: u8) -> char {
    if printable(b) {
        return char::from(b);
    }
    let shifted = (0..b).filter(|&x| !printable(x)).count() as u32;
    char::from_u32(256 + shifted).unwrap_or('\u{FFFD}')
}

/// The map from character back to byte, for every character of the alphabet.
///
/// Arithmetic and one 68-entry array instead of a hash map: loading a
/// byte-level vocabulary decodes every token string (150,000 of them for
/// Qwen), and a hash probe per character was a tenth of the load time.
#[derive(Clone)]
pub(crate) struct CharTable {
    /// The byte each of U+0100..U+0143 spells, in order.
    shifted: [u8; 68],
}

impl CharTable {
    /// The byte character `c` spells, or `None` outside the alphabet.
    #[inline]
    pub(crate) fn byte(&self, c: char) -> Option<u8> {
        let u = c as u32;
        if u < 0x100 {
            let b = u as u8;
            return printable(b).then_some(b);
        }
        self.shifted.get((u - 0x100) as usize).copied()
    }
}

/// The table from character back to byte.
pub(crate) fn char_table() -> CharTable {
    let mut shifted = [0u8; 68];
    for (slot, b) in shifted.iter_mut().zip((0..=255u8).filter(|&b| !printable(b))) {
        *slot = b;
    }
    CharTable { shifted }
}

/// The raw bytes a byte-level token string spells, or `None` when it holds
/// a character outside the alphabet (such a string is no byte sequence: an
/// added token's text, for instance).
pub(crate) fn decode_str(s: &str, table: &CharTable) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len());
    decode_into(s, table, &mut out).then_some(out)
}

/// [`decode_str`] appending to `out`; `false` (with `out` partly written)
/// when `s` holds a character outside the alphabet.
pub(crate) fn decode_into(s: &str, table: &CharTable, out: &mut Vec<u8>) -> bool {
    for c in s.chars() {
        match table.byte(c) {
            Some(b) => out.push(b),
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_alphabet_is_gpt2s() {
        assert_eq!(byte_to_char(b' '), 'Ġ');
        assert_eq!(byte_to_char(b'\n'), 'Ċ');
        assert_eq!(byte_to_char(b'a'), 'a');
        assert_eq!(byte_to_char(0), '\u{100}');
        assert_eq!(byte_to_char(0xAD), 'Ń');
        let t = char_table();
        let back: std::collections::BTreeSet<u8> =
            (0..=255u8).map(|b| t.byte(byte_to_char(b)).expect("every byte's character maps back")).collect();
        assert_eq!(back.len(), 256, "a bijection");
        for b in 0..=255u8 {
            assert_eq!(t.byte(byte_to_char(b)), Some(b));
        }
        for c in ['\u{AD}', '\u{7F}', ' ', '\u{144}', '\u{10FFFF}'] {
            assert_eq!(t.byte(c), None, "{c:?} is outside the alphabet");
        }
        assert_eq!(decode_str("ĠhelloĊ", &t), Some(b" hello\n".to_vec()));
        assert_eq!(decode_str("<|x|>€", &t), None);
    }
}
