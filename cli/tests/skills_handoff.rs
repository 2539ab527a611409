//! End-to-end tests of `turnfit skills ...` and `turnfit handoff ...` on the
//! shipped examples and on hostile folders built in a temp dir.

use std::path::PathBuf;
use std::process::{Command, Output};

fn turnfit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_turnfit")).args(args).output().expect("spawn turnfit")
}

fn out(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn err(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("turnfit-cli-skills-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn skills_list_json_reports_every_example_skill() {
    let o = turnfit(&["skills", "list", "../examples/data/skills", "--json"]);
    assert!(o.status.success(), "{}", err(&o));
    let v: serde_json::Value = serde_json::from_str(&out(&o)).unwrap();
    let names: Vec<&str> = v["skills"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["code-review", "pdf-extract", "release-notes", "sql-migrations"]);
    assert_eq!(v["valid"], 4);
    assert_eq!(v["invalid"], 0);
    for s in v["skills"].as_array().unwrap() {
        assert!(s["header_tokens"].as_u64().unwrap() > 10, "{s}");
        assert!(s["body_tokens"].is_null(), "listing does not read bodies");
        assert_eq!(s["layout"], "folder");
    }
    let o = turnfit(&["skills", "list", "../examples/data/skills-flat", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out(&o)).unwrap();
    assert_eq!(v["valid"], 3);
    assert_eq!(v["skills"][0]["layout"], "flat");
    assert_eq!(v["skills"][0]["header"]["label"], "Summarize logs");
}

#[test]
fn skills_list_with_a_budget_renders_the_index_and_reports_cuts() {
    let o = turnfit(&["skills", "list", "../examples/data/skills", "--budget", "60", "--json"]);
    assert!(o.status.success(), "{}", err(&o));
    let v: serde_json::Value = serde_json::from_str(&out(&o)).unwrap();
    assert!(v["tokens"].as_u64().unwrap() <= 60);
    let included = v["included"].as_array().unwrap().len();
    let omitted = v["omitted"].as_array().unwrap().len();
    assert_eq!(included + omitted, 4, "{v}");
    assert!(omitted > 0 || !v["shortened"].as_array().unwrap().is_empty(), "60 tokens cannot hold all four: {v}");
    let o = turnfit(&["skills", "list", "../examples/data/skills", "--budget", "60"]);
    assert!(out(&o).starts_with("- "), "{}", out(&o));
    assert!(err(&o).contains("omitted: ") || err(&o).contains("shortened: "), "{}", err(&o));
}

#[test]
fn skills_show_prints_the_body_and_refuses_traversal() {
    let o = turnfit(&["skills", "show", "../examples/data/skills", "pdf-extract"]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(out(&o).starts_with("# PDF extraction\n"), "{}", out(&o));
    assert!(!out(&o).contains("description:"), "front-matter is not part of the body");
    let o = turnfit(&["skills", "show", "../examples/data/skills", "../skills-flat/triage"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("contains '..'"), "{}", err(&o));
    let o = turnfit(&["skills", "show", "../examples/data/skills", "pdf-extrakt"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("did you mean pdf-extract?"), "{}", err(&o));
}

#[test]
fn skills_check_exits_non_zero_when_a_skill_is_invalid() {
    let o = turnfit(&["skills", "check", "../examples/data/skills"]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    assert!(out(&o).contains("4 skills: 4 valid, 0 invalid"));
    let d = tmpdir("check");
    std::fs::create_dir_all(d.join("Bad_Name")).unwrap();
    std::fs::write(d.join("Bad_Name/SKILL.md"), "---\nname: Bad_Name\ndescription: x\n---\n").unwrap();
    std::fs::create_dir_all(d.join("fine")).unwrap();
    std::fs::write(d.join("fine/SKILL.md"), "---\nname: fine\ndescription: Fine.\n---\n").unwrap();
    std::fs::write(d.join("bomb.md"), format!("---\ndescription: {}x{}\n---\n", "[".repeat(50), "]".repeat(50)))
        .unwrap();
    let o = turnfit(&["skills", "check", d.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    let text = out(&o);
    assert!(text.contains("Bad_Name/SKILL.md: error [name_format]"), "{text}");
    assert!(text.contains("bomb.md: error [limit_exceeded]"), "{text}");
    assert!(text.contains("3 skills: 1 valid, 2 invalid"), "{text}");
    let _ = std::fs::remove_dir_all(&d);
    let o = turnfit(&["skills", "check", "/nonexistent/turnfit/skills"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("No such file or directory"), "{}", err(&o));
}

#[test]
fn handoff_check_and_render() {
    let o = turnfit(&["handoff", "check", "../examples/data/handoffs/planner-to-coder.json"]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(out(&o).contains("valid handoff 1.0 from planner to coder, 3 key outputs"), "{}", out(&o));
    let o = turnfit(&["handoff", "render", "../examples/data/handoffs/planner-to-coder.json"]);
    assert!(out(&o).starts_with("<handoff version=\"1.0\" from=\"planner\" to=\"coder\""), "{}", out(&o));
    assert!(out(&o).ends_with("</handoff>\n"));
    let o = turnfit(&[
        "handoff",
        "render",
        "../examples/data/handoffs/coder-to-reviewer.json",
        "--budget",
        "300",
        "--json",
    ]);
    assert!(o.status.success(), "{}", err(&o));
    let v: serde_json::Value = serde_json::from_str(&out(&o)).unwrap();
    assert!(v["tokens"].as_u64().unwrap() <= 300);
    assert_eq!(v["shortened"][0]["index"], 2, "{v}");
    let o = turnfit(&["handoff", "render", "../examples/data/handoffs/coder-to-reviewer.json", "--budget", "10"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("alone take"), "{}", err(&o));
}

#[test]
fn assemble_prints_the_prompt_and_reports_sections() {
    let o = turnfit(&["assemble", "../examples/seeds/003-context-engine/state.json"]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(out(&o).starts_with("## problem_statement\n"), "{}", out(&o));
    assert!(err(&o).contains("assemble: template problem_solving"), "{}", err(&o));
    let d = tmpdir("assemble");
    let p = d.join("req.json");
    std::fs::write(&p, r#"{"preset":"context_engine","budget":50,"template":"general","context":{"objective":"x"}}"#)
        .unwrap();
    let o = turnfit(&["assemble", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("template 'general' requires a 'query' section"), "{}", err(&o));
    std::fs::write(&p, b"{\"budget\": \xff}").unwrap();
    let o = turnfit(&["assemble", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("not valid UTF-8"), "{}", err(&o));
    std::fs::write(&p, "{\"budget\": 5, \"depth\": \"deep\"}").unwrap();
    let o = turnfit(&["assemble", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("depth must be"), "{}", err(&o));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn skills_check_skips_a_readme_and_layout_is_an_option() {
    let o = turnfit(&["skills", "check", "../examples/seeds/004-haskell-framework/skills"]);
    assert!(o.status.success(), "{}{}", out(&o), err(&o));
    assert!(out(&o).contains("README.md: info: skipped"), "{}", out(&o));
    let o = turnfit(&["skills", "list", "../examples/seeds/004-haskell-framework/skills", "--layout", "flat"]);
    assert!(out(&o).contains("README") && out(&o).contains("invalid"), "{}", out(&o));
    let o = turnfit(&["skills", "list", "x", "--layout", "sideways"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn handoff_check_names_the_bad_field() {
    let d = tmpdir("handoff");
    let p = d.join("bad.json");
    std::fs::write(&p, r#"{"version":"1.0","task_summary":"x","key_outputs":[],"metadata":{"from_agent":"a","to_agent":"b","created_at":"soon"}}"#).unwrap();
    let o = turnfit(&["handoff", "check", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(err(&o).contains("handoff.metadata.created_at: 'soon' is not an RFC 3339"), "{}", err(&o));
    std::fs::write(&p, r#"{"version":"9","task_summary":"x","key_outputs":[],"metadata":{}}"#).unwrap();
    let o = turnfit(&["handoff", "check", p.to_str().unwrap()]);
    assert!(err(&o).contains("unsupported version '9'"), "{}", err(&o));
    let _ = std::fs::remove_dir_all(&d);
}
