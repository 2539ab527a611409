//! Binary-size probe: bpe-openai with cl100k_base and o200k_base, counting argv[1].
fn main() {
    let text = std::env::args().nth(1).unwrap_or_else(|| "hello world".to_owned());
    let a = bpe_openai::cl100k_base().count(text.as_str());
    let b = bpe_openai::o200k_base().count(text.as_str());
    println!("{a} {b}");
}
