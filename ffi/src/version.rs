//! Version information, at compile time (header macros) and at run time.

use std::ffi::c_char;

/// Major version of the ctxkit release this header belongs to.
pub const CTXKIT_VERSION_MAJOR: u32 = 0;
/// Minor version of the ctxkit release this header belongs to.
pub const CTXKIT_VERSION_MINOR: u32 = 1;
/// Patch version of the ctxkit release this header belongs to.
pub const CTXKIT_VERSION_PATCH: u32 = 0;
/// ABI revision. Bumped on any incompatible change to a function signature,
/// struct layout or status number; a host can refuse a library whose
/// `ctxkit_abi_version()` differs from the value it was compiled with.
pub const CTXKIT_ABI_VERSION: u32 = 2;

/// The library version as a static NUL-terminated string ("0.1.0"). It equals
/// the `CTXKIT_VERSION_*` macros of the header the library was built with.
/// Never free it. Thread-safe.
#[no_mangle]
pub extern "C" fn ctxkit_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The ABI revision of the loaded library (compare with `CTXKIT_ABI_VERSION`).
/// Thread-safe.
#[no_mangle]
pub extern "C" fn ctxkit_abi_version() -> u32 {
    CTXKIT_ABI_VERSION
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macros_agree_with_cargo_toml() {
        let parse = |s: &str| s.parse::<u32>().unwrap();
        assert_eq!(CTXKIT_VERSION_MAJOR, parse(env!("CARGO_PKG_VERSION_MAJOR")));
        assert_eq!(CTXKIT_VERSION_MINOR, parse(env!("CARGO_PKG_VERSION_MINOR")));
        assert_eq!(CTXKIT_VERSION_PATCH, parse(env!("CARGO_PKG_VERSION_PATCH")));
        let v = unsafe { std::ffi::CStr::from_ptr(ctxkit_version()) }.to_str().unwrap();
        assert_eq!(v, ctxkit_core::VERSION);
    }
}
