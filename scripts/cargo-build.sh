#!/usr/bin/env bash
# Builds the named workspace packages for a binding suite.
#
# Inside the test command (scripts/test.sh exports TURNFIT_SHARED_BUILD=1) this
# repeats the test command's own build, `cargo build --workspace --all-targets`,
# which is then a no-op: cargo unifies features over the packages it is asked
# for, so `cargo build -p turnfit-uniffi` alone picks other features for shared
# dependencies (serde_json, memchr, indexmap, syn, ...) and compiles them and
# the core a second time (209 s of the uniffi suite's 280 s on two cores).
# Run on its own (`bash bindings/node/test.sh`), a suite builds only the
# packages it needs.
#
#   usage: scripts/cargo-build.sh PACKAGE [PACKAGE...]
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 PACKAGE [PACKAGE...]" >&2; exit 2; }
if [ "${TURNFIT_SHARED_BUILD:-0}" = 1 ]; then
    exec cargo build --workspace --all-targets --locked
fi
args=()
for p in "$@"; do args+=(-p "$p"); done
exec cargo build --locked "${args[@]}"
