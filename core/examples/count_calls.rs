//! Many counts of short texts, as a host makes them: the same text again
//! and again (`same`), or a different slice of a file each call (`unique`,
//! text never seen), for instruction counts of the per-call cost (issue 36:
//! the text cache's hit, and what its probe costs text that never repeats).
//!
//! ```sh
//! cargo build --release -p turnfit --example count_calls
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!   target/release/examples/count_calls FILE 1024 10000 unique
//! ```
//!
//! Prints the total tokens; run it with 0 calls for the fixed cost (loading
//! the vocabulary, reading the file) and subtract.

use turnfit::{Encoding, Tokenizer};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, file, bytes, calls, mode, ..] = args.as_slice() else {
        return Err("usage: count_calls FILE BYTES CALLS same|unique [ENCODING]".into());
    };
    let text = std::fs::read_to_string(file)?;
    let (bytes, calls): (usize, usize) = (bytes.parse()?, calls.parse()?);
    let encoding = args.get(5).map_or(Ok(Encoding::O200kBase), |e| Encoding::from_name(e))?;
    let tok = Tokenizer::new(encoding)?;
    tok.count("warm")?;
    // Slices on character boundaries, each starting where the last ended
    // (wrapping), so `unique` never counts the same bytes twice in a row.
    let mut at = 0;
    let mut total = 0;
    for i in 0..calls {
        if mode == "unique" || i == 0 {
            at = if at + bytes + 4 > text.len() { 0 } else { at + bytes };
            while !text.is_char_boundary(at) {
                at += 1;
            }
        }
        let mut end = (at + bytes).min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        total += tok.count(&text[at..end])?;
    }
    println!("{total}");
    Ok(())
}
