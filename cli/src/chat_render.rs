//! `turnfit render CONV --tokenizer FILE|--ollama-model NAME|--hf-model M [--chat-template FILE]
//! [--no-generation-prompt]`: the prompt a model is sent for a conversation,
//! rendered with the model's own chat template (core's `template`), printed
//! byte for byte with nothing added (no final newline). The template is the
//! one beside a `tokenizer.json` (chat_template.jinja, tokenizer_config.json),
//! inside a GGUF, or the file given.

use std::path::Path;
use std::process::ExitCode;

use serde_json::Value;
use turnfit::pipeline::{FileTokenizer, LoadOptions};
use turnfit::template::{ChatTemplate, ModelTemplate, RenderOptions};

use crate::Fatal;

#[derive(clap::Args)]
pub(crate) struct Args {
    /// The conversation: a JSON array of OpenAI-style messages, or an object
    /// with "messages" (and "tools"), like a chat completions request ("-" is stdin).
    #[arg(value_name = "CONV")]
    conversation: String,
    /// The model's tokenizer file (tokenizer.json, whose folder holds the
    /// template, or a GGUF, which holds it).
    #[arg(long, value_name = "FILE", group = crate::model_files::GROUP)]
    tokenizer: Option<String>,
    #[command(flatten)]
    locate: crate::model_files::LocateArgs,
    /// Split rules for a tiktoken-format tokenizer file (as for count).
    #[arg(long, value_name = "NAME|REGEX")]
    pattern: Option<String>,
    /// Render this Jinja file instead of the model's own template.
    #[arg(long, value_name = "FILE")]
    chat_template: Option<String>,
    /// Do not end with the assistant's header (add_generation_prompt=False).
    #[arg(long)]
    no_generation_prompt: bool,
    /// Extra template variables as a JSON object, e.g. '{"enable_thinking": false}'.
    #[arg(long, value_name = "JSON")]
    template_kwargs: Option<String>,
}

pub(crate) fn run(args: Args) -> Result<ExitCode, Fatal> {
    let text = crate::input::read_text(&args.conversation).map_err(Fatal)?;
    let json: Value =
        serde_json::from_str(&text).map_err(|e| Fatal(format!("{}: not valid JSON: {e}", args.conversation)))?;
    let (messages, tools) = match json {
        Value::Array(_) => (json, None),
        Value::Object(mut body) => {
            let messages = body
                .remove("messages")
                .ok_or_else(|| Fatal(format!("{}: the object has no \"messages\"", args.conversation)))?;
            (messages, body.remove("tools").filter(|t| !t.is_null()))
        }
        _ => {
            return Err(Fatal(format!(
                "{}: expected an array of messages or an object with \"messages\"",
                args.conversation
            )))
        }
    };
    let path = args.locate.tokenizer(args.tokenizer.as_deref())?.ok_or_else(|| {
        Fatal("render needs the model's files: --tokenizer FILE, --ollama-model NAME or --hf-model ORG/NAME|DIR".into())
    })?;
    let path = Path::new(&path);
    let tokenizer = FileTokenizer::from_file_with(path, &LoadOptions::with_pattern(args.pattern.clone()))?;
    let model = ModelTemplate::load(path, &tokenizer, tools.is_some(), args.chat_template.as_deref().map(Path::new))?;
    let kwargs = match &args.template_kwargs {
        None => serde_json::Map::new(),
        Some(s) => match serde_json::from_str(s) {
            Ok(Value::Object(m)) => m,
            _ => return Err(Fatal(format!("--template-kwargs: expected a JSON object, got {s:?}"))),
        },
    };
    let template = ChatTemplate::new(&model.source).map_err(|e| Fatal(format!("{}: {}", model.origin, e.message())))?;
    let options = RenderOptions {
        tools,
        add_generation_prompt: !args.no_generation_prompt,
        bos_token: model.bos_token,
        eos_token: model.eos_token,
        kwargs,
        ..RenderOptions::default()
    };
    let prompt =
        template.render(&messages, &options).map_err(|e| Fatal(format!("{}: {}", model.origin, e.message())))?;
    crate::out::write_bytes(prompt.as_bytes());
    Ok(ExitCode::SUCCESS)
}
