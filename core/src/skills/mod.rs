//! Skills: folders of prompt files an agent can load on demand.
//!
//! Two layouts are discovered: the Agent Skills format,
//! `<root>/<name>/SKILL.md` with `name`, `description` and optional
//! `license`, `compatibility`, `allowed-tools` and `metadata`; and a flat
//! one, `<root>/<name>.md` with `label`, `description` and `category`.
//!
//! Discovery reads only each file's front-matter, so the headers a system
//! prompt needs are cheap; bodies are read on first request and cached.
//! Every file is read through [`fsafe`], which refuses anything outside the
//! root and anything swapped after it was checked. A skill that cannot be
//! read or that breaks the format rules is reported with diagnostics and
//! left out of the index; it never fails the whole set.
//!
//! A [`SkillSet`] is immutable apart from its body cache (one mutex per
//! skill), so it may be shared across threads.

mod frontmatter;
mod fsafe;
mod index;
mod validate;

use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use crate::events::{Event, Observer};
use crate::limits::MAX_SKILLS_PER_FOLDER;
use crate::{Error, ErrorKind, Result, Tokenizer};

pub use index::{IndexOptions, IndexResult, Omitted, Shortened};
pub use validate::{name_problem, Diagnostic, Severity, SkillHeader};

/// Where a skill's file sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    /// `<root>/<name>/SKILL.md` (Agent Skills).
    Folder,
    /// `<root>/<name>.md`.
    Flat,
}

/// Which layouts [`SkillSet::open`] looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LayoutChoice {
    /// Both: folders holding a `SKILL.md`, and `.md` files.
    #[default]
    Auto,
    /// Only `<name>/SKILL.md` (also spelled `nested`).
    #[serde(alias = "nested")]
    Folder,
    /// Only `<name>.md`.
    Flat,
}

/// Written by hand: schemars does not see serde's `alias`, and `nested` is
/// accepted.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for LayoutChoice {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "LayoutChoice".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "Which layouts to look for: both (`auto`), `<name>/SKILL.md` only (`folder`, also spelled `nested`), `<name>.md` only (`flat`).",
            "enum": ["auto", "folder", "nested", "flat"]
        })
    }
}

/// Options for opening a skills folder (JSON at the C ABI).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct OpenOptions {
    /// Count tokens with this model's encoding.
    #[serde(default)]
    pub model: Option<String>,
    /// Count tokens with this encoding (when `model` is not given);
    /// `cl100k_base` by default.
    #[serde(default)]
    pub encoding: Option<String>,
    /// Layouts to discover.
    #[serde(default)]
    pub layout: LayoutChoice,
}

impl OpenOptions {
    /// The tokenizer these options select.
    pub fn tokenizer(&self) -> Result<Tokenizer> {
        self.tokenizer_in(&crate::ModelRegistry::builtin())
    }

    /// The tokenizer these options select, `model` looked up in `registry`.
    pub fn tokenizer_in(&self, registry: &crate::ModelRegistry) -> Result<Tokenizer> {
        crate::models::select_tokenizer_in(registry, self.model.as_deref(), self.encoding.as_deref())
    }
}

/// A body read on request: the text after the front-matter, and its tokens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Body {
    /// The skill's name.
    pub name: String,
    /// The body text (front-matter removed).
    pub text: String,
    /// Tokens in `text`.
    pub tokens: usize,
}

/// One discovered skill, readable or not.
#[derive(Debug)]
pub struct Skill {
    name: String,
    layout: Layout,
    path: String,
    header: Option<SkillHeader>,
    diagnostics: Vec<Diagnostic>,
    header_tokens: usize,
    file: Option<fsafe::FileId>,
    body_offset: u64,
    load_error: Option<Error>,
    body: Mutex<Option<Arc<Body>>>,
}

impl Skill {
    /// The folder name or file stem: the name the skill is requested by.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The layout it was found in.
    pub fn layout(&self) -> Layout {
        self.layout
    }
    /// Its file, relative to the root.
    pub fn path(&self) -> &str {
        &self.path
    }
    /// The header, when the front-matter could be read.
    pub fn header(&self) -> Option<&SkillHeader> {
        self.header.as_ref()
    }
    /// Findings about this skill.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }
    /// Readable and without error diagnostics.
    pub fn is_valid(&self) -> bool {
        self.header.is_some() && !self.diagnostics.iter().any(|d| d.severity == Severity::Error)
    }
    /// Tokens of the skill's index entry as [`SkillSet::render_index`]
    /// writes it in full (0 for a skill that could not be read).
    pub fn header_tokens(&self) -> usize {
        self.header_tokens
    }
    /// Tokens of the body, once it has been loaded.
    pub fn body_tokens(&self) -> Option<usize> {
        self.body.lock().as_ref().map(|b| b.tokens)
    }
    /// Bytes of the body (the file minus its front-matter).
    pub fn body_bytes(&self) -> Option<u64> {
        self.file.as_ref().map(|f| f.len.saturating_sub(self.body_offset))
    }
}

pub use crate::events::payload::Ignored;

/// The skills of one root folder.
#[derive(Debug)]
pub struct SkillSet {
    root: PathBuf,
    tokenizer: Tokenizer,
    skills: Vec<Skill>,
    ignored: Vec<Ignored>,
}

/// One skill in a [`Listing`].
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ListedSkill {
    /// The name it is requested by.
    pub name: String,
    /// `folder` or `flat`.
    pub layout: Layout,
    /// File relative to the root.
    pub path: String,
    /// No error diagnostics.
    pub valid: bool,
    /// The header (null when the file could not be read).
    pub header: Option<SkillHeader>,
    /// Tokens of the full index entry.
    pub header_tokens: usize,
    /// Body size in bytes (null when unreadable).
    pub body_bytes: Option<u64>,
    /// Body tokens, once the body has been loaded (null before).
    pub body_tokens: Option<usize>,
    /// Findings.
    pub diagnostics: Vec<Diagnostic>,
}

/// Everything discovery found (JSON at the C ABI and `turnfit skills list --json`).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Listing {
    /// Encoding the token figures are in.
    pub encoding: &'static str,
    /// Skills, by name.
    pub skills: Vec<ListedSkill>,
    /// Entries that are not skills.
    pub ignored: Vec<Ignored>,
    /// How many skills are valid.
    pub valid: usize,
    /// How many are not.
    pub invalid: usize,
}

impl SkillSet {
    /// Opens `root` with options given as JSON (`(None)` for defaults).
    pub fn open_json(root: &Path, options_json: Option<&str>) -> Result<SkillSet> {
        Self::open_json_observed(root, options_json, &Observer::none())
    }

    /// [`open_json`](Self::open_json) with an observer (see [`open_observed`](Self::open_observed)).
    pub fn open_json_observed(root: &Path, options_json: Option<&str>, observer: &Observer) -> Result<SkillSet> {
        Self::open_json_in(&crate::ModelRegistry::builtin(), root, options_json, observer)
    }

    /// [`open_json_observed`](Self::open_json_observed) with an options
    /// `model` looked up in `registry`.
    pub fn open_json_in(
        registry: &crate::ModelRegistry,
        root: &Path,
        options_json: Option<&str>,
        observer: &Observer,
    ) -> Result<SkillSet> {
        let options: OpenOptions = match options_json {
            Some(t) => crate::json::parse("skills options", t)?,
            None => OpenOptions::default(),
        };
        Self::open_in(registry, root, &options, observer)
    }

    /// Discovers the skills directly under `root`. Fails only when the root
    /// itself cannot be read (`Io`) or holds more than
    /// [`MAX_SKILLS_PER_FOLDER`] entries (`LimitExceeded`); problems with a
    /// single skill become its diagnostics.
    pub fn open(root: &Path, options: &OpenOptions) -> Result<SkillSet> {
        Self::open_observed(root, options, &Observer::none())
    }

    /// [`open`](Self::open), reporting each skipped entry to `observer` as
    /// a `skill_skipped` event (see [`crate::events`]) once discovery is
    /// done (a failed open reports nothing). The same entries are in
    /// [`ignored`](Self::ignored).
    pub fn open_observed(root: &Path, options: &OpenOptions, observer: &Observer) -> Result<SkillSet> {
        Self::open_in(&crate::ModelRegistry::builtin(), root, options, observer)
    }

    /// [`open_observed`](Self::open_observed) with an options `model` looked
    /// up in `registry`.
    pub fn open_in(
        registry: &crate::ModelRegistry,
        root: &Path,
        options: &OpenOptions,
        observer: &Observer,
    ) -> Result<SkillSet> {
        let set = Self::discover_all(registry, root, options)?;
        for i in &set.ignored {
            observer.emit(|| Event::SkillSkipped(i.clone()));
        }
        Ok(set)
    }

    fn discover_all(registry: &crate::ModelRegistry, root: &Path, options: &OpenOptions) -> Result<SkillSet> {
        let tokenizer = options.tokenizer_in(registry)?;
        let root = fsafe::canonical_root(root)?;
        let mut names = Vec::new();
        let mut ignored = Vec::new();
        let rd = std::fs::read_dir(&root).map_err(|e| Error::new(ErrorKind::Io, format!("skills root: {e}")))?;
        for entry in rd {
            let entry = entry.map_err(|e| Error::new(ErrorKind::Io, format!("skills root: {e}")))?;
            names.push(entry.file_name());
            crate::limits::check_items("skills folder", names.len(), MAX_SKILLS_PER_FOLDER)?;
        }
        names.sort();
        let mut skills = Vec::new();
        for os in names {
            let Some(name) = os.to_str() else {
                ignored.push(Ignored {
                    path: os.to_string_lossy().into_owned(),
                    reason: "name is not valid UTF-8".into(),
                });
                continue;
            };
            if name.starts_with('.') {
                continue; // hidden entries (.git, .DS_Store) are never skills
            }
            if let Some(skill) = discover(&root, name, options.layout, tokenizer, &mut ignored) {
                skills.push(skill);
            }
        }
        Ok(SkillSet { root, tokenizer, skills, ignored })
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The tokenizer the figures are counted with.
    pub fn tokenizer(&self) -> Tokenizer {
        self.tokenizer
    }

    /// The skills, sorted by name.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// Entries skipped because they are not skills.
    pub fn ignored(&self) -> &[Ignored] {
        &self.ignored
    }

    /// Headers, diagnostics and token figures of every skill.
    pub fn listing(&self) -> Listing {
        let skills: Vec<ListedSkill> = self
            .skills
            .iter()
            .map(|s| ListedSkill {
                name: s.name.clone(),
                layout: s.layout,
                path: s.path.clone(),
                valid: s.is_valid(),
                header: s.header.clone(),
                header_tokens: s.header_tokens,
                body_bytes: s.body_bytes(),
                body_tokens: s.body_tokens(),
                diagnostics: s.diagnostics.clone(),
            })
            .collect();
        let valid = skills.iter().filter(|s| s.valid).count();
        Listing {
            encoding: self.tokenizer.encoding().name(),
            invalid: skills.len() - valid,
            valid,
            skills,
            ignored: self.ignored.clone(),
        }
    }

    /// The skill requested by `name`: its folder name or file stem, else
    /// the `name` or `label` in its front-matter (the flat layout's skills
    /// are known by their label). An unsafe name (`..`, a separator, NUL, a
    /// backslash, a drive letter) is `UnsafePath`; an unknown one, or a
    /// label two skills share, `InvalidArgument`.
    pub fn get(&self, name: &str) -> Result<&Skill> {
        fsafe::check_name(name)?;
        if let Some(s) = self.skills.iter().find(|s| s.name == name) {
            return Ok(s);
        }
        let by_header: Vec<&Skill> = self
            .skills
            .iter()
            .filter(|s| s.header.as_ref().is_some_and(|h| h.name == name || h.label.as_deref() == Some(name)))
            .collect();
        if by_header.len() > 1 {
            let names: Vec<&str> = by_header.iter().map(|s| s.name.as_str()).collect();
            return Err(Error::invalid_argument(format!(
                "'{name}' is the label of {} skills ({}); ask by name",
                names.len(),
                names.join(", ")
            )));
        }
        by_header.into_iter().next().ok_or_else(|| {
            let known: Vec<&str> = self.skills.iter().map(|s| s.name.as_str()).collect();
            let close: Vec<&str> = known.iter().copied().filter(|k| strsim::levenshtein(k, name) <= 2).collect();
            let hint = if close.is_empty() {
                format!("{} skills are known", known.len())
            } else {
                format!("did you mean {}?", close.join(", "))
            };
            Error::invalid_argument(format!("no skill named '{name}'; {hint}"))
        })
    }

    /// The body of `name`, read on first request and cached. The file must
    /// still be the one discovery checked (same identity, size and time),
    /// else `Io`. A skill that could not be loaded at discovery returns the
    /// error it had then (`UnsafePath`, `LimitExceeded`, ...). Skills with
    /// validation errors still have bodies.
    pub fn body(&self, name: &str) -> Result<Arc<Body>> {
        crate::text::check_name("skill name", name)?;
        let skill = self.get(name)?;
        if let Some(e) = &skill.load_error {
            return Err(e.clone());
        }
        let file = skill.file.as_ref().ok_or_else(|| Error::internal("readable skill without a file"))?;
        let mut cache = skill.body.lock();
        if let Some(b) = cache.as_ref() {
            return Ok(b.clone());
        }
        let f = fsafe::open_verified(&self.root, file)?;
        let bytes = fsafe::read_all(f, file)?;
        let start = usize::try_from(skill.body_offset).unwrap_or(usize::MAX).min(bytes.len());
        let text = crate::text::utf8(&format!("body of '{}'", file.rel), &bytes[start..])?;
        let text = text.strip_prefix("\r\n").or_else(|| text.strip_prefix('\n')).unwrap_or(text).to_owned();
        let tokens = self.tokenizer.count(&text)?;
        let body = Arc::new(Body { name: skill.name.clone(), text, tokens });
        *cache = Some(body.clone());
        Ok(body)
    }

    /// The skills index for a system prompt under `options` (budget,
    /// ranking); see [`IndexResult`] for what is reported.
    pub fn render_index(&self, options: &IndexOptions) -> Result<IndexResult> {
        index::render(self, options)
    }
}

fn load_error(name: &str, layout: Layout, path: String, e: Error) -> Skill {
    Skill {
        name: name.to_owned(),
        layout,
        path,
        header: None,
        diagnostics: vec![Diagnostic::error(e.kind().as_str(), e.message())],
        header_tokens: 0,
        file: None,
        body_offset: 0,
        load_error: Some(e),
        body: Mutex::new(None),
    }
}

/// Decides what one top-level entry is, and loads its header if it is a skill.
fn discover(
    root: &Path,
    name: &str,
    choice: LayoutChoice,
    tok: Tokenizer,
    ignored: &mut Vec<Ignored>,
) -> Option<Skill> {
    let full = root.join(name);
    let meta = match std::fs::symlink_metadata(&full) {
        Ok(m) => m,
        Err(e) => {
            ignored.push(Ignored { path: name.into(), reason: format!("cannot be read: {e}") });
            return None;
        }
    };
    // A symlinked entry is resolved first and classified by its target, but
    // one that leaves the root (or loops) is reported, never followed.
    let guess = || {
        if name.ends_with(".md") {
            (name.trim_end_matches(".md").to_owned(), Layout::Flat, name.to_owned())
        } else {
            (name.to_owned(), Layout::Folder, format!("{name}/SKILL.md"))
        }
    };
    let (is_dir, is_file) = if meta.file_type().is_symlink() {
        match fsafe::resolve_entry(root, name) {
            Ok(m) => (m.is_dir(), m.is_file()),
            Err(e) => {
                let (stem, layout, rel) = guess();
                return Some(load_error(&stem, layout, rel, e));
            }
        }
    } else {
        (meta.is_dir(), meta.is_file())
    };
    let (stem, layout, rel) = if is_dir && choice != LayoutChoice::Flat {
        (name.to_owned(), Layout::Folder, format!("{name}/{}", skill_file(&full).unwrap_or(SKILL_FILES[0])))
    } else if is_file && name.ends_with(".md") && choice != LayoutChoice::Folder {
        (name.trim_end_matches(".md").to_owned(), Layout::Flat, name.to_owned())
    } else {
        let reason = if is_dir {
            "a folder (flat layout only)"
        } else if is_file && name.ends_with(".md") {
            "a .md file (folder layout only)"
        } else if is_file {
            "not a .md file"
        } else {
            "not a regular file or folder"
        };
        ignored.push(Ignored { path: name.into(), reason: reason.into() });
        return None;
    };
    if let Err(e) = fsafe::check_name(&stem) {
        return Some(load_error(&stem, layout, rel, e));
    }
    if layout == Layout::Folder && choice == LayoutChoice::Auto {
        // In the mixed layout a folder without SKILL.md may hold resources.
        // (The folder itself is inside the root, checked just above.)
        if skill_file(&full).is_none() {
            ignored.push(Ignored { path: name.into(), reason: "a folder without SKILL.md".into() });
            return None;
        }
    }
    let mut skill = load(root, &stem, layout, rel, tok);
    if choice == LayoutChoice::Auto
        && layout == Layout::Flat
        && skill.load_error.as_ref().is_some_and(frontmatter::is_missing)
    {
        // README.md, CONTRIBUTING.md: documents beside the skills, not
        // broken skills. Only an explicit flat layout reports them.
        ignored.push(Ignored { path: name.into(), reason: "a .md file without front-matter (not a skill)".into() });
        return None;
    }
    if layout == Layout::Folder && skill_file(&full) == Some(SKILL_FILES[0]) && has_entry(&full, SKILL_FILES[1]) {
        skill.diagnostics.push(Diagnostic::warning(
            "duplicate_skill_file",
            format!("'{name}' holds both SKILL.md and skill.md; SKILL.md is read"),
        ));
    }
    Some(skill)
}

/// The skill file names a folder may hold, preferred first: the Agent
/// Skills reference implementation (skills-ref's `find_skill_md`) reads
/// `SKILL.md`, else `skill.md`; other spellings are not skill files.
const SKILL_FILES: [&str; 2] = ["SKILL.md", "skill.md"];

/// Whether `dir` lists an entry named exactly `name` (a case-insensitive
/// file system answers `skill.md` for `SKILL.md`; the listing does not).
fn has_entry(dir: &Path, name: &str) -> bool {
    std::fs::read_dir(dir).is_ok_and(|rd| rd.flatten().take(4096).any(|e| e.file_name() == name))
}

fn skill_file(dir: &Path) -> Option<&'static str> {
    SKILL_FILES.into_iter().find(|f| has_entry(dir, f))
}

fn load(root: &Path, stem: &str, layout: Layout, rel: String, tok: Tokenizer) -> Skill {
    let read = || -> Result<(fsafe::FileId, frontmatter::Block)> {
        let id = fsafe::resolve(root, &rel)?;
        let mut f = fsafe::open_verified(root, &id)?;
        f.seek(SeekFrom::Start(0)).map_err(|e| Error::new(ErrorKind::Io, format!("'{rel}': {e}")))?;
        let block = frontmatter::read_block(&f, &rel)?;
        Ok((id, block))
    };
    let (id, block) = match read() {
        Ok(x) => x,
        Err(e) => return load_error(stem, layout, rel, e),
    };
    let map = match frontmatter::parse(&block.yaml, &rel) {
        Ok(m) => m,
        Err(e) => return load_error(stem, layout, rel, e),
    };
    let (header, diagnostics) = validate::header(&map, stem, layout);
    let header_tokens = tok.count(&index::entry_line(stem, &header, None)).unwrap_or(0);
    Skill {
        name: stem.to_owned(),
        layout,
        path: rel,
        header: Some(header),
        diagnostics,
        header_tokens,
        file: Some(id),
        body_offset: block.body_offset,
        load_error: None,
        body: Mutex::new(None),
    }
}

#[cfg(test)]
mod tests;
