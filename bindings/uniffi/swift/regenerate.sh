#!/usr/bin/env bash
# Regenerates the committed Swift sources from the current crate.
set -euo pipefail
cd "$(dirname "$0")/../../.."
cargo build -p turnfit-uniffi -p turnfit-uniffi-bindgen --locked
tmp=$(mktemp -d)
target/debug/uniffi-bindgen generate --library target/debug/libturnfit_uniffi.so --language swift --out-dir "$tmp" --no-format
bash bindings/uniffi/swift/sync.sh "$tmp"
rm -rf "$tmp"
