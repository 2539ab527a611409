//! Binary-size probe: turnfit with cl100k_base and o200k_base, counting argv[1].
use turnfit::{Encoding, Tokenizer};
fn main() {
    let text = std::env::args().nth(1).unwrap_or_else(|| "hello world".to_owned());
    let a = Tokenizer::new(Encoding::Cl100kBase).unwrap().count(&text).unwrap();
    let b = Tokenizer::new(Encoding::O200kBase).unwrap().count(&text).unwrap();
    println!("{a} {b}");
}
