//! Byte-to-text validation shared by the C ABI, the CLI and the bindings, so
//! every front end reports invalid UTF-8 the same way (with the byte offset).

use crate::{Error, ErrorKind, Result};

/// Borrows `bytes` as UTF-8 text or says where the first invalid byte is.
pub fn utf8<'a>(what: &str, bytes: &'a [u8]) -> Result<&'a str> {
    std::str::from_utf8(bytes).map_err(|e| {
        Error::new(ErrorKind::InvalidUtf8, format!("{what} is not valid UTF-8 at byte offset {}", e.valid_up_to()))
    })
}

/// `s` as it may appear in an error message: at most
/// [`crate::limits::MAX_ECHO_BYTES`] bytes, cut at a character boundary
/// and marked with an ellipsis, so a hostile multi-megabyte name or key is
/// never copied whole into a message.
pub fn clip(s: &str) -> std::borrow::Cow<'_, str> {
    let max = crate::limits::MAX_ECHO_BYTES;
    if s.len() <= max {
        return s.into();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end]).into()
}

/// `InvalidArgument` when a name or id is longer than
/// [`crate::limits::MAX_NAME_BYTES`]; checked before any lookup so a huge
/// name costs nothing and is never echoed whole.
pub fn check_name(what: &str, name: &str) -> Result<()> {
    let max = crate::limits::MAX_NAME_BYTES;
    if name.len() > max {
        return Err(Error::invalid_argument(format!(
            "{what} '{}' is {} bytes; the limit is {max} (MAX_NAME_BYTES)",
            clip(name),
            name.len()
        )));
    }
    Ok(())
}

/// [`check_name`] from a name's length alone, for a front end that has a
/// pointer and a length: nothing of the name is read, so nothing is quoted
/// (a buffer shorter than its stated length must not be read to build the
/// message, issue 48). Same kind as [`check_name`].
pub fn check_name_len(what: &str, len: usize) -> Result<()> {
    let max = crate::limits::MAX_NAME_BYTES;
    if len > max {
        return Err(Error::invalid_argument(format!(
            "{what} of {len} bytes is over the limit of {max} (MAX_NAME_BYTES); it was refused unread"
        )));
    }
    Ok(())
}

/// Up to `k` of `names` that look like `query`, best first (the "did you
/// mean" of unknown models and encodings). Here, not in `models`, so the
/// tokenizer does not depend on the model registry above it.
pub(crate) fn close_matches<'a>(query: &str, names: impl Iterator<Item = &'a str>, k: usize) -> Vec<String> {
    let mut scored: Vec<(f64, &str)> =
        names.map(|n| (strsim::jaro_winkler(query, n), n)).filter(|(s, _)| *s >= 0.8).collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(k).map(|(_, n)| n.to_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_keeps_short_text_and_cuts_long_text_at_a_boundary() {
        assert_eq!(clip("gpt-4o"), "gpt-4o");
        let long = "é".repeat(1000);
        let c = clip(&long);
        assert!(c.len() < crate::limits::MAX_ECHO_BYTES + 32, "{}", c.len());
        assert!(c.ends_with("é..."), "{c}");
    }

    #[test]
    fn reports_offset_of_first_bad_byte() {
        let err = utf8("text", b"ab\xffcd").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidUtf8);
        assert_eq!(err.message(), "text is not valid UTF-8 at byte offset 2");
        assert_eq!(utf8("text", "héllo".as_bytes()).unwrap(), "héllo");
    }
}
