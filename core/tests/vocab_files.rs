//! The compact vocabularies the library embeds (`core/data/*.vocab`) must
//! hold exactly the tokens of OpenAI's `.tiktoken` files, whose hashes
//! `vocab_provenance.rs` pins. This test rebuilds each `.vocab` from its
//! `.tiktoken` and compares byte for byte; `TURNFIT_BLESS=1` rewrites them.
//!
//! Layout (read by `core/src/tokens/vocab.rs`): the magic `TURNFIT1`, the
//! rank count `n` as a little-endian `u32`, `n` token lengths (one byte each;
//! 0 marks a rank no ordinary token has), then the token bytes in rank order.

use base64::Engine as _;

fn build(tiktoken: &str) -> Vec<u8> {
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut tokens: Vec<Option<Vec<u8>>> = Vec::new();
    for line in tiktoken.lines().filter(|l| !l.is_empty()) {
        let (t, r) = line.split_once(' ').expect("token and rank");
        let r: usize = r.parse().expect("rank");
        if tokens.len() <= r {
            tokens.resize(r + 1, None);
        }
        assert!(tokens[r].is_none(), "rank {r} twice");
        let t = b64.decode(t).expect("base64");
        assert!(!t.is_empty() && t.len() <= 255);
        tokens[r] = Some(t);
    }
    let mut out = b"TURNFIT1".to_vec();
    out.extend_from_slice(&u32::try_from(tokens.len()).unwrap().to_le_bytes());
    out.extend(tokens.iter().map(|t| t.as_ref().map_or(0, |t| t.len() as u8)));
    for t in tokens.iter().flatten() {
        out.extend_from_slice(t);
    }
    out
}

#[test]
fn embedded_vocab_files_match_the_tiktoken_files() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/data");
    for name in ["cl100k_base", "o200k_base", "p50k_base", "r50k_base"] {
        let source = std::fs::read_to_string(format!("{dir}/{name}.tiktoken")).unwrap();
        let fresh = build(&source);
        let path = format!("{dir}/{name}.vocab");
        if std::env::var_os("TURNFIT_BLESS").is_some() {
            std::fs::write(&path, &fresh).unwrap();
            continue;
        }
        let committed = std::fs::read(&path).unwrap_or_default();
        assert!(committed == fresh, "{path} is stale or missing; rerun with TURNFIT_BLESS=1");
    }
}
