//! Tokenizers loaded at run time from the files model hosts ship:
//! normalize, split, merge, with added tokens cut out first.
//!
//! This is the open-weight counterpart of [`crate::tokens`], which embeds
//! OpenAI's encodings. Those vocabularies are fixed and the engine there is
//! specialised for them; these are 2-33 MB files that carry their models'
//! licences, so nothing is embedded and the pipeline is assembled from what
//! the file declares (docs/architecture.md, "Tokenizer files"):
//!
//! 1. added tokens (special tokens such as `<|im_end|>`) are cut out of the
//!    text (`added.rs`);
//! 2. the rest is normalized (`normalize.rs`: NFC for Qwen, `▁` for spaces
//!    in SentencePiece-style files);
//! 3. split into pieces (`split.rs`, `split_regex.rs`), through turnfit's
//!    hand-written cl100k/o200k pre-tokenizers when the file's pattern is
//!    theirs;
//! 4. each piece merged by the BPE model (`bpe.rs`, HF's merge rule).
//!
//! Every id is HF `tokenizers`' `encode(text, add_special_tokens=False)` id;
//! `scripts/open-models.sh` checks that on real files.

mod added;
mod bpe;
mod byte_level;
mod decode;
mod describe;
pub(crate) mod gguf;
mod gguf_spm;
mod gguf_vocab;
mod hf_json;
mod normalize;
mod presets;
mod scratch;
mod split;
mod split_regex;
mod spm;
mod tekken;
mod tiktoken_file;

pub use describe::FileTokenizerInfo;

use std::path::Path;

use rustc_hash::FxHashMap;
use scratch::Scratch;

use crate::limits::{self, MAX_TEXT_BYTES, MAX_TOKENIZER_FILE_BYTES};
use crate::tokens::pretokenize::{for_each_piece, Sink};
use crate::{Error, ErrorKind, Result};
use added::Segment;

/// What `add_special` puts around a text's ids (the file's post-processor).
#[derive(Debug, Default, Clone)]
pub(crate) struct Post {
    pub(crate) prefix: Vec<u32>,
    pub(crate) suffix: Vec<u32>,
}

/// How to load a file.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// The split rules for a file that has none (a tiktoken-format file):
    /// a preset name (`llama3`, `qwen2`, `gpt-4o`, `deepseek-v3`, ...; the
    /// name brings the family's normalization and special tokens too) or a
    /// regex. Refused for a file that declares its own.
    pub pattern: Option<String>,
}

impl LoadOptions {
    /// Default options with the split rules of a tiktoken-format file: what
    /// the C ABI and every binding pass (a pattern or none), in one place.
    pub fn with_pattern(pattern: Option<String>) -> LoadOptions {
        LoadOptions { pattern }
    }
}

/// Everything a loader found, before the tokenizer is put together.
pub(crate) struct Parts<'a> {
    pub(crate) name: &'a str,
    pub(crate) normalizer: Option<normalize::Normalizer>,
    pub(crate) pre: split::PreTokenizer,
    pub(crate) model: Model,
    /// Every model token's bytes by id.
    pub(crate) strings: Vec<(u32, Vec<u8>)>,
    pub(crate) added: Vec<added::AddedToken>,
    pub(crate) post: std::result::Result<Post, String>,
    pub(crate) decoder: Option<decode::Decoder>,
}

impl Parts<'_> {
    pub(crate) fn assemble(self) -> Result<FileTokenizer> {
        let file = self.name;
        let mut id_text: FxHashMap<u32, (Vec<u8>, bool)> = FxHashMap::default();
        id_text.reserve(self.strings.len() + self.added.len());
        for (id, s) in self.strings {
            id_text.insert(id, (s, false));
        }
        let (mut raw, mut normalized) = (Vec::new(), Vec::new());
        for t in self.added {
            id_text.insert(t.id, (t.content.clone().into_bytes(), true));
            if t.normalized {
                normalized.push(t);
            } else {
                raw.push(t);
            }
        }
        let raw_contents = raw.iter().map(|t| t.content.clone()).collect();
        let norm_contents = normalized
            .iter()
            .map(|t| self.normalizer.as_ref().map_or(t.content.clone(), |n| n.apply(&t.content).into_owned()))
            .collect();
        let added_raw = added::Matcher::new(raw, raw_contents).map_err(|e| hf_json::bad(file, e))?;
        let added_normalized = added::Matcher::new(normalized, norm_contents).map_err(|e| hf_json::bad(file, e))?;
        let vocab_size = id_text.keys().max().map_or(0, |&m| m as usize + 1);
        Ok(FileTokenizer {
            name: file.to_string(),
            added_raw,
            added_normalized,
            normalizer: self.normalizer,
            pre: self.pre,
            model: self.model,
            post: self.post,
            decoder: self.decoder,
            id_text,
            vocab_size,
            char_table: byte_level::char_table(),
            special_as_text: false,
            info: FileInfo::default(),
            scratch: scratch::Pool::default(),
        })
    }
}

/// What a file says besides its tokens (GGUF files carry these).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileInfo {
    /// The model's chat template (`tokenizer.chat_template`).
    pub chat_template: Option<String>,
    /// The model's context length (`<architecture>.context_length`).
    pub context_length: Option<u64>,
    /// The llama.cpp pre-tokenizer name (`tokenizer.ggml.pre`).
    pub pre: Option<String>,
}

/// A tokenizer loaded from a file. Immutable and `Send + Sync`: one
/// instance serves every thread.
pub struct FileTokenizer {
    name: String,
    added_raw: added::Matcher,
    added_normalized: added::Matcher,
    normalizer: Option<normalize::Normalizer>,
    pre: split::PreTokenizer,
    model: Model,
    /// The post-processor, or why it cannot be applied.
    post: std::result::Result<Post, String>,
    decoder: Option<decode::Decoder>,
    /// Each id's bytes (raw bytes for byte-level tokens, text otherwise) and
    /// whether it is an added token.
    id_text: FxHashMap<u32, (Vec<u8>, bool)>,
    vocab_size: usize,
    char_table: byte_level::CharTable,
    special_as_text: bool,
    info: FileInfo,
    /// Piece caches and buffers kept across calls (see `scratch.rs`).
    scratch: scratch::Pool,
}

impl std::fmt::Debug for FileTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileTokenizer").field("name", &self.name).field("vocab_size", &self.vocab_size).finish()
    }
}

impl FileTokenizer {
    /// Loads a tokenizer file: an HF `tokenizer.json`, or a tiktoken-format
    /// file with `options.pattern`. Errors name the file: `Io` when it
    /// cannot be read, `LimitExceeded` over [`MAX_TOKENIZER_FILE_BYTES`],
    /// `InvalidJson` when a JSON file is malformed, `InvalidArgument` when a
    /// file of another format is, or when it asks for something turnfit
    /// does not implement exactly (a Unigram model, say).
    ///
    /// A GGUF model file is read by seeking: only its header and metadata,
    /// never the tensors, so it may be of any size.
    pub fn from_file_with(path: impl AsRef<Path>, options: &LoadOptions) -> Result<FileTokenizer> {
        use std::io::Read;
        let path = path.as_ref();
        let name = path.display().to_string();
        let io = |e: std::io::Error| Error::new(ErrorKind::Io, format!("{name}: {e}"));
        // Only regular files: a device never ends (`/dev/zero` would be read
        // until memory runs out) and opening a FIFO blocks until a writer
        // comes. Asked of the path before it is opened, for the FIFO.
        if !std::fs::metadata(path).map_err(io)?.is_file() {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!("{name}: not a regular file (a directory, device or FIFO is not read)"),
            ));
        }
        let mut f = std::fs::File::open(path).map_err(io)?;
        let len = f.metadata().map_err(io)?.len();
        let mut magic = [0u8; 4];
        let got = f.read(&mut magic).map_err(io)?;
        if got == 4 && gguf::looks_like(&magic) {
            if options.pattern.is_some() {
                return Err(Error::new(
                    ErrorKind::InvalidArgument,
                    format!("{name}: a GGUF names its own split rules (tokenizer.ggml.pre); no pattern can be given"),
                ));
            }
            use std::io::Seek;
            f.rewind().map_err(io)?;
            let meta = gguf::read(std::io::BufReader::new(f), len, &name)?;
            return gguf_vocab::load(meta, &name);
        }
        limits::check(
            &format!("tokenizer file {name}"),
            usize::try_from(len).unwrap_or(usize::MAX),
            MAX_TOKENIZER_FILE_BYTES,
        )?;
        // Read from the handle already checked, at most one byte past the
        // limit: the file may have grown since its length was read.
        use std::io::Seek;
        f.rewind().map_err(io)?;
        let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        f.take(MAX_TOKENIZER_FILE_BYTES as u64 + 1).read_to_end(&mut bytes).map_err(io)?;
        FileTokenizer::from_bytes_with(&bytes, &name, options)
    }

    /// [`FileTokenizer::from_file_with`] with default options.
    pub fn from_file(path: impl AsRef<Path>) -> Result<FileTokenizer> {
        FileTokenizer::from_file_with(path, &LoadOptions::default())
    }

    /// Loads a tokenizer from the bytes of a file; `name` stands for the
    /// file in errors.
    pub fn from_bytes_with(bytes: &[u8], name: &str, options: &LoadOptions) -> Result<FileTokenizer> {
        limits::check(&format!("tokenizer file {name}"), bytes.len(), MAX_TOKENIZER_FILE_BYTES)?;
        let start = bytes.iter().position(|b| !b.is_ascii_whitespace());
        let refuse_pattern = || {
            Error::new(
                ErrorKind::InvalidArgument,
                format!("{name}: the file declares its own split rules; no pattern can be given"),
            )
        };
        if gguf::looks_like(bytes) {
            if options.pattern.is_some() {
                return Err(refuse_pattern());
            }
            let meta = gguf::read(std::io::Cursor::new(bytes), bytes.len() as u64, name)?;
            return gguf_vocab::load(meta, name);
        }
        match start.map(|i| bytes[i]) {
            Some(b'{') if options.pattern.is_some() => Err(refuse_pattern()),
            Some(b'{') => hf_json::load(bytes, name),
            None => Err(hf_json::bad(name, "the file is empty")),
            Some(_) if tiktoken_file::looks_like(bytes) => {
                let pattern = options.pattern.as_deref().ok_or_else(|| {
                    Error::new(
                        ErrorKind::InvalidArgument,
                        format!(
                            "{name}: a tiktoken-format file has no split rules; give a pattern: one of {} or a regex",
                            presets::NAMES
                        ),
                    )
                })?;
                tiktoken(bytes, name, pattern)
            }
            Some(_) => Err(Error::new(
                ErrorKind::InvalidArgument,
                format!("{name}: not a tokenizer file turnfit reads (an HF tokenizer.json, a tiktoken-format file or a GGUF)"),
            )),
        }
    }

    /// [`FileTokenizer::from_bytes_with`] with default options.
    pub fn from_bytes(bytes: &[u8], name: &str) -> Result<FileTokenizer> {
        FileTokenizer::from_bytes_with(bytes, name, &LoadOptions::default())
    }

    /// The same tokenizer with special-token text treated as ordinary text
    /// (`true`) or recognized as the token (`false`, HF's default).
    pub fn with_special_text(mut self, as_text: bool) -> FileTokenizer {
        self.special_as_text = as_text;
        self
    }

    /// The file the tokenizer came from.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the file says besides its tokens (chat template, context
    /// length; GGUF files only).
    pub fn info(&self) -> &FileInfo {
        &self.info
    }

    /// One past the highest id, added tokens included.
    pub fn vocab_size(&self) -> usize {
        self.vocab_size
    }

    /// The ids of `text`, as HF's `encode(text, add_special_tokens=False)`.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        limits::check("text", text.len(), MAX_TEXT_BYTES)?;
        self.scratch.with(|sc| self.encode_in(text, sc))
    }

    fn encode_in(&self, text: &str, sc: &mut Scratch) -> Result<Vec<u32>> {
        let mut out = Vec::with_capacity(text.len() / 4 + 1);
        let mut segs = Vec::new();
        self.added_raw.segments(text, self.special_as_text, &mut segs);
        let mut inner = Vec::new();
        for seg in segs {
            match seg {
                Segment::Token(id) => out.push(id),
                Segment::Text(a, b) => {
                    let s = &text[a..b];
                    let normalized = match &self.normalizer {
                        Some(n) => n.apply(s),
                        None => std::borrow::Cow::Borrowed(s),
                    };
                    inner.clear();
                    self.added_normalized.segments(&normalized, self.special_as_text, &mut inner);
                    for seg in &inner {
                        match *seg {
                            Segment::Token(id) => out.push(id),
                            Segment::Text(c, d) => {
                                // HF's Metaspace `first` scheme: only the
                                // stretch at the text's start gets `▁`.
                                let at_start = a == 0 && c == 0;
                                self.split_and_merge(&normalized[c..d], at_start, sc, &mut out)
                            }
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    /// The ids of `text` with no added token recognized, special or not: the
    /// normalizer, pre-tokenizer and model only, as transformers'
    /// `_encode_without_added_tokens` (how `apply_chat_template(...,
    /// sanitize_control_tokens=True)` encodes a control-token string typed
    /// into a message).
    pub fn encode_plain(&self, text: &str) -> Result<Vec<u32>> {
        limits::check("text", text.len(), MAX_TEXT_BYTES)?;
        let mut out = Vec::with_capacity(text.len() / 4 + 1);
        let normalized = match &self.normalizer {
            Some(n) => n.apply(text),
            None => std::borrow::Cow::Borrowed(text),
        };
        self.scratch.with(|sc| self.split_and_merge(&normalized, true, sc, &mut out));
        Ok(out)
    }

    /// The file's added tokens as `(id, content, special)`, in no set order
    /// (HF's `added_tokens_decoder`).
    pub fn added_tokens(&self) -> impl Iterator<Item = (u32, &str, bool)> {
        self.added_raw
            .tokens()
            .iter()
            .chain(self.added_normalized.tokens())
            .map(|t| (t.id, t.content.as_str(), t.special))
    }

    /// The ids of `text` with the file's special tokens around them when
    /// `add_special` (Llama 3's `<|begin_of_text|>`, Gemma's `<bos>`).
    pub fn encode_with_special(&self, text: &str, add_special: bool) -> Result<Vec<u32>> {
        let ids = self.encode(text)?;
        if !add_special {
            return Ok(ids);
        }
        let post = self.post.as_ref().map_err(|e| Error::new(ErrorKind::InvalidArgument, e.clone()))?;
        Ok(post.prefix.iter().chain(&ids).chain(&post.suffix).copied().collect())
    }

    /// The number of tokens of `text` (no special tokens added).
    pub fn count(&self, text: &str) -> Result<usize> {
        Ok(self.encode(text)?.len())
    }

    /// The text of `ids`, through the file's decoder (invalid UTF-8 becomes
    /// U+FFFD). `UnknownToken` for an id the file does not define.
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        limits::check("ids", ids.len(), limits::MAX_DECODE_TOKENS)?;
        let mut tokens = Vec::with_capacity(ids.len());
        for &id in ids {
            let (bytes, added) = self
                .id_text
                .get(&id)
                .ok_or_else(|| Error::new(ErrorKind::UnknownToken, format!("{}: no token has id {id}", self.name)))?;
            // Byte-level tokens are stored as raw bytes; the decoder
            // expects the file's strings, so spell them again.
            if matches!(&self.model, Model::Bpe(b) if b.units == bpe::Units::Bytes) && !added {
                tokens.push(bytes.iter().map(|&b| byte_level::byte_to_char(b)).collect::<String>().into_bytes());
            } else {
                tokens.push(bytes.clone());
            }
        }
        Ok(match &self.decoder {
            Some(d) => d.decode(tokens, &self.char_table),
            None => String::from_utf8_lossy(&tokens.concat()).into_owned(),
        })
    }

    fn split_and_merge(&self, s: &str, at_start: bool, sc: &mut Scratch, out: &mut Vec<u32>) {
        if let Some(p) = self.pre.known_pattern() {
            struct Merge<'a> {
                s: &'a [u8],
                model: &'a Model,
                sc: &'a mut Scratch,
                out: &'a mut Vec<u32>,
            }
            impl Sink for Merge<'_> {
                fn piece(&mut self, a: usize, b: usize) -> bool {
                    self.model.encode_piece(&self.s[a..b], self.sc, self.out);
                    true
                }
            }
            for_each_piece(p, s, &mut Merge { s: s.as_bytes(), model: &self.model, sc, out });
            return;
        }
        let (buf, pieces) = self.pre.split(s, at_start);
        for (a, b) in pieces {
            self.model.encode_piece(&buf.as_bytes()[a..b], sc, out);
        }
    }
}

/// The merge stage: HF's merge-list BPE, or llama.cpp's score-ordered
/// SentencePiece-style BPE (`llama`-type GGUF vocabularies).
#[derive(Debug)]
pub(crate) enum Model {
    Bpe(Box<bpe::Bpe>),
    Spm(Box<spm::Spm>),
}

impl Model {
    fn encode_piece(&self, piece: &[u8], sc: &mut Scratch, out: &mut Vec<u32>) {
        match self {
            Model::Bpe(m) => m.encode_piece(piece, &mut sc.bpe, out),
            Model::Spm(m) => m.encode_piece(piece, &mut sc.spm, out),
        }
    }
}

/// A tiktoken-format file with the split rules `pattern` names or spells.
fn tiktoken(bytes: &[u8], name: &str, pattern: &str) -> Result<FileTokenizer> {
    let (bpe, strings) = tiktoken_file::load(bytes, name)?;
    let preset = match presets::preset(pattern) {
        Some(p) => p,
        None => {
            let re = split_regex::SplitRegex::new(pattern).map_err(|e| {
                Error::new(
                    ErrorKind::InvalidArgument,
                    format!("{name}: the pattern is not one of {} and not a regex: {e}", presets::NAMES),
                )
            })?;
            let step = split::Step::Split {
                matcher: split::Matcher::Regex(re),
                behavior: split::Behavior::Isolated,
                invert: false,
            };
            presets::Preset { normalizer: None, steps: vec![step], specials: Vec::new() }
        }
    };
    let first = strings.len() as u32;
    let added: Vec<added::AddedToken> = preset
        .specials
        .iter()
        .enumerate()
        .map(|(i, s)| added::AddedToken {
            id: first + i as u32,
            content: s.clone(),
            special: true,
            normalized: false,
            lstrip: false,
            rstrip: false,
            single_word: false,
        })
        .collect();
    if let Some(&(id, _)) = strings.iter().find(|(id, _)| *id >= first && !added.is_empty()) {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            format!("{name}: rank {id} is where pattern {pattern:?} numbers its special tokens (from {first})"),
        ));
    }
    // Llama 3 puts `<|begin_of_text|>` first when asked to add specials.
    let post = Ok(Post {
        prefix: added.iter().filter(|t| t.content == "<|begin_of_text|>").map(|t| t.id).collect(),
        suffix: Vec::new(),
    });
    Parts {
        name,
        normalizer: preset.normalizer,
        pre: split::PreTokenizer { steps: preset.steps },
        model: Model::Bpe(Box::new(bpe)),
        strings,
        added,
        post,
        decoder: Some(decode::Decoder::ByteLevel),
    }
    .assemble()
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_sentencepiece;
#[cfg(test)]
mod tests_tekken;
