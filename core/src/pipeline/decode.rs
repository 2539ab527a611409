//! Decoders: ids back to text (HF `decoders`), for the CLI's `decode` and
//! for round-trip tests. Counting never decodes.

/// One decoding step over the tokens' strings.
#[derive(Debug, Clone)]
pub(crate) enum Decoder {
    /// Token strings in GPT-2's alphabet back to bytes.
    ByteLevel,
    Replace {
        pattern: String,
        content: String,
    },
    /// Runs of `<0xXX>` tokens back to the text their bytes spell.
    ByteFallback,
    /// All tokens joined into one.
    Fuse,
    /// Up to `start` / `stop` copies of `content` cut from each token's ends.
    Strip {
        content: char,
        start: usize,
        stop: usize,
    },
    /// `▁` back to spaces; the first token loses its leading space when
    /// the encoder added one.
    Metaspace {
        replacement: char,
        strip_first: bool,
    },
    Sequence(Vec<Decoder>),
}

impl Decoder {
    /// Applies the steps to the token strings, then joins them.
    pub(crate) fn decode(&self, tokens: Vec<Vec<u8>>, table: &super::byte_level::CharTable) -> String {
        let tokens = self.chain(tokens, table);
        String::from_utf8_lossy(&tokens.concat()).into_owned()
    }

    fn chain(&self, tokens: Vec<Vec<u8>>, table: &super::byte_level::CharTable) -> Vec<Vec<u8>> {
        match self {
            Decoder::Sequence(steps) => steps.iter().fold(tokens, |t, d| d.chain(t, table)),
            Decoder::ByteLevel => tokens
                .into_iter()
                .map(|t| {
                    let s = String::from_utf8_lossy(&t);
                    super::byte_level::decode_str(&s, table).unwrap_or(t)
                })
                .collect(),
            Decoder::Replace { pattern, content } => tokens
                .into_iter()
                .map(|t| String::from_utf8_lossy(&t).replace(pattern.as_str(), content).into_bytes())
                .collect(),
            Decoder::ByteFallback => {
                let mut out = Vec::with_capacity(tokens.len());
                let mut bytes = Vec::new();
                let flush = |bytes: &mut Vec<u8>, out: &mut Vec<Vec<u8>>| {
                    if !bytes.is_empty() {
                        match String::from_utf8(std::mem::take(bytes)) {
                            Ok(s) => out.push(s.into_bytes()),
                            Err(e) => out.extend(e.as_bytes().iter().map(|_| "\u{FFFD}".as_bytes().to_vec())),
                        }
                    }
                };
                for t in tokens {
                    match byte_token(&t) {
                        Some(b) => bytes.push(b),
                        None => {
                            flush(&mut bytes, &mut out);
                            out.push(t);
                        }
                    }
                }
                flush(&mut bytes, &mut out);
                out
            }
            Decoder::Fuse => vec![tokens.concat()],
            Decoder::Strip { content, start, stop } => tokens
                .into_iter()
                .map(|t| {
                    let s = String::from_utf8_lossy(&t).into_owned();
                    let mut chars: Vec<char> = s.chars().collect();
                    let lead = chars.iter().take(*start).take_while(|&&c| c == *content).count();
                    chars.drain(..lead);
                    let trail = chars.iter().rev().take(*stop).take_while(|&&c| c == *content).count();
                    chars.truncate(chars.len() - trail);
                    chars.into_iter().collect::<String>().into_bytes()
                })
                .collect(),
            Decoder::Metaspace { replacement, strip_first } => tokens
                .into_iter()
                .enumerate()
                .map(|(i, t)| {
                    let s = String::from_utf8_lossy(&t).replace(*replacement, " ");
                    match s.strip_prefix(' ') {
                        Some(rest) if i == 0 && *strip_first => rest.as_bytes().to_vec(),
                        _ => s.into_bytes(),
                    }
                })
                .collect(),
        }
    }
}

/// The byte a `<0xXX>` token stands for.
pub(crate) fn byte_token(t: &[u8]) -> Option<u8> {
    if t.len() == 6 && t.starts_with(b"<0x") && t[5] == b'>' {
        let hex = std::str::from_utf8(&t[3..5]).ok()?;
        u8::from_str_radix(hex, 16).ok()
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentencepiece_style_chain() {
        let d = Decoder::Sequence(vec![
            Decoder::Replace { pattern: "\u{2581}".into(), content: " ".into() },
            Decoder::ByteFallback,
            Decoder::Fuse,
        ]);
        let toks = ["\u{2581}Hi", "<0xE2>", "<0x82>", "<0xAC>", "<0xFF>", "!"].map(|s| s.as_bytes().to_vec());
        // As HF: a run of byte tokens that is not UTF-8 as a whole becomes
        // one U+FFFD per byte, the valid "€" in it included.
        assert_eq!(
            d.decode(toks.to_vec(), &crate::pipeline::byte_level::char_table()),
            " Hi\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}!"
        );
        let ok = ["<0xE2>", "<0x82>", "<0xAC>"].map(|s| s.as_bytes().to_vec());
        assert_eq!(d.decode(ok.to_vec(), &crate::pipeline::byte_level::char_table()), "\u{20ac}");
    }
}
