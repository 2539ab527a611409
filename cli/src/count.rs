//! `turnfit count`.

use std::process::ExitCode;

use turnfit::{Encoding, ModelRegistry, SpecialPolicy, Tokenizer};

use crate::codec::special_set;
use crate::out::outln;
use crate::{input, Fatal};

#[derive(clap::Args)]
pub(crate) struct Args {
    /// Encoding to count with, by tiktoken's name: cl100k_base, o200k_base,
    /// p50k_base, r50k_base, o200k_harmony, p50k_edit, gpt2 [default: o200k_base].
    #[arg(long, value_name = "NAME")]
    encoding: Option<String>,
    /// Count with the encoding of this model (see `turnfit models`); with --encoding, a model the registry
    /// does not know counts with that encoding.
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// Recognize special tokens such as <|endoftext|> instead of counting them as text.
    #[arg(long, conflicts_with_all = ["allowed_special", "disallowed_special"])]
    special: bool,
    /// Special tokens to recognize, comma-separated, or "all" (tiktoken's
    /// allowed_special); others count as text unless --disallowed-special refuses them.
    #[arg(long, value_name = "LIST|all")]
    allowed_special: Option<String>,
    /// Text that makes the count fail (exit 1, naming it), comma-separated, or
    /// "all": every special token not allowed (tiktoken's disallowed_special).
    #[arg(long, value_name = "LIST|all")]
    disallowed_special: Option<String>,
    /// Print one JSON object per input per line.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    file: crate::file_tokenizer::FileArgs,
    /// Files to count; standard input when none is given or for "-".
    #[arg(value_name = "FILE")]
    files: Vec<String>,
}

pub(crate) fn run(args: Args) -> Result<ExitCode, Fatal> {
    if let Some(t) = args.file.load()? {
        if args.encoding.is_some()
            || args.model.is_some()
            || args.special
            || args.allowed_special.is_some()
            || args.disallowed_special.is_some()
        {
            return Err(Fatal(
                "--tokenizer takes the place of --encoding, --model and the special-token options".into(),
            ));
        }
        return count_file(&t, &args);
    }
    let (tokenizer, model) = match (&args.model, &args.encoding) {
        (Some(m), _) => {
            let (t, info) = ModelRegistry::builtin()
                .tokenizer(m, args.encoding.as_deref().map(Encoding::from_name).transpose()?)?;
            (t, Some(info))
        }
        (None, Some(e)) => (Tokenizer::from_name(e)?, None),
        (None, None) => (Tokenizer::new(Encoding::O200kBase)?, None),
    };
    let policy = if args.special {
        SpecialPolicy::all()
    } else {
        SpecialPolicy {
            allowed: special_set(args.allowed_special.as_deref()),
            disallowed: special_set(args.disallowed_special.as_deref()),
        }
    };
    policy.check()?;
    let files = if args.files.is_empty() { vec!["-".to_owned()] } else { args.files };

    let mut failed = false;
    let mut total = 0usize;
    let mut counted = 0usize;
    for path in &files {
        let result = input::read_text(path).and_then(|text| {
            tokenizer.count_with(&text, &policy).map(|n| (n, text.len())).map_err(|e| format!("{path}: {e}"))
        });
        let (tokens, bytes) = match result {
            Ok(r) => r,
            Err(message) => {
                eprintln!("turnfit: {message}");
                failed = true;
                continue;
            }
        };
        total += tokens;
        counted += 1;
        if args.json {
            let mut line = serde_json::json!({
                "file": path,
                "encoding": tokenizer.encoding(),
                "tokens": tokens,
                "bytes": bytes,
            });
            if let Some(info) = &model {
                line["model"] = serde_json::json!(info.model);
                line["exact"] = serde_json::json!(info.exact);
            }
            outln!("{line}");
        } else {
            outln!("{tokens:>10} {path}");
        }
    }
    if !args.json && counted > 1 {
        outln!("{total:>10} total");
    }
    if let Some(info) = model.as_ref().filter(|i| !i.exact) {
        if !args.json {
            eprintln!(
                "turnfit: note: {} has no public tokenizer; counts are an estimate with {}",
                info.model, info.encoding
            );
        }
    }
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// `count --tokenizer FILE`: the same output, counted with the file's tokenizer.
fn count_file(t: &turnfit::pipeline::FileTokenizer, args: &Args) -> Result<ExitCode, Fatal> {
    let files = if args.files.is_empty() { vec!["-".to_owned()] } else { args.files.clone() };
    let (mut failed, mut total, mut counted) = (false, 0usize, 0usize);
    for path in &files {
        let result = input::read_text(path).and_then(|text| {
            t.encode_with_special(&text, args.file.add_special)
                .map(|ids| (ids.len(), text.len()))
                .map_err(|e| format!("{path}: {e}"))
        });
        let (tokens, bytes) = match result {
            Ok(r) => r,
            Err(message) => {
                eprintln!("turnfit: {message}");
                failed = true;
                continue;
            }
        };
        total += tokens;
        counted += 1;
        if args.json {
            let line = serde_json::json!({ "file": path, "tokenizer": t.name(), "tokens": tokens, "bytes": bytes });
            outln!("{line}");
        } else {
            outln!("{tokens:>10} {path}");
        }
    }
    if !args.json && counted > 1 {
        outln!("{total:>10} total");
    }
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}
