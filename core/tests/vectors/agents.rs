//! Skills and handoff conformance vectors (tests/vectors/skills.json,
//! tests/vectors/handoff.json): the ops, and the bless step that freezes
//! turnfit's output for the inputs in the matching `.cases.json`.

use std::path::{Path, PathBuf};

use serde_json::Value;
use turnfit::handoff::{filter_json, Handoff, RenderOptions};
use turnfit::skills::{IndexOptions, OpenOptions, SkillSet};

/// Whether `op` is one of the ops run here.
pub fn handles(op: &str) -> bool {
    op.starts_with("handoff_") || op.starts_with("skills_") || op == "assemble"
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn opts<T: serde::de::DeserializeOwned + Default>(v: &Value) -> Result<T, turnfit::Error> {
    if v.is_null() {
        return Ok(T::default());
    }
    turnfit::frontend::parse_json("options", &v.to_string())
}

fn run_op(op: &str, input: &Value) -> Result<Value, turnfit::Error> {
    let skills = || -> Result<SkillSet, turnfit::Error> {
        let root = repo_root().join(input["root"].as_str().expect("root"));
        SkillSet::open(Path::new(&root), &opts::<OpenOptions>(&input["options"])?)
    };
    Ok(match op {
        "handoff_validate" => Handoff::parse(&input["handoff"].to_string())?.to_value(),
        "handoff_render" => {
            let h = Handoff::parse(&input["handoff"].to_string())?;
            serde_json::to_value(h.render(&opts::<RenderOptions>(&input["options"])?)?).unwrap()
        }
        "handoff_filter" => {
            let o = (!input["options"].is_null()).then(|| input["options"].to_string());
            serde_json::to_value(filter_json(&input["conversation"].to_string(), o.as_deref())?).unwrap()
        }
        "skills_list" => serde_json::to_value(skills()?.listing()).unwrap(),
        "skills_body" => serde_json::to_value(&*skills()?.body(input["name"].as_str().expect("name"))?).unwrap(),
        "skills_index" => {
            serde_json::to_value(skills()?.render_index(&opts::<IndexOptions>(&input["index_options"])?)?).unwrap()
        }
        "assemble" => {
            let tok = turnfit::Tokenizer::from_name(input["encoding"].as_str().expect("encoding"))?;
            serde_json::from_str(&turnfit::assemble::assemble_json(&input["request"].to_string(), &tok)?).unwrap()
        }
        other => panic!("unknown op {other}"),
    })
}

/// The result of an op, or `{"error": kind}`.
pub fn run(op: &str, input: &Value) -> Value {
    match run_op(op, input) {
        Ok(v) => v,
        Err(e) => serde_json::json!({ "error": e.kind().as_str() }),
    }
}

/// Rewrites `<stem>.json` from `<stem>.cases.json`.
pub fn bless(dir: &Path, stem: &str, oracle: &str) {
    let cases: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{stem}.cases.json"))).unwrap()).unwrap();
    let mut out = Vec::new();
    for c in cases["cases"].as_array().unwrap() {
        let got = run(c["op"].as_str().unwrap(), &c["input"]);
        if let Some(fixed) = c.get("expected") {
            assert_eq!(&got, fixed, "{}: an independent expectation disagrees", c["name"]);
        }
        out.push(serde_json::json!({ "name": c["name"], "op": c["op"], "input": c["input"], "expected": got }));
    }
    let doc = serde_json::json!({
        "format": 1,
        "generated_by": format!("TURNFIT_BLESS=1 cargo test -p turnfit --test vectors (from {stem}.cases.json)"),
        "oracle": oracle,
        "vectors": out,
    });
    std::fs::write(dir.join(format!("{stem}.json")), serde_json::to_string_pretty(&doc).unwrap() + "\n").unwrap();
}
