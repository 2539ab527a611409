//! Loading HF `tokenizer.json` files.
//!
//! Every component is read into the pipeline's own types, and anything the
//! pipeline does not implement exactly is refused by name (`Unigram`,
//! `WordPiece`, BPE dropout, ...), so a file
//! either loads and counts as HF does or does not load. The error names the
//! file and the JSON path of what is wrong.

use std::borrow::Cow;

use rustc_hash::FxHashMap;
use serde::Deserialize;
use serde_json::Value;

use super::added::AddedToken;
use super::bpe::{Bpe, TokenBytes, Units};
use super::byte_level;
use super::decode::Decoder;
use super::normalize::Normalizer;
use super::split::{Behavior, Matcher, PreTokenizer, Prepend, Step};
use super::split_regex::SplitRegex;
use super::{FileTokenizer, Model, Parts, Post};
use crate::{Error, ErrorKind, Result};

#[derive(Deserialize)]
struct File<'a> {
    #[serde(default)]
    added_tokens: Vec<AddedJson>,
    #[serde(default)]
    normalizer: Option<Value>,
    #[serde(default)]
    pre_tokenizer: Option<Value>,
    #[serde(default)]
    post_processor: Option<Value>,
    #[serde(default)]
    decoder: Option<Value>,
    #[serde(borrow)]
    model: ModelJson<'a>,
}

#[derive(Deserialize)]
struct AddedJson {
    id: u32,
    content: String,
    #[serde(default)]
    single_word: bool,
    #[serde(default)]
    lstrip: bool,
    #[serde(default)]
    rstrip: bool,
    #[serde(default = "yes")]
    normalized: bool,
    #[serde(default)]
    special: bool,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
struct ModelJson<'a> {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    dropout: Option<f64>,
    #[serde(default)]
    unk_token: Option<String>,
    #[serde(default)]
    continuing_subword_prefix: Option<String>,
    #[serde(default)]
    end_of_word_suffix: Option<String>,
    #[serde(default)]
    fuse_unk: bool,
    #[serde(default)]
    byte_fallback: bool,
    #[serde(default)]
    ignore_merges: bool,
    #[serde(default, borrow)]
    vocab: Option<Vocab<'a>>,
    #[serde(default, borrow)]
    merges: Option<Vec<MergeJson<'a>>>,
}

/// `model.vocab` in file order, its strings borrowed from the file where
/// they hold no escape: building a map of owned strings first (and
/// dropping it) was most of the load time of a 150,000-token vocabulary.
struct Vocab<'a>(Vec<(Cow<'a, str>, u32)>);

impl<'de: 'a, 'a> Deserialize<'de> for Vocab<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for V<'a> {
            type Value = Vocab<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of token strings to ids")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(self, mut m: M) -> std::result::Result<Vocab<'a>, M::Error> {
                // The size hint is the file's claim: capped, never trusted.
                let mut out = Vec::with_capacity(m.size_hint().unwrap_or(0).min(1 << 20));
                while let Some((k, v)) = m.next_entry::<Borrowed<'a>, u32>()? {
                    out.push((k.0, v));
                }
                Ok(Vocab(out))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// A JSON string, borrowed when it holds no escape.
struct Borrowed<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Borrowed<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for V<'a> {
            type Value = Borrowed<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> std::result::Result<Borrowed<'a>, E> {
                Ok(Borrowed(Cow::Borrowed(v)))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<Borrowed<'a>, E> {
                Ok(Borrowed(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> std::result::Result<Borrowed<'a>, E> {
                Ok(Borrowed(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V(std::marker::PhantomData))
    }
}

/// A merge is written `"a b"` in older files and `["a", "b"]` in newer ones.
/// Read by hand rather than as an untagged enum, which buffers every merge
/// before trying each form.
enum MergeJson<'a> {
    Joined(Cow<'a, str>),
    Pair(Cow<'a, str>, Cow<'a, str>),
}

impl<'de: 'a, 'a> Deserialize<'de> for MergeJson<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for V<'a> {
            type Value = MergeJson<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a merge: \"a b\" or [\"a\", \"b\"]")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> std::result::Result<MergeJson<'a>, E> {
                Ok(MergeJson::Joined(Cow::Borrowed(v)))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<MergeJson<'a>, E> {
                Ok(MergeJson::Joined(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> std::result::Result<MergeJson<'a>, E> {
                Ok(MergeJson::Joined(Cow::Owned(v)))
            }
            fn visit_seq<S: serde::de::SeqAccess<'de>>(self, mut s: S) -> std::result::Result<MergeJson<'a>, S::Error> {
                use serde::de::Error as _;
                let a: Borrowed<'a> = s.next_element()?.ok_or_else(|| S::Error::invalid_length(0, &self))?;
                let b: Borrowed<'a> = s.next_element()?.ok_or_else(|| S::Error::invalid_length(1, &self))?;
                if s.next_element::<serde::de::IgnoredAny>()?.is_some() {
                    return Err(S::Error::invalid_length(3, &self));
                }
                Ok(MergeJson::Pair(a.0, b.0))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// The error for file `file`: `what` is wrong.
pub(crate) fn bad(file: &str, what: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::InvalidJson, format!("{file}: {what}"))
}

/// Refusal of something the pipeline does not implement.
fn unsupported(file: &str, what: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::InvalidArgument, format!("{file}: {what} is not supported"))
}

/// Parses a `tokenizer.json` held in `bytes`; `file` names it in errors.
pub(crate) fn load(bytes: &[u8], file: &str) -> Result<FileTokenizer> {
    let f: File = match serde_json::from_slice(bytes) {
        Ok(f) => f,
        // No `model`: a Mistral Tekken file, if anything (parsed again by
        // its own loader; an HF file pays nothing for the check).
        Err(e) if super::tekken::lacks_model(&e) => return super::tekken::load(bytes, file),
        Err(e) => return Err(bad(file, format_args!("not a tokenizer.json: {e}"))),
    };
    let model_kind = f.model.kind.clone().unwrap_or_else(|| "BPE".into());
    if model_kind != "BPE" {
        return Err(unsupported(
            file,
            format_args!(
                "model type {model_kind:?} (only BPE models load; Unigram, WordPiece and WordLevel are refused)"
            ),
        ));
    }
    let normalizer = f.normalizer.as_ref().map(|v| normalizer(v, file, "normalizer")).transpose()?;
    let mut steps = Vec::new();
    if let Some(v) = &f.pre_tokenizer {
        pre_tokenizer(v, file, "pre_tokenizer", &mut steps)?;
    }
    let pre = PreTokenizer { steps };
    let units = if pre.steps.iter().any(|s| matches!(s, Step::ByteLevel { .. })) { Units::Bytes } else { Units::Chars };
    let (bpe, strings) = model(f.model, units, file)?;

    let added = f
        .added_tokens
        .into_iter()
        .map(|a| AddedToken {
            id: a.id,
            content: a.content,
            special: a.special,
            normalized: a.normalized && !a.special,
            lstrip: a.lstrip,
            rstrip: a.rstrip,
            single_word: a.single_word,
        })
        .collect();
    let post = match &f.post_processor {
        None | Some(Value::Null) => Ok(Post::default()),
        Some(v) => post_processor(v, file),
    };
    let decoder = match &f.decoder {
        None | Some(Value::Null) => None,
        Some(v) => Some(decoder(v, file, "decoder")?),
    };
    Parts { name: file, normalizer, pre, model: Model::Bpe(Box::new(bpe)), strings, added, post, decoder }.assemble()
}

/// The BPE model and every vocabulary string by id (for decoding).
fn model(m: ModelJson, units: Units, file: &str) -> Result<(Bpe, TokenBytes)> {
    if m.dropout.is_some_and(|d| d != 0.0) {
        return Err(unsupported(file, "model.dropout (random merges cannot count exactly)"));
    }
    for (field, v) in
        [("continuing_subword_prefix", &m.continuing_subword_prefix), ("end_of_word_suffix", &m.end_of_word_suffix)]
    {
        if v.as_deref().is_some_and(|s| !s.is_empty()) {
            return Err(unsupported(file, format_args!("model.{field}")));
        }
    }
    let vocab = m.vocab.ok_or_else(|| bad(file, "model.vocab is missing"))?.0;
    let merges = m.merges.ok_or_else(|| bad(file, "model.merges is missing"))?;
    let table = byte_level::char_table();
    // By string, for the merges and the named tokens; a key written twice
    // keeps its last id, as a JSON object read into a map does.
    let mut ids: FxHashMap<&str, u32> = FxHashMap::default();
    ids.reserve(vocab.len());
    let mut bytes_vocab: FxHashMap<Box<[u8]>, u32> = FxHashMap::default();
    bytes_vocab.reserve(vocab.len());
    let mut strings = Vec::with_capacity(vocab.len());
    for (s, id) in &vocab {
        let (s, id) = (s.as_ref(), *id);
        ids.insert(s, id);
        let b = match units {
            Units::Bytes => byte_level::decode_str(s, &table),
            Units::Chars => Some(s.as_bytes().to_vec()),
        };
        match b {
            Some(b) => {
                bytes_vocab.insert(b.clone().into_boxed_slice(), id);
                strings.push((id, b));
            }
            // Not a byte string (an added token's text kept in the vocab):
            // BPE never reaches it; decoding uses its text.
            None => strings.push((id, s.as_bytes().to_vec())),
        }
    }
    let mut merge_map = FxHashMap::default();
    merge_map.reserve(merges.len());
    let mut joined = String::new();
    for (rank, mj) in merges.iter().enumerate() {
        let (a, b) = match mj {
            MergeJson::Pair(a, b) => (a.as_ref(), b.as_ref()),
            MergeJson::Joined(s) => {
                let mut it = s.splitn(2, ' ');
                match (it.next(), it.next()) {
                    (Some(a), Some(b)) if !b.contains(' ') => (a, b),
                    _ => {
                        return Err(bad(
                            file,
                            format_args!("model.merges[{rank}] {s:?} is not two tokens apart by a space"),
                        ))
                    }
                }
            }
        };
        let id_of = |t: &str| {
            ids.get(t)
                .copied()
                .ok_or_else(|| bad(file, format_args!("model.merges[{rank}] names {t:?}, which is not in model.vocab")))
        };
        let (ia, ib) = (id_of(a)?, id_of(b)?);
        joined.clear();
        joined.push_str(a);
        joined.push_str(b);
        let new = ids.get(joined.as_str()).copied().ok_or_else(|| {
            bad(file, format_args!("model.merges[{rank}] makes {joined:?}, which is not in model.vocab"))
        })?;
        merge_map.insert((ia, ib), (rank as u32, new));
    }
    // A byte-level vocabulary must spell every byte: HF would silently drop
    // a byte it cannot spell, which is no count at all.
    let mut byte_ids = [u32::MAX; 256];
    if units == Units::Bytes {
        for (b, slot) in byte_ids.iter_mut().enumerate() {
            *slot = bytes_vocab.get(&[b as u8][..]).copied().ok_or_else(|| {
                bad(
                    file,
                    format_args!(
                        "model.vocab has no token for byte 0x{b:02X} ({:?}), which a byte-level vocabulary needs",
                        byte_level::byte_to_char(b as u8)
                    ),
                )
            })?;
        }
    }
    let fallback = if m.byte_fallback {
        let mut fb = [u32::MAX; 256];
        for (b, slot) in fb.iter_mut().enumerate() {
            *slot = ids.get(format!("<0x{b:02X}>").as_str()).copied().unwrap_or(u32::MAX);
        }
        Some(fb)
    } else {
        None
    };
    let unk = match &m.unk_token {
        None => None,
        Some(u) => Some(
            ids.get(u.as_str())
                .copied()
                .ok_or_else(|| bad(file, format_args!("model.unk_token {u:?} is not in model.vocab")))?,
        ),
    };
    let metaspace_runs = units == Units::Chars && super::bpe::metaspace_runs(bytes_vocab.keys().map(|k| &k[..]));
    let bpe = Bpe {
        metaspace_runs,
        units,
        vocab: bytes_vocab,
        merges: merge_map,
        byte_ids,
        fallback,
        unk,
        fuse_unk: m.fuse_unk,
        ignore_merges: m.ignore_merges,
    };
    Ok((bpe, strings))
}

fn kind<'a>(v: &'a Value, file: &str, at: &str) -> Result<&'a str> {
    v.get("type").and_then(Value::as_str).ok_or_else(|| bad(file, format_args!("{at}.type is missing or not a string")))
}

fn string(v: &Value, key: &str, file: &str, at: &str) -> Result<String> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| bad(file, format_args!("{at}.{key} is missing or not a string")))
}

fn flag(v: &Value, key: &str, default: bool, file: &str, at: &str) -> Result<bool> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(bad(file, format_args!("{at}.{key} is not a boolean"))),
    }
}

fn array<'a>(v: &'a Value, key: &str, file: &str, at: &str) -> Result<&'a Vec<Value>> {
    v.get(key).and_then(Value::as_array).ok_or_else(|| bad(file, format_args!("{at}.{key} is missing or not an array")))
}

/// A `{"String": s}` or `{"Regex": r}` pattern.
fn pattern(v: &Value, file: &str, at: &str) -> Result<Matcher> {
    let p = v.get("pattern").ok_or_else(|| bad(file, format_args!("{at}.pattern is missing")))?;
    if let Some(s) = p.get("String").and_then(Value::as_str) {
        return Ok(Matcher::Literal(s.to_string()));
    }
    if let Some(r) = p.get("Regex").and_then(Value::as_str) {
        return SplitRegex::new(r).map(Matcher::Regex).map_err(|e| bad(file, format_args!("{at}.pattern: {e}")));
    }
    Err(bad(file, format_args!("{at}.pattern is neither {{\"String\": ...}} nor {{\"Regex\": ...}}")))
}

fn normalizer(v: &Value, file: &str, at: &str) -> Result<Normalizer> {
    Ok(match kind(v, file, at)? {
        "NFC" => Normalizer::Nfc,
        "NFD" => Normalizer::Nfd,
        "NFKC" => Normalizer::Nfkc,
        "NFKD" => Normalizer::Nfkd,
        "Prepend" => Normalizer::Prepend(string(v, "prepend", file, at)?),
        "Replace" => match pattern(v, file, at)? {
            Matcher::Literal(pattern) => Normalizer::Replace { pattern, content: string(v, "content", file, at)? },
            Matcher::Regex(_) => return Err(unsupported(file, format_args!("{at}: Replace with a regex"))),
        },
        "Sequence" => Normalizer::Sequence(
            array(v, "normalizers", file, at)?
                .iter()
                .enumerate()
                .map(|(i, n)| normalizer(n, file, &format!("{at}.normalizers[{i}]")))
                .collect::<Result<_>>()?,
        ),
        other => return Err(unsupported(file, format_args!("{at}: normalizer {other:?}"))),
    })
}

fn pre_tokenizer(v: &Value, file: &str, at: &str, steps: &mut Vec<Step>) -> Result<()> {
    match kind(v, file, at)? {
        "Sequence" => {
            for (i, p) in array(v, "pretokenizers", file, at)?.iter().enumerate() {
                pre_tokenizer(p, file, &format!("{at}.pretokenizers[{i}]"), steps)?;
            }
        }
        "Split" => {
            let behavior = match v.get("behavior").and_then(Value::as_str) {
                Some("Removed") => Behavior::Removed,
                Some("Isolated") => Behavior::Isolated,
                Some("MergedWithPrevious") => Behavior::MergedWithPrevious,
                Some("MergedWithNext") => Behavior::MergedWithNext,
                Some("Contiguous") => Behavior::Contiguous,
                other => return Err(bad(file, format_args!("{at}.behavior {other:?} is not a split behaviour"))),
            };
            let invert = flag(v, "invert", false, file, at)?;
            steps.push(Step::Split { matcher: pattern(v, file, at)?, behavior, invert });
        }
        "ByteLevel" => steps.push(Step::ByteLevel {
            add_prefix_space: flag(v, "add_prefix_space", true, file, at)?,
            use_regex: flag(v, "use_regex", true, file, at)?,
        }),
        "Digits" => steps.push(Step::Digits { individual: flag(v, "individual_digits", false, file, at)? }),
        "Metaspace" => {
            let r = string(v, "replacement", file, at)?;
            let mut chars = r.chars();
            let (Some(replacement), None) = (chars.next(), chars.next()) else {
                return Err(bad(file, format_args!("{at}.replacement {r:?} is not one character")));
            };
            // As HF 0.23 reads it: `prepend_scheme` defaults to always and
            // `split` to true; an older file's `add_prefix_space: false`
            // is accepted only beside `prepend_scheme: never`.
            let prepend = match v.get("prepend_scheme") {
                None => Prepend::Always,
                Some(Value::String(s)) => match s.as_str() {
                    "always" => Prepend::Always,
                    "first" => Prepend::First,
                    "never" => Prepend::Never,
                    other => {
                        return Err(bad(
                            file,
                            format_args!("{at}.prepend_scheme {other:?} is not always, first or never"),
                        ))
                    }
                },
                Some(_) => return Err(bad(file, format_args!("{at}.prepend_scheme is not a string"))),
            };
            if !flag(v, "add_prefix_space", true, file, at)? && prepend != Prepend::Never {
                return Err(bad(file, format_args!("{at}.add_prefix_space does not match {at}.prepend_scheme")));
            }
            steps.push(Step::Metaspace { replacement, prepend, split: flag(v, "split", true, file, at)? });
        }
        other => return Err(unsupported(file, format_args!("{at}: pre-tokenizer {other:?}"))),
    }
    Ok(())
}

/// What `add_special` puts around the ids; an unsupported processor is an
/// error only when asked for.
fn post_processor(v: &Value, file: &str) -> std::result::Result<Post, String> {
    fn one(v: &Value, post: &mut Post) -> std::result::Result<(), String> {
        match v.get("type").and_then(Value::as_str) {
            Some("ByteLevel") => Ok(()),
            Some("Sequence") => {
                for p in v.get("processors").and_then(Value::as_array).into_iter().flatten() {
                    one(p, post)?;
                }
                Ok(())
            }
            Some("TemplateProcessing") => {
                let single = v.get("single").and_then(Value::as_array).ok_or("TemplateProcessing without `single`")?;
                let specials = v.get("special_tokens");
                let mut seen_seq = false;
                for piece in single {
                    if piece.get("Sequence").is_some() {
                        seen_seq = true;
                    } else if let Some(name) = piece.pointer("/SpecialToken/id").and_then(Value::as_str) {
                        let ids = specials
                            .and_then(|s| s.get(name))
                            .and_then(|s| s.get("ids"))
                            .and_then(Value::as_array)
                            .ok_or_else(|| {
                                format!("special token {name:?} of the template is not in special_tokens")
                            })?;
                        let ids = ids.iter().map(|i| i.as_u64().and_then(|i| u32::try_from(i).ok()));
                        let ids: Option<Vec<u32>> = ids.collect();
                        let ids = ids.ok_or_else(|| format!("special token {name:?} has an id that is not a u32"))?;
                        if seen_seq {
                            post.suffix.extend(ids)
                        } else {
                            post.prefix.extend(ids)
                        }
                    }
                }
                Ok(())
            }
            Some(k @ ("BertProcessing" | "RobertaProcessing")) => {
                let id = |key: &str| {
                    v.get(key).and_then(|p| p.get(1)).and_then(Value::as_u64).and_then(|i| u32::try_from(i).ok())
                };
                match (id("cls"), id("sep")) {
                    (Some(c), Some(s)) => {
                        post.prefix.push(c);
                        post.suffix.push(s);
                        Ok(())
                    }
                    _ => Err(format!("{k} without numeric cls and sep ids")),
                }
            }
            other => Err(format!("post_processor {other:?}")),
        }
    }
    let mut post = Post::default();
    one(v, &mut post)
        .map(|()| post)
        .map_err(|e| format!("{file}: {e} is not supported, so special tokens cannot be added"))
}

fn decoder(v: &Value, file: &str, at: &str) -> Result<Decoder> {
    let count = |key: &str| v.get(key).and_then(Value::as_u64).unwrap_or(0) as usize;
    Ok(match kind(v, file, at)? {
        "ByteLevel" => Decoder::ByteLevel,
        "ByteFallback" => Decoder::ByteFallback,
        "Fuse" => Decoder::Fuse,
        "Replace" => match pattern(v, file, at)? {
            Matcher::Literal(pattern) => Decoder::Replace { pattern, content: string(v, "content", file, at)? },
            Matcher::Regex(_) => return Err(unsupported(file, format_args!("{at}: Replace with a regex"))),
        },
        "Strip" => {
            let content = string(v, "content", file, at)?;
            let mut chars = content.chars();
            let (Some(c), None) = (chars.next(), chars.next()) else {
                return Err(bad(file, format_args!("{at}.content is not one character")));
            };
            Decoder::Strip { content: c, start: count("start"), stop: count("stop") }
        }
        "Metaspace" => {
            let r = string(v, "replacement", file, at)?;
            let replacement = r.chars().next().ok_or_else(|| bad(file, format_args!("{at}.replacement is empty")))?;
            let scheme = v.get("prepend_scheme").and_then(Value::as_str).unwrap_or("always");
            let strip_first = flag(v, "add_prefix_space", true, file, at)? && scheme != "never";
            Decoder::Metaspace { replacement, strip_first }
        }
        "Sequence" => Decoder::Sequence(
            array(v, "decoders", file, at)?
                .iter()
                .enumerate()
                .map(|(i, d)| decoder(d, file, &format!("{at}.decoders[{i}]")))
                .collect::<Result<_>>()?,
        ),
        other => return Err(unsupported(file, format_args!("{at}: decoder {other:?}"))),
    })
}
