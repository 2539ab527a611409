//! Behaviour of the Tokenizer API beyond raw ids: truncation invariants,
//! count_until_limit, decode modes, special tokens and limits.

use proptest::prelude::*;
use proptest::test_runner::Config;
use turnfit::limits::MAX_TEXT_BYTES;
use turnfit::{DecodeMode, Encoding, ErrorKind, SpecialTokens, Tokenizer, TruncateSide};

fn tok(e: Encoding) -> Tokenizer {
    Tokenizer::new(e).unwrap()
}

fn encodings() -> impl Strategy<Value = Encoding> {
    proptest::sample::select(Encoding::ALL.to_vec())
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,400}",
        "\\PC{0,300}",
        "[日本語한국어👍🏽é́ a-z\n]{0,200}",
        "(fn [a-z]{1,8}\\(\\) \\{ [a-z0-9 ;=]{0,30} \\}\n){0,20}",
    ]
}

proptest! {
    #![proptest_config(Config { cases: 1500, failure_persistence: None, ..Config::default() })]

    #[test]
    fn truncation_fits_cuts_cleanly_and_reports_what_it_removed(
        e in encodings(), s in text(), max in 0usize..120,
        side in proptest::sample::select(vec![TruncateSide::Head, TruncateSide::Tail, TruncateSide::Both]),
    ) {
        let t = tok(e);
        let n = t.count(&s).unwrap();
        let r = match t.truncate(&s, max, side, None) {
            Ok(r) => r,
            Err(err) => {
                // Only a marker that cannot fit is an acceptable failure.
                prop_assert_eq!(side, TruncateSide::Both);
                prop_assert_eq!(err.kind(), ErrorKind::InvalidArgument);
                prop_assert!(n > max);
                return Ok(());
            }
        };
        prop_assert_eq!(r.original_tokens, n);
        prop_assert_eq!(r.tokens, t.count(&r.text).unwrap());
        prop_assert!(r.tokens <= max, "{} tokens > {}", r.tokens, max);
        prop_assert_eq!(r.truncated, n > max);
        if n <= max {
            prop_assert_eq!(&r.text, &s);
            prop_assert_eq!(r.removed_tokens, 0);
            return Ok(());
        }
        prop_assert!(r.removed_tokens > 0 && r.removed_tokens <= n);
        match side {
            TruncateSide::Head => {
                prop_assert!(s.starts_with(&r.text));
                // Nothing is lost silently: kept + removed = original.
                prop_assert_eq!(t.encode(&s).unwrap()[..n - r.removed_tokens].len() + r.removed_tokens, n);
            }
            TruncateSide::Tail => prop_assert!(s.ends_with(&r.text)),
            TruncateSide::Both => {
                let marker = format!("[... {} tokens truncated ...]", r.removed_tokens);
                let at = r.text.find(&marker);
                prop_assert!(at.is_some(), "marker missing in {:?}", r.text);
                let at = at.unwrap();
                prop_assert!(s.starts_with(&r.text[..at - 1]));
                prop_assert!(s.ends_with(&r.text[at + marker.len() + 1..]));
            }
        }
    }

    #[test]
    fn count_until_limit_agrees_with_count(e in encodings(), s in text(), limit in 0usize..200) {
        let t = tok(e);
        let n = t.count(&s).unwrap();
        let r = t.count_until_limit(&s, limit).unwrap();
        prop_assert_eq!(r.exceeded, n > limit);
        if r.exceeded {
            prop_assert!(r.tokens > limit && r.tokens <= n);
        } else {
            prop_assert_eq!(r.tokens, n);
        }
    }
}

#[test]
fn count_until_limit_stops_early_on_huge_input() {
    // 32 MiB of words: with a small limit only the first pieces are examined.
    let big = "lorem ipsum dolor sit amet ".repeat(32 * 1024 * 1024 / 27);
    let r = tok(Encoding::Cl100kBase).count_until_limit(&big, 10).unwrap();
    assert!(r.exceeded);
    assert_eq!(r.tokens, 11);
}

#[test]
fn truncate_custom_marker_and_tiny_budgets() {
    let t = tok(Encoding::O200kBase);
    let s = "word ".repeat(100);
    let r = t.truncate(&s, 20, TruncateSide::Both, Some("<<{removed} cut>>")).unwrap();
    assert!(r.text.contains(&format!("<<{} cut>>", r.removed_tokens)), "{}", r.text);
    assert!(r.tokens <= 20);
    let err = t.truncate(&s, 3, TruncateSide::Both, None).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.message().contains("marker"), "{err}");
    let n = t.count(&s).unwrap();
    let r = t.truncate(&s, 0, TruncateSide::Head, None).unwrap();
    assert_eq!((r.text.as_str(), r.tokens, r.removed_tokens), ("", 0, n));
}

#[test]
fn truncation_never_splits_a_character() {
    // Each of these emoji is several tokens; every budget must land on a
    // character boundary (the String type would panic otherwise) and fit.
    let t = tok(Encoding::Cl100kBase);
    let s = "👨‍👩‍👧‍👦🏳️‍🌈👩🏿‍🔬".repeat(5);
    for max in 0..t.count(&s).unwrap() {
        for side in [TruncateSide::Head, TruncateSide::Tail] {
            let r = t.truncate(&s, max, side, None).unwrap();
            assert!(r.tokens <= max);
        }
    }
}

#[test]
fn decode_modes_and_unknown_ids() {
    let t = tok(Encoding::Cl100kBase);
    let ids = t.encode("🫠𝞷").unwrap();
    assert!(ids.len() >= 3, "rare 4-byte characters are split into byte-level tokens");
    let cut = (1..ids.len())
        .find(|&k| std::str::from_utf8(&t.decode_bytes(&ids[..k]).unwrap()).is_err())
        .expect("some prefix ends inside a character");
    let lossy = t.decode(&ids[..cut], DecodeMode::Replace).unwrap();
    assert!(lossy.contains('\u{FFFD}'), "{lossy:?}");
    let err = t.decode(&ids[..cut], DecodeMode::Strict).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidUtf8);
    assert!(err.message().contains("byte offset") && err.message().contains("token index"), "{err}");
    let err = t.decode(&[9, 10_000_000], DecodeMode::Replace).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnknownToken);
    assert!(err.message().contains("index 1"), "{err}");
    // The hole in p50k_base's ranks is the special token, which decodes.
    let p50k = tok(Encoding::P50kBase);
    assert_eq!(p50k.decode(&[50256], DecodeMode::Strict).unwrap(), "<|endoftext|>");
    assert_eq!(p50k.vocab_size(), 50281);
    assert_eq!(tok(Encoding::Cl100kBase).vocab_size(), 100277);
    assert_eq!(tok(Encoding::O200kBase).vocab_size(), 200019);
    // tiktoken's n_vocab for the encodings that share ranks.
    assert_eq!(tok(Encoding::O200kHarmony).vocab_size(), 201088);
    assert_eq!(tok(Encoding::P50kEdit).vocab_size(), 50284);
    assert_eq!(tok(Encoding::Gpt2).vocab_size(), 50257);
}

#[test]
fn encodings_sharing_ranks_differ_only_in_special_tokens() {
    let text = "fn main() { println!(\"héllo, 世界 👍\"); } <|endoftext|> <|start|>user<|message|>hi<|end|>";
    for (alias, base) in [
        (Encoding::O200kHarmony, Encoding::O200kBase),
        (Encoding::P50kEdit, Encoding::P50kBase),
        (Encoding::Gpt2, Encoding::R50kBase),
    ] {
        assert_eq!(tok(alias).encode(text).unwrap(), tok(base).encode(text).unwrap(), "{alias}");
        assert_eq!(tok(alias).encoding(), alias);
    }
    let harmony = tok(Encoding::O200kHarmony).with_special_tokens(SpecialTokens::Recognize);
    let ids = harmony.encode("<|start|>user<|message|>hi<|end|>").unwrap();
    assert_eq!((ids[0], ids[2], *ids.last().unwrap()), (200006, 200008, 200007));
    // 200018 is both <|endofprompt|> and <|reserved_200018|>; it decodes as
    // the former, as in tiktoken.
    assert_eq!(harmony.encode("<|endofprompt|><|reserved_200018|>").unwrap(), [200018, 200018]);
    assert_eq!(harmony.decode(&[200018, 201087], DecodeMode::Strict).unwrap(), "<|endofprompt|><|reserved_201087|>");
    assert_eq!(harmony.decode(&[201088], DecodeMode::Replace).unwrap_err().kind(), ErrorKind::UnknownToken);
    // Not special in o200k_base.
    let base = tok(Encoding::O200kBase).with_special_tokens(SpecialTokens::Recognize);
    assert!(base.encode("<|start|>").unwrap().len() > 1);
    let edit = tok(Encoding::P50kEdit).with_special_tokens(SpecialTokens::Recognize);
    assert_eq!(edit.encode("<|fim_prefix|>x<|fim_suffix|>").unwrap(), [50281, 87, 50283]);
}

#[test]
fn special_tokens_are_text_unless_recognized() {
    for e in Encoding::ALL {
        let plain = tok(e);
        let special = plain.with_special_tokens(SpecialTokens::Recognize);
        let s = "a<|endoftext|>b";
        assert!(plain.count(s).unwrap() > special.count(s).unwrap(), "{e}");
        let ids = special.encode(s).unwrap();
        assert!(ids.contains(&e.special_tokens()[0].1), "{e}");
        assert_eq!(special.decode(&ids, DecodeMode::Strict).unwrap(), s);
    }
}

#[test]
fn empty_text_and_oversized_text() {
    let t = tok(Encoding::O200kBase);
    assert_eq!(t.count("").unwrap(), 0);
    assert!(t.encode("").unwrap().is_empty());
    assert_eq!(t.decode(&[], DecodeMode::Strict).unwrap(), "");
    let big = "a".repeat(MAX_TEXT_BYTES + 1);
    for r in [t.count(&big).map(|_| ()), t.encode(&big).map(|_| ()), t.count_until_limit(&big, 1).map(|_| ())] {
        assert_eq!(r.unwrap_err().kind(), ErrorKind::LimitExceeded);
    }
    let at_limit = "a".repeat(MAX_TEXT_BYTES);
    assert!(t.count_until_limit(&at_limit, 5).unwrap().exceeded);
}

#[test]
fn encoding_names_and_suggestions() {
    // tiktoken's names, each its own encoding (gpt2 has r50k_base's ranks
    // but keeps its name, as `tiktoken.get_encoding("gpt2").name` does).
    for (name, e) in [
        ("gpt2", Encoding::Gpt2),
        ("o200k_harmony", Encoding::O200kHarmony),
        ("p50k_edit", Encoding::P50kEdit),
        ("R50K_BASE", Encoding::R50kBase),
    ] {
        assert_eq!(Encoding::from_name(name).unwrap(), e);
        assert_eq!(Tokenizer::from_name(name).unwrap().encoding(), e);
    }
    assert_eq!(Encoding::Gpt2.to_string(), "gpt2");
    let err = Encoding::from_name("o200k_harmon").unwrap_err();
    assert!(err.message().contains("did you mean o200k_harmony"), "{err}");
    let err = Encoding::from_name("p50k_edits").unwrap_err();
    assert!(err.message().contains("p50k_edit"), "{err}");
    for bad in ["gpt-2", "gpt2 base", "o200k_harmony\0", "\u{feff}gpt2"] {
        assert_eq!(Encoding::from_name(bad).unwrap_err().kind(), ErrorKind::UnknownEncoding, "{bad:?}");
    }
    // Longer than MAX_NAME_BYTES: refused as an invalid argument, like every name.
    assert_eq!(Encoding::from_name(&"x".repeat(100_000)).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(Encoding::from_name(" O200K_BASE ").unwrap(), Encoding::O200kBase);
    let err = Encoding::from_name("o200k").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnknownEncoding);
    assert!(err.message().contains("did you mean o200k_base"), "{err}");
    let err = Encoding::from_name("").unwrap_err();
    assert!(err.message().contains("known encodings"), "{err}");
}

#[test]
fn one_tokenizer_serves_many_threads() {
    let t = tok(Encoding::Cl100kBase);
    let text = "The quick brown fox 🦊 jumps over 13 lazy dogs.\n".repeat(50);
    let expected = t.encode(&text).unwrap();
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                for _ in 0..50 {
                    assert_eq!(t.encode(&text).unwrap(), expected);
                }
            });
        }
    });
}

/// Issue 14 bug 4: decode summed nothing before allocating, so a million
/// copies of a 128-byte token returned 128 MiB (more than `count` accepts).
/// The output is bounded by the text limit before any allocation, and
/// replacement characters cannot grow it past the limit either.
#[test]
fn decode_output_is_bounded_by_the_text_limit() {
    let t = Tokenizer::new(Encoding::O200kBase).unwrap();
    let (long, len) = (0..t.vocab_size() as u32)
        .filter_map(|id| t.decode_bytes(&[id]).ok().map(|b| (id, b.len())))
        .max_by_key(|&(_, n)| n)
        .unwrap();
    assert!(len >= 64, "longest token is {len} bytes");
    let at = vec![long; MAX_TEXT_BYTES / len];
    assert_eq!(t.decode_bytes(&at).unwrap().len(), MAX_TEXT_BYTES / len * len);
    let past = vec![long; MAX_TEXT_BYTES / len + 1];
    let e = t.decode_bytes(&past).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded, "{e}");
    assert!(e.message().contains(&MAX_TEXT_BYTES.to_string()), "{e}");
    assert_eq!(t.decode(&past, DecodeMode::Replace).unwrap_err().kind(), ErrorKind::LimitExceeded);
    // One invalid byte becomes 3 bytes of U+FFFD: half the limit of them is
    // within the byte bound but not within the text bound.
    let ff = (0..t.vocab_size() as u32).find(|&id| t.decode_bytes(&[id]).ok().as_deref() == Some(&[0xFF][..])).unwrap();
    let e = t.decode(&vec![ff; MAX_TEXT_BYTES / 2], DecodeMode::Replace).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded, "{e}");
}

#[test]
fn token_id_inverts_the_bytes_of_every_token() {
    for e in Encoding::ALL {
        let t = tok(e);
        let mut checked = 0;
        for id in 0..t.vocab_size() as u32 {
            let Ok(bytes) = t.decode_bytes(&[id]) else { continue };
            assert_eq!(t.token_id(&bytes).unwrap(), id, "{e}: id {id}");
            checked += 1;
        }
        assert!(checked >= 50_000, "{e}: only {checked} ids");
        // Special tokens by their text; bytes that are no single token fail.
        let (eot, eot_id) = e.special_tokens()[0];
        assert_eq!(t.token_id(eot.as_bytes()).unwrap(), eot_id);
        for bad in [&b""[..], b"hello world, this is not one token", b"<|endoftext|>x"] {
            assert_eq!(t.token_id(bad).unwrap_err().kind(), ErrorKind::UnknownToken, "{e}: {bad:?}");
        }
    }
}
