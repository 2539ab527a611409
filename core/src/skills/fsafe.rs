//! Reading files inside a skills root without trusting the tree.
//!
//! A skills folder may come from a repository or a download, so every path is
//! treated as hostile: names are checked before they are joined, every file
//! is resolved to its canonical path and must lie inside the canonical root
//! (a symlink may point within the root, never out of it), and a file is
//! trusted only after it is opened: the opened file's identity (device and
//! inode), kind and size must be what the check recorded, so a file swapped
//! between the check and the read is refused rather than read. Lazy body
//! loads repeat the comparison against what discovery recorded.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::limits::MAX_SKILL_FILE_BYTES;
use crate::{Error, ErrorKind, Result};

fn unsafe_path(message: String) -> Error {
    Error::new(ErrorKind::UnsafePath, message)
}

fn io(message: String) -> Error {
    Error::new(ErrorKind::Io, message)
}

/// Refuses a skill name that could address anything but one entry directly
/// inside the root: empty, `.`/`..`, path separators of either kind, NUL,
/// control characters, or a drive-letter prefix (`C:`).
pub(crate) fn check_name(name: &str) -> Result<()> {
    let shown = name.escape_debug();
    if name.is_empty() {
        return Err(unsafe_path("skill name is empty".into()));
    }
    if name.contains('\0') {
        return Err(unsafe_path(format!("skill name '{shown}' contains NUL")));
    }
    if name.contains('\\') {
        return Err(unsafe_path(format!("skill name '{shown}' contains a backslash")));
    }
    if name.starts_with('/') {
        return Err(unsafe_path(format!("skill name '{shown}' is an absolute path")));
    }
    if name == "." || name == ".." || name.split('/').any(|s| s == "..") {
        return Err(unsafe_path(format!("skill name '{shown}' contains '..'")));
    }
    if name.contains('/') {
        return Err(unsafe_path(format!("skill name '{shown}' contains a path separator")));
    }
    let b = name.as_bytes();
    if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        return Err(unsafe_path(format!("skill name '{shown}' starts with a drive letter")));
    }
    if name.chars().any(char::is_control) {
        return Err(unsafe_path(format!("skill name '{shown}' contains a control character")));
    }
    Ok(())
}

/// The canonical form of the root, which must be a directory.
pub(crate) fn canonical_root(root: &Path) -> Result<PathBuf> {
    let canon =
        std::fs::canonicalize(root).map_err(|e| io(format!("skills root '{}': {}", root.display(), describe(&e))))?;
    let meta =
        std::fs::metadata(&canon).map_err(|e| io(format!("skills root '{}': {}", root.display(), describe(&e))))?;
    if !meta.is_dir() {
        return Err(io(format!("skills root '{}' is not a directory", root.display())));
    }
    Ok(canon)
}

/// What a check recorded about a file, to compare the opened file against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileId {
    /// Canonical path (inside the canonical root).
    pub path: PathBuf,
    /// Path relative to the root, for messages (`pdf-tools/SKILL.md`).
    pub rel: String,
    key: (u64, u64),
    pub len: u64,
    modified: Option<SystemTime>,
}

#[cfg(unix)]
fn file_key(m: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

#[cfg(not(unix))]
fn file_key(_m: &std::fs::Metadata) -> (u64, u64) {
    // No portable identity: the size, time and path checks still apply.
    (0, 0)
}

#[cfg(unix)]
const ELOOP: i32 = libc::ELOOP;
#[cfg(not(unix))]
const ELOOP: i32 = 62;

fn describe(e: &std::io::Error) -> String {
    if e.raw_os_error() == Some(ELOOP) {
        return "symlink loop (too many levels of symbolic links)".into();
    }
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_owned(),
        None => s,
    }
}

/// Resolves `rel` (already name-checked) under the canonical `root` and
/// records the file it names. Fails with `UnsafePath` when it resolves
/// outside the root, `Io` for loops, missing or non-regular files, and
/// `LimitExceeded` when the file is over [`MAX_SKILL_FILE_BYTES`].
pub(crate) fn resolve(root: &Path, rel: &str) -> Result<FileId> {
    let joined = root.join(rel);
    let canon = std::fs::canonicalize(&joined).map_err(|e| {
        let kind = if e.raw_os_error() == Some(ELOOP) { ErrorKind::UnsafePath } else { ErrorKind::Io };
        Error::new(kind, format!("'{rel}': {}", describe(&e)))
    })?;
    if !canon.starts_with(root) {
        return Err(unsafe_path(format!("'{rel}' resolves outside the skills root (a symlink leaves the root)")));
    }
    // `canon` has no symlinks left, so this describes the file itself.
    let meta = std::fs::symlink_metadata(&canon).map_err(|e| io(format!("'{rel}': {}", describe(&e))))?;
    if !meta.is_file() {
        return Err(io(format!("'{rel}' is not a regular file")));
    }
    crate::limits::check(
        &format!("skill file '{rel}'"),
        usize::try_from(meta.len()).unwrap_or(usize::MAX),
        MAX_SKILL_FILE_BYTES,
    )?;
    Ok(FileId {
        path: canon,
        rel: rel.to_owned(),
        key: file_key(&meta),
        len: meta.len(),
        modified: meta.modified().ok(),
    })
}

/// The metadata of the top-level entry `name` after resolving symlinks,
/// refusing (`UnsafePath`) a target outside the root or a symlink loop.
pub(crate) fn resolve_entry(root: &Path, name: &str) -> Result<std::fs::Metadata> {
    let canon = std::fs::canonicalize(root.join(name)).map_err(|e| {
        let kind = if e.raw_os_error() == Some(ELOOP) { ErrorKind::UnsafePath } else { ErrorKind::Io };
        Error::new(kind, format!("'{name}': {}", describe(&e)))
    })?;
    if !canon.starts_with(root) {
        return Err(unsafe_path(format!("'{name}' is a symlink that leaves the skills root")));
    }
    std::fs::metadata(&canon).map_err(|e| io(format!("'{name}': {}", describe(&e))))
}

/// Opens the recorded file and checks that what was opened is that file:
/// a regular file with the same identity, size and modification time,
/// whose real path (on Linux, read back from the open descriptor) is still
/// inside the root. Anything else is `Io` ("replaced" or "changed") or
/// `UnsafePath`.
///
/// The open itself never blocks and never follows a link: a file replaced
/// by a FIFO would otherwise block `open` forever (before any check could
/// run), and one replaced by a symlink is refused by the kernel (`ELOOP`,
/// reported as `UnsafePath`). Only after `fstat` says "regular file" is
/// anything read; `O_NONBLOCK` has no effect on regular-file reads.
pub(crate) fn open_verified(root: &Path, id: &FileId) -> Result<File> {
    let f = open_no_block(&id.path).map_err(|e| {
        if e.raw_os_error() == Some(ELOOP) {
            // The recorded path is canonical, so a link there is new.
            return unsafe_path(format!("'{}' was replaced by a symbolic link after it was checked", id.rel));
        }
        io(format!("'{}': {}", id.rel, describe(&e)))
    })?;
    let meta = f.metadata().map_err(|e| io(format!("'{}': {}", id.rel, describe(&e))))?;
    if !meta.is_file() {
        return Err(io(format!("'{}' is no longer a regular file", id.rel)));
    }
    if file_key(&meta) != id.key {
        return Err(io(format!("'{}' was replaced by another file after it was checked", id.rel)));
    }
    if meta.len() != id.len || meta.modified().ok() != id.modified {
        return Err(io(format!("'{}' changed after it was checked (size or modification time differs)", id.rel)));
    }
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        if let Ok(real) = std::fs::read_link(format!("/proc/self/fd/{}", f.as_raw_fd())) {
            if !real.starts_with(root) {
                return Err(unsafe_path(format!("'{}' was opened outside the skills root", id.rel)));
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = root;
    Ok(f)
}

#[cfg(unix)]
fn open_no_block(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

#[cfg(not(unix))]
fn open_no_block(path: &Path) -> std::io::Result<File> {
    // No FIFOs to block on; the identity checks after opening still apply.
    File::open(path)
}

/// Reads a whole verified file, never more than [`MAX_SKILL_FILE_BYTES`]
/// even if it grows while being read.
pub(crate) fn read_all(f: File, id: &FileId) -> Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(usize::try_from(id.len).unwrap_or(0).min(MAX_SKILL_FILE_BYTES));
    f.take(MAX_SKILL_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io(format!("'{}': {}", id.rel, describe(&e))))?;
    crate::limits::check(&format!("skill file '{}'", id.rel), bytes.len(), MAX_SKILL_FILE_BYTES)?;
    if bytes.len() as u64 != id.len {
        return Err(io(format!("'{}' changed while it was read", id.rel)));
    }
    Ok(bytes)
}
