//! Status codes. The numbers are part of the ABI: a code is never renumbered,
//! and a retired code is never reused.

use ctxkit_core::ErrorKind;

/// The result of every fallible ctxkit function. `CTXKIT_STATUS_OK` is zero;
/// every other value is a failure, described further by the `ctxkit_error`
/// written to `*err` when the caller passed a non-NULL `err`.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ctxkit_status {
    /// Success.
    Ok = 0,
    /// A required pointer argument was NULL (or a NULL buffer had a non-zero length).
    NullArgument = 1,
    /// Input text was not valid UTF-8; the message gives the byte offset.
    InvalidUtf8 = 2,
    /// An argument was outside its documented domain (unknown flag or enum value,
    /// a budget too small for a truncation marker, ...).
    InvalidArgument = 3,
    /// JSON input was malformed or did not match its documented schema.
    InvalidJson = 4,
    /// An input exceeded a documented limit (size, nesting depth, count).
    LimitExceeded = 5,
    /// The encoding name is unknown; the message names close matches.
    UnknownEncoding = 6,
    /// The model name is unknown; the message names close matches.
    UnknownModel = 7,
    /// A token id is not in the encoding's vocabulary.
    UnknownToken = 8,
    /// ctxkit panicked; the panic was caught at the boundary. Please report it.
    Panic = 9,
    /// An internal invariant broke. Please report it.
    Internal = 10,
    /// What must be kept (system prompt, tools, latest turn, pinned messages)
    /// does not fit the budget; the message gives the figures.
    DoesNotFit = 11,
    /// A file could not be read; the message names the path relative to its root.
    Io = 12,
    /// A path was refused: it escapes its root (`..`, absolute, a symlink out
    /// of the root) or contains NUL, a backslash or a drive letter.
    UnsafePath = 13,
    /// An agent call would re-enter an agent already on the stack; the
    /// message carries the whole chain.
    CycleDetected = 14,
    /// An agent call would exceed the stack's maximum depth.
    DepthExceeded = 15,
}

impl ctxkit_status {
    pub(crate) fn name(self) -> &'static str {
        match self {
            ctxkit_status::Ok => "CTXKIT_STATUS_OK\0",
            ctxkit_status::NullArgument => "CTXKIT_STATUS_NULL_ARGUMENT\0",
            ctxkit_status::InvalidUtf8 => "CTXKIT_STATUS_INVALID_UTF8\0",
            ctxkit_status::InvalidArgument => "CTXKIT_STATUS_INVALID_ARGUMENT\0",
            ctxkit_status::InvalidJson => "CTXKIT_STATUS_INVALID_JSON\0",
            ctxkit_status::LimitExceeded => "CTXKIT_STATUS_LIMIT_EXCEEDED\0",
            ctxkit_status::UnknownEncoding => "CTXKIT_STATUS_UNKNOWN_ENCODING\0",
            ctxkit_status::UnknownModel => "CTXKIT_STATUS_UNKNOWN_MODEL\0",
            ctxkit_status::UnknownToken => "CTXKIT_STATUS_UNKNOWN_TOKEN\0",
            ctxkit_status::Panic => "CTXKIT_STATUS_PANIC\0",
            ctxkit_status::Internal => "CTXKIT_STATUS_INTERNAL\0",
            ctxkit_status::DoesNotFit => "CTXKIT_STATUS_DOES_NOT_FIT\0",
            ctxkit_status::Io => "CTXKIT_STATUS_IO\0",
            ctxkit_status::UnsafePath => "CTXKIT_STATUS_UNSAFE_PATH\0",
            ctxkit_status::CycleDetected => "CTXKIT_STATUS_CYCLE_DETECTED\0",
            ctxkit_status::DepthExceeded => "CTXKIT_STATUS_DEPTH_EXCEEDED\0",
        }
    }
}

impl From<ErrorKind> for ctxkit_status {
    fn from(kind: ErrorKind) -> Self {
        match kind {
            ErrorKind::InvalidArgument => ctxkit_status::InvalidArgument,
            ErrorKind::InvalidUtf8 => ctxkit_status::InvalidUtf8,
            ErrorKind::UnknownEncoding => ctxkit_status::UnknownEncoding,
            ErrorKind::UnknownModel => ctxkit_status::UnknownModel,
            ErrorKind::UnknownToken => ctxkit_status::UnknownToken,
            ErrorKind::LimitExceeded => ctxkit_status::LimitExceeded,
            ErrorKind::InvalidJson => ctxkit_status::InvalidJson,
            ErrorKind::DoesNotFit => ctxkit_status::DoesNotFit,
            ErrorKind::Io => ctxkit_status::Io,
            ErrorKind::UnsafePath => ctxkit_status::UnsafePath,
            ErrorKind::CycleDetected => ctxkit_status::CycleDetected,
            ErrorKind::DepthExceeded => ctxkit_status::DepthExceeded,
            // Internal, and any kind added to the core before this mapping
            // learns about it (the test below catches that).
            _ => ctxkit_status::Internal,
        }
    }
}

/// The symbolic name of `status` (`"CTXKIT_STATUS_OK"`, ...), or
/// `"CTXKIT_STATUS_UNRECOGNIZED"` for a number this library does not define.
/// The returned string is static; never free it. Thread-safe.
#[no_mangle]
pub extern "C" fn ctxkit_status_name(status: u32) -> *const std::ffi::c_char {
    let name = crate::boundary::guard_value("ctxkit_status_name", "CTXKIT_STATUS_UNRECOGNIZED\0", || {
        crate::status::from_u32(status).map_or("CTXKIT_STATUS_UNRECOGNIZED\0", ctxkit_status::name)
    });
    name.as_ptr().cast()
}

pub(crate) fn from_u32(v: u32) -> Option<ctxkit_status> {
    use ctxkit_status::*;
    [
        Ok,
        NullArgument,
        InvalidUtf8,
        InvalidArgument,
        InvalidJson,
        LimitExceeded,
        UnknownEncoding,
        UnknownModel,
        UnknownToken,
        Panic,
        Internal,
        DoesNotFit,
        Io,
        UnsafePath,
        CycleDetected,
        DepthExceeded,
    ]
    .into_iter()
    .find(|s| *s as u32 == v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_core_error_kind_has_its_own_status() {
        for kind in ErrorKind::ALL {
            let status = ctxkit_status::from(kind);
            assert_eq!(status == ctxkit_status::Internal, kind == ErrorKind::Internal, "{kind:?}");
            let expected = format!("CTXKIT_STATUS_{}\0", kind.as_str().to_ascii_uppercase());
            assert_eq!(status.name(), expected);
        }
    }

    #[test]
    fn numbers_are_stable() {
        for v in 0..=15u32 {
            assert_eq!(from_u32(v).map(|s| s as u32), Some(v));
        }
        assert_eq!(from_u32(16), None);
    }
}
