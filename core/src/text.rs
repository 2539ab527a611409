//! Byte-to-text validation shared by the C ABI, the CLI and the bindings, so
//! every front end reports invalid UTF-8 the same way (with the byte offset).

use crate::{Error, ErrorKind, Result};

/// Borrows `bytes` as UTF-8 text or says where the first invalid byte is.
pub fn utf8<'a>(what: &str, bytes: &'a [u8]) -> Result<&'a str> {
    std::str::from_utf8(bytes).map_err(|e| {
        Error::new(ErrorKind::InvalidUtf8, format!("{what} is not valid UTF-8 at byte offset {}", e.valid_up_to()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_offset_of_first_bad_byte() {
        let err = utf8("text", b"ab\xffcd").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidUtf8);
        assert_eq!(err.message(), "text is not valid UTF-8 at byte offset 2");
        assert_eq!(utf8("text", "héllo".as_bytes()).unwrap(), "héllo");
    }
}
