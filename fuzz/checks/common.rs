//! Input helpers shared by the checks: a few leading bytes choose options,
//! the rest is the text under test.
#![allow(dead_code)] // each includer uses only some helpers

/// Reads option bytes from the front of a fuzz input; past the end it
/// yields zeros, so every input (even an empty one) is usable.
pub struct Knobs<'a> {
    data: &'a [u8],
}

impl<'a> Knobs<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Knobs { data }
    }

    /// The next byte (0 when none is left).
    pub fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    /// The next two bytes, little-endian.
    pub fn u16(&mut self) -> u16 {
        u16::from(self.byte()) | (u16::from(self.byte()) << 8)
    }

    /// Whatever is left.
    pub fn rest(self) -> &'a [u8] {
        self.data
    }
}

/// The bytes as text: UTF-8 as is, anything else decoded lossily (the core
/// takes `&str`; invalid UTF-8 is the C ABI target's business).
pub fn text(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

/// The committed seeds of fuzz target `target`, sorted by file name, read
/// from `corpus` (the fuzz/corpus folder). For the `cargo test` replays of
/// the core and ffi crates; requires at least 50 seeds so a corpus cannot
/// silently go missing.
pub fn seeds(corpus: &std::path::Path, target: &str) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let dir = corpus.join(target);
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(files.len() >= 50, "{target}: only {} seeds in {}", files.len(), dir.display());
    files
        .into_iter()
        .map(|f| {
            let data = std::fs::read(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            (f, data)
        })
        .collect()
}
