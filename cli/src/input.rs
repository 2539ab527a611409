//! Reading inputs: files or standard input, with the core's size limit
//! applied before reading and its UTF-8 check (which reports the offset).

use std::io::Read;

use turnfit::limits::MAX_TEXT_BYTES;

/// Reads `path` ("-" is standard input) as UTF-8 text, or says why not in
/// one line that starts with the path.
pub(crate) fn read_text(path: &str) -> Result<String, String> {
    let bytes = read_bytes(path)?;
    turnfit::frontend::utf8("input", &bytes).map_err(|e| format!("{path}: {e}"))?;
    // Validated just above; this conversion cannot fail.
    String::from_utf8(bytes).map_err(|e| format!("{path}: {e}"))
}

/// Reads `path` ("-" is standard input) as bytes, within the core's size limit.
pub(crate) fn read_bytes(path: &str) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    let limit = MAX_TEXT_BYTES as u64;
    let read = if path == "-" {
        std::io::stdin().lock().take(limit + 1).read_to_end(&mut bytes)
    } else {
        std::fs::File::open(path).and_then(|f| f.take(limit + 1).read_to_end(&mut bytes))
    };
    read.map_err(|e| format!("{path}: {}", io_message(&e)))?;
    turnfit::frontend::check_bytes("input", bytes.len(), MAX_TEXT_BYTES).map_err(|e| format!("{path}: {e}"))?;
    Ok(bytes)
}

fn io_message(e: &std::io::Error) -> String {
    // The io::Error text carries "(os error 2)"; keep just the description.
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_owned(),
        None => s,
    }
}
