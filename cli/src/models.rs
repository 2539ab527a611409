//! `turnfit models`.

use std::process::ExitCode;

use turnfit::ModelRegistry;

use crate::out::outln;
use crate::Fatal;

#[derive(clap::Args)]
pub(crate) struct Args {
    /// Show what this model name resolves to instead of listing the table.
    #[arg(value_name = "MODEL")]
    model: Option<String>,
    /// Print JSON (one object per line).
    #[arg(long)]
    json: bool,
    /// With MODEL: a custom model's figures (see `turnfit fit --help`).
    #[command(flatten)]
    custom: crate::window::CustomModelArgs,
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_owned(), |n| n.to_string())
}

pub(crate) fn run(args: Args) -> Result<ExitCode, Fatal> {
    let registry = ModelRegistry::builtin();
    if let Some(name) = &args.model {
        let info = registry.resolve(name, &args.custom.custom()?)?;
        if args.json {
            outln!("{}", turnfit::frontend::to_json(&info)?);
        } else {
            outln!("model:             {}", info.model);
            outln!("matched:           {}", info.matched.as_deref().unwrap_or("-"));
            outln!("source:            {}", info.source.as_str());
            outln!("family:            {}", info.family.as_deref().unwrap_or("-"));
            outln!("encoding:          {}", info.encoding);
            outln!("context window:    {}", opt(info.context_window));
            outln!("max output tokens: {}", opt(info.max_output_tokens));
            outln!("counts:            {}", if info.exact { "exact" } else { "estimate" });
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.json {
        for entry in registry.list_json() {
            outln!("{}", turnfit::frontend::to_json(&entry)?);
        }
        return Ok(ExitCode::SUCCESS);
    }
    outln!("{:<26} {:<12} {:>9} {:>9}  counts", "model", "encoding", "context", "output");
    for (p, _) in registry.list() {
        let counts = if p.exact { "exact" } else { "estimate" };
        outln!(
            "{:<26} {:<12} {:>9} {:>9}  {counts}",
            p.name,
            p.encoding.name(),
            opt(p.context_window),
            opt(p.max_output_tokens)
        );
    }
    Ok(ExitCode::SUCCESS)
}
