//! Issue 33 B: the header promises that each fallible function lists its
//! statuses under "Errors:"; the lists had drifted (LIMIT_EXCEEDED missing
//! from ten functions, UNKNOWN_ENCODING from `turnfit_registry_lookup`).
//! This drives every function that reads input into the statuses it can
//! return, through the ABI fuzz target's own calls (fuzz/checks/abi.rs,
//! which records each (function, status) it sees), with its committed seed
//! corpus and a battery of hostile inputs per slot, and checks that the
//! function's comment in include/turnfit.h names each status returned.
//! Compiled as a unit-test module of the ffi crate (see `lib.rs`); the fuzz
//! target's modules are fuzz_corpus.rs's (a file is loaded once).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::fuzz_corpus::{abi, common};
use turnfit_core::limits::{MAX_JSON_BYTES, MAX_NAME_BYTES, MAX_TEXT_BYTES};

/// Each function's comment in the header: the text from the `/**` above
/// its prototype to the prototype.
fn comments(header: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (i, _) in header.match_indices("\nturnfit_status turnfit_") {
        let proto = &header[i + 1..];
        let name = &proto["turnfit_status ".len()..proto.find('(').unwrap()];
        let open = header[..i].rfind("/**").unwrap();
        // One line of text: the comment's `*` margins dropped.
        let text: Vec<&str> = header[open + 3..i]
            .lines()
            .map(|l| l.trim().trim_start_matches('*').trim_end_matches("*/").trim())
            .collect();
        out.insert(name.to_owned(), text.join(" "));
    }
    out
}

/// The statuses `function`'s `Errors:` part names (`INVALID_JSON`), with
/// those of a function it refers to ("as for `turnfit_x`", "as
/// `turnfit_x`").
fn documented(all: &BTreeMap<String, String>, function: &str, depth: usize) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let Some(errors) = all.get(function).and_then(|c| c.split_once("Errors:")).map(|(_, e)| e) else {
        return out;
    };
    for word in errors.split('`').skip(1).step_by(2) {
        if word.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_') && !word.is_empty() {
            out.insert(word.to_owned());
        } else if depth < 3 && word.starts_with("turnfit_") && word != function {
            let before = &errors[..errors.find(&format!("`{word}`")).unwrap()];
            if before.trim_end().ends_with("as for") || before.trim_end().ends_with("as") {
                out.extend(documented(all, word, depth + 1));
            }
        }
    }
    out
}

/// Inputs that reach the error paths: malformed and misshapen JSON, bad
/// text, names and arguments over their limits.
fn hostile() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = [
        "",
        "{",
        "}",
        "[]",
        "[1]",
        "{}",
        "null",
        "0",
        "\"x\"",
        "{\"a\":1,\"a\":2}",
        "gpt-4o",
        "cl100k_base",
        "no_such_encoding",
        "zz",
        "{\"model\":\"no-such-model\"}",
        "[\"gpt-4o\"]",
        "{\"x\":1}",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    v.push(b"\xff\xfe{".to_vec());
    v.push(b"a\xc3".to_vec());
    v.push(vec![b'n'; MAX_NAME_BYTES + 1]);
    v.push(vec![b' '; MAX_JSON_BYTES.max(MAX_TEXT_BYTES) + 1]);
    v.push(["[".repeat(200), "]".repeat(200)].concat().into_bytes());
    v
}

#[test]
fn every_status_returned_is_listed() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    for (_, data) in common::seeds(&root.join("fuzz/corpus"), "abi") {
        abi::check(&data);
    }
    let mut data = Vec::new();
    for input in hostile() {
        for slot in 0..abi::FUNCTIONS {
            data.clear();
            data.push(slot);
            data.extend_from_slice(&input);
            abi::check(&data);
        }
    }
    let header = std::fs::read_to_string(root.join("include/turnfit.h")).unwrap();
    let all = comments(&header);
    let seen = abi::SEEN.lock().unwrap().clone();
    let mut missing = Vec::new();
    for (function, status) in &seen {
        if *status == 0 {
            continue;
        }
        // SAFETY: turnfit_status_name returns a static NUL-terminated name.
        let name = unsafe { std::ffi::CStr::from_ptr(crate::turnfit_status_name(*status)) }.to_str().unwrap();
        let name = name.strip_prefix("TURNFIT_STATUS_").unwrap();
        if name == "NULL_ARGUMENT" {
            continue; // not reachable from the fuzz target's calls
        }
        if !documented(&all, function, 0).contains(name) {
            missing.push(format!("{function} returns {name}"));
        }
    }
    let functions: BTreeSet<_> = seen.iter().map(|(f, _)| *f).collect();
    assert!(functions.len() > 40, "only {} functions reached", functions.len());
    assert!(missing.is_empty(), "include/turnfit.h: Errors: lists miss\n  {}", missing.join("\n  "));
}

/// The parser above reads the lists it checks: a list that names a status
/// is found, one that does not is not, and "as for" follows the reference.
#[test]
fn the_errors_parser_reads_the_header() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let header = std::fs::read_to_string(root.join("include/turnfit.h")).unwrap();
    let all = comments(&header);
    assert!(all.len() > 60, "{} functions", all.len());
    let d = documented(&all, "turnfit_window_push", 0);
    assert!(d.contains("INVALID_JSON") && d.contains("NULL_ARGUMENT"), "{d:?}");
    assert!(!d.contains("CYCLE_DETECTED"), "{d:?}");
    let d = documented(&all, "turnfit_breaker_record_failure", 0);
    assert!(d.contains("INVALID_ARGUMENT"), "as for turnfit_breaker_allow: {d:?}");
}
