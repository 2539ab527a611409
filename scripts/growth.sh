#!/usr/bin/env bash
# Worst-case growth (issue 6): doubling an input at most about doubles the
# work of counting, compaction, repair and skill parsing. Measured in
# instructions with callgrind, not in seconds, so the figures are the same
# on a loaded CI machine as on an idle laptop.
#
#   scripts/growth.sh                  # every workload (target/debug/xtask growth list)
#   scripts/growth.sh count/prose ...  # some of them
#   GROWTH_MAX_RATIO=2.5 scripts/growth.sh
#
# The driver (`xtask growth run`, xtask/src/growth/) runs each workload at
# n, 2n and 4n, each call inside `growth_measured_workload`; callgrind
# collects only inside that function and writes one profile per call
# (--dump-after), whose `totals:` line is the instruction count (Ir).
#
# Threshold: a doubling may cost at most 2.3 times the instructions.
# Linear work doubles (2.0); the fixed part of a run (parsing options,
# setting up a window, opening a folder) only pulls the ratio below 2; an
# n log n step (the BPE priority queue on one endless piece, sorting) adds
# a factor 1 + 1/log2(n), under 1.1 at these sizes; allocator and hash-table
# growth add a few percent of noise. Quadratic work shows as 4.0, and even
# a quadratic term that is only a third of the work at n gives 2.5, so 2.3
# separates the two with room on both sides.
set -euo pipefail
cd "$(dirname "$0")/.."

max_ratio=${GROWTH_MAX_RATIO:-2.3}
bin=target/debug/xtask
command -v valgrind >/dev/null || { echo "growth: valgrind is not installed" >&2; exit 2; }
# `make test` has built it already; build it when run alone. (After changing
# core/ alone, rebuild it: `cargo build -p xtask`.)
[ -x "$bin" ] || cargo build -q -p xtask --locked

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fn='xtask::growth::growth_measured_workload'
start=$SECONDS
if ! valgrind --tool=callgrind --collect-atstart=no --toggle-collect="$fn" --dump-after="$fn" \
    --callgrind-out-file="$work/cg.out" "$bin" growth run "$@" >"$work/plan" 2>"$work/valgrind.log"; then
    cat "$work/valgrind.log" >&2
    echo "growth: the driver failed under callgrind" >&2
    exit 1
fi

# Dump k (cg.out.k, counted from 1) is the k-th `plan:` line's measurement.
plans=$(grep -c '^plan: ' "$work/plan" || true)
dumps=$(ls "$work" | grep -c '^cg\.out\.[0-9]*$' || true)
if [ "$plans" = 0 ] || [ "$plans" != "$dumps" ]; then
    cat "$work/plan" "$work/valgrind.log" >&2
    echo "growth: $plans measurements but $dumps callgrind dumps (did the function name change?)" >&2
    exit 1
fi

k=0
while read -r _ name n _; do
    k=$((k + 1))
    ir=$(awk '/^totals:/ {print $2; exit}' "$work/cg.out.$k")
    echo "$name $n ${ir:-0}"
done <"$work/plan" | awk -v max="$max_ratio" '
    BEGIN { printf "%-34s %8s %14s %9s %7s\n", "workload", "n", "Ir", "Ir/n", "ratio"; bad = 0 }
    {
        if ($3 <= 0) { printf "%-34s %8d  no instructions counted\n", $1, $2; bad++; next }
        ratio = ($1 == prev) ? sprintf("%.2f", $3 / prev_ir) : "-"
        flag = ""
        if ($1 == prev && $3 / prev_ir > max) { flag = "  <-- over " max; bad++ }
        printf "%-34s %8d %14d %9.1f %7s%s\n", $1, $2, $3, $3 / $2, ratio, flag
        prev = $1; prev_ir = $3
    }
    END {
        if (bad) { printf "growth: %d doubling(s) cost more than %sx the instructions\n", bad, max; exit 1 }
        printf "growth: every doubling costs at most %sx the instructions\n", max
    }'
echo "growth: $((SECONDS - start)) s under callgrind"
