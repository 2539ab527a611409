//! Repository chores that need Rust tooling, pinned in Cargo.lock.
//!
//! `cargo run -p xtask -- header` regenerates include/turnfit.h from ffi/;
//! `cargo run -p xtask -- header --check` fails if the committed header
//! differs from a fresh generation (the test command's drift check).
//! `cargo run -p xtask -- schemas [--check]` regenerates (or drift-checks)
//! the JSON Schemas under schemas/ from the core's types (`schemas.rs`).
//! `xtask growth ...` is the instruction-count driver of scripts/growth.sh
//! (see `growth/mod.rs`).

mod growth;
mod schemas;

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["header"] => header(false),
        ["header", "--check"] => header(true),
        ["schemas"] => schemas::main(&root(), false),
        ["schemas", "--check"] => schemas::main(&root(), true),
        ["growth", rest @ ..] => growth::main(rest),
        _ => {
            eprintln!("usage: cargo run -p xtask -- header [--check] | schemas [--check] | growth list | growth run [WORKLOAD...]");
            ExitCode::from(2)
        }
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn header(check: bool) -> ExitCode {
    let root = root();
    let ffi = root.join("ffi");
    let path = root.join("include/turnfit.h");
    let config = match cbindgen::Config::from_file(ffi.join("cbindgen.toml")) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("xtask: reading ffi/cbindgen.toml: {e}");
            return ExitCode::FAILURE;
        }
    };
    let bindings = match cbindgen::Builder::new().with_crate(&ffi).with_config(config).generate() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("xtask: cbindgen failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut fresh = Vec::new();
    bindings.write(&mut fresh);
    let committed = std::fs::read(&path).unwrap_or_default();
    if check {
        if committed == fresh {
            println!("header: include/turnfit.h matches ffi/ (cbindgen {})", cbindgen_version());
            return ExitCode::SUCCESS;
        }
        eprintln!("header: include/turnfit.h is out of date with ffi/; run `make header` and commit it");
        let old = String::from_utf8_lossy(&committed);
        let new = String::from_utf8_lossy(&fresh);
        for (i, (a, b)) in old.lines().zip(new.lines()).enumerate() {
            if a != b {
                eprintln!("first difference at line {}:\n  committed: {a}\n  generated: {b}", i + 1);
                break;
            }
        }
        return ExitCode::FAILURE;
    }
    if let Err(e) = std::fs::write(&path, &fresh) {
        eprintln!("xtask: writing {}: {e}", path.display());
        return ExitCode::FAILURE;
    }
    println!("header: wrote include/turnfit.h");
    ExitCode::SUCCESS
}

fn cbindgen_version() -> &'static str {
    // Pinned with `=` in the workspace manifest; kept here for the message.
    "0.29.4"
}
