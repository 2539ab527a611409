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

/// The table from character back to byte, for every character of the alphabet.
pub(crate) fn char_table() -> rustc_hash::FxHashMap<char, u8> {
    (0..=255u8).map(|b| (byte_to_char(b), b)).collect()
}

/// The raw bytes a byte-level token string spells, or `None` when it holds
/// a character outside the alphabet (such a string is no byte sequence: an
/// added token's text, for instance).
pub(crate) fn decode_str(s: &str, table: &rustc_hash::FxHashMap<char, u8>) -> Option<Vec<u8>> {
    s.chars().map(|c| table.get(&c).copied()).collect()
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
        assert_eq!(t.len(), 256, "a bijection");
        assert_eq!(decode_str("ĠhelloĊ", &t), Some(b" hello\n".to_vec()));
        assert_eq!(decode_str("<|x|>€", &t), None);
    }
}
