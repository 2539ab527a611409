//! `turnfit classify`: what a provider error means and what to do about it.
//! Reads the response body (a file, or standard input), hands it with the
//! status and headers to the core's classifier, prints the classification.

use std::process::ExitCode;

use turnfit::recovery::{classify, Provider};

use crate::out::outln;
use crate::{input, Fatal};

#[derive(clap::Args)]
pub(crate) struct Args {
    /// Who returned the error: openai, azure, anthropic, bedrock, gemini, ollama or other.
    #[arg(long, value_name = "P")]
    provider: String,
    /// The HTTP status (0 when no response arrived).
    #[arg(long, value_name = "N")]
    status: u16,
    /// A response header, "name: value" (repeatable), e.g. --header 'retry-after: 3'.
    #[arg(long = "header", value_name = "'NAME: VALUE'")]
    headers: Vec<String>,
    /// The response body (JSON or text); standard input when absent or "-".
    #[arg(value_name = "BODY_FILE")]
    body: Option<String>,
}

pub(crate) fn run(args: Args) -> Result<ExitCode, Fatal> {
    let provider = Provider::from_name(&args.provider)?;
    let mut headers = Vec::with_capacity(args.headers.len());
    for h in &args.headers {
        let (name, value) = h.split_once(':').ok_or_else(|| Fatal(format!("--header '{h}' is not 'name: value'")))?;
        headers.push((name.trim(), value.trim()));
    }
    let path = args.body.as_deref().unwrap_or("-");
    let body = input::read_text(path).map_err(Fatal)?;
    let c = classify(provider, args.status, &body, &headers)?;
    let text = serde_json::to_string_pretty(&c).map_err(|e| Fatal(e.to_string()))?;
    outln!("{text}");
    Ok(ExitCode::SUCCESS)
}
