//! `turnfit encode` and `turnfit decode`: token ids in and out, with tiktoken's
//! options (special tokens by set, byte-level encoding of text that is not
//! UTF-8, decode modes, token bytes, character offsets). Every rule is the
//! core's (`Tokenizer::encode_with`, `encode_bytes`, `decode`,
//! `decode_bytes`, `decode_with_offsets`); this file parses and prints.

use std::process::ExitCode;

use turnfit::{DecodeMode, Encoding, ModelRegistry, SpecialPolicy, SpecialSet, Tokenizer};

use crate::out::{out, outln};
use crate::{input, Fatal};

/// Which tokenizer: `--encoding` or `--model` (default o200k_base).
#[derive(clap::Args)]
pub(crate) struct Which {
    /// Encoding by tiktoken's name: cl100k_base, o200k_base, p50k_base, r50k_base,
    /// o200k_harmony, p50k_edit, gpt2 [default: o200k_base].
    #[arg(long, value_name = "NAME")]
    encoding: Option<String>,
    /// The encoding of this model (see `turnfit models`); with --encoding, a model the registry does not know
    /// uses that encoding.
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
}

impl Which {
    fn tokenizer(&self) -> Result<Tokenizer, Fatal> {
        Ok(match (&self.model, &self.encoding) {
            (Some(m), _) => {
                ModelRegistry::builtin()
                    .tokenizer(m, self.encoding.as_deref().map(turnfit::Encoding::from_name).transpose()?)?
                    .0
            }
            (None, Some(e)) => Tokenizer::from_name(e)?,
            (None, None) => Tokenizer::new(Encoding::O200kBase)?,
        })
    }
}

#[derive(clap::Args)]
pub(crate) struct EncodeArgs {
    #[command(flatten)]
    which: Which,
    /// Special tokens to recognize, comma-separated, or "all" (tiktoken's allowed_special).
    #[arg(long, value_name = "LIST|all")]
    allowed_special: Option<String>,
    /// Text that makes encoding fail, comma-separated, or "all": every special
    /// token not allowed (tiktoken's disallowed_special) [default: none].
    #[arg(long, value_name = "LIST|all")]
    disallowed_special: Option<String>,
    /// Encode the input's bytes as they are, UTF-8 or not (tiktoken's
    /// `_encode_bytes`); special tokens are then plain text.
    #[arg(long)]
    raw: bool,
    #[command(flatten)]
    file_tokenizer: crate::file_tokenizer::FileArgs,
    /// Print the encoding's special tokens (strings and ids, as JSON) instead of encoding.
    #[arg(long, conflicts_with_all = ["raw", "file", "allowed_special", "disallowed_special"])]
    list_special: bool,
    /// The text to encode; standard input when absent or "-".
    #[arg(value_name = "FILE")]
    file: Option<String>,
}

#[derive(clap::Args)]
pub(crate) struct DecodeArgs {
    #[command(flatten)]
    which: Which,
    /// What to do with bytes that are not valid UTF-8: replace (U+FFFD, as
    /// tiktoken's decode), strict (fail) or ignore (drop them).
    #[arg(long, value_name = "MODE", default_value = "replace")]
    errors: String,
    /// Write the tokens' bytes as they are (tiktoken's decode_bytes), UTF-8 or not.
    #[arg(long, conflicts_with_all = ["offsets", "errors"])]
    bytes: bool,
    /// Print {"text", "offsets"}: the character offset where each token starts
    /// (tiktoken's decode_with_offsets).
    #[arg(long)]
    offsets: bool,
    /// Decode with the tokenizer in FILE (as `count --tokenizer`).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["bytes", "offsets"])]
    tokenizer: Option<String>,
    /// Split rules of a tiktoken-format --tokenizer file (as `count --pattern`).
    #[arg(long, value_name = "NAME|REGEX", requires = "tokenizer")]
    pattern: Option<String>,
    /// Token ids (decimal, separated by spaces or commas, or a JSON array); read
    /// from standard input when none are given.
    #[arg(value_name = "ID")]
    ids: Vec<String>,
}

pub(crate) fn encode(args: EncodeArgs) -> Result<ExitCode, Fatal> {
    if let Some(t) = args.file_tokenizer.load()? {
        if args.which.encoding.is_some()
            || args.which.model.is_some()
            || args.raw
            || args.list_special
            || args.allowed_special.is_some()
            || args.disallowed_special.is_some()
        {
            return Err(Fatal("--tokenizer takes the place of --encoding, --model, --raw, --list-special and the special-token options".into()));
        }
        let path = args.file.as_deref().unwrap_or("-");
        let text = input::read_text(path).map_err(Fatal)?;
        let ids =
            t.encode_with_special(&text, args.file_tokenizer.add_special).map_err(|e| Fatal(format!("{path}: {e}")))?;
        outln!("{}", serde_json::Value::from(ids));
        return Ok(ExitCode::SUCCESS);
    }
    let tokenizer = args.which.tokenizer()?;
    if args.list_special {
        outln!("{}", tokenizer.special_tokens_json()?);
        return Ok(ExitCode::SUCCESS);
    }
    let path = args.file.as_deref().unwrap_or("-");
    let ids = if args.raw {
        let bytes = input::read_bytes(path).map_err(Fatal)?;
        tokenizer.encode_bytes(&bytes)?
    } else {
        let policy = SpecialPolicy {
            allowed: special_set(args.allowed_special.as_deref()),
            disallowed: special_set(args.disallowed_special.as_deref()),
        };
        policy.check()?;
        let text = input::read_text(path).map_err(Fatal)?;
        tokenizer.encode_with(&text, &policy).map_err(|e| Fatal(format!("{path}: {e}")))?
    };
    outln!("{}", serde_json::Value::from(ids));
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn decode(args: DecodeArgs) -> Result<ExitCode, Fatal> {
    if let Some(path) = &args.tokenizer {
        if args.which.encoding.is_some() || args.which.model.is_some() {
            return Err(Fatal("--tokenizer takes the place of --encoding and --model".into()));
        }
        let options = turnfit::pipeline::LoadOptions::with_pattern(args.pattern.clone());
        let t = turnfit::pipeline::FileTokenizer::from_file_with(path, &options)?;
        let text = if args.ids.is_empty() { input::read_text("-").map_err(Fatal)? } else { args.ids.join(" ") };
        let ids = parse_ids(&text).map_err(Fatal)?;
        out!("{}", t.decode(&ids)?);
        return Ok(ExitCode::SUCCESS);
    }
    let tokenizer = args.which.tokenizer()?;
    let text = if args.ids.is_empty() { input::read_text("-").map_err(Fatal)? } else { args.ids.join(" ") };
    let ids = parse_ids(&text).map_err(Fatal)?;
    if args.bytes {
        let bytes = tokenizer.decode_bytes(&ids)?;
        crate::out::write_bytes(&bytes);
    } else if args.offsets {
        let (text, offsets) = tokenizer.decode_with_offsets(&ids)?;
        outln!("{}", serde_json::json!({ "text": text, "offsets": offsets }));
    } else {
        let text = tokenizer.decode(&ids, DecodeMode::from_name(&args.errors)?)?;
        out!("{text}");
    }
    Ok(ExitCode::SUCCESS)
}

/// A special-token set as the CLI writes it: comma-separated names, "all",
/// or nothing (tiktoken's `allowed_special` / `disallowed_special`).
pub(crate) fn special_set(v: Option<&str>) -> SpecialSet {
    match v {
        None | Some("") => SpecialSet::none(),
        Some("all") => SpecialSet::All,
        Some(list) => SpecialSet::of(list.split(',')),
    }
}

/// Ids as decimal numbers separated by whitespace or commas, optionally in
/// JSON array brackets.
fn parse_ids(text: &str) -> Result<Vec<u32>, String> {
    let inner = text.trim();
    let inner = inner.strip_prefix('[').and_then(|s| s.strip_suffix(']')).unwrap_or(inner);
    inner
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .enumerate()
        .map(|(i, s)| {
            s.parse::<u32>().map_err(|_| {
                let shown: String = s.chars().take(32).collect();
                format!("token id {i} ('{shown}') is not a number from 0 to {}", u32::MAX)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::parse_ids;

    #[test]
    fn ids_parse_from_lists_and_json_and_refuse_the_rest() {
        assert_eq!(parse_ids("1 2,3\n4").unwrap(), [1, 2, 3, 4]);
        assert_eq!(parse_ids(" [15339, 1917] ").unwrap(), [15339, 1917]);
        assert_eq!(parse_ids("").unwrap(), Vec::<u32>::new());
        assert!(parse_ids("1 x 3").unwrap_err().contains("token id 1 ('x')"));
        assert!(parse_ids("-1").is_err());
        assert!(parse_ids("4294967296").is_err());
    }
}
