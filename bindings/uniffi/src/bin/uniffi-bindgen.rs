//! `uniffi-bindgen`, pinned to this workspace's uniffi version:
//! `cargo run -p ctxkit-uniffi --features bindgen --bin uniffi-bindgen -- generate --library ...`.
fn main() {
    uniffi::uniffi_bindgen_main()
}
