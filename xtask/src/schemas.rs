//! `xtask schemas [--check]`: writes (or compares) one JSON Schema file per
//! ABI JSON shape under `schemas/`, from `turnfit::schema::shapes()` (the
//! core's serde types with the `schema` feature). `--check` also fails on a
//! file in `schemas/` that no shape produces, so a renamed shape cannot leave
//! a stale schema behind.

use std::path::Path;
use std::process::ExitCode;

/// The file text of one schema: pretty JSON and a final newline.
pub fn render(schema: &turnfit::schema::Shape) -> String {
    let mut text = serde_json::to_string_pretty(&schema.schema).expect("a schema serializes");
    text.push('\n');
    text
}

pub fn main(root: &Path, check: bool) -> ExitCode {
    let dir = root.join("schemas");
    let shapes = turnfit::schema::shapes();
    let mut stale = Vec::new();
    for shape in &shapes {
        let path = dir.join(format!("{}.json", shape.name));
        let fresh = render(shape);
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        if committed == fresh {
            continue;
        }
        if check {
            stale.push(format!("schemas/{}.json differs from the core's types", shape.name));
        } else if let Err(e) = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&path, fresh)) {
            eprintln!("xtask: writing {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    let known: Vec<String> = shapes.iter().map(|s| format!("{}.json", s.name)).collect();
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".json") && !known.contains(&name) {
            if check {
                stale.push(format!("schemas/{name} is not produced by any shape"));
            } else if let Err(e) = std::fs::remove_file(entry.path()) {
                eprintln!("xtask: removing schemas/{name}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    if !stale.is_empty() {
        for s in &stale {
            eprintln!("schemas: {s}");
        }
        eprintln!("schemas: run `cargo run -p xtask -- schemas` and commit schemas/");
        return ExitCode::FAILURE;
    }
    let verb = if check { "match the core's types" } else { "written" };
    println!("schemas: {} files under schemas/ {verb}", shapes.len());
    ExitCode::SUCCESS
}
