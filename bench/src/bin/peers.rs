//! In-process counting, after load, against the exact peers (issue 36).
//!
//!     cargo build --release --bin peers
//!     target/release/peers [REPS] [ENGINE ...]     # default 7, every engine
//!
//! Inputs: `bench/inputs/big/*.txt` from `python3 bench/gen_big_inputs.py`.
//! For each encoding every engine is loaded once (load time printed), then
//! every input is counted by every engine and the counts must agree with
//! the reference before anything is timed: bpe-openai for the 8 MiB run of
//! `a` (tiktoken-rs's merge is quadratic in a piece that long) and
//! tiktoken-rs (OpenAI's tiktoken core) for the rest. Then each engine counts
//! each input REPS times, engines interleaved round by round so that load on
//! the shared machine falls on all of them alike; the median CPU time of
//! the counting thread (the machine is shared; waiting for a core is not
//! counting) is printed, with the ratio of the fastest peer to turnfit.

use std::time::Instant;

use turnfit_bench::{inputs_dir, thread_cpu_ns};

const INPUTS: [&str; 5] = ["prose", "code", "a", "unique_prose", "unique_code"];

enum Peer {
    Turnfit(turnfit::Tokenizer),
    Toktok(Box<toktok::Tokenizer>),
    Wordchipper(std::sync::Arc<wordchipper::Tokenizer<u32>>),
    TiktokenRs(tiktoken_rs::CoreBPE),
    BpeOpenai(&'static bpe_openai::Tokenizer),
}

impl Peer {
    fn load(name: &str, encoding: &str) -> Peer {
        let o200k = encoding == "o200k_base";
        match name {
            "turnfit" => Peer::Turnfit(turnfit::Tokenizer::from_name(encoding).unwrap()),
            "toktok-rs" => Peer::Toktok(Box::new(toktok::Tokenizer::builtin(encoding).unwrap())),
            "wordchipper" => {
                use wordchipper::pretrained::openai::OATokenizer;
                let (oa, file) = if o200k {
                    (OATokenizer::O200kBase, "o200k_base.tiktoken")
                } else {
                    (OATokenizer::Cl100kBase, "cl100k_base.tiktoken")
                };
                let path = tiktoken_file(file);
                let vocab: wordchipper::UnifiedTokenVocab<u32> = oa.load_path(path).unwrap();
                Peer::Wordchipper(wordchipper::TokenizerOptions::default().build(std::sync::Arc::new(vocab)))
            }
            "tiktoken-rs" => {
                Peer::TiktokenRs(if o200k { tiktoken_rs::o200k_base() } else { tiktoken_rs::cl100k_base() }.unwrap())
            }
            "bpe-openai" => Peer::BpeOpenai(if o200k { bpe_openai::o200k_base() } else { bpe_openai::cl100k_base() }),
            other => panic!("unknown engine {other}"),
        }
    }

    fn count(&self, text: &str) -> usize {
        match self {
            Peer::Turnfit(t) => t.count(text).unwrap(),
            Peer::Toktok(t) => t.count(text.as_bytes()),
            Peer::Wordchipper(t) => {
                // No counting API: the ids are materialized. Special-token text
                // is ordinary text, as for every other engine.
                t.encoder().try_encode(text, Some(&wordchipper::vocab::SpecialFilter::IncludeNone)).unwrap().len()
            }
            Peer::TiktokenRs(t) => t.count_ordinary(text),
            Peer::BpeOpenai(t) => t.count(text),
        }
    }
}

/// The OpenAI rank file that tiktoken-rs ships (wordchipper reads it).
fn tiktoken_file(name: &str) -> std::path::PathBuf {
    let home = std::env::var("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| std::path::PathBuf::from(std::env::var("HOME").unwrap()).join(".cargo"));
    for reg in std::fs::read_dir(home.join("registry/src")).unwrap() {
        let p = reg.unwrap().path().join("tiktoken-rs-0.12.1/assets").join(name);
        if p.exists() {
            return p;
        }
    }
    panic!("{name} not found: build the bench crate first (it fetches tiktoken-rs 0.12.1)")
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// `peers --once ENGINE ENCODING INPUT`: load one engine, read one input and
/// count it once, for timing whole processes (`bench/whole_process.sh`).
fn once(mut args: impl Iterator<Item = String>) {
    let (engine, encoding, input) = (args.next().unwrap(), args.next().unwrap(), args.next().unwrap());
    let path = inputs_dir().join("big").join(format!("{input}.txt"));
    let read = || std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if engine == "tiktoken" {
        // The `tiktoken` crate (4.1.2), through the criterion harness's loader.
        let t = turnfit_bench::load(&engine, &encoding);
        println!("{}", t.count(&read()));
        return;
    }
    let p = Peer::load(&engine, &encoding);
    println!("{}", p.count(&read()));
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("--once") {
        return once(std::env::args().skip(2));
    }
    let mut args = std::env::args().skip(1);
    let reps: usize = args.next().map(|s| s.parse().unwrap()).unwrap_or(7);
    let mut engines: Vec<String> = args.collect();
    if engines.is_empty() {
        engines = ["turnfit", "toktok-rs", "wordchipper"].map(String::from).to_vec();
    }
    let dir = inputs_dir().join("big");
    // PEERS_INPUTS / PEERS_ENCODINGS (comma-separated) narrow the run.
    let only = |var: &str, name: &str| std::env::var(var).map_or(true, |v| v.split(',').any(|x| x == name));
    let texts: Vec<(&str, String)> = INPUTS
        .iter()
        .filter(|n| only("PEERS_INPUTS", n))
        .map(|n| {
            let p = dir.join(format!("{n}.txt"));
            (
                *n,
                std::fs::read_to_string(&p)
                    .unwrap_or_else(|e| panic!("{}: {e} (run bench/gen_big_inputs.py)", p.display())),
            )
        })
        .collect();
    println!("load average {}", turnfit_bench::loadavg());
    for encoding in ["cl100k_base", "o200k_base"].into_iter().filter(|e| only("PEERS_ENCODINGS", e)) {
        let mut peers = Vec::new();
        for e in &engines {
            let t = Instant::now();
            let p = Peer::load(e, encoding);
            // First use includes building whatever the engine builds lazily.
            p.count("warm up: the first call, one two three");
            println!("{encoding} {e}: load {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
            peers.push((e.as_str(), p));
        }
        let check_only = std::env::var_os("PEERS_NO_CHECK").is_none();
        for (name, text) in &texts {
            if check_only {
                let (rname, reference) =
                    if *name == "a" { ("bpe-openai", "bpe-openai") } else { ("tiktoken-rs", "tiktoken-rs") };
                let want = Peer::load(reference, encoding).count(text);
                for (e, p) in &peers {
                    let got = p.count(text);
                    assert_eq!(got, want, "{encoding} {name}: {e} counts {got}, {rname} {want}");
                }
                println!("{encoding} {name}: {want} tokens, every engine agrees with {rname}");
            }
            let mut times: Vec<Vec<f64>> = vec![Vec::new(); peers.len()];
            for _ in 0..reps {
                for (i, (_, p)) in peers.iter().enumerate() {
                    let t = thread_cpu_ns();
                    std::hint::black_box(p.count(std::hint::black_box(text)));
                    times[i].push((thread_cpu_ns() - t) as f64 * 1e-9);
                }
            }
            let meds: Vec<f64> = times.into_iter().map(median).collect();
            let mut line = format!("| {} {} |", &encoding[..encoding.find('_').unwrap()], name.replace('_', " "));
            for m in &meds {
                line += &format!(" {m:.4} |");
            }
            if peers.len() > 1 {
                let best_peer = meds[1..].iter().cloned().fold(f64::INFINITY, f64::min);
                line += &format!(" {:.2}x |", best_peer / meds[0]);
            }
            println!("{line}");
        }
    }
}
