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

/// tiktoken's `openai_public.py` (vendored from tiktoken 0.14.0's sdist):
/// each encoding constructor's source text.
fn constructor(name: &str) -> &'static str {
    let src = include_str!("data/tiktoken/openai_public.py");
    let start = src.find(&format!("\ndef {name}():")).unwrap_or_else(|| panic!("no constructor {name}"));
    let body = &src[start + 1..];
    &body[..body[1..].find("\ndef ").map_or(body.len(), |e| e + 1)]
}

/// The special tokens a constructor defines: the named constants and quoted
/// `"<|...|>": id` entries, the base encoding's tokens it spreads in, and
/// the `<|reserved_{i}|>` range it adds.
fn tiktoken_special_tokens(name: &str) -> Vec<(String, u32)> {
    let body = constructor(name);
    let consts = [
        ("ENDOFTEXT", "<|endoftext|>"),
        ("FIM_PREFIX", "<|fim_prefix|>"),
        ("FIM_MIDDLE", "<|fim_middle|>"),
        ("FIM_SUFFIX", "<|fim_suffix|>"),
        ("ENDOFPROMPT", "<|endofprompt|>"),
    ];
    let mut out = Vec::new();
    if body.contains("**base_enc[\"special_tokens\"]") {
        out = tiktoken_special_tokens("o200k_base");
    }
    let mut rest = body;
    while let Some(colon) = rest.find(": ") {
        let key = rest[..colon].rsplit(['{', ' ', '\n', ',']).next().unwrap_or("");
        let value: String = rest[colon + 2..].chars().take_while(char::is_ascii_digit).collect();
        let text = match consts.iter().find(|(c, _)| *c == key) {
            Some((_, t)) => Some((*t).to_owned()),
            None => key
                .strip_prefix('"')
                .and_then(|k| k.strip_suffix('"'))
                .filter(|k| k.starts_with("<|"))
                .map(str::to_owned),
        };
        if let (Some(text), Ok(id)) = (text, value.parse::<u32>()) {
            out.retain(|(t, _)| *t != text);
            out.push((text, id));
        }
        rest = &rest[colon + 2..];
    }
    if let Some(at) = body.find("for i in range(") {
        let args = &body[at + "for i in range(".len()..];
        let args = &args[..args.find(')').unwrap()];
        let (a, b) = args.split_once(", ").unwrap();
        let (a, b): (u32, u32) = (a.parse().unwrap(), b.parse().unwrap());
        assert!(body.contains(r#"f"<|reserved_{i}|>": i"#));
        out.extend((a..b).map(|i| (format!("<|reserved_{i}|>"), i)));
    }
    out
}

#[test]
fn special_tokens_and_shared_ranks_are_tiktokens() {
    use turnfit::Encoding;
    for e in Encoding::ALL {
        let mut theirs = tiktoken_special_tokens(e.name());
        let mut ours: Vec<(String, u32)> = e.special_tokens().iter().map(|(t, i)| ((*t).to_owned(), *i)).collect();
        theirs.sort();
        ours.sort();
        assert!(!theirs.is_empty(), "{e}");
        assert_eq!(ours, theirs, "{e}");
    }
    // The encodings that reuse a rank file name the same file and hash in
    // tiktoken; gpt2's ranks come from GPT-2's own files there (see
    // docs/formats.md for how they were checked equal to r50k_base's).
    let hash = |name: &str| {
        let body = constructor(name);
        let at = body.find("expected_hash=\"").map(|a| a + "expected_hash=\"".len());
        at.map(|a| body[a..a + 64].to_owned())
    };
    assert_eq!(hash("o200k_harmony"), None, "built from o200k_base()");
    assert!(constructor("o200k_harmony").contains("base_enc = o200k_base()"));
    assert!(constructor("o200k_harmony").contains("mergeable_ranks = base_enc[\"mergeable_ranks\"]"));
    assert_eq!(hash("p50k_edit"), hash("p50k_base"));
    assert!(constructor("gpt2").contains("\"pat_str\": r50k_pat_str"));
    for (name, ours) in [
        ("cl100k_base", "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
        ("o200k_base", "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
        ("p50k_base", "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"),
        ("r50k_base", "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"),
    ] {
        assert_eq!(hash(name).as_deref(), Some(ours), "{name}: the hash pinned above is tiktoken's");
    }
}
