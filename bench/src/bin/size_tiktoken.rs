//! Binary-size probe: tiktoken 4.x (cl100k_base + o200k_base features only), counting argv[1].
fn main() {
    let text = std::env::args().nth(1).unwrap_or_else(|| "hello world".to_owned());
    let a = tiktoken::encoding::cl100k_base().count(&text);
    let b = tiktoken::encoding::o200k_base().count(&text);
    println!("{a} {b}");
}
