#!/usr/bin/env bash
# Taking a large result from Haskell: adopted without a copy vs copied once
# more (bench/Results.hs), against the release libturnfit.so. Not part of
# test.sh.
#   bash bindings/haskell/bench/results.sh [INPUT...]   (paths or literal:TEXT)
set -euo pipefail
cd "$(dirname "$0")/../../.."
root=$PWD
[ -e target/release/libturnfit.so ] || cargo build -p turnfit-ffi --release --locked
inputs=("$@")
[ ${#inputs[@]} -gt 0 ] || inputs=(bindings/haskell/bench/prose-1k.txt examples/data/coding-session.json)
export CABAL_DIR="$root/target/haskell/cabal"
mkdir -p "$CABAL_DIR"; printf 'offline: True\n' > "$CABAL_DIR/config"
# The release library installed as `make install` does, found through pkg-config.
prefix=$root/target/haskell/prefix-release
PROFILE=release bash scripts/install.sh "$prefix" >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
cabal_args=(--offline --builddir="$root/target/haskell/dist-bench")
hs=$(cd bindings/haskell && cabal "${cabal_args[@]}" -v0 build result-bench >/dev/null 2>&1 && cabal "${cabal_args[@]}" list-bin result-bench)
LD_LIBRARY_PATH="$prefix/lib" "$hs" "${inputs[@]}"
