//! Target `tokenizer_file`: tokenizer files as `FileTokenizer::from_bytes`
//! loads them (core/src/pipeline). Input: two bytes give the length of a
//! text at the end (taken modulo what is there), the rest before it is the
//! file. Never panics; a file is either refused with `InvalidJson`,
//! `InvalidArgument` or `LimitExceeded`, or it loads, and then encoding the
//! text (as given and with special tokens as text) succeeds, counts agree
//! with the ids, every id is below the vocabulary size and decodes.

use turnfit::pipeline::FileTokenizer;
use turnfit::ErrorKind;

use super::common::{text, Knobs};

pub fn check(data: &[u8]) {
    let mut k = Knobs::new(data);
    let n = usize::from(k.u16());
    let rest = k.rest();
    let cut = rest.len() - n.min(rest.len());
    let (file, txt) = rest.split_at(cut);
    let t = match FileTokenizer::from_bytes(file, "fuzz.json") {
        Ok(t) => t,
        Err(e) => {
            assert!(
                matches!(e.kind(), ErrorKind::InvalidJson | ErrorKind::InvalidArgument | ErrorKind::LimitExceeded),
                "unexpected error kind: {e}"
            );
            assert!(
                e.message().starts_with("fuzz.json: ") || e.kind() == ErrorKind::LimitExceeded,
                "names the file: {e}"
            );
            return;
        }
    };
    let s = text(txt);
    for t in [&t, &FileTokenizer::from_bytes(file, "fuzz.json").unwrap().with_special_text(true)] {
        let ids = t.encode(&s).unwrap();
        assert_eq!(t.count(&s).unwrap(), ids.len());
        for &id in &ids {
            assert!((id as usize) < t.vocab_size(), "id {id} >= vocab size {}", t.vocab_size());
        }
        t.decode(&ids).expect("every id the tokenizer gives decodes");
        let _ = t.encode_with_special(&s, true);
    }
}
