//! `turnfit skills list|show|check`: open a skills folder with the core and
//! print what it found.

use std::path::Path;
use std::process::ExitCode;

use turnfit::skills::{IndexOptions, LayoutChoice, OpenOptions, Severity, SkillSet};

use crate::out::{out, outln};
use crate::Fatal;

#[derive(clap::Subcommand)]
pub(crate) enum Command {
    /// List the skills of a folder; with --budget, print the skills index a
    /// system prompt would get, and report what was shortened or left out.
    List(ListArgs),
    /// Print the body of one skill.
    Show(ShowArgs),
    /// Check every skill against the format rules; exit 1 if any is invalid.
    Check(DirArgs),
}

#[derive(clap::Args)]
pub(crate) struct DirArgs {
    /// The skills folder (`<name>/SKILL.md` and/or `<name>.md` entries).
    #[arg(value_name = "DIR")]
    dir: String,
    /// Count tokens with this model's encoding [default: cl100k_base].
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// Which layouts to look for: `nested` (`<name>/SKILL.md`), `flat`
    /// (`<name>.md`) or `auto` (both; `.md` files without front-matter,
    /// such as a README, are skipped).
    #[arg(long, value_name = "LAYOUT", default_value = "auto", value_parser = ["auto", "nested", "folder", "flat"])]
    layout: String,
}

#[derive(clap::Args)]
pub(crate) struct ListArgs {
    #[command(flatten)]
    common: DirArgs,
    /// Render the index under this many tokens.
    #[arg(long, value_name = "N")]
    budget: Option<usize>,
    /// Print JSON: the listing, or with --budget the index result.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
pub(crate) struct ShowArgs {
    #[command(flatten)]
    common: DirArgs,
    /// The skill's name (its folder name or file stem) or label.
    #[arg(value_name = "NAME")]
    name: String,
    /// Print JSON `{"name", "text", "tokens"}` instead of the text.
    #[arg(long)]
    json: bool,
}

fn open(a: &DirArgs) -> Result<SkillSet, Fatal> {
    let layout = match a.layout.as_str() {
        "nested" | "folder" => LayoutChoice::Folder,
        "flat" => LayoutChoice::Flat,
        _ => LayoutChoice::Auto,
    };
    let options = OpenOptions { model: a.model.clone(), layout, ..OpenOptions::default() };
    SkillSet::open(Path::new(&a.dir), &options).map_err(|e| Fatal(format!("{}: {e}", a.dir)))
}

fn json_out(v: &impl serde::Serialize) -> Result<(), Fatal> {
    outln!("{}", serde_json::to_string_pretty(v).map_err(|e| Fatal(e.to_string()))?);
    Ok(())
}

pub(crate) fn run(cmd: Command) -> Result<ExitCode, Fatal> {
    match cmd {
        Command::List(a) => list(a),
        Command::Show(a) => show(a),
        Command::Check(a) => check(a),
    }
}

fn list(a: ListArgs) -> Result<ExitCode, Fatal> {
    let set = open(&a.common)?;
    if let Some(budget) = a.budget {
        let r = set.render_index(&IndexOptions { budget: Some(budget), ..IndexOptions::default() })?;
        if a.json {
            json_out(&r)?;
        } else {
            out!("{}", r.text);
            eprintln!("index: {} tokens of {budget}, {} skills included", r.tokens, r.included.len());
            for s in &r.shortened {
                eprintln!("shortened: {} ({} -> {} tokens)", s.name, s.original_tokens, s.tokens);
            }
            for o in &r.omitted {
                eprintln!(
                    "omitted: {} ({}{})",
                    o.name,
                    o.reason,
                    if o.tokens > 0 { format!(", {} tokens", o.tokens) } else { String::new() }
                );
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let listing = set.listing();
    if a.json {
        json_out(&listing)?;
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "{:<24} {:<6} {:<7} {:>7} {:>8}  {:<12} description",
        "name",
        "layout",
        "status",
        "tokens",
        "bytes",
        "category"
    );
    for s in &listing.skills {
        let (category, description) =
            s.header.as_ref().map_or(("-", ""), |h| (h.category.as_deref().unwrap_or("-"), h.description.as_str()));
        let description: String = description.split_whitespace().collect::<Vec<_>>().join(" ");
        let short: String = description.chars().take(60).collect();
        let ellipsis = if short.len() < description.len() { "…" } else { "" };
        outln!(
            "{:<24} {:<6} {:<7} {:>7} {:>8}  {:<12} {short}{ellipsis}",
            s.name,
            match s.layout {
                turnfit::skills::Layout::Folder => "folder",
                turnfit::skills::Layout::Flat => "flat",
            },
            if s.valid { "ok" } else { "invalid" },
            s.header_tokens,
            s.body_bytes.map_or_else(|| "-".to_owned(), |b| b.to_string()),
            category,
        );
    }
    outln!(
        "{} skills: {} valid, {} invalid (tokens: the index line, counted with {})",
        listing.skills.len(),
        listing.valid,
        listing.invalid,
        listing.encoding
    );
    Ok(ExitCode::SUCCESS)
}

fn show(a: ShowArgs) -> Result<ExitCode, Fatal> {
    let set = open(&a.common)?;
    let body = set.body(&a.name).map_err(|e| Fatal(format!("{}: {e}", a.name.escape_debug())))?;
    if a.json {
        json_out(&*body)?;
    } else {
        out!("{}", body.text);
    }
    Ok(ExitCode::SUCCESS)
}

fn check(a: DirArgs) -> Result<ExitCode, Fatal> {
    let set = open(&a)?;
    let listing = set.listing();
    for s in &listing.skills {
        for d in &s.diagnostics {
            let sev = match d.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            outln!("{}: {sev} [{}] {}", s.path, d.code, d.message);
        }
    }
    for i in &listing.ignored {
        outln!("{}: info: skipped ({})", i.path, i.reason);
    }
    outln!("{} skills: {} valid, {} invalid", listing.skills.len(), listing.valid, listing.invalid);
    Ok(if listing.invalid > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
