#!/usr/bin/env bash
# Places the Swift sources uniffi-bindgen generated (in library mode, into
# DIR) where the Swift package expects them, or with --check fails when the
# committed copies differ (the drift check bindings/uniffi/test.sh runs).
#   bash bindings/uniffi/swift/sync.sh [--check] DIR
set -euo pipefail
check=0
[ "${1:-}" = --check ] && { check=1; shift; }
gen=${1:?usage: sync.sh [--check] DIR}
here=$(cd "$(dirname "$0")" && pwd)
pairs=(
    "Turnfit.swift:Sources/Turnfit/Turnfit.swift"
    "TurnfitFFI.h:Sources/TurnfitFFI/include/TurnfitFFI.h"
    "TurnfitFFI.modulemap:Sources/TurnfitFFI/include/module.modulemap"
)
status=0
for p in "${pairs[@]}"; do
    src=$gen/${p%%:*} dst=$here/${p#*:}
    [ -e "$src" ] || { echo "sync.sh: $src was not generated"; exit 1; }
    if [ $check = 1 ]; then
        if ! cmp -s "$src" "$dst"; then
            echo "DRIFT: bindings/uniffi/swift/${p#*:} differs from what uniffi-bindgen generates now;"
            echo "       regenerate: bash bindings/uniffi/swift/regenerate.sh"
            diff -u "$dst" "$src" | head -20 || true
            status=1
        fi
    else
        cp "$src" "$dst"
    fi
done
exit $status
