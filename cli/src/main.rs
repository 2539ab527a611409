//! `turnfit`: the command line over the turnfit core. It parses arguments,
//! reads files and prints; every decision about tokens and models is the
//! core's.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod agents;
mod assemble;
mod chat_model;
mod chat_render;
mod classify;
mod codec;
mod count;
mod file_tokenizer;
mod handoff;
mod input;
mod model_files;
mod models;
mod out;
mod skills;
mod summarizer;
mod window;

/// Exact token counts and context-window tools for LLM agents.
#[derive(Parser)]
#[command(name = "turnfit", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once per process: the size of the `fit` variant costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Count tokens in files (or standard input) exactly as OpenAI's tiktoken does.
    Count(count::Args),
    /// Encode text to token ids (a JSON array), with tiktoken's special-token options.
    Encode(codec::EncodeArgs),
    /// Decode token ids to text, to their raw bytes (--bytes), or with character offsets (--offsets).
    Decode(codec::DecodeArgs),
    /// Render a conversation with a model's own chat template (from its
    /// tokenizer files, or --chat-template) and print the prompt byte for byte.
    Render(chat_render::Args),
    /// List the model registry, or show the profile a model name resolves to.
    Models(models::Args),
    /// Report a conversation's token totals by component and whether it fits.
    Preflight(window::PreflightArgs),
    /// Make a conversation fit a token budget: print it compacted (same
    /// shape as the input) and report what was dropped, cut or repaired.
    Fit(window::FitArgs),
    /// Fix tool-call structure (unanswered calls, stray or misplaced results);
    /// print the repaired conversation and a manifest of every change.
    Repair(window::RepairArgs),
    /// Skill folders: list (or render the index under a budget), show a
    /// body, check against the format rules.
    #[command(subcommand)]
    Skills(skills::Command),
    /// Handoffs between agents: render as a prompt block, or check.
    #[command(subcommand)]
    Handoff(handoff::Command),
    /// Assemble a prompt from sections and a template under a token budget.
    Assemble(assemble::Args),
    /// Classify a provider error (status, body, headers): category, severity,
    /// whether to retry (and after how long), compact, repair the history, or fail.
    Classify(classify::Args),
    /// The retry decision after N failures: the delay (exponential backoff,
    /// full jitter or none) or give up.
    Backoff(agents::BackoffArgs),
    /// Replay recorded tool-span events through a tracer: per-tool metrics
    /// (p50/p95/p99), the recent records, overdue calls.
    Trace(agents::TraceArgs),
    /// Enter agents on a call stack (empty, or --stack FILE): print the stack, or refuse
    /// a cycle or a call past the maximum depth (default 5) with exit 1.
    Callstack(agents::CallStackArgs),
}

/// A failure that ends the command: printed as one line on stderr.
pub(crate) struct Fatal(pub String);

impl From<turnfit::Error> for Fatal {
    fn from(e: turnfit::Error) -> Self {
        Fatal(e.to_string())
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Count(args) => count::run(args),
        Command::Encode(args) => codec::encode(args),
        Command::Decode(args) => codec::decode(args),
        Command::Render(args) => chat_render::run(args),
        Command::Models(args) => models::run(args),
        Command::Preflight(args) => window::preflight(args),
        Command::Repair(args) => window::repair_cmd(args),
        Command::Fit(args) => window::fit_cmd(args),
        Command::Skills(cmd) => skills::run(cmd),
        Command::Handoff(cmd) => handoff::run(cmd),
        Command::Classify(args) => classify::run(args),
        Command::Assemble(args) => assemble::run(args),
        Command::Backoff(args) => agents::backoff(args),
        Command::Trace(args) => agents::trace(args),
        Command::Callstack(args) => agents::callstack(args),
    };
    match result {
        Ok(code) => code,
        Err(Fatal(message)) => {
            eprintln!("turnfit: {message}");
            ExitCode::from(2)
        }
    }
}
