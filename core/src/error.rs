//! One error type for the whole core.
//!
//! Every failure carries a stable [`ErrorKind`] (which the C ABI maps one to
//! one onto `turnfit_status`) and a human-readable message that says what was
//! wrong with the input, not just that something was.

use std::fmt;

/// The category of an [`Error`]. Bindings map each kind to a stable status
/// code, so kinds are only ever added, never renumbered or repurposed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// An argument is outside its documented domain (an unknown flag bit or
    /// enum value, a truncation budget too small for its marker).
    InvalidArgument,
    /// Input bytes are not valid UTF-8; the message gives the byte offset.
    InvalidUtf8,
    /// The encoding name is not one turnfit ships; the message names close matches.
    UnknownEncoding,
    /// The model name is not in the registry; the message names close matches.
    UnknownModel,
    /// A token id is not part of the encoding's vocabulary.
    UnknownToken,
    /// An input exceeds a documented limit (see [`crate::limits`]).
    LimitExceeded,
    /// JSON input could not be parsed or does not match its schema.
    InvalidJson,
    /// What must be kept (system prompt, tools, latest turn, pinned
    /// messages) does not fit the budget; the message gives the figures.
    DoesNotFit,
    /// A file could not be read (missing, unreadable, or changed while read);
    /// the message names the path relative to its root.
    Io,
    /// A path was refused: it escapes its root (`..`, an absolute path, a
    /// symlink pointing outside), contains NUL, a backslash or a drive letter.
    UnsafePath,
    /// An agent call stack would re-enter an agent already on it; the message
    /// carries the whole chain ("planner -> coder -> planner").
    CycleDetected,
    /// An agent call stack would exceed its maximum depth.
    DepthExceeded,
    /// YAML input (a skill's front-matter) could not be parsed or does not
    /// have the expected shape. Its own kind since ABI 2: front-matter
    /// errors used to be reported as `InvalidJson`.
    InvalidYaml,
    /// An invariant inside turnfit broke. Always a bug; please report it.
    Internal,
}

impl ErrorKind {
    /// Every kind, for exhaustive mapping tests in the bindings.
    pub const ALL: [ErrorKind; 14] = [
        ErrorKind::InvalidArgument,
        ErrorKind::InvalidUtf8,
        ErrorKind::UnknownEncoding,
        ErrorKind::UnknownModel,
        ErrorKind::UnknownToken,
        ErrorKind::LimitExceeded,
        ErrorKind::InvalidJson,
        ErrorKind::DoesNotFit,
        ErrorKind::Io,
        ErrorKind::UnsafePath,
        ErrorKind::CycleDetected,
        ErrorKind::DepthExceeded,
        ErrorKind::InvalidYaml,
        ErrorKind::Internal,
    ];

    /// A short snake_case name, stable across releases, used in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::InvalidArgument => "invalid_argument",
            ErrorKind::InvalidUtf8 => "invalid_utf8",
            ErrorKind::UnknownEncoding => "unknown_encoding",
            ErrorKind::UnknownModel => "unknown_model",
            ErrorKind::UnknownToken => "unknown_token",
            ErrorKind::LimitExceeded => "limit_exceeded",
            ErrorKind::InvalidJson => "invalid_json",
            ErrorKind::DoesNotFit => "does_not_fit",
            ErrorKind::Io => "io",
            ErrorKind::UnsafePath => "unsafe_path",
            ErrorKind::CycleDetected => "cycle_detected",
            ErrorKind::DepthExceeded => "depth_exceeded",
            ErrorKind::InvalidYaml => "invalid_yaml",
            ErrorKind::Internal => "internal",
        }
    }
}

/// A turnfit error: a kind plus a message meant for the person reading logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

/// Result alias used throughout the core.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Builds an error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error { kind, message: message.into() }
    }

    pub(crate) fn invalid_argument(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidArgument, message)
    }

    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, message)
    }

    /// The error's category.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The human-readable message (no trailing newline, no NUL bytes).
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
