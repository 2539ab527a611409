use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;

use super::*;
use crate::limits::{
    MAX_FRONTMATTER_BYTES, MAX_FRONTMATTER_DEPTH, MAX_FRONTMATTER_NODES, MAX_SKILLS_PER_FOLDER, MAX_SKILL_FILE_BYTES,
};
use crate::Encoding;

/// A fresh folder under the system temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "turnfit-skills-{}-{}-{tag}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    fn path(&self) -> &Path {
        &self.0
    }
    fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let p = self.0.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, bytes).unwrap();
        p
    }
    fn skill(&self, name: &str, description: &str, body: &str) {
        self.write(&format!("{name}/SKILL.md"), format!("---\nname: {name}\ndescription: {description}\n---\n{body}"));
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn open(dir: &TempDir) -> SkillSet {
    SkillSet::open(dir.path(), &OpenOptions::default()).unwrap()
}

fn skill<'a>(set: &'a SkillSet, name: &str) -> &'a Skill {
    set.skills().iter().find(|s| s.name() == name).unwrap_or_else(|| panic!("no skill {name}: {:?}", set.listing()))
}

fn codes(s: &Skill) -> Vec<&str> {
    s.diagnostics().iter().map(|d| d.code.as_str()).collect()
}

#[test]
fn both_layouts_are_discovered_with_headers_and_token_figures() {
    let d = TempDir::new("layouts");
    d.write(
        "pdf-tools/SKILL.md",
        "---\nname: pdf-tools\ndescription: Extract text and tables from PDF files.\nlicense: MIT\ncompatibility: Needs poppler-utils\nallowed-tools: Bash(pdftotext:*) Read\nmetadata:\n  author: docs-team\n  category: documents\n---\n# PDF tools\n\nRun `pdftotext -layout`.\n",
    );
    d.write("release-notes.md", "---\nlabel: Release notes\ndescription: Draft release notes from merged PRs.\ncategory: writing\n---\nCollect merged PRs.\n");
    d.write("README.txt", "not a skill");
    std::fs::create_dir_all(d.path().join("assets")).unwrap();
    let set = open(&d);
    assert_eq!(set.skills().len(), 2);
    let pdf = skill(&set, "pdf-tools");
    assert!(pdf.is_valid(), "{:?}", pdf.diagnostics());
    assert_eq!(pdf.layout(), Layout::Folder);
    let h = pdf.header().unwrap();
    assert_eq!(h.description, "Extract text and tables from PDF files.");
    assert_eq!(h.license.as_deref(), Some("MIT"));
    assert_eq!(h.allowed_tools, vec!["Bash(pdftotext:*)", "Read"]);
    assert_eq!(h.category.as_deref(), Some("documents"));
    assert_eq!(h.metadata["author"], "docs-team");
    let tok = set.tokenizer();
    assert_eq!(
        pdf.header_tokens(),
        tok.count("- pdf-tools [documents]: Extract text and tables from PDF files.\n").unwrap()
    );
    let notes = skill(&set, "release-notes");
    assert_eq!(notes.layout(), Layout::Flat);
    assert_eq!(notes.header().unwrap().label.as_deref(), Some("Release notes"));
    assert_eq!(notes.header().unwrap().category.as_deref(), Some("writing"));
    let ignored: Vec<&str> = set.ignored().iter().map(|i| i.path.as_str()).collect();
    assert_eq!(ignored, vec!["README.txt", "assets"]);
    let listing = set.listing();
    assert_eq!((listing.valid, listing.invalid), (2, 0));
    assert_eq!(listing.encoding, "cl100k_base");
}

#[test]
fn bodies_load_lazily_once_and_are_counted() {
    let d = TempDir::new("lazy");
    d.skill("notes", "Take notes.", "# Notes\n\nWrite everything down.\n");
    let set = open(&d);
    let s = skill(&set, "notes");
    assert_eq!(s.body_tokens(), None, "discovery must not read bodies");
    assert_eq!(s.body_bytes(), Some("# Notes\n\nWrite everything down.\n".len() as u64));
    let b = set.body("notes").unwrap();
    assert_eq!(b.text, "# Notes\n\nWrite everything down.\n");
    assert_eq!(b.tokens, set.tokenizer().count(&b.text).unwrap());
    assert_eq!(s.body_tokens(), Some(b.tokens));
    let again = set.body("notes").unwrap();
    assert!(Arc::ptr_eq(&b, &again), "the second request is served from the cache");
}

#[test]
fn bodies_are_shared_safely_across_threads() {
    let d = TempDir::new("threads");
    d.skill("alpha", "A.", "alpha body\n");
    d.skill("beta", "B.", "beta body\n");
    let set = open(&d);
    let texts: Vec<String> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..8)
            .map(|i| {
                let set = &set;
                sc.spawn(move || set.body(if i % 2 == 0 { "alpha" } else { "beta" }).unwrap().text.clone())
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (i, t) in texts.iter().enumerate() {
        assert_eq!(t, if i % 2 == 0 { "alpha body\n" } else { "beta body\n" });
    }
}

#[test]
fn validation_rules_are_diagnostics_and_one_bad_skill_does_not_sink_the_set() {
    let d = TempDir::new("rules");
    d.skill("good", "Fine.", "");
    d.write("Upper/SKILL.md", "---\nname: Upper\ndescription: x\n---\n");
    d.write("-lead/SKILL.md", "---\nname: -lead\ndescription: x\n---\n");
    d.write("dou--ble/SKILL.md", "---\nname: dou--ble\ndescription: x\n---\n");
    d.write("mismatch/SKILL.md", "---\nname: other\ndescription: x\n---\n");
    d.write("noname/SKILL.md", "---\ndescription: x\n---\n");
    d.write("nodesc/SKILL.md", "---\nname: nodesc\n---\n");
    let long = "x".repeat(1025);
    d.write("longdesc/SKILL.md", format!("---\nname: longdesc\ndescription: {long}\n---\n"));
    d.write("compat/SKILL.md", format!("---\nname: compat\ndescription: x\ncompatibility: {}\n---\n", "y".repeat(501)));
    d.write("types/SKILL.md", "---\nname: types\ndescription: [a, b]\nmetadata:\n  version: 1.0\n---\n");
    d.write("extra/SKILL.md", "---\nname: extra\ndescription: x\nversion: 3\n---\n");
    let n65 = "a".repeat(65);
    d.write(&format!("{n65}/SKILL.md"), format!("---\nname: {n65}\ndescription: x\n---\n"));
    let set = open(&d);
    assert!(skill(&set, "good").is_valid());
    assert_eq!(codes(skill(&set, "Upper")), ["name_format"]);
    assert_eq!(codes(skill(&set, "-lead")), ["name_format"]);
    assert_eq!(codes(skill(&set, "dou--ble")), ["name_format"]);
    assert_eq!(codes(skill(&set, "mismatch")), ["name_mismatch"]);
    assert_eq!(codes(skill(&set, "noname")), ["name_missing"]);
    assert_eq!(codes(skill(&set, "nodesc")), ["description_missing"]);
    assert_eq!(codes(skill(&set, "longdesc")), ["description_length"]);
    assert_eq!(codes(skill(&set, "compat")), ["compatibility_length"]);
    assert_eq!(codes(skill(&set, "types")), ["field_type", "field_type"]);
    assert_eq!(codes(skill(&set, "extra")), ["unknown_field"]);
    assert!(skill(&set, "extra").is_valid(), "unknown fields only warn");
    assert_eq!(codes(skill(&set, &n65)), ["name_length"]);
    let l = set.listing();
    assert_eq!((l.valid, l.invalid), (2, 10));
    // Boundaries: exactly 64 / 1024 / 500 characters are fine.
    let d = TempDir::new("rules-edge");
    let n64 = "b".repeat(64);
    d.write(
        &format!("{n64}/SKILL.md"),
        format!("---\nname: {n64}\ndescription: {}\ncompatibility: {}\n---\n", "d".repeat(1024), "c".repeat(500)),
    );
    let set = open(&d);
    assert!(skill(&set, &n64).is_valid(), "{:?}", skill(&set, &n64).diagnostics());
}

#[test]
fn hostile_names_are_refused_by_lookup() {
    let d = TempDir::new("names");
    d.skill("ok", "Fine.", "");
    let set = open(&d);
    for bad in ["..", "../ok", "/etc/passwd", "a\\b", "C:evil", "a\0b", "", "ok/../ok", "a\nb"] {
        let e = set.body(bad).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::UnsafePath, "{bad:?}: {e}");
    }
    let e = set.body("okk").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("did you mean ok?"), "{e}");
}

#[cfg(unix)]
#[test]
fn symlinks_out_of_the_root_and_loops_are_reported_not_followed() {
    use std::os::unix::fs::symlink;
    let outside = TempDir::new("outside");
    outside.skill("secret", "Outside the root.", "TOP SECRET\n");
    outside.write("passwd", "root:x:0:0\n");
    let d = TempDir::new("links");
    d.skill("good", "Fine.", "ok\n");
    symlink(outside.path().join("secret"), d.path().join("escape-dir")).unwrap();
    std::fs::create_dir_all(d.path().join("escape-file")).unwrap();
    symlink(outside.path().join("passwd"), d.path().join("escape-file/SKILL.md")).unwrap();
    symlink(outside.path().join("passwd"), d.path().join("flat-escape.md")).unwrap();
    symlink(d.path().join("loop-b"), d.path().join("loop-a")).unwrap();
    symlink(d.path().join("loop-a"), d.path().join("loop-b")).unwrap();
    symlink(d.path().join("good"), d.path().join("inside")).unwrap();
    let set = open(&d);
    for name in ["escape-dir", "escape-file", "flat-escape", "loop-a", "loop-b"] {
        let s = skill(&set, name);
        assert_eq!(codes(s), ["unsafe_path"], "{name}: {:?}", s.diagnostics());
        assert!(!s.is_valid());
        let e = set.body(name).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::UnsafePath, "{name}: {e}");
        assert!(!e.message().contains("TOP SECRET"));
    }
    assert!(skill(&set, "loop-a").diagnostics()[0].message.contains("symlink loop"));
    // A link that stays inside the root is followed (and then fails the
    // name rule: its name must equal the folder name).
    assert_eq!(codes(skill(&set, "inside")), ["name_mismatch"]);
    assert_eq!(set.body("good").unwrap().text, "ok\n");
}

#[test]
fn huge_files_are_refused_at_one_past_the_limit() {
    let d = TempDir::new("huge");
    let head = "---\nname: big\ndescription: Big.\n---\n";
    let mut at = head.to_owned();
    at.push_str(&"x".repeat(MAX_SKILL_FILE_BYTES - head.len()));
    assert_eq!(at.len(), MAX_SKILL_FILE_BYTES);
    d.write("big/SKILL.md", &at);
    let over = at.clone() + "y";
    d.write("bigger/SKILL.md", over.replace("name: big\n", "name: bigger\n").get(..MAX_SKILL_FILE_BYTES + 1).unwrap());
    let set = open(&d);
    assert!(skill(&set, "big").is_valid());
    assert_eq!(set.body("big").unwrap().text.len(), MAX_SKILL_FILE_BYTES - head.len());
    assert_eq!(codes(skill(&set, "bigger")), ["limit_exceeded"]);
    assert_eq!(set.body("bigger").unwrap_err().kind(), ErrorKind::LimitExceeded);
}

#[test]
fn frontmatter_size_limit_at_and_one_past() {
    let pad = |n: usize| {
        let head = "name: x\ndescription: ";
        let mut y = head.to_owned();
        y.push_str(&"d".repeat(n - head.len() - 1));
        y.push('\n');
        assert_eq!(y.len(), n);
        y
    };
    let at = format!("---\n{}---\nbody", pad(MAX_FRONTMATTER_BYTES));
    let b = frontmatter::read_block(at.as_bytes(), "x.md").unwrap();
    assert_eq!(b.yaml.len(), MAX_FRONTMATTER_BYTES);
    assert_eq!(&at[b.body_offset as usize..], "body");
    let over = format!("---\n{}---\nbody", pad(MAX_FRONTMATTER_BYTES + 1));
    let e = frontmatter::read_block(over.as_bytes(), "x.md").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded, "{e}");
    // An unterminated huge block is also a limit, found without reading on.
    let endless = format!("---\n{}", "a: b\n".repeat(MAX_FRONTMATTER_BYTES));
    assert_eq!(frontmatter::read_block(endless.as_bytes(), "x.md").unwrap_err().kind(), ErrorKind::LimitExceeded);
}

#[test]
fn frontmatter_shape_errors() {
    let e = frontmatter::read_block(&b"# no front-matter\n"[..], "x.md").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidYaml);
    assert!(e.message().contains("no front-matter"), "{e}");
    let e = frontmatter::read_block(&b"---\nname: x\n"[..], "x.md").unwrap_err();
    assert!(e.message().contains("no closing"), "{e}");
    let e = frontmatter::read_block(&b"---\nname: \xff\n---\n"[..], "x.md").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidUtf8);
    assert!(e.message().contains("byte offset 6"), "{e}");
    let b = frontmatter::read_block(&b"\xEF\xBB\xBF---\r\nname: x\r\n...\r\nbody"[..], "x.md").unwrap();
    assert_eq!(b.yaml, "name: x\r\n");
    for (yaml, kind) in [
        ("name: [unclosed\n", ErrorKind::InvalidYaml),
        ("- a\n- b\n", ErrorKind::InvalidYaml),
        ("", ErrorKind::InvalidYaml),
        ("a: 1\na: 2\n", ErrorKind::InvalidYaml),
        ("a: &x {b: 1}\nc:\n  <<: *x\n", ErrorKind::InvalidYaml),
        // A second document is over the one-document budget.
        ("--- \na: 1\n---\nb: 2\n", ErrorKind::LimitExceeded),
    ] {
        let e = frontmatter::parse(yaml, "x.md").unwrap_err();
        assert_eq!(e.kind(), kind, "{yaml:?}: {e}");
        assert!(e.message().starts_with("front-matter of 'x.md'"), "{e}");
    }
}

#[test]
fn yaml_depth_limit_at_and_one_past() {
    let at = "a:\n".to_owned()
        + &(1..MAX_FRONTMATTER_DEPTH - 1).map(|i| format!("{}a:\n", "  ".repeat(i))).collect::<String>()
        + &format!("{}a: x\n", "  ".repeat(MAX_FRONTMATTER_DEPTH - 1));
    frontmatter::parse(&at, "x.md").unwrap_or_else(|e| panic!("depth {MAX_FRONTMATTER_DEPTH}: {e}\n{at}"));
    let over = "a:\n".to_owned()
        + &(1..MAX_FRONTMATTER_DEPTH).map(|i| format!("{}a:\n", "  ".repeat(i))).collect::<String>()
        + &format!("{}a: x\n", "  ".repeat(MAX_FRONTMATTER_DEPTH));
    let e = frontmatter::parse(&over, "x.md").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded, "{e}");
    // Flow nesting is bounded too, and very deep input fails fast.
    let deep = format!("a: {}{}\n", "[".repeat(10_000), "]".repeat(10_000));
    assert_eq!(frontmatter::parse(&deep, "x.md").unwrap_err().kind(), ErrorKind::LimitExceeded);
}

#[test]
fn yaml_node_limit_at_and_one_past() {
    // Nodes: the root mapping, the key `a`, the sequence, and its items.
    let seq = |items: usize| format!("a: [{}]\n", vec!["x"; items].join(", "));
    frontmatter::parse(&seq(MAX_FRONTMATTER_NODES - 3), "x.md").unwrap();
    let e = frontmatter::parse(&seq(MAX_FRONTMATTER_NODES - 2), "x.md").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded, "{e}");
}

#[test]
fn alias_bombs_stop_at_the_budget() {
    let mut y = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x]\n");
    for i in 1..9 {
        y.push_str(&format!("a{i}: &a{i} [{}]\n", vec![format!("*a{}", i - 1); 9].join(", ")));
    }
    let e = frontmatter::parse(&y, "x.md").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded, "{e}");
    // A few aliases are fine.
    let m = frontmatter::parse("a: &v hello\nb: *v\n", "x.md").unwrap();
    assert_eq!(m["b"], "hello");
}

#[test]
fn alias_count_limit_at_and_one_past() {
    use crate::limits::MAX_FRONTMATTER_ALIASES;
    let yaml = |n: usize| "v: &v x\n".to_owned() + &(0..n).map(|i| format!("b{i}: *v\n")).collect::<String>();
    let m = frontmatter::parse(&yaml(MAX_FRONTMATTER_ALIASES), "x.md").unwrap();
    assert_eq!(m.len(), MAX_FRONTMATTER_ALIASES + 1);
    let e = frontmatter::parse(&yaml(MAX_FRONTMATTER_ALIASES + 1), "x.md").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded, "{e}");
}

#[cfg(unix)]
#[test]
fn a_file_swapped_for_a_symlink_after_discovery_is_not_read() {
    let outside = TempDir::new("swap-out");
    outside.write("secret.md", "---\nname: victim\ndescription: V.\n---\nTOP SECRET\n");
    let d = TempDir::new("swap-link");
    d.skill("victim", "V.", "original\n");
    let set = open(&d);
    std::fs::remove_file(d.path().join("victim/SKILL.md")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.md"), d.path().join("victim/SKILL.md")).unwrap();
    let e = set.body("victim").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnsafePath, "{e}");
    assert!(e.message().contains("replaced by a symbolic link"), "{e}");
    // Rediscovery refuses the link outright.
    assert_eq!(open(&d).body("victim").unwrap_err().kind(), ErrorKind::UnsafePath);
}

/// Issue 14 bug 2: a skill file replaced by a FIFO after discovery made the
/// body load block forever in `open`. The open is non-blocking, so the
/// fstat check runs and refuses it.
#[cfg(unix)]
#[test]
fn a_file_swapped_for_a_fifo_after_discovery_is_refused_not_waited_on() {
    let d = TempDir::new("swap-fifo");
    d.skill("victim", "V.", "original\n");
    d.write("flat.md", "---\nname: flat\ndescription: F.\n---\nbody\n");
    let set = open(&d);
    for rel in ["victim/SKILL.md", "flat.md"] {
        let p = d.path().join(rel);
        std::fs::remove_file(&p).unwrap();
        // core forbids unsafe code, so the FIFO comes from mkfifo(1).
        assert!(std::process::Command::new("mkfifo").arg(&p).status().unwrap().success());
    }
    for name in ["victim", "flat"] {
        let e = set.body(name).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Io, "{e}");
        assert!(e.message().contains("no longer a regular file"), "{e}");
    }
    // Rediscovery does not open them either: they are not regular files.
    let again = open(&d);
    assert!(again.body("victim").is_err() && again.body("flat").is_err());
}

#[test]
fn hostile_trees_become_per_skill_diagnostics() {
    let d = TempDir::new("hostile");
    d.skill("good", "Fine.", "ok\n");
    d.write("badutf/SKILL.md", b"---\nname: badutf\ndescription: \xc3\x28\n---\n");
    d.write("badbody/SKILL.md", b"---\nname: badbody\ndescription: ok\n---\nbody \xff\n");
    d.write(
        "deep/SKILL.md",
        format!("---\nname: deep\ndescription: x\nmetadata: {}{}\n---\n", "[".repeat(100), "]".repeat(100)),
    );
    d.write("nofm/SKILL.md", "just text\n");
    d.write("a\\b.md", "---\ndescription: x\n---\n");
    d.write("C:evil.md", "---\ndescription: x\n---\n");
    let set = open(&d);
    assert!(skill(&set, "good").is_valid());
    assert_eq!(codes(skill(&set, "badutf")), ["invalid_utf8"]);
    assert!(skill(&set, "badbody").is_valid(), "bodies are not read at discovery");
    assert_eq!(set.body("badbody").unwrap_err().kind(), ErrorKind::InvalidUtf8);
    assert_eq!(codes(skill(&set, "deep")), ["limit_exceeded"]);
    assert_eq!(codes(skill(&set, "nofm")), ["invalid_yaml"]);
    assert_eq!(codes(skill(&set, "a\\b")), ["unsafe_path"]);
    assert_eq!(codes(skill(&set, "C:evil")), ["unsafe_path"]);
    assert_eq!(set.body("nofm").unwrap_err().kind(), ErrorKind::InvalidYaml);
}

#[test]
fn a_file_replaced_or_changed_after_discovery_is_not_trusted() {
    let d = TempDir::new("swap");
    d.skill("swapped", "S.", "original\n");
    d.skill("edited", "E.", "original\n");
    let set = open(&d);
    // Replace by rename: a new inode at the same path.
    let tmp = d.write("swap.tmp", "---\nname: swapped\ndescription: S.\n---\nINJECTED\n");
    std::fs::rename(&tmp, d.path().join("swapped/SKILL.md")).unwrap();
    let e = set.body("swapped").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io);
    assert!(e.message().contains("replaced"), "{e}");
    // Edited in place: same inode, different size.
    std::fs::write(d.path().join("edited/SKILL.md"), "---\nname: edited\ndescription: E.\n---\noriginal plus more\n")
        .unwrap();
    let e = set.body("edited").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io);
    assert!(e.message().contains("changed"), "{e}");
    // A fresh open sees the new content.
    assert_eq!(open(&d).body("swapped").unwrap().text, "INJECTED\n");
}

#[test]
fn skills_per_folder_limit_at_and_one_past() {
    let d = TempDir::new("many");
    for i in 0..MAX_SKILLS_PER_FOLDER {
        d.write(&format!("f{i:05}.txt"), "");
    }
    let set = open(&d);
    assert_eq!(set.ignored().len(), MAX_SKILLS_PER_FOLDER);
    d.write("one-more.txt", "");
    let e = SkillSet::open(d.path(), &OpenOptions::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded, "{e}");
}

#[test]
fn the_root_must_be_a_readable_directory() {
    let d = TempDir::new("root");
    let e = SkillSet::open(&d.path().join("missing"), &OpenOptions::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io);
    let f = d.write("file", "x");
    assert_eq!(SkillSet::open(&f, &OpenOptions::default()).unwrap_err().kind(), ErrorKind::Io);
    let e = SkillSet::open_json(d.path(), Some("{\"layuot\": \"flat\"}")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidJson);
    let e = SkillSet::open_json(d.path(), Some("{\"model\": \"no-such-model\"}")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnknownModel);
    let set = SkillSet::open_json(d.path(), Some("{\"model\": \"gpt-4o\"}")).unwrap();
    assert_eq!(set.tokenizer().encoding(), Encoding::O200kBase);
}

#[test]
fn layout_choice_restricts_discovery() {
    let d = TempDir::new("choice");
    d.skill("folder-one", "F.", "");
    d.write("flat-one.md", "---\ndescription: x\n---\n");
    let only = |layout| {
        let s = SkillSet::open(d.path(), &OpenOptions { layout, ..Default::default() }).unwrap();
        s.skills().iter().map(|s| s.name().to_owned()).collect::<Vec<_>>()
    };
    assert_eq!(only(LayoutChoice::Folder), ["folder-one"]);
    assert_eq!(only(LayoutChoice::Flat), ["flat-one"]);
    assert_eq!(only(LayoutChoice::Auto), ["flat-one", "folder-one"]);
}

fn index_fixture() -> TempDir {
    let d = TempDir::new("index");
    d.write("a-review.md", "---\ndescription: Review a pull request for correctness, tests and style, and write comments inline.\ncategory: code\n---\n");
    d.write("b-deploy.md", "---\ndescription: Deploy a service to staging, run smoke tests, and promote it to production when green.\ncategory: ops\n---\n");
    d.write("c-notes.md", "---\ndescription: Take meeting notes.\n---\n");
    d.write("d-broken.md", "---\nname: wrong\ndescription: x\n---\n");
    d
}

#[test]
fn index_without_budget_lists_every_valid_skill_in_category_order() {
    let d = index_fixture();
    let set = open(&d);
    let r = set.render_index(&IndexOptions { categories: Some(vec!["ops".into()]), ..Default::default() }).unwrap();
    assert_eq!(r.included, ["b-deploy", "a-review", "c-notes"]);
    assert!(r.text.starts_with("- b-deploy [ops]: Deploy a service"), "{}", r.text);
    assert_eq!(r.tokens, set.tokenizer().count(&r.text).unwrap());
    assert!(r.shortened.is_empty());
    assert_eq!(r.omitted, [Omitted { name: "d-broken".into(), reason: "invalid", tokens: 0 }]);
    let scores = [("c-notes".to_owned(), 0.9), ("a-review".to_owned(), 0.5)].into_iter().collect();
    let r = set.render_index(&IndexOptions { scores: Some(scores), ..Default::default() }).unwrap();
    assert_eq!(r.included, ["c-notes", "a-review", "b-deploy"]);
}

#[test]
fn index_under_a_tight_budget_reports_what_was_cut() {
    let d = index_fixture();
    let set = open(&d);
    let full = set.render_index(&IndexOptions::default()).unwrap();
    let budget = full.tokens - 8;
    let r = set
        .render_index(&IndexOptions { budget: Some(budget), preamble: Some("Skills:".into()), ..Default::default() })
        .unwrap();
    assert!(r.tokens <= budget);
    assert!(r.text.starts_with("Skills:\n"));
    assert!(!r.shortened.is_empty() || r.omitted.iter().any(|o| o.reason == "budget"), "{r:?}");
    for s in &r.shortened {
        assert!(s.tokens < s.original_tokens);
        assert!(r.text.contains(&format!("- {}", s.name)));
    }
    let e = set
        .render_index(&IndexOptions {
            budget: Some(1),
            preamble: Some("A long preamble here".into()),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DoesNotFit);
    let e = set
        .render_index(&IndexOptions {
            scores: Some([("a".to_owned(), f64::NAN)].into_iter().collect()),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn index_fits_its_budget_and_accounts_for_every_skill(budget in 0usize..120, min_desc in 1usize..12) {
        let d = index_fixture();
        let set = open(&d);
        let r = set.render_index(&IndexOptions { budget: Some(budget), min_description_tokens: Some(min_desc), ..Default::default() }).unwrap();
        prop_assert!(r.tokens <= budget);
        prop_assert_eq!(r.tokens, set.tokenizer().count(&r.text).unwrap());
        let mut seen: Vec<String> = r.included.iter().cloned().chain(r.omitted.iter().map(|o| o.name.clone())).collect();
        seen.sort();
        prop_assert_eq!(seen, vec!["a-review", "b-deploy", "c-notes", "d-broken"]);
        for name in &r.included {
            let line = format!("- {name}");
            prop_assert!(r.text.contains(&line), "{} missing", name);
        }
        for o in &r.omitted {
            let line = format!("- {}", o.name);
            prop_assert!(!r.text.contains(&line), "{} present", o.name);
        }
    }

    #[test]
    fn valid_names_pass_the_name_rule(name in "[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,5}") {
        prop_assert_eq!(name_problem(&name), None);
    }

    #[test]
    fn names_with_other_characters_fail_the_name_rule(a in "[a-z]{0,5}", c in "[^a-z0-9-]", b in "[a-z]{0,5}") {
        let name = format!("{a}{c}{b}");
        prop_assert_eq!(name_problem(&name).map(|p| p.0), Some("name_format"));
    }

    #[test]
    fn unsafe_lookup_names_never_reach_the_filesystem(seg in "[a-z]{1,4}", sep in prop::sample::select(vec!["/", "\\", "\0", "/../", ":"])) {
        let name = if sep == ":" { format!("c:{seg}") } else { format!("{seg}{sep}{seg}") };
        prop_assert_eq!(fsafe::check_name(&name).unwrap_err().kind(), ErrorKind::UnsafePath);
    }
}

/// The skill front-matter of the Haskell framework design (seed document
/// 004): `label`, `description`, `category`, no `name`.
const DESIGN_SKILL: &str = "---\nlabel: debugging-checklist\ndescription: Systematic approach to debugging runtime errors\ncategory: debugging\n---\n## Purpose\nIsolate the bug.\n";

#[test]
fn the_design_front_matter_is_valid_in_both_layouts_and_found_by_label() {
    let d = TempDir::new("design");
    d.write("debugging.md", DESIGN_SKILL);
    d.write("debugging-checklist/SKILL.md", DESIGN_SKILL);
    d.write("labelled/SKILL.md", DESIGN_SKILL.replace("label: debugging-checklist", "label: Release checklist"));
    let set = open(&d);
    let flat = skill(&set, "debugging");
    assert!(flat.is_valid(), "{:?}", flat.diagnostics());
    assert!(flat.diagnostics().is_empty(), "flat: the design's fields are the flat layout's own");
    let folder = skill(&set, "debugging-checklist");
    assert!(folder.is_valid(), "{:?}", folder.diagnostics());
    let h = folder.header().unwrap();
    assert_eq!(h.category.as_deref(), Some("debugging"), "category kept in the folder layout");
    assert_eq!(h.label.as_deref(), Some("debugging-checklist"));
    let mut c = codes(folder);
    c.sort();
    assert_eq!(c, ["name_missing", "not_in_spec", "not_in_spec"]);
    assert!(folder.diagnostics().iter().all(|d| d.severity == Severity::Warning));
    // By label: a label shared by two skills is ambiguous unless it is also a name.
    assert_eq!(set.get("debugging-checklist").unwrap().name(), "debugging-checklist", "names win");
    assert_eq!(set.get("Release checklist").unwrap().name(), "labelled");
    assert_eq!(set.body("Release checklist").unwrap().text, "## Purpose\nIsolate the bug.\n");
    let d2 = TempDir::new("design2");
    d2.write("a.md", DESIGN_SKILL);
    d2.write("b.md", DESIGN_SKILL);
    let set2 = open(&d2);
    let e = set2.get("debugging-checklist").unwrap_err();
    assert!(e.message().contains("label of 2 skills (a, b)"), "{e}");
    // Without a label, a folder skill still needs its name.
    let d3 = TempDir::new("design3");
    d3.write("x/SKILL.md", "---\ndescription: d\ncategory: c\n---\n");
    assert!(!skill(&open(&d3), "x").is_valid());
    // A top-level category and metadata.category that disagree: warned.
    d3.write("y/SKILL.md", "---\nname: y\ndescription: d\ncategory: a\nmetadata:\n  category: b\n---\n");
    let set3 = open(&d3);
    let y = skill(&set3, "y");
    assert!(codes(y).contains(&"category_conflict") && y.header().unwrap().category.as_deref() == Some("a"));
}

#[test]
fn a_readme_at_the_root_is_skipped_in_auto_and_an_error_in_flat() {
    let d = TempDir::new("readme");
    d.skill("pdf-tools", "Extract text from PDF files.", "body");
    d.write("README.md", "# My skills\n\nA collection.\n");
    d.write("notes.md", "");
    let set = open(&d);
    assert_eq!(set.skills().len(), 1, "{:?}", set.listing());
    let l = set.listing();
    assert_eq!(l.invalid, 0);
    let reasons: Vec<(&str, &str)> = l.ignored.iter().map(|i| (i.path.as_str(), i.reason.as_str())).collect();
    assert!(reasons.contains(&("README.md", "a .md file without front-matter (not a skill)")), "{reasons:?}");
    assert!(reasons.contains(&("notes.md", "a .md file without front-matter (not a skill)")), "{reasons:?}");
    // A .md with a broken front-matter is still a broken skill.
    d.write("broken.md", "---\ndescription: [unclosed\n---\n");
    assert_eq!(open(&d).listing().invalid, 1);
    // Asked for the flat layout, a README is a skill without front-matter.
    let flat = SkillSet::open(d.path(), &OpenOptions { layout: LayoutChoice::Flat, ..OpenOptions::default() }).unwrap();
    assert!(codes(skill(&flat, "README")).contains(&"invalid_yaml"));
}

#[test]
fn lowercase_skill_md_is_read_and_nested_names_the_folder_layout() {
    let d = TempDir::new("lower");
    d.write("lower/skill.md", "---\nname: lower\ndescription: Lowercase file name.\n---\nbody\n");
    d.write("mixed/Skill.md", "---\nname: mixed\ndescription: Mixed case.\n---\n");
    let set = open(&d);
    let s = skill(&set, "lower");
    assert!(s.is_valid(), "{:?}", s.diagnostics());
    assert_eq!(s.path(), "lower/skill.md");
    assert_eq!(set.body("lower").unwrap().text, "body\n");
    assert!(set.skills().iter().all(|s| s.name() != "mixed"), "only SKILL.md and skill.md are skill files");
    assert!(set.ignored().iter().any(|i| i.path == "mixed"));
    let o: OpenOptions = crate::json::parse("o", r#"{"layout": "nested"}"#).unwrap();
    assert_eq!(o.layout, LayoutChoice::Folder);
    let nested = SkillSet::open(d.path(), &o).unwrap();
    assert_eq!(skill(&nested, "lower").path(), "lower/skill.md");
    // Both spellings in one folder (a case-sensitive file system): SKILL.md, warned.
    d.write("both/SKILL.md", "---\nname: both\ndescription: Upper.\n---\n");
    if !d.path().join("both/skill.md").exists() {
        d.write("both/skill.md", "---\nname: both\ndescription: Lower.\n---\n");
        let set = open(&d);
        let b = skill(&set, "both");
        assert_eq!(b.header().unwrap().description, "Upper.");
        assert!(codes(b).contains(&"duplicate_skill_file"));
    }
}
