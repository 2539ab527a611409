//! Counts one file with one engine: `count_file ENCODING FILE [REPEAT]`,
//! turnfit unless `TURNFIT_ENGINE` names a peer (`tiktoken`, `bpe-openai`,
//! `tiktoken-rs`); `TURNFIT_MODE=encode` encodes instead of counting (and
//! prints the number of ids). For instruction counts under `valgrind --tool=callgrind`,
//! which stay comparable on a busy machine where wall and CPU times do not.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let engine = std::env::var("TURNFIT_ENGINE").unwrap_or_else(|_| "turnfit".into());
    let text = std::fs::read_to_string(&args[1]).expect("file");
    let repeat: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let loaded = turnfit_bench::load(&engine, &args[0]);
    let encode = std::env::var("TURNFIT_MODE").is_ok_and(|m| m == "encode");
    let mut n = 0;
    for _ in 0..repeat {
        n = count(&loaded, &text, encode);
    }
    println!("{n}");
}

#[inline(never)]
fn count(engine: &turnfit_bench::Loaded, text: &str, encode: bool) -> usize {
    if encode {
        engine.encode(text).len()
    } else {
        engine.count(text)
    }
}
