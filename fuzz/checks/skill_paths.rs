//! Target `skill_paths`: skill names used as paths. A fixed skills root
//! holds two good skills (`alpha/SKILL.md`, `beta.md`), a symlink leaving
//! the root, and a secret file beside the root. Input: the bytes are a skill
//! name for `get`, `body` and `name_problem`. Never panics; only the two
//! real skills are ever found; a name with a separator, `..`, NUL, a
//! control character or a drive prefix is never accepted.

use std::path::PathBuf;
use std::sync::OnceLock;

use turnfit::skills::{name_problem, OpenOptions, SkillSet};
use turnfit::ErrorKind;

use super::common::text;

fn skill(name: &str) -> String {
    format!("---\nname: {name}\ndescription: The {name} skill for the path fuzzer. Use when testing.\n---\nbody of {name}\n")
}

fn root() -> &'static (PathBuf, SkillSet) {
    static ROOT: OnceLock<(PathBuf, SkillSet)> = OnceLock::new();
    ROOT.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("turnfit-fuzz-paths-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let root = base.join("skills");
        std::fs::create_dir_all(root.join("alpha")).unwrap();
        std::fs::write(root.join("alpha/SKILL.md"), skill("alpha")).unwrap();
        std::fs::write(root.join("beta.md"), skill("beta")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::write(base.join("outside/SKILL.md"), skill("outside")).unwrap();
        std::fs::write(base.join("secret.md"), skill("secret")).unwrap();
        #[cfg(unix)]
        {
            let _ = std::os::unix::fs::symlink(base.join("outside"), root.join("outside"));
            let _ = std::os::unix::fs::symlink(base.join("secret.md"), root.join("secret.md"));
        }
        let set = SkillSet::open(&root, &OpenOptions::default()).expect("fixture root opens");
        (root, set)
    })
}

fn hostile(name: &str) -> bool {
    let b = name.as_bytes();
    name.is_empty()
        || name.contains(['/', '\\', '\0'])
        || name == "."
        || name.contains("..") && name.split(['/', '\\']).any(|s| s == "..")
        || name.chars().any(char::is_control)
        || (b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':')
}

pub fn check(data: &[u8]) {
    let (_, set) = root();
    let name = text(data);
    let _ = name_problem(&name);
    let found = set.get(&name).is_ok();
    let body = set.body(&name);
    if body.is_ok() {
        assert!(name == "alpha" || name == "beta", "skill name {name:?} read a file that is not a good skill");
    }
    // The symlinks that leave the root are listed (discovery reports them)
    // but their files are never read.
    if name == "outside" || name == "secret" {
        let e = body.as_ref().err().unwrap_or_else(|| panic!("{name:?}: a symlink out of the root was read"));
        assert_eq!(e.kind(), ErrorKind::UnsafePath, "{name:?}: {e}");
    }
    if hostile(&name) {
        assert!(!found && body.is_err(), "hostile name {name:?} accepted");
    }
    if let Ok(b) = body {
        assert_eq!(b.name, name, "body of another skill");
        assert_eq!(b.text.trim_end(), format!("body of {name}"), "body of a file other than the skill's own");
    }
}
