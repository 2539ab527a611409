//! Target `skills_frontmatter`: YAML front-matter as discovery reads it.
//! Input: one byte picks the layout (folder `<name>/SKILL.md` or flat
//! `<name>.md`), the rest is the file's bytes, written to a scratch skills
//! root and opened with `SkillSet::open` (front-matter block reader, the
//! budgeted serde-saphyr parse, header validation, token counts). Never
//! panics; opening a folder with one broken skill still succeeds; a skill
//! reported valid has a header, a checked name and a body that reads (or
//! is refused as invalid UTF-8).

use std::path::PathBuf;

use turnfit::skills::{name_problem, OpenOptions, SkillSet};
use turnfit::ErrorKind;

use super::common::Knobs;

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "turnfit-fuzz-frontmatter-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

pub fn check(data: &[u8]) {
    let mut k = Knobs::new(data);
    let flat = k.byte() & 1 == 1;
    let file = k.rest();
    let root = scratch();
    let path = if flat {
        root.join("fuzzed.md")
    } else {
        std::fs::create_dir_all(root.join("fuzzed")).unwrap();
        root.join("fuzzed").join("SKILL.md")
    };
    std::fs::write(&path, file).unwrap();
    let set = SkillSet::open(&root, &OpenOptions::default())
        .unwrap_or_else(|e| panic!("one bad skill file failed the whole folder: {e}"));
    for skill in set.skills() {
        if skill.is_valid() {
            assert!(skill.header().is_some(), "a valid skill has a header");
            assert!(name_problem(skill.name()).is_none(), "a valid skill has a valid name: {:?}", skill.name());
            // A body is read lazily; the only way it can fail for a file
            // that was just written is not being UTF-8.
            if let Err(e) = set.body(skill.name()) {
                assert_eq!(e.kind(), ErrorKind::InvalidUtf8, "valid skill's body: {e}");
            }
        }
    }
    let _ = set.listing();
    let _ = std::fs::remove_dir_all(&root);
}
