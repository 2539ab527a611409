//! Version information, at compile time (header macros) and at run time.

use std::ffi::c_char;

/// Major version of the turnfit release this header belongs to.
pub const TURNFIT_VERSION_MAJOR: u32 = 0;
/// Minor version of the turnfit release this header belongs to.
pub const TURNFIT_VERSION_MINOR: u32 = 1;
/// Patch version of the turnfit release this header belongs to.
pub const TURNFIT_VERSION_PATCH: u32 = 0;
/// ABI revision. Bumped on any incompatible change to a function signature,
/// struct layout or status number; a host can refuse a library whose
/// `turnfit_abi_version()` differs from the value it was compiled with.
pub const TURNFIT_ABI_VERSION: u32 = 2;

/// The library version as a static NUL-terminated string ("0.1.0"). It equals
/// the `TURNFIT_VERSION_*` macros of the header the library was built with.
/// Never free it. Thread-safe.
#[no_mangle]
pub extern "C" fn turnfit_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The ABI revision of the loaded library (compare with `TURNFIT_ABI_VERSION`).
/// Thread-safe.
#[no_mangle]
pub extern "C" fn turnfit_abi_version() -> u32 {
    TURNFIT_ABI_VERSION
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macros_agree_with_cargo_toml() {
        let parse = |s: &str| s.parse::<u32>().unwrap();
        assert_eq!(TURNFIT_VERSION_MAJOR, parse(env!("CARGO_PKG_VERSION_MAJOR")));
        assert_eq!(TURNFIT_VERSION_MINOR, parse(env!("CARGO_PKG_VERSION_MINOR")));
        assert_eq!(TURNFIT_VERSION_PATCH, parse(env!("CARGO_PKG_VERSION_PATCH")));
        let v = unsafe { std::ffi::CStr::from_ptr(turnfit_version()) }.to_str().unwrap();
        assert_eq!(v, turnfit_core::VERSION);
    }
}

/// The header's promise that every fallible function lists its statuses:
/// each export returning `turnfit_status` (but `turnfit_error_code`, which
/// reads one) has an `Errors:` line in its doc comment.
#[cfg(test)]
mod errors_lists {
    #[test]
    fn every_fallible_export_documents_its_errors() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut missing = Vec::new();
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            for (i, l) in lines.iter().enumerate() {
                let Some(rest) = l.split("extern \"C\" fn ").nth(1).filter(|_| l.starts_with("pub ")) else { continue };
                let name = rest.split('(').next().unwrap();
                let sig: String = lines[i..].iter().take_while(|s| !s.ends_with('{')).copied().collect();
                let sig = sig + lines[i..].iter().find(|s| s.ends_with('{')).unwrap();
                if !sig.contains("-> turnfit_status") || name == "turnfit_error_code" {
                    continue;
                }
                seen += 1;
                let doc = lines[..i].iter().rev().take_while(|s| s.starts_with("///") || s.starts_with("#["));
                if !doc.into_iter().any(|s| s.contains("Errors:")) {
                    missing.push(name.to_owned());
                }
            }
        }
        assert!(seen > 40, "found only {seen} fallible exports");
        assert!(missing.is_empty(), "no `Errors:` list: {missing:?}");
    }
}
