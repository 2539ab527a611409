#!/usr/bin/env bash
# Miri over the ffi crate's tests (issue 6, part 6): the core forbids
# `unsafe`, so the C ABI's pointer handling (argument slices, out-parameters,
# owned strings and handles, the panic boundary) is where undefined
# behaviour could hide. Miri needs a nightly toolchain with the `miri`
# component; without one this prints `SKIPPED: <reason>` and exits 77.
# `scripts/miri.sh --check` only says whether it would run (exit 0) or why
# not (the reason on stdout, exit 77); scripts/test.sh uses it to report the
# suite as SKIPPED with that reason rather than as passed.
#
# What runs: the ffi crate's unit tests that do not load a vocabulary
# (args, boundary, status, version) and the panic-injection test (every
# exported function called with NULL arguments and a panic injected at its
# boundary; it reads include/turnfit.h, hence -Zmiri-disable-isolation). The
# ABI corpus replay (fuzz_corpus) is skipped: it builds BPE tokenizers,
# which under Miri would take hours; the C harness runs the same calls under
# ASan, UBSan and valgrind instead.
set -uo pipefail
cd "$(dirname "$0")/.."

skip() {
    if [ "${1-}" = --check ]; then echo "$2"; else echo "SKIPPED: $2"; fi
    exit 77
}
command -v cargo >/dev/null || skip "${1-}" "no cargo on PATH"
if ! version=$(cargo +nightly miri --version 2>&1); then
    first=$(head -n1 <<<"$version")
    skip "${1-}" "Miri is not installed (cargo +nightly miri --version: ${first:-failed}); install it with: rustup toolchain install nightly --component miri"
fi
[ "${1-}" = --check ] && exit 0
echo "using $version"
export MIRIFLAGS="${MIRIFLAGS:--Zmiri-disable-isolation}"
exec cargo +nightly miri test --locked -p turnfit-ffi --lib --features panic-inject -- --skip fuzz_corpus
