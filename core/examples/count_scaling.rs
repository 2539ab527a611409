//! Does counting scale over two cores with no Python at all? (issue 20's GIL
//! question, asked of the core alone.) Counts the same text as
//! `bench/python/gil_scaling.py` once on one thread, on two threads of this
//! process at the same time, and in two processes (this binary re-run with
//! `--child`) at the same time, interleaved run by run so every row sees the
//! same load; prints the medians and the ratios. If two processes do not
//! scale here either, the limit is the machine's or the counting loop's
//! memory traffic, not the binding; if two processes scale but two threads
//! do not, something in the core is shared between threads (a lock, an
//! atomic, a cache line).
//!
//! ```sh
//! cargo run --release -q -p turnfit --example count_scaling -- --runs 7 --mib 24
//! ```

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use turnfit::{Encoding, Tokenizer};

/// The line `bench/python/gil_scaling.py` repeats.
const LINE: &str = "The quick brown fox jumps over the lazy dog. 1234 {code} na\u{ef}ve caf\u{e9}\n";

fn arg(name: &str, default: f64) -> f64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn text(mib: f64) -> String {
    LINE.repeat((mib * 1048576.0 / LINE.len() as f64) as usize)
}

/// A child: loads and warms the tokenizer, says "ready", counts when a line
/// arrives on stdin, prints the count.
fn child(mib: f64) -> Result<(), Box<dyn std::error::Error>> {
    let tok = Tokenizer::new(Encoding::O200kBase)?;
    let text = text(mib);
    tok.count(&text)?;
    println!("ready");
    std::io::stdout().flush()?;
    let mut go = String::new();
    std::io::stdin().read_line(&mut go)?;
    println!("{}", tok.count(&text)?);
    Ok(())
}

fn threads(tok: &Tokenizer, text: &str, expected: usize) -> Duration {
    let barrier = Arc::new(Barrier::new(3));
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let b = Arc::clone(&barrier);
                s.spawn(move || {
                    b.wait();
                    tok.count(text).ok()
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        for h in hs {
            assert_eq!(h.join().ok().flatten(), Some(expected));
        }
        start.elapsed()
    })
}

fn processes(mib: f64, expected: usize) -> Result<Duration, Box<dyn std::error::Error>> {
    let exe = std::env::current_exe()?;
    let mut kids = Vec::new();
    for _ in 0..2 {
        let mut c = Command::new(&exe)
            .args(["--child", "--mib", &mib.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let mut out = BufReader::new(c.stdout.take().ok_or("no stdout")?);
        let mut line = String::new();
        out.read_line(&mut line)?;
        assert_eq!(line.trim(), "ready");
        kids.push((c, out));
    }
    let start = Instant::now();
    for (c, _) in &mut kids {
        writeln!(c.stdin.as_mut().ok_or("no stdin")?, "go")?;
    }
    for (_, out) in &mut kids {
        let mut line = String::new();
        out.read_line(&mut line)?;
        assert_eq!(line.trim().parse::<usize>()?, expected);
    }
    let took = start.elapsed();
    for (mut c, _) in kids {
        c.wait()?;
    }
    Ok(took)
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg").unwrap_or_default().split(' ').take(3).collect::<Vec<_>>().join(" / ")
}

fn median(v: &mut [Duration]) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1000.0
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mib = arg("--mib", 24.0);
    if std::env::args().any(|a| a == "--child") {
        return child(mib);
    }
    let runs = arg("--runs", 7.0) as usize;
    let tok = Tokenizer::new(Encoding::O200kBase)?;
    let text = text(mib);
    let expected = tok.count(&text)?;
    let load0 = loadavg();
    let (mut one, mut two_t, mut two_p) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        assert_eq!(tok.count(&text)?, expected);
        one.push(start.elapsed());
        two_t.push(threads(&tok, &text, expected));
        two_p.push(processes(mib, expected)?);
    }
    let (one, two_t, two_p) = (median(&mut one), median(&mut two_t), median(&mut two_p));
    println!(
        "Rust only, o200k_base, {:.2} MiB, {expected} tokens, median of {runs} interleaved runs",
        text.len() as f64 / 1048576.0
    );
    println!("load average before {load0}, after {}", loadavg());
    println!("  one           {one:8.1} ms");
    println!("  two threads   {two_t:8.1} ms  ({:.2}x one)", two_t / one);
    println!("  two processes {two_p:8.1} ms  ({:.2}x one)", two_p / one);
    Ok(())
}
