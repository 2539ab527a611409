//! Prints, for each committed trajectory and chat fixture, the size of the
//! span a summary replaces (after the task, before the last round) against
//! the size of its deterministic digest at several budgets; with
//! `--show NAME` it prints that fixture's digest at 1,000 tokens instead.
//! Used for docs/benchmarks.md:
//!
//! ```sh
//! cargo run -q -p turnfit --example digest_table
//! cargo run -q -p turnfit --example digest_table -- --show mini-swe-agent-astroid-1866.openai.json
//! ```

use std::path::Path;

use turnfit::chat::{Conversation, Role};
use turnfit::window::{build_digest, round_starts, DigestSection};
use turnfit::window::{Accountant, Framing};
use turnfit::{Encoding, Tokenizer};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let show = std::env::args().skip_while(|a| a != "--show").nth(1);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let tok = Tokenizer::new(Encoding::O200kBase)?;
    let acct = Accountant::new(tok, Framing::for_encoding(Encoding::O200kBase));
    let budgets = [500, 1000, 4000];
    if show.is_none() {
        println!(
            "| fixture | span messages | span tokens | calls | errors | digest @500 | @1000 | @4000 (share of span) |"
        );
        println!("|---|---|---|---|---|---|---|---|");
    }
    for dir in ["trajectories", "chats"] {
        let mut paths: Vec<_> =
            std::fs::read_dir(root.join(dir))?.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>()?;
        paths.retain(|p| p.extension().is_some_and(|e| e == "json") && !p.ends_with("manifest.json"));
        paths.sort();
        for p in paths {
            let name = p.file_name().unwrap_or_default().to_string_lossy().into_owned();
            let c = Conversation::parse(&std::fs::read_to_string(&p)?, None)?;
            let task = c.messages.iter().position(|m| m.role == Role::User).map_or(0, |i| i + 1);
            let last = round_starts(&c.messages).last().copied().unwrap_or(0).max(task);
            let span = &c.messages[task..last];
            let span_tokens: usize = span.iter().map(|m| acct.message(m)).sum::<Result<_, _>>()?;
            let starts = round_starts(span);
            if show.as_deref() == Some(name.as_str()) {
                print!("{}", build_digest(span, &starts, &tok, 1000, &DigestSection::ALL)?.text);
                return Ok(());
            }
            let mut cells = Vec::new();
            let mut counts = (0, 0);
            for b in budgets {
                let d = build_digest(span, &starts, &tok, b, &DigestSection::ALL)?;
                counts = (d.calls, d.errors);
                let n = tok.count(&d.text)?;
                cells.push(if b == 4000 {
                    format!("{n} ({:.0}%)", 100.0 * n as f64 / span_tokens.max(1) as f64)
                } else {
                    n.to_string()
                });
            }
            println!(
                "| `{name}` | {} | {span_tokens} | {} | {} | {} |",
                span.len(),
                counts.0,
                counts.1,
                cells.join(" | ")
            );
        }
    }
    Ok(())
}
