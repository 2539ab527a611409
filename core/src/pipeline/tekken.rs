//! Mistral's Tekken files (`tekken.json`), with mistral-common's rules
//! (`Tekkenizer.from_file`, checked against mistral-common 1.13.1):
//!
//! - the special tokens come first: ids `0..default_num_special_tokens`.
//!   The file's `special_tokens` list names them; a file without one (a
//!   version up to v7) gets mistral-common's twenty defaults (`<unk>`,
//!   `<s>`, `</s>`, `[INST]`, ...), and later versions must list them. The
//!   rest up to the declared count are `<SPECIAL_{i}>` fillers;
//! - only the first `default_vocab_size - default_num_special_tokens` ranks
//!   of `vocab` are used, whatever the file holds, each shifted past the
//!   special tokens;
//! - text is split by `config.pattern` and merged by tiktoken's rule.
//!
//! mistral-common never finds special tokens in text (its chat code adds
//! their ids); here, as for every file, they are found unless the
//! tokenizer is made with `with_special_text(true)`, which gives
//! mistral-common's `encode` exactly (docs/formats.md).

use std::borrow::Cow;

use rustc_hash::FxHashMap;
use serde::Deserialize;

use super::split::{Behavior, Matcher, PreTokenizer, Step};
use super::split_regex::SplitRegex;
use super::{added, decode, tiktoken_file, FileTokenizer, Model, Parts, Post};
use crate::{Error, ErrorKind, Result};

#[derive(Deserialize)]
struct File<'a> {
    #[serde(borrow)]
    config: Config<'a>,
    #[serde(borrow)]
    vocab: Vec<Token<'a>>,
    #[serde(default, borrow)]
    special_tokens: Option<Vec<Special<'a>>>,
}

#[derive(Deserialize)]
struct Config<'a> {
    #[serde(borrow)]
    pattern: Cow<'a, str>,
    default_vocab_size: u64,
    default_num_special_tokens: u64,
    #[serde(borrow)]
    version: Cow<'a, str>,
}

#[derive(Deserialize)]
struct Token<'a> {
    rank: u64,
    #[serde(borrow)]
    token_bytes: Cow<'a, str>,
}

#[derive(Deserialize)]
struct Special<'a> {
    rank: u64,
    #[serde(borrow)]
    token_str: Cow<'a, str>,
}

/// mistral-common's `Tekkenizer.DEPRECATED_SPECIAL_TOKENS`, ranks 0-19.
const DEFAULT_SPECIALS: [&str; 20] = [
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[IMG]",
    "<pad>",
    "[IMG_BREAK]",
    "[IMG_END]",
    "[PREFIX]",
    "[MIDDLE]",
    "[SUFFIX]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
];

/// The versions mistral-common knows, in order (`TokenizerVersion`).
const VERSIONS: [&str; 7] = ["v1", "v2", "v3", "v7", "v11", "v13", "v15"];

/// No Tekken file has more than a few thousand special tokens; a count far
/// beyond that is a corrupt file, refused before anything is allocated.
const MAX_SPECIALS: u64 = 1 << 20;

fn bad(file: &str, what: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::InvalidArgument, format!("{file}: {what}"))
}

/// Whether a serde error says the file is not an HF `tokenizer.json`
/// because it has no `model` (a Tekken file has `config` and `vocab`).
pub(crate) fn lacks_model(e: &serde_json::Error) -> bool {
    e.is_data() && e.to_string().starts_with("missing field `model`")
}

/// Parses a Tekken file held in `bytes`; `file` names it in errors.
pub(crate) fn load(bytes: &[u8], file: &str) -> Result<FileTokenizer> {
    let f: File = serde_json::from_slice(bytes).map_err(|e| {
        Error::new(ErrorKind::InvalidJson, format!("{file}: neither a tokenizer.json nor a Tekken file: {e}"))
    })?;
    let c = &f.config;
    let version = VERSIONS.iter().position(|v| *v == c.version).ok_or_else(|| {
        bad(file, format_args!("config.version {:?} is not one of {}", c.version, VERSIONS.join(", ")))
    })?;
    if c.default_num_special_tokens > MAX_SPECIALS {
        return Err(bad(
            file,
            format_args!(
                "config.default_num_special_tokens is {}, more than {MAX_SPECIALS}",
                c.default_num_special_tokens
            ),
        ));
    }
    let n_special = c.default_num_special_tokens as usize;
    let inner = c.default_vocab_size.checked_sub(c.default_num_special_tokens).ok_or_else(|| {
        bad(
            file,
            format_args!(
                "config.default_vocab_size {} is below default_num_special_tokens {n_special}",
                c.default_vocab_size
            ),
        )
    })?;
    if inner > f.vocab.len() as u64 {
        return Err(bad(
            file,
            format_args!(
                "config.default_vocab_size {} needs {inner} ranks but vocab has {}",
                c.default_vocab_size,
                f.vocab.len()
            ),
        ));
    }
    let inner = inner as usize;
    let specials: Vec<String> = match &f.special_tokens {
        Some(list) => {
            if list.len() > n_special {
                return Err(bad(
                    file,
                    format_args!(
                        "special_tokens lists {} tokens for default_num_special_tokens {n_special}",
                        list.len()
                    ),
                ));
            }
            for (i, s) in list.iter().enumerate() {
                if s.rank != i as u64 {
                    return Err(bad(file, format_args!("special_tokens[{i}] has rank {}", s.rank)));
                }
            }
            list.iter().map(|s| s.token_str.to_string()).collect()
        }
        // v7 and earlier: mistral-common's defaults; later: required.
        None if version <= 3 => DEFAULT_SPECIALS.iter().map(|s| s.to_string()).collect(),
        None => return Err(bad(file, format_args!("special_tokens is missing, which version {} requires", c.version))),
    };
    if specials.len() > n_special {
        return Err(bad(
            file,
            format_args!("{} default special tokens for default_num_special_tokens {n_special}", specials.len()),
        ));
    }
    let mut all = specials;
    all.extend((all.len()..n_special).map(|i| format!("<SPECIAL_{i}>")));
    let mut seen = rustc_hash::FxHashSet::default();
    if let Some(dup) = all.iter().find(|s| !seen.insert(s.as_str())) {
        return Err(bad(file, format_args!("special token {dup:?} appears twice")));
    }
    let mut vocab: FxHashMap<Box<[u8]>, u32> = FxHashMap::default();
    vocab.reserve(inner);
    let mut tokens = Vec::with_capacity(inner);
    for (i, t) in f.vocab[..inner].iter().enumerate() {
        if t.rank != i as u64 {
            return Err(bad(file, format_args!("vocab[{i}] has rank {}", t.rank)));
        }
        let b = tiktoken_file::base64(t.token_bytes.as_bytes())
            .ok_or_else(|| bad(file, format_args!("vocab[{i}].token_bytes is not base64")))?;
        if i < 256 && b != [i as u8] {
            return Err(bad(
                file,
                format_args!("vocab[{i}] is not the byte 0x{i:02X}, as the first 256 ranks must be"),
            ));
        }
        if vocab.insert(b.clone().into_boxed_slice(), i as u32).is_some() {
            return Err(bad(file, format_args!("vocab[{i}] repeats an earlier token")));
        }
        tokens.push((i as u32, b));
    }
    let shift = n_special as u32;
    let bpe = tiktoken_file::model(vocab, &tokens, shift, file)?;
    let strings = tokens.into_iter().map(|(r, b)| (r + shift, b)).collect();
    let re = SplitRegex::new(&c.pattern).map_err(|e| bad(file, format_args!("config.pattern: {e}")))?;
    let steps = vec![Step::Split { matcher: Matcher::Regex(re), behavior: Behavior::Isolated, invert: false }];
    let bos = all.iter().position(|s| s == "<s>").map(|i| i as u32);
    let added = all
        .into_iter()
        .enumerate()
        .map(|(i, content)| added::AddedToken {
            id: i as u32,
            content,
            special: true,
            normalized: false,
            lstrip: false,
            rstrip: false,
            single_word: false,
        })
        .collect();
    // mistral-common's `encode(text, bos=True, eos=False)`.
    let post =
        bos.map(|b| Post { prefix: vec![b], suffix: Vec::new() }).ok_or_else(|| format!("{file}: no <s> token to add"));
    Parts {
        name: file,
        normalizer: None,
        pre: PreTokenizer { steps },
        model: Model::Bpe(Box::new(bpe)),
        strings,
        added,
        post,
        decoder: Some(decode::Decoder::ByteLevel),
    }
    .assemble()
}
