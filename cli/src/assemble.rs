//! `turnfit assemble REQUEST.json`: the core's prompt assembly on a request
//! file (docs/formats.md, "Prompt assembly"). Prints the prompt and reports
//! each section on stderr, or the whole result with --json.

use std::process::ExitCode;

use turnfit::assemble::{assemble, Request};

use crate::out::{out, outln};
use crate::{input, Fatal};

#[derive(clap::Args)]
pub(crate) struct Args {
    /// The request JSON; "-" for standard input.
    #[arg(value_name = "REQUEST")]
    file: String,
    /// Count tokens with this model's encoding.
    #[arg(long, value_name = "NAME", conflicts_with = "encoding")]
    model: Option<String>,
    /// Count tokens with this encoding [default: o200k_base].
    #[arg(long, value_name = "NAME")]
    encoding: Option<String>,
    /// Print the result as JSON (text, tokens, budget, template, sections).
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(a: Args) -> Result<ExitCode, Fatal> {
    let text = input::read_text(&a.file).map_err(Fatal)?;
    let at = |e: turnfit::Error| Fatal(format!("{}: {e}", a.file));
    let tok =
        turnfit::models::select_tokenizer(a.model.as_deref(), Some(a.encoding.as_deref().unwrap_or("o200k_base")))
            .map_err(Fatal::from)?;
    let req: Request = turnfit::frontend::parse_json("assembly request", &text).map_err(at)?;
    let r = assemble(&req, &tok).map_err(at)?;
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&r).map_err(|e| Fatal(e.to_string()))?);
        return Ok(ExitCode::SUCCESS);
    }
    out!("{}\n", r.text);
    eprintln!("assemble: template {}, {} tokens of {}", r.template, r.tokens, r.budget);
    for s in &r.sections {
        eprintln!("{}: {} ({} -> {} tokens)", s.name, s.status, s.original_tokens, s.tokens);
    }
    Ok(ExitCode::SUCCESS)
}
