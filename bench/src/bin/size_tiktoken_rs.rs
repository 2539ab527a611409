//! Binary-size probe: tiktoken-rs with cl100k_base and o200k_base, counting argv[1].
fn main() {
    let text = std::env::args().nth(1).unwrap_or_else(|| "hello world".to_owned());
    let a = tiktoken_rs::cl100k_base().unwrap().encode_ordinary(&text).len();
    let b = tiktoken_rs::o200k_base().unwrap().encode_ordinary(&text).len();
    println!("{a} {b}");
}
