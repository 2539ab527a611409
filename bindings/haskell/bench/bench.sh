#!/usr/bin/env bash
# Counting from Haskell vs the same call from Rust, both through the C ABI of
# one release libturnfit.so (target/release). Not part of test.sh.
#   bash bindings/haskell/bench/bench.sh [INPUT...]   (paths or literal:TEXT)
set -euo pipefail
cd "$(dirname "$0")/../../.."
root=$PWD
[ -e target/release/libturnfit.so ] || cargo build -p turnfit-ffi --release --locked
inputs=("$@")
[ ${#inputs[@]} -gt 0 ] || inputs=("literal:Hello, world!" bindings/haskell/bench/prose-1k.txt examples/data/coding-session.json)

# Rust: its own workspace and target dir, linked against the release library.
CARGO_TARGET_DIR="$root/target/haskell/bench-rust" \
RUSTFLAGS="-L native=$root/target/release -C link-arg=-Wl,-rpath,$root/target/release" \
    cargo build -q --release --locked --manifest-path bindings/haskell/bench/rust/Cargo.toml

# Haskell: the cabal executable, with the release library first on the path.
export CABAL_DIR="$root/target/haskell/cabal"
mkdir -p "$CABAL_DIR"; printf 'offline: True\n' > "$CABAL_DIR/config"
# The release library installed as `make install` does, found through pkg-config.
prefix=$root/target/haskell/prefix-release
PROFILE=release bash scripts/install.sh "$prefix" >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
cabal_args=(--offline --builddir="$root/target/haskell/dist-bench")
hs=$(cd bindings/haskell && cabal "${cabal_args[@]}" -v0 build count-bench >/dev/null 2>&1 && cabal "${cabal_args[@]}" list-bin count-bench)

printf 'caller\tinput\tbytes\ttokens\tns/call\n'
"$root/target/haskell/bench-rust/release/turnfit-count-bench" "${inputs[@]}"
LD_LIBRARY_PATH="$prefix/lib" "$hs" "${inputs[@]}"
