#!/usr/bin/env bash
# Runs every fuzz target in fuzz/ for FUZZ_SECONDS each, one at a time, and
# prints a table of executions, speed, coverage and findings. `make
# fuzz-smoke` and `make fuzz-long` call it; docs/reliability.md records
# campaigns.
#
#   FUZZ_SECONDS=3600 scripts/fuzz.sh             # every target, an hour each
#   FUZZ_SECONDS=60 scripts/fuzz.sh window_fit abi
#   FUZZ_SANITIZER=none scripts/fuzz.sh            # stable toolchain, no ASan
#
# Sanitizer: with a nightly toolchain (`cargo +nightly`), targets run under
# AddressSanitizer with leak checking (cargo fuzz's default); otherwise on
# stable with `-s none`. FUZZ_BUILD_FLAGS is passed to cargo fuzz (e.g.
# `--dev` for a debug build).
#
# New units go to $FUZZ_SCRATCH/<target>/new (listed first, so libFuzzer
# writes there), never into the committed fuzz/corpus/<target>, which is
# read as a seed corpus. A crash, leak or timeout leaves its input in
# $FUZZ_SCRATCH/<target>/artifacts/ and makes the script fail: commit the
# input to fuzz/corpus/<target>/ with the fix (docs/reliability.md,
# "Findings").
set -uo pipefail
cd "$(dirname "$0")/../fuzz"

seconds=${FUZZ_SECONDS:-10}
scratch=${FUZZ_SCRATCH:-${TMPDIR:-/tmp}/turnfit-fuzz}
sanitizer=${FUZZ_SANITIZER:-auto}
read -r -a build_flags <<<"${FUZZ_BUILD_FLAGS:-}"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(tokenizer_differential chat_codecs window_fit window_tiers turn_carry turn_session skills_frontmatter skill_paths handoff recovery abi)

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz: cargo-fuzz is not installed (cargo install cargo-fuzz --locked)" >&2
    exit 2
fi
if [ "$sanitizer" = auto ]; then
    if cargo +nightly --version >/dev/null 2>&1; then sanitizer=address; else sanitizer=none; fi
fi
if [ "$sanitizer" = none ]; then
    fuzz=(cargo fuzz)
else
    fuzz=(cargo +nightly fuzz)
fi

echo "fuzz: ${#targets[@]} target(s), ${seconds} s each, sanitizer $sanitizer, scratch $scratch"
start=$SECONDS
if ! "${fuzz[@]}" build -s "$sanitizer" "${build_flags[@]+"${build_flags[@]}"}"; then
    echo "fuzz: building the targets failed" >&2
    exit 1
fi
echo "fuzz: built in $((SECONDS - start)) s"

failed=()
rows=()
for t in "${targets[@]}"; do
    dir="$scratch/$t"
    mkdir -p "$dir/new" "$dir/artifacts"
    "${fuzz[@]}" run -s "$sanitizer" "${build_flags[@]+"${build_flags[@]}"}" "$t" "$dir/new" "corpus/$t" -- \
        -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$dir/artifacts/" >"$dir/log" 2>&1
    rc=$?
    stat() { grep "^stat::$1:" "$dir/log" | tail -n 1 | awk '{print $2}'; }
    cov0=$(grep -m1 -o 'INITED cov: [0-9]*' "$dir/log" | awk '{print $3}')
    cov1=$(grep -o ' cov: [0-9]*' "$dir/log" | tail -n 1 | awk '{print $2}')
    found=$(find "$dir/artifacts" -type f | wc -l)
    status=ok
    if [ $rc != 0 ] || [ "$found" != 0 ]; then
        status="FAILED (exit $rc, $found artifact(s) in $dir/artifacts; log $dir/log)"
        failed+=("$t")
    fi
    rows+=("$(printf '%-24s %10s %8s %9s %7s %6s  %s' "$t" "$(stat number_of_executed_units)" "$(stat average_exec_per_sec)" "${cov0:-?} -> ${cov1:-?}" "$(stat new_units_added)" "$(stat peak_rss_mb)" "$status")")
    echo "${rows[-1]}"
done

echo
printf '%-24s %10s %8s %9s %7s %6s  %s\n' target execs "execs/s" cov "new" "rss MB" status
printf '%s\n' "${rows[@]}"
echo "fuzz: $((SECONDS - start)) s in all, sanitizer $sanitizer"
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: findings in ${failed[*]}" >&2
    exit 1
fi
