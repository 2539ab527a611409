//! `turnfit handoff render|check`: validate and render handoff files with
//! the core.

use std::process::ExitCode;

use turnfit::handoff::{Handoff, RenderFormat, RenderOptions};

use crate::out::{out, outln};
use crate::{input, Fatal};

#[derive(clap::Subcommand)]
pub(crate) enum Command {
    /// Print a handoff as the prompt block the receiving agent gets; with
    /// --budget, shorten key outputs to fit and report what was cut.
    Render(RenderArgs),
    /// Validate a handoff; exit 1 (with the reason) if it is invalid.
    Check(CheckArgs),
}

#[derive(clap::Args)]
pub(crate) struct RenderArgs {
    /// Handoff JSON; "-" for standard input.
    #[arg(value_name = "FILE")]
    file: String,
    /// Token budget for the block.
    #[arg(long, value_name = "N")]
    budget: Option<usize>,
    /// Count tokens with this model's encoding [default: cl100k_base].
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// Print the render result as JSON (text, tokens, shortened, omitted).
    #[arg(long)]
    json: bool,
    /// Layout: block (`<handoff ...>`, the default) or prompt-text (the
    /// Haskell design's `=== Context from Previous Agent ===` form).
    #[arg(long, value_enum, default_value = "block")]
    format: CliFormat,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum CliFormat {
    Block,
    PromptText,
}

#[derive(clap::Args)]
pub(crate) struct CheckArgs {
    /// Handoff JSON; "-" for standard input.
    #[arg(value_name = "FILE")]
    file: String,
    /// Print the normalized handoff as JSON when it is valid.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(cmd: Command) -> Result<ExitCode, Fatal> {
    match cmd {
        Command::Render(a) => render(a),
        Command::Check(a) => check(a),
    }
}

fn load(file: &str) -> Result<Result<Handoff, turnfit::Error>, Fatal> {
    let text = input::read_text(file).map_err(Fatal)?;
    Ok(Handoff::parse(&text))
}

fn render(a: RenderArgs) -> Result<ExitCode, Fatal> {
    let h = load(&a.file)?.map_err(|e| Fatal(format!("{}: {e}", a.file)))?;
    let format = match a.format {
        CliFormat::Block => RenderFormat::Block,
        CliFormat::PromptText => RenderFormat::PromptText,
    };
    let options = RenderOptions { budget: a.budget, model: a.model, format: Some(format), ..RenderOptions::default() };
    let r = h.render(&options).map_err(|e| Fatal(format!("{}: {e}", a.file)))?;
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&r).map_err(|e| Fatal(e.to_string()))?);
        return Ok(ExitCode::SUCCESS);
    }
    out!("{}", r.text);
    if let Some(b) = a.budget {
        eprintln!("handoff: {} tokens of {b}", r.tokens);
    }
    for s in &r.shortened {
        eprintln!("shortened: key_outputs[{}] ({} -> {} tokens)", s.index, s.original_tokens, s.tokens);
    }
    for i in &r.omitted {
        eprintln!("omitted: key_outputs[{i}]");
    }
    Ok(ExitCode::SUCCESS)
}

fn check(a: CheckArgs) -> Result<ExitCode, Fatal> {
    match load(&a.file)? {
        Ok(h) => {
            if a.json {
                outln!("{}", serde_json::to_string_pretty(&h).map_err(|e| Fatal(e.to_string()))?);
            } else {
                outln!(
                    "{}: valid handoff {} from {} to {}, {} key outputs, {} custom fields",
                    a.file,
                    h.version,
                    h.metadata.from_agent,
                    h.metadata.to_agent,
                    h.key_outputs.len(),
                    h.custom_fields.len()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("turnfit: {}: {e}", a.file);
            Ok(ExitCode::from(1))
        }
    }
}
