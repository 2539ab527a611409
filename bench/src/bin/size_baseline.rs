//! Binary-size baseline: same I/O shape as the `size_*` engines, no tokenizer.
fn main() {
    let text = std::env::args().nth(1).unwrap_or_else(|| "hello world".to_owned());
    println!("{} {}", text.len(), text.split_whitespace().count());
}
