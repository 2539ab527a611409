//! Link arguments for the shared library (the static archive is untouched).
//!
//! - `-z nodelete`: `dlclose` never unmaps libturnfit. Its statics (the
//!   vocabularies, built once and shared by every tokenizer, about 7-10 MB)
//!   and the per-thread scratch buffers of threads that have exited cannot be
//!   freed safely while another thread may still be inside a call, so an
//!   unloadable library leaked them on every load/unload cycle (issue 14).
//!   Staying mapped makes a later `dlopen` reuse them instead.
//! - `-soname libturnfit.so.N`, N being `TURNFIT_ABI_VERSION`: a program linked
//!   against one ABI revision never loads another. Install (or symlink) the
//!   library under that name; tests/c and the Haskell binding do.
//!
//! Both are GNU/ELF linker options; other targets get neither.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/version.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if matches!(os.as_str(), "linux" | "android" | "freebsd" | "netbsd" | "openbsd" | "dragonfly") {
        let abi = abi_version();
        println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libturnfit.so.{abi}");
    }
}

/// `TURNFIT_ABI_VERSION` as written in src/version.rs (one place for it).
fn abi_version() -> u32 {
    let src = std::fs::read_to_string("src/version.rs").expect("ffi/src/version.rs");
    src.lines()
        .find_map(|l| l.trim().strip_prefix("pub const TURNFIT_ABI_VERSION: u32 = "))
        .and_then(|v| v.trim_end_matches(';').trim().parse().ok())
        .expect("TURNFIT_ABI_VERSION in ffi/src/version.rs")
}
