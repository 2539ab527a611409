//! `fit` on a transcript file, the core alone, for profiling (issue 36:
//! where does `turnfit.fit`'s time go on 12-44 MB agent transcripts?).
//! Counts the conversation, then fits it to a third of its tokens with
//! gpt-4o (what `bench/python/bench.py --fit-only` does), `--runs` times,
//! and prints each run's time split into parse+fit and freeing.
//!
//! ```sh
//! python3 -c 'import json,sys; sys.path.insert(0,"bindings/python/tests"); from agent_loop import agent_loop; \
//!   open("/tmp/conv2700.json","w").write(json.dumps(agent_loop(2700),ensure_ascii=False,separators=(",",":")))'
//! cargo run --release -q -p turnfit --example fit_profile -- /tmp/conv2700.json --runs 5
//! valgrind --tool=callgrind target/debug/examples/fit_profile /tmp/conv2700.json --runs 1
//! ```

use std::time::Instant;

use turnfit::chat::Conversation;
use turnfit::window::{fit_json_value, Accountant};
use turnfit::ModelRegistry;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: fit_profile FILE [--runs N]");
    let runs: usize =
        args.iter().position(|a| a == "--runs").and_then(|i| args.get(i + 1)).and_then(|v| v.parse().ok()).unwrap_or(3);
    let text = std::fs::read_to_string(path).expect("read the transcript");
    let reg = ModelRegistry::builtin();
    let (acct, _) = Accountant::for_model(&reg, "gpt-4o").expect("gpt-4o");
    let full = acct.conversation(&Conversation::parse(&text, None).expect("parse")).expect("count");
    let options = format!(r#"{{"model":"gpt-4o","max_tokens":{}}}"#, full / 3);
    for _ in 0..runs {
        let t = Instant::now();
        let (v, report) = fit_json_value(&reg, &text, &options).expect("fit");
        let fitted = t.elapsed();
        let t = Instant::now();
        drop(v);
        let freed = t.elapsed();
        println!(
            "{} -> {} tokens, {} messages: fit {:.1} ms, free {:.1} ms",
            report.tokens_before,
            report.tokens_after,
            report.messages_after,
            fitted.as_secs_f64() * 1e3,
            freed.as_secs_f64() * 1e3
        );
    }
}
