//! A model in the Hugging Face hub cache, found as huggingface_hub's
//! `try_to_load_from_cache` finds a file (read from huggingface/huggingface_hub:
//! `constants.py` for the cache root, `file_download.py` for
//! `repo_folder_name` and the lookup, `utils/_validators.py` for repo ids):
//!
//! - the cache root is `$HF_HUB_CACHE`, else `$HUGGINGFACE_HUB_CACHE`, else
//!   `$HF_HOME/hub`, else `$XDG_CACHE_HOME/huggingface/hub`, else
//!   `~/.cache/huggingface/hub`;
//! - a model repo `Org/Name` is the folder `models--Org--Name`;
//! - a revision (default `main`) is resolved through `refs/<revision>` to a
//!   commit hash, else taken as one; its files are in
//!   `snapshots/<commit>/`, symlinks into `blobs/`;
//! - `.no_exist/<commit>/<file>` records that the repo has no such file.
//!
//! Besides a repo id (`Org/Name`, `Org/Name@revision`), a folder is
//! accepted: a repo folder (`.../models--Org--Name`), a snapshot folder or
//! any folder holding `tokenizer.json`. The template files beside the
//! tokenizer (`tokenizer_config.json`, `chat_template.jinja`) are read by
//! `template::ModelTemplate` from the same folder, as transformers reads
//! them from the snapshot.

use std::path::{Path, PathBuf};

use super::{has_list, list_names, read_small, HostTemplate, ModelLocation};
use crate::text::clip;
use crate::{Error, ErrorKind, Result};

const TOKENIZER: &str = "tokenizer.json";

/// The hub cache root, as huggingface_hub computes it (see the module doc).
pub fn default_hf_cache() -> Result<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(p) = var("HF_HUB_CACHE").or_else(|| var("HUGGINGFACE_HUB_CACHE")) {
        return Ok(p);
    }
    if let Some(home) = var("HF_HOME") {
        return Ok(home.join("hub"));
    }
    let cache = match var("XDG_CACHE_HOME") {
        Some(c) => c,
        None => super::home_dir()?.join(".cache"),
    };
    Ok(cache.join("huggingface").join("hub"))
}

/// Finds the `tokenizer.json` of `model` (a repo id or a folder, see the
/// module doc), in the hub cache `cache` (`None`: [`default_hf_cache`]) for
/// a repo id.
pub fn locate_hf(model: &str, cache: Option<&Path>) -> Result<ModelLocation> {
    crate::text::check_name("Hugging Face model", model)?;
    let as_path = Path::new(model);
    if as_path.is_dir() {
        return locate_folder(as_path, model);
    }
    if looks_like_path(model) {
        return Err(Error::new(ErrorKind::Io, format!("Hugging Face model '{}': no such folder", clip(model))));
    }
    let (repo_id, revision) = match model.split_once('@') {
        Some((id, rev)) => (id, Some(rev)),
        None => (model, None),
    };
    check_repo_id(repo_id)?;
    let cache = match cache {
        Some(c) => c.to_path_buf(),
        None => default_hf_cache()?,
    };
    if !cache.is_dir() {
        return Err(Error::new(
            ErrorKind::Io,
            format!(
                "Hugging Face cache {}: no such folder ($HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub; give the folder)",
                cache.display()
            ),
        ));
    }
    let folder_name = format!("models--{}", repo_id.replace('/', "--"));
    let repo = cache.join(&folder_name);
    if !repo.is_dir() {
        let repos: Vec<String> = list_names(&cache, 10_000)
            .into_iter()
            .filter_map(|n| n.strip_prefix("models--").map(|r| r.replacen("--", "/", 1)))
            .collect();
        let close = crate::text::close_matches(repo_id, repos.iter().map(String::as_str), 3);
        let hint = if close.is_empty() { has_list("it has", &repos) } else { has_list("did you mean", &close) };
        return Err(Error::new(
            ErrorKind::UnknownModel,
            format!(
                "the Hugging Face cache {} has no model {repo_id} (no folder {folder_name}; nothing is downloaded: fetch it with `hf download {repo_id}` first){hint}",
                cache.display()
            ),
        ));
    }
    locate_in_repo(&repo, revision, &format!("Hugging Face model {repo_id}"))
}

/// A folder given: holding `tokenizer.json` itself, or a repo folder.
fn locate_folder(dir: &Path, shown: &str) -> Result<ModelLocation> {
    let file = dir.join(TOKENIZER);
    if file.exists() || is_dangling(&file) {
        return found(file, shown.to_string());
    }
    if dir.join("snapshots").is_dir() || dir.join("refs").is_dir() {
        return locate_in_repo(dir, None, &format!("Hugging Face cache folder {}", clip(shown)));
    }
    Err(Error::new(
        ErrorKind::Io,
        format!(
            "{}: no {TOKENIZER} in this folder, and it is not a hub cache repo folder (models--Org--Name with refs/ and snapshots/)",
            clip(shown)
        ),
    ))
}

/// The snapshot of `revision` (default `main`) in the repo folder `repo`.
fn locate_in_repo(repo: &Path, revision: Option<&str>, what: &str) -> Result<ModelLocation> {
    let revision = revision.unwrap_or("main");
    check_revision(revision, what)?;
    let ref_file = repo.join("refs").join(revision);
    let commit = if ref_file.is_file() {
        let text = read_small(&ref_file, what)?;
        let commit = text.trim().to_string();
        check_commit(&commit, &ref_file, what)?;
        commit
    } else {
        revision.to_string()
    };
    let snapshots = repo.join("snapshots");
    let snapshot = snapshots.join(&commit);
    if !snapshot.is_dir() {
        let have = list_names(&snapshots, 1000);
        let refs = list_names(&repo.join("refs"), 1000);
        return Err(Error::new(
            ErrorKind::Io,
            format!(
                "{what}: the revision '{}' is not in the cache ({} has no snapshot {}){}{}",
                clip(revision),
                repo.display(),
                clip(&commit),
                has_list("its refs are", &refs),
                has_list("its snapshots are (give one as Org/Name@<commit>)", &have)
            ),
        ));
    }
    if repo.join(".no_exist").join(&commit).join(TOKENIZER).is_file() {
        return Err(Error::invalid_argument(format!(
            "{what}: the repo has no {TOKENIZER} (the cache records it as absent at {}); turnfit reads tokenizer.json or a GGUF (give one with --tokenizer)",
            clip(&commit)
        )));
    }
    let file = snapshot.join(TOKENIZER);
    if !file.exists() && !is_dangling(&file) {
        let ggufs: Vec<String> = list_names(&snapshot, 1000).into_iter().filter(|n| n.ends_with(".gguf")).collect();
        let hint = if ggufs.is_empty() {
            String::new()
        } else {
            let shown: Vec<String> = ggufs.iter().take(12).map(|n| clip(n).into_owned()).collect();
            format!("; it holds GGUF files, give one with --tokenizer: {}", shown.join(", "))
        };
        return Err(Error::new(
            ErrorKind::Io,
            format!(
                "{what}: the snapshot {} has no {TOKENIZER} (not downloaded, or the repo has none){hint}",
                snapshot.display()
            ),
        ));
    }
    found(file, format!("{what} ({})", snapshot.display()))
}

/// The location of `file`, refusing a snapshot symlink whose blob is gone.
fn found(file: PathBuf, origin: String) -> Result<ModelLocation> {
    if is_dangling(&file) {
        return Err(Error::new(
            ErrorKind::Io,
            format!("{origin}: {} is a symlink to a blob that is missing (a partial download?)", file.display()),
        ));
    }
    if !file.is_file() {
        return Err(Error::new(ErrorKind::Io, format!("{origin}: {} is not a file", file.display())));
    }
    Ok(ModelLocation { tokenizer: file, origin, host_template: HostTemplate::Files })
}

/// A symlink whose target does not exist.
fn is_dangling(path: &Path) -> bool {
    path.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) && !path.exists()
}

/// Text meant as a path, not a repo id: it starts with `/`, `.`, `~` or a
/// drive letter, or has a backslash.
fn looks_like_path(s: &str) -> bool {
    s.starts_with(['/', '.', '~']) || s.contains('\\') || s.as_bytes().get(1) == Some(&b':')
}

/// A repo id as huggingface_hub's `validate_repo_id` accepts it: `name` or
/// `namespace/name`, ASCII letters, digits, `-`, `_`, `.`, no `--` or
/// `..`, not starting or ending with `-` or `.`, at most 96 bytes a part,
/// not ending in `.git`.
fn check_repo_id(id: &str) -> Result<()> {
    let bad = |why: &str| {
        Err(Error::invalid_argument(format!(
            "Hugging Face model '{}': {why} (a repo id is Org/Name, optionally @revision; or give a folder)",
            clip(id)
        )))
    };
    if id.contains("..") {
        return Err(Error::new(
            ErrorKind::UnsafePath,
            format!("Hugging Face model '{}': '..' is not allowed in a repo id", clip(id)),
        ));
    }
    let parts: Vec<&str> = id.split('/').collect();
    if parts.len() > 2 {
        return bad("has more than one '/'");
    }
    for part in &parts {
        if part.is_empty() || part.len() > 96 {
            return bad("a part is empty or longer than 96 bytes");
        }
        if let Some(c) = part.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))) {
            return bad(&format!("{c:?} is not allowed (letters, digits, '-', '_', '.')"));
        }
        if part.starts_with(['-', '.']) || part.ends_with(['-', '.']) {
            return bad("a part starts or ends with '-' or '.'");
        }
    }
    if id.contains("--") {
        return bad("'--' is not allowed");
    }
    if id.ends_with(".git") {
        return bad("a repo id does not end in .git");
    }
    Ok(())
}

/// A revision: a branch or tag name (`main`, `refs/pr/1` as `pr/1`) or a
/// commit hash; its path components must stay inside `refs/` and
/// `snapshots/`.
fn check_revision(rev: &str, what: &str) -> Result<()> {
    let unsafe_path = rev.is_empty()
        || rev.starts_with('/')
        || rev.contains(['\\', '\0'])
        || rev.split('/').any(|c| c.is_empty() || c == "." || c == "..");
    if unsafe_path {
        return Err(Error::new(
            ErrorKind::UnsafePath,
            format!("{what}: the revision '{}' is not a branch, tag or commit name", clip(rev)),
        ));
    }
    Ok(())
}

/// The commit a `refs/` file names: one path component (hex in practice).
fn check_commit(commit: &str, file: &Path, what: &str) -> Result<()> {
    let ok = !commit.is_empty() && commit.len() <= 128 && commit.bytes().all(|b| b.is_ascii_alphanumeric());
    if !ok {
        return Err(Error::new(
            ErrorKind::UnsafePath,
            format!("{what}: {} does not hold a commit hash ('{}')", file.display(), clip(commit)),
        ));
    }
    Ok(())
}
