//! The embedded rank files are OpenAI's, byte for byte: their SHA-256 must be
//! the `expected_hash` pinned in tiktoken's `tiktoken_ext/openai_public.py`.

use sha2::{Digest, Sha256};

#[test]
fn embedded_rank_files_match_openai_published_hashes() {
    let files: [(&str, &[u8], &str); 4] = [
        (
            "cl100k_base",
            include_bytes!("../data/cl100k_base.tiktoken"),
            "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        ),
        (
            "o200k_base",
            include_bytes!("../data/o200k_base.tiktoken"),
            "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        ),
        (
            "p50k_base",
            include_bytes!("../data/p50k_base.tiktoken"),
            "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
        ),
        (
            "r50k_base",
            include_bytes!("../data/r50k_base.tiktoken"),
            "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
        ),
    ];
    for (name, bytes, expected) in files {
        let digest: String = Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(digest, expected, "{name}");
    }
}
