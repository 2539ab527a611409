//! Status codes. The numbers are part of the ABI: a code is never renumbered,
//! and a retired code is never reused.

use turnfit_core::ErrorKind;

/// The result of every fallible turnfit function. `TURNFIT_STATUS_OK` is zero;
/// every other value is a failure, described further by the `turnfit_error`
/// written to `*err` when the caller passed a non-NULL `err`.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum turnfit_status {
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
    /// turnfit panicked; the panic was caught at the boundary. Please report it.
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
    /// YAML input (a skill's front-matter) was malformed or not the expected
    /// shape. New in ABI 2 (front-matter errors were `INVALID_JSON` before).
    InvalidYaml = 16,
}

/// Every status once, with the core kind it stands for: the one list the
/// names, the number check and both conversions are derived from (the enum
/// above is spelled out only because cbindgen reads it). The tests below
/// fail if the enum and this list disagree.
const STATUSES: [(turnfit_status, Option<ErrorKind>); 17] = {
    use turnfit_status as S;
    use ErrorKind as K;
    [
        (S::Ok, None),
        (S::NullArgument, None),
        (S::InvalidUtf8, Some(K::InvalidUtf8)),
        (S::InvalidArgument, Some(K::InvalidArgument)),
        (S::InvalidJson, Some(K::InvalidJson)),
        (S::LimitExceeded, Some(K::LimitExceeded)),
        (S::UnknownEncoding, Some(K::UnknownEncoding)),
        (S::UnknownModel, Some(K::UnknownModel)),
        (S::UnknownToken, Some(K::UnknownToken)),
        (S::Panic, None),
        (S::Internal, Some(K::Internal)),
        (S::DoesNotFit, Some(K::DoesNotFit)),
        (S::Io, Some(K::Io)),
        (S::UnsafePath, Some(K::UnsafePath)),
        (S::CycleDetected, Some(K::CycleDetected)),
        (S::DepthExceeded, Some(K::DepthExceeded)),
        (S::InvalidYaml, Some(K::InvalidYaml)),
    ]
};

impl turnfit_status {
    /// The kind name shared with core and every binding (`unknown_model`,
    /// as tests/vectors spells it); the three statuses only the C ABI has
    /// are `ok`, `null_argument` and `panic`.
    pub(crate) fn kind_name(self) -> &'static str {
        match self {
            turnfit_status::Ok => "ok",
            turnfit_status::NullArgument => "null_argument",
            turnfit_status::Panic => "panic",
            s => STATUSES.iter().find(|(t, _)| *t == s).and_then(|(_, k)| *k).map_or("internal", ErrorKind::as_str),
        }
    }

    /// `TURNFIT_STATUS_<KIND>`, NUL-terminated (built once per status).
    pub(crate) fn name(self) -> &'static str {
        static NAMES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
        let names = NAMES.get_or_init(|| {
            STATUSES.iter().map(|(s, _)| format!("TURNFIT_STATUS_{}\0", s.kind_name().to_ascii_uppercase())).collect()
        });
        STATUSES.iter().position(|(t, _)| *t == self).map_or("TURNFIT_STATUS_INTERNAL\0", |i| names[i].as_str())
    }
}

impl From<ErrorKind> for turnfit_status {
    fn from(kind: ErrorKind) -> Self {
        // Internal, and any kind added to the core before the list learns
        // about it (the test below catches that).
        STATUSES.iter().find(|(_, k)| *k == Some(kind)).map_or(turnfit_status::Internal, |(s, _)| *s)
    }
}

/// The symbolic name of `status` (`"TURNFIT_STATUS_OK"`, ...), or
/// `"TURNFIT_STATUS_UNRECOGNIZED"` for a number this library does not define.
/// The returned string is static; never free it. Thread-safe.
#[no_mangle]
pub extern "C" fn turnfit_status_name(status: u32) -> *const std::ffi::c_char {
    let name = crate::boundary::guard_value("turnfit_status_name", "TURNFIT_STATUS_UNRECOGNIZED\0", || {
        crate::status::from_u32(status).map_or("TURNFIT_STATUS_UNRECOGNIZED\0", turnfit_status::name)
    });
    name.as_ptr().cast()
}

pub(crate) fn from_u32(v: u32) -> Option<turnfit_status> {
    STATUSES.iter().map(|(s, _)| *s).find(|s| *s as u32 == v)
}

/// The core kind name of `status` (`"unknown_model"`, `"does_not_fit"`,
/// ...; `"ok"`, `"null_argument"` and `"panic"` for the statuses only the C
/// ABI has), spelled as tests/vectors and every binding spell it, or
/// `"unrecognized"` for a number this library does not define. Bindings use
/// it instead of rebuilding names from `TURNFIT_STATUS_*`. The string is
/// static and NUL-terminated; never free it. Thread-safe.
#[no_mangle]
pub extern "C" fn turnfit_status_kind_name(status: u32) -> *const std::ffi::c_char {
    let name = crate::boundary::guard_value("turnfit_status_kind_name", "unrecognized\0", || {
        static NAMES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
        let names = NAMES.get_or_init(|| STATUSES.iter().map(|(s, _)| format!("{}\0", s.kind_name())).collect());
        STATUSES.iter().position(|(s, _)| *s as u32 == status).map_or("unrecognized\0", |i| names[i].as_str())
    });
    name.as_ptr().cast()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_core_error_kind_has_its_own_status() {
        for kind in ErrorKind::ALL {
            let status = turnfit_status::from(kind);
            assert_eq!(status == turnfit_status::Internal, kind == ErrorKind::Internal, "{kind:?}");
            let expected = format!("TURNFIT_STATUS_{}\0", kind.as_str().to_ascii_uppercase());
            assert_eq!(status.name(), expected);
        }
    }

    #[test]
    fn numbers_are_stable() {
        for v in 0..=16u32 {
            assert_eq!(from_u32(v).map(|s| s as u32), Some(v));
            assert_eq!(STATUSES[v as usize].0 as u32, v, "the list is in number order");
        }
        assert_eq!(from_u32(17), None);
    }

    #[test]
    fn kind_names_are_the_core_names() {
        let name = |v: u32| unsafe { std::ffi::CStr::from_ptr(turnfit_status_kind_name(v)) }.to_str().unwrap();
        assert_eq!(name(0), "ok");
        assert_eq!(name(7), "unknown_model");
        assert_eq!(name(16), "invalid_yaml");
        assert_eq!(name(9), "panic");
        assert_eq!(name(999), "unrecognized");
        for kind in ErrorKind::ALL {
            assert_eq!(name(turnfit_status::from(kind) as u32), kind.as_str());
        }
    }
}
