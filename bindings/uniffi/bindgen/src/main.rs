//! `uniffi-bindgen`, pinned to this workspace's uniffi version:
//! `target/debug/uniffi-bindgen generate --library target/debug/libturnfit_uniffi.so --language kotlin ...`
//! (see bindings/uniffi/test.sh).
fn main() {
    uniffi::uniffi_bindgen_main()
}
