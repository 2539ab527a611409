//! Helper for the LangChain comparison: turnfit's own view of a conversation.
//!
//!   windowtool count [MODEL] < conversation.json
//!       prints {"tokens": N, "messages": M, "issues": K, "issue_kinds": [...]}
//!       where N is `Accountant::conversation` (prompt tokens: messages, tools,
//!       framing and the 3 reply-priming tokens) and the issues are
//!       `turnfit::window::validate`'s (orphaned calls/results, ...).
//!   windowtool fit MAX_TOKENS RESERVE [TOOL_OUTPUT_MAX] < conversation.json > out.json
//!       runs `turnfit::window::fit` (gpt-4o, recency) once and writes the
//!       result; the report's figures go to stderr.
//!
//! MODEL defaults to gpt-4o.

use std::io::Read;
use std::process::ExitCode;

use turnfit::chat::Conversation;
use turnfit::window::{fit, validate, Accountant, FitOptions, Policy, Strategy};
use turnfit::ModelRegistry;

fn stdin() -> String {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).expect("read stdin");
    s
}

fn run(args: &[String]) -> turnfit::Result<()> {
    match args.first().map(String::as_str) {
        Some("count") => {
            let model = args.get(1).map_or("gpt-4o", String::as_str);
            let conv = Conversation::parse(&stdin(), None)?;
            let (acct, _) = Accountant::for_model(&ModelRegistry::builtin(), model)?;
            let tokens = acct.conversation(&conv)?;
            let issues = validate(&conv);
            let kinds: Vec<String> = issues.iter().map(|i| format!("\"{:?}@{}\"", i.kind, i.index)).collect();
            println!(
                "{{\"tokens\": {tokens}, \"messages\": {}, \"issues\": {}, \"issue_kinds\": [{}]}}",
                conv.messages.len(),
                issues.len(),
                kinds.join(", ")
            );
            Ok(())
        }
        Some("fit") => {
            let num = |i: usize| args.get(i).map(|s| s.parse::<usize>().expect("a number"));
            let opts = FitOptions {
                model: "gpt-4o".into(),
                max_tokens: num(1),
                reserve_output: num(2),
                policy: Policy { strategy: Strategy::Recency, tool_output_max: num(3), ..Policy::default() },
                ..FitOptions::default()
            };
            let (conv, r) = fit(&stdin(), &opts)?;
            println!("{}", conv.to_json()?);
            eprintln!(
                "tokens_before {} tokens_after {} limit_tokens {} messages {} -> {} changes {}",
                r.tokens_before,
                r.tokens_after,
                r.limit_tokens,
                r.messages_before,
                r.messages_after,
                r.changes.len()
            );
            Ok(())
        }
        _ => {
            eprintln!("usage: windowtool count [MODEL] < conv.json | windowtool fit MAX RESERVE [TOOL_OUTPUT_MAX] < conv.json");
            std::process::exit(2)
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("windowtool: {e}");
            ExitCode::FAILURE
        }
    }
}
