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
    /// With --tokenizer: each input is a conversation (an array of OpenAI-style messages, or an object with
    /// "messages" and "tools"), counted as the model's chat template renders it: the ids of transformers'
    /// apply_chat_template(..., tokenize=True, sanitize_control_tokens=True), what vLLM sends.
    #[arg(long, requires = crate::model_files::GROUP, conflicts_with = "add_special")]
    chat: bool,
    /// With --chat: render this Jinja file instead of the model's own template (implies --chat).
    #[arg(long, value_name = "FILE", requires = crate::model_files::GROUP, conflicts_with = "add_special")]
    chat_template: Option<String>,
    /// With --chat: extra template variables as a JSON object, e.g. '{"enable_thinking": false}'.
    #[arg(long, value_name = "JSON", requires = crate::model_files::GROUP)]
    template_kwargs: Option<String>,
    /// With --chat: do not end with the assistant's header (add_generation_prompt=False).
    #[arg(long, requires = crate::model_files::GROUP)]
    no_generation_prompt: bool,
    /// With --chat: print the prompt's token ids (a JSON array per input) instead of counts.
    #[arg(long, requires = crate::model_files::GROUP)]
    ids: bool,
    /// Files to count; standard input when none is given or for "-".
    #[arg(value_name = "FILE")]
    files: Vec<String>,
}

pub(crate) fn run(args: Args) -> Result<ExitCode, Fatal> {
    if let Some(path) = args.file.path()? {
        let t = args.file.load_path(&path)?;
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
        if args.chat || args.chat_template.is_some() {
            return count_chat(&args, &path);
        }
        if args.ids || args.no_generation_prompt || args.template_kwargs.is_some() {
            return Err(Fatal("--ids, --no-generation-prompt and --template-kwargs go with --chat".into()));
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

/// `count --tokenizer FILE --chat`: each input a conversation, counted as
/// the model's chat template renders it (core's `template::TemplateModel`).
fn count_chat(args: &Args, path: &str) -> Result<ExitCode, Fatal> {
    let files = if args.files.is_empty() { vec!["-".to_owned()] } else { args.files.clone() };
    let (mut failed, mut total, mut counted) = (false, 0usize, 0usize);
    for file in &files {
        let result = input::read_text(file).map_err(Fatal).and_then(|text| {
            let model = crate::chat_model::load(
                path,
                args.file.pattern.as_deref(),
                args.chat_template.as_deref(),
                args.template_kwargs.as_deref(),
                &text,
            )?;
            let body: serde_json::Value =
                serde_json::from_str(&text).map_err(|e| Fatal(format!("{file}: not valid JSON: {e}")))?;
            let ids = model
                .request_ids(&body, !args.no_generation_prompt)
                .map_err(|e| Fatal(format!("{file}: {}: {}", model.counter().model().origin, e.message())))?;
            Ok((ids, model))
        });
        let (ids, model) = match result {
            Ok(r) => r,
            Err(Fatal(message)) => {
                eprintln!("turnfit: {message}");
                failed = true;
                continue;
            }
        };
        total += ids.len();
        counted += 1;
        if args.ids {
            outln!("{}", serde_json::to_string(&ids).map_err(|e| Fatal(e.to_string()))?);
        } else if args.json {
            let line = serde_json::json!({
                "file": file,
                "tokenizer": path,
                "chat_template": model.counter().model().origin,
                "tokens": ids.len(),
            });
            outln!("{line}");
        } else {
            outln!("{:>10} {file}", ids.len());
        }
    }
    if !args.json && !args.ids && counted > 1 {
        outln!("{total:>10} total");
    }
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}
