//! A quick side-by-side for engine work between criterion runs: each engine
//! counts each input `TURNFIT_QUICK_RUNS` times (default 7) and the median and
//! fastest CPU times are printed as MB/s with the ratio to the best peer.
//! Not a substitute for `cargo bench` (no warm-up statistics, no outlier
//! analysis); use it to see whether a change moved anything.
//! `TURNFIT_QUICK_MODE=encode` times encode instead of count.
//!
//!     cargo run --release --bin quick [-- ENCODING [INPUT]]

use turnfit_bench::{load, load_inputs, thread_cpu_ns, ENCODINGS, ENGINES};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runs: usize = std::env::var("TURNFIT_QUICK_RUNS").ok().and_then(|s| s.parse().ok()).unwrap_or(7);
    let encode = std::env::var("TURNFIT_QUICK_MODE").is_ok_and(|m| m == "encode");
    let inputs = load_inputs();
    println!("{:<12} {:<15} {:>10} {:>10} {:>10} {:>10}  turnfit/best-peer (median)", "encoding", "input", ENGINES[0], ENGINES[1], ENGINES[2], ENGINES[3]);
    for enc in ENCODINGS {
        if args.first().is_some_and(|a| a != enc) {
            continue;
        }
        let engines: Vec<_> = ENGINES.iter().map(|e| load(e, enc)).collect();
        for (name, text) in &inputs {
            if args.get(1).is_some_and(|a| a != name) {
                continue;
            }
            let only = std::env::var("TURNFIT_QUICK_ONLY").ok();
            let mut medians = Vec::new();
            for (e, engine) in engines.iter().enumerate() {
                if only.as_deref().is_some_and(|o| o != ENGINES[e]) {
                    medians.push(f64::NAN);
                    continue;
                }
                let mut times: Vec<u64> = (0..runs)
                    .map(|_| {
                        let t0 = thread_cpu_ns();
                        if encode {
                            std::hint::black_box(engine.encode(std::hint::black_box(text)));
                        } else {
                            std::hint::black_box(engine.count(std::hint::black_box(text)));
                        }
                        thread_cpu_ns() - t0
                    })
                    .collect();
                times.sort_unstable();
                medians.push(text.len() as f64 / (times[runs / 2] as f64 / 1e9) / 1e6);
            }
            let best_peer = medians[1..].iter().cloned().filter(|m| !m.is_nan()).fold(0.0, f64::max);
            println!(
                "{:<12} {:<15} {:>10.1} {:>10.1} {:>10.1} {:>10.1}  {:.2}",
                enc, name, medians[0], medians[1], medians[2], medians[3], medians[0] / best_peer
            );
        }
    }
}
