//! `ctxkit models`.

use std::process::ExitCode;

use ctxkit::ModelRegistry;

use crate::Fatal;

#[derive(clap::Args)]
pub(crate) struct Args {
    /// Show what this model name resolves to instead of listing the table.
    #[arg(value_name = "MODEL")]
    model: Option<String>,
    /// Print JSON (one object per line).
    #[arg(long)]
    json: bool,
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_owned(), |n| n.to_string())
}

pub(crate) fn run(args: Args) -> Result<ExitCode, Fatal> {
    let registry = ModelRegistry::builtin();
    if let Some(name) = &args.model {
        let info = registry.lookup(name)?;
        if args.json {
            println!("{}", ctxkit::json::to_string(&info)?);
        } else {
            println!("model:             {}", info.model);
            println!("matched:           {}", info.matched.as_deref().unwrap_or("-"));
            println!("source:            {}", info.source.as_str());
            println!("family:            {}", info.family.as_deref().unwrap_or("-"));
            println!("encoding:          {}", info.encoding);
            println!("context window:    {}", opt(info.context_window));
            println!("max output tokens: {}", opt(info.max_output_tokens));
            println!("counts:            {}", if info.exact { "exact" } else { "estimate" });
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.json {
        for entry in registry.list_json() {
            println!("{entry}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    println!("{:<26} {:<12} {:>9} {:>9}  counts", "model", "encoding", "context", "output");
    for (p, _) in registry.list() {
        let counts = if p.exact { "exact" } else { "estimate" };
        println!(
            "{:<26} {:<12} {:>9} {:>9}  {counts}",
            p.name,
            p.encoding.name(),
            opt(p.context_window),
            opt(p.max_output_tokens)
        );
    }
    Ok(ExitCode::SUCCESS)
}
