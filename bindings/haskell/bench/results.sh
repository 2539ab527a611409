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
cabal_args=(--offline --builddir="$root/target/haskell/dist" --extra-lib-dirs="$root/target/debug")
hs=$(cd bindings/haskell && cabal "${cabal_args[@]}" -v0 build result-bench >/dev/null 2>&1 && cabal "${cabal_args[@]}" list-bin result-bench)
soname=$(readelf -d target/release/libturnfit.so | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
if [ -n "$soname" ]; then ln -sf libturnfit.so "target/release/$soname"; fi
LD_LIBRARY_PATH="$root/target/release" "$hs" "${inputs[@]}"
