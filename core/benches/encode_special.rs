//! `encode_special` with the documented maximum disallowed set (4,096 names
//! of 256 bytes, `MAX_SPECIAL_SET` x `MAX_NAME_BYTES`) over 1 MiB and the
//! documented maximum text (64 MiB, `MAX_TEXT_BYTES`), next to a plain
//! `encode` of the same text: issue 33, cause G. A benchmark, not a test:
//! it prints figures and asserts nothing about time.
//!
//!     cargo bench -p turnfit --bench encode_special
//!
//! The text holds no disallowed name, so every byte is scanned and then
//! encoded; it is made of near misses of the names, so neither the
//! automaton nor a substring search can skip ahead. The per-name search the
//! scan replaced is timed at 1 MiB for comparison (at 64 MiB it takes
//! minutes).

use std::collections::BTreeSet;
use std::hint::black_box;
use std::time::Instant;

use turnfit::limits::{MAX_NAME_BYTES, MAX_SPECIAL_SET, MAX_TEXT_BYTES};
use turnfit::{Encoding, SpecialPolicy, SpecialSet, Tokenizer};

/// Near misses of the names (`<0042>` and 200 of the names' 250 fill
/// bytes, no name whole) between ordinary words: every name's first bytes
/// occur everywhere, so a search per name finds a candidate at each one.
fn text(len: usize) -> String {
    let mut out = String::with_capacity(len + 256);
    let mut i = 0usize;
    while out.len() < len {
        out.push_str(&format!("<{:04}>", (i * 2654435761) % MAX_SPECIAL_SET));
        out.push_str(&"x".repeat(200));
        out.push_str(" the reply, value=7\n");
        i += 1;
    }
    out.truncate(len);
    out
}

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> f64 {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            black_box(f());
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let tok = Tokenizer::new(Encoding::Cl100kBase).expect("cl100k_base");
    let names: BTreeSet<String> =
        (0..MAX_SPECIAL_SET).map(|i| format!("<{i:04}>{}", "x".repeat(MAX_NAME_BYTES - 6))).collect();
    let policy = SpecialPolicy { allowed: SpecialSet::none(), disallowed: SpecialSet::Only(names.clone()) };
    println!("disallowed set: {} names of {} bytes", names.len(), MAX_NAME_BYTES);
    for (label, len, runs) in [("1 MiB", 1 << 20, 5), ("64 MiB", MAX_TEXT_BYTES, 3)] {
        let t = text(len);
        let plain = best_of(runs, || tok.encode(&t).unwrap().len());
        let special = best_of(runs, || tok.encode_with(&t, &policy).unwrap().len());
        println!("{label:>7}: encode {plain:.3} s, encode_special {special:.3} s (best of {runs})");
        if len == 1 << 20 {
            let per_name = best_of(1, || names.iter().filter_map(|n| t.find(n.as_str())).min());
            println!("{label:>7}: the per-name search encode_special used before (scan only) {per_name:.3} s");
        }
    }
}
