//! Cutting a text to a byte budget (`tool_output_max_bytes`), head and
//! tail kept with a marker between them, never inside a UTF-8 sequence.
//!
//! Why bytes besides tokens: hosts often cap tool output by size before
//! they know the model (design 001 caps every tool output at 10 KB), and a
//! byte cap costs no tokenization. The marker's own bytes count against
//! the budget, as the token marker's tokens do, so the result is never
//! longer than the cap.

use crate::{Error, Result};

/// The marker put where the middle was taken out; `{removed}` becomes the
/// number of bytes removed.
pub const BYTES_MARKER: &str = "\n[... {removed} bytes truncated ...]\n";

/// A text cut to a byte budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ByteCut {
    /// The head, the marker and the tail.
    pub text: String,
    /// Bytes of the input not in `text` (the marker not included).
    pub removed_bytes: usize,
}

fn marker(removed: usize) -> String {
    BYTES_MARKER.replace("{removed}", &removed.to_string())
}

/// `text` cut to at most `max_bytes` bytes, marker included, keeping its
/// head and tail (the head gets the odd byte); `None` when it already fits.
/// A budget that cannot hold the marker and two bytes more is
/// `InvalidArgument` (an end shorter than its first character is empty).
pub fn cut(text: &str, max_bytes: usize) -> Result<Option<ByteCut>> {
    if text.len() <= max_bytes {
        return Ok(None);
    }
    // The marker's length depends on the removed count, which depends on
    // the marker's length: start from the marker for the whole text (the
    // longest count) and let the char-boundary rounding only remove more.
    let mark_len = marker(text.len()).len();
    let avail = max_bytes.checked_sub(mark_len).filter(|&a| a >= 2).ok_or_else(|| {
        Error::invalid_argument(format!(
            "tool_output_max_bytes {max_bytes} leaves no room for the truncation marker ({mark_len} bytes) and two \
             bytes of output"
        ))
    })?;
    let mut head = avail - avail / 2;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - avail / 2;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    let removed = tail - head;
    let mut out = String::with_capacity(max_bytes);
    out.push_str(&text[..head]);
    out.push_str(&marker(removed));
    out.push_str(&text[tail..]);
    debug_assert!(out.len() <= max_bytes);
    Ok(Some(ByteCut { text: out, removed_bytes: removed }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn short_text_is_left_alone() {
        assert_eq!(cut("hello", 5).unwrap(), None);
        assert_eq!(cut("", 0).unwrap(), None);
    }

    #[test]
    fn long_text_keeps_both_ends_within_the_budget() {
        let text: String = (0..3000).map(|i| format!("line {i}\n")).collect();
        let c = cut(&text, 10_000).unwrap().expect("cut");
        assert!(c.text.len() <= 10_000 && c.text.len() >= 9_990, "{}", c.text.len());
        assert!(c.text.starts_with("line 0\nline 1\n") && c.text.ends_with("line 2999\n"));
        assert!(c.text.contains(&format!("[... {} bytes truncated ...]", c.removed_bytes)));
        let marker_len = marker(c.removed_bytes).len();
        assert_eq!(c.text.len() - marker_len + c.removed_bytes, text.len(), "every byte is kept or counted");
    }

    /// Every budget on text of 2-, 3- and 4-byte characters: the result is
    /// valid UTF-8 by construction (a `String`), within the budget, and
    /// made of a prefix and a suffix of the input.
    #[test]
    fn never_cuts_inside_a_character() {
        for unit in ["é", "中", "🦀", "aé中🦀"] {
            let text = unit.repeat(200);
            let least = marker(text.len()).len() + 2;
            assert_eq!(cut(&text, least - 1).unwrap_err().kind(), ErrorKind::InvalidArgument);
            for max in least..text.len() {
                let c = cut(&text, max).unwrap().expect("cut");
                assert!(c.text.len() <= max, "{unit} {max}");
                let m = marker(c.removed_bytes);
                let at = c.text.find(&m).expect("marker");
                let (head, tail) = (&c.text[..at], &c.text[at + m.len()..]);
                assert!(text.starts_with(head) && text.ends_with(tail), "{unit} {max}");
                assert!(max < least + 8 || (!head.is_empty() && !tail.is_empty()), "{unit} {max}");
                assert_eq!(head.len() + tail.len() + c.removed_bytes, text.len());
            }
        }
    }

    #[test]
    fn a_budget_below_the_marker_is_refused() {
        let text = "x".repeat(1000);
        let e = cut(&text, 20).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.message().contains("tool_output_max_bytes 20 leaves no room"), "{}", e.message());
        assert_eq!(cut(&text, 0).unwrap_err().kind(), ErrorKind::InvalidArgument);
    }
}
