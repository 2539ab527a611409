//! Counts one file with ctxkit only: `count_file ENCODING FILE [REPEAT]`.
//! For instruction counts under `valgrind --tool=callgrind`, which stay
//! comparable on a busy machine where wall and CPU times do not.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let enc = ctxkit::Encoding::from_name(&args[0]).expect("encoding");
    let text = std::fs::read_to_string(&args[1]).expect("file");
    let repeat: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let tok = ctxkit::Tokenizer::new(enc).expect("tokenizer");
    let mut n = 0;
    for _ in 0..repeat {
        n = count(&tok, &text);
    }
    println!("{n}");
}

#[inline(never)]
fn count(tok: &ctxkit::Tokenizer, text: &str) -> usize {
    tok.count(text).expect("count")
}
