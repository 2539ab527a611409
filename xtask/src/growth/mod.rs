//! `xtask growth`: the driver behind scripts/growth.sh, which checks with
//! callgrind instruction counts that doubling an input at most about doubles
//! the work (issue 6: worst-case growth).
//!
//! `xtask growth list` prints every workload with its three sizes;
//! `xtask growth run [--scale K] [WORKLOAD...]` runs each named workload
//! (all when none is named) at n, 2n and 4n (n times K with `--scale`, to
//! look further up the curve by hand) and prints one `plan:` line per measurement in
//! order. Each measurement calls [`growth_measured_workload`] exactly once,
//! so the script runs the driver as
//!
//!     valgrind --tool=callgrind --collect-atstart=no \
//!         --toggle-collect='*growth_measured_workload*' \
//!         --dump-after='*growth_measured_workload*' target/debug/xtask growth run
//!
//! and gets one profile dump per measurement holding only the workload's
//! instructions: input generation, vocabulary loading and the model
//! registry (loaded once, before the first measurement) are outside it.
//!
//! Every measurement runs on a fresh thread, because the tokenizer keeps a
//! per-thread piece cache: the n-sized input is a prefix of the 2n-sized
//! one, so a warm cache would make the larger run look cheaper than it is.

mod inputs;
mod workloads;

use std::process::ExitCode;

pub use workloads::{Input, Workload, WORKLOADS};

/// The workload itself: the only code callgrind counts. Never inlined, and
/// nothing inside may be named like it (a closure here would toggle
/// collection off again).
#[inline(never)]
pub fn growth_measured_workload(w: &Workload, input: &Input) -> usize {
    std::hint::black_box((w.run)(std::hint::black_box(input)))
}

/// Loads what every workload shares (vocabularies, the long-piece
/// encoder's filters, the model registry) so that the first measurement
/// does not pay for it: a one-off cost inside the n run would make its
/// doubling look cheaper than it is and hide growth.
fn warm_up() {
    for name in ["o200k_base", "cl100k_base"] {
        if let Ok(t) = turnfit::Tokenizer::from_name(name) {
            let _ = t.count("warm up");
            let _ = t.count(&"a".repeat(100));
        }
    }
    let _ = turnfit::ModelRegistry::builtin().lookup("gpt-4o");
}

/// Gives the calling thread its counting tables, allocated and empty, so
/// that a measurement does not pay for allocating them (`calloc` of the
/// 1 MiB count table clears it, a million instructions under callgrind).
/// Which measurement paid depended on which earlier thread had last used
/// the same pooled scratch, and a doubling whose middle run paid read 2.8x
/// (issue 36: a thread whose counts the text cache answered left its count
/// table unallocated for the next user of its scratch). The caches are
/// emptied, so every measurement still starts from nothing cached.
fn empty_thread_tables() {
    if let Ok(t) = turnfit::Tokenizer::from_name("o200k_base") {
        let text = "Pneumonoultramicroscopicsilicovolcanoconiosis qxzjvkw antidisestablishmentarianism ".repeat(6);
        for _ in 0..2 {
            let _ = t.count(&text);
        }
    }
    turnfit::tokens::clear_thread_caches();
}

pub fn main(args: &[&str]) -> ExitCode {
    match args {
        ["list"] => {
            for w in WORKLOADS {
                println!("{:<28} {:>7} {:>7} {:>7}  {}  {}", w.name, w.n, 2 * w.n, 4 * w.n, w.unit, w.what);
            }
            ExitCode::SUCCESS
        }
        ["run", "--scale", k, names @ ..] => match k.parse::<usize>() {
            Ok(k) if k > 0 => run(names, k),
            _ => {
                eprintln!("xtask growth: --scale takes a positive integer, not '{k}'");
                ExitCode::from(2)
            }
        },
        ["run", names @ ..] => run(names, 1),
        _ => {
            eprintln!("usage: xtask growth list | xtask growth run [--scale K] [WORKLOAD...]");
            ExitCode::from(2)
        }
    }
}

fn run(names: &[&str], scale: usize) -> ExitCode {
    let chosen: Vec<&Workload> = if names.is_empty() {
        WORKLOADS.iter().collect()
    } else {
        let mut v = Vec::new();
        for name in names {
            match WORKLOADS.iter().find(|w| w.name == *name) {
                Some(w) => v.push(w),
                None => {
                    eprintln!("xtask growth: unknown workload '{name}' (see `xtask growth list`)");
                    return ExitCode::from(2);
                }
            }
        }
        v
    };
    warm_up();
    for w in chosen {
        // One unmeasured run at the smallest size first: process-wide state
        // a workload fills lazily (the long-piece encoder memoizes the splits
        // of the tokens it meets) would otherwise be paid for inside the n
        // run only, making the first doubling look cheap and hiding growth.
        // Per-thread caches are not warmed: each measurement has a fresh
        // thread whose tables are allocated and empty (`empty_thread_tables`).
        if let Ok(input) = (w.make)(w.n * scale) {
            let _ = std::thread::scope(|s| s.spawn(|| std::hint::black_box((w.run)(&input))).join());
        }
        for n in [w.n * scale, 2 * w.n * scale, 4 * w.n * scale] {
            let input = match (w.make)(n) {
                Ok(i) => i,
                Err(e) => {
                    eprintln!("xtask growth: {} at {n}: making the input: {e}", w.name);
                    return ExitCode::FAILURE;
                }
            };
            let result = std::thread::scope(|s| {
                s.spawn(|| {
                    empty_thread_tables();
                    growth_measured_workload(w, &input)
                })
                .join()
            });
            let Ok(result) = result else {
                eprintln!("xtask growth: {} at {n} panicked", w.name);
                return ExitCode::FAILURE;
            };
            // A workload returns 0 when the core refused its input,
            // which would measure an early error path.
            if result == 0 {
                eprintln!("xtask growth: {} at {n}: the core refused the input", w.name);
                return ExitCode::FAILURE;
            }
            println!("plan: {} {n} {result}", w.name);
            drop(input);
        }
    }
    ExitCode::SUCCESS
}
