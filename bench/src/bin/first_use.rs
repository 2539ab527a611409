//! First use: time to construct each engine's encoding in a fresh process.
//!
//!     cargo run --release --bin first_use            # from bench/
//!
//! For every engine and encoding, the binary spawns itself `REPS` times as
//! `first_use --child ENGINE ENCODING`. The child measures, with nothing
//! loaded before: constructing the encoding object (turnfit: `Tokenizer::new`,
//! tiktoken-rs: `cl100k_base()` / `o200k_base()`, bpe-openai: first access
//! of its `LazyLock`, tiktoken 4.x: `encoding::cl100k_base()` /
//! `o200k_base()`) followed by one count of "hello", and its resident memory
//! (/proc/self/statm) before and after. The parent prints the median of the
//! spawns (runs are interleaved: rep 1 of every cell, then rep 2, ...) and
//! writes `target/turnfit-bench/first_use.json` for `report.py`. Times are
//! wall clock, plus the child thread's CPU time for construct + count (less
//! sensitive to other load on the machine).

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use turnfit_bench::{load, statm, thread_cpu_ns, Loaded, ENCODINGS, ENGINES};

const REPS: usize = 5;

fn child(engine: &str, encoding: &str) {
    let (rss0, anon0) = statm().unwrap_or((0, 0));
    let c0 = thread_cpu_ns();
    let t0 = Instant::now();
    let loaded = load(engine, encoding);
    let t1 = Instant::now();
    let n = loaded.count(std::hint::black_box("hello"));
    let t2 = Instant::now();
    let c2 = thread_cpu_ns();
    let (rss1, anon1) = statm().unwrap_or((0, 0));
    assert_eq!(n, 1, "{engine} {encoding}: \"hello\" should be one token");
    let reported = match &loaded {
        Loaded::Turnfit(t) => t.memory_bytes() as i64,
        _ => -1,
    };
    println!(
        "construct_ns={} total_ns={} cpu_ns={} rss_delta={} anon_delta={} reported_bytes={}",
        (t1 - t0).as_nanos(),
        (t2 - t0).as_nanos(),
        c2 - c0,
        rss1 as i64 - rss0 as i64,
        anon1 as i64 - anon0 as i64,
        reported
    );
}

fn field(line: &str, key: &str) -> i64 {
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in child output {line:?}"))
}

fn median(v: &mut [i64]) -> i64 {
    v.sort_unstable();
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 4 && args[1] == "--child" {
        child(&args[2], &args[3]);
        return;
    }
    let exe = std::env::current_exe().expect("current_exe");
    // samples[cell] = (construct_ns, total_ns, process_ns, rss, anon, reported, cpu_ns)
    let cells: Vec<(&str, &str)> =
        ENGINES.iter().flat_map(|e| ENCODINGS.iter().map(move |c| (*e, *c))).collect();
    let mut samples: Vec<[Vec<i64>; 7]> = cells.iter().map(|_| Default::default()).collect();
    for _ in 0..REPS {
        for (i, (engine, enc)) in cells.iter().enumerate() {
            let t = Instant::now();
            let out = Command::new(&exe).args(["--child", engine, enc]).output().expect("spawn child");
            let process_ns = t.elapsed().as_nanos() as i64;
            assert!(out.status.success(), "child {engine} {enc} failed: {}", String::from_utf8_lossy(&out.stderr));
            let line = String::from_utf8_lossy(&out.stdout);
            let s = &mut samples[i];
            s[0].push(field(&line, "construct_ns"));
            s[1].push(field(&line, "total_ns"));
            s[2].push(process_ns);
            s[3].push(field(&line, "rss_delta"));
            s[4].push(field(&line, "anon_delta"));
            s[5].push(field(&line, "reported_bytes"));
            s[6].push(field(&line, "cpu_ns"));
        }
    }
    println!("First use in a fresh process, median of {REPS} spawns:\n");
    println!("| engine | encoding | construct (ms) | construct + count(\"hello\") (ms) | same, CPU time (ms) | whole process (ms) | RSS delta (MiB) | anon RSS delta (MiB) |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    let mut json = Vec::new();
    let mut notes = Vec::new();
    for (i, (engine, enc)) in cells.iter().enumerate() {
        let s = &mut samples[i];
        let m: Vec<i64> = s.iter_mut().map(|v| median(v)).collect();
        let mib = |b: i64| b as f64 / (1024.0 * 1024.0);
        println!(
            "| {engine} | {enc} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
            m[0] as f64 / 1e6,
            m[1] as f64 / 1e6,
            m[6] as f64 / 1e6,
            m[2] as f64 / 1e6,
            mib(m[3]),
            mib(m[4])
        );
        let all = |v: &Vec<i64>| v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ");
        json.push(format!(
            "    {{\"engine\": \"{engine}\", \"encoding\": \"{enc}\", \"construct_ns\": {}, \"total_ns\": {}, \
             \"process_ns\": {}, \"rss_delta\": {}, \"anon_delta\": {}, \"reported_bytes\": {}, \
             \"cpu_ns\": {}, \"total_ns_all\": [{}], \"cpu_ns_all\": [{}]}}",
            m[0], m[1], m[2], m[3], m[4], m[5], m[6], all(&s[1]), all(&s[6])
        ));
        if m[5] >= 0 {
            notes.push(format!("{engine} {enc}: Tokenizer::memory_bytes() = {} bytes ({:.1} MiB)", m[5], mib(m[5])));
        }
    }
    println!();
    for n in &notes {
        println!("{n}");
    }
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/target")))
        .join("turnfit-bench");
    std::fs::create_dir_all(&dir).expect("create target/turnfit-bench");
    let text = format!("{{\"reps\": {REPS}, \"cells\": [\n{}\n]}}\n", json.join(",\n"));
    std::fs::write(dir.join("first_use.json"), text).expect("write first_use.json");
}
