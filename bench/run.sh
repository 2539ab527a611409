#!/usr/bin/env bash
# Full benchmark run: inputs, build once, criterion benches, first use, sizes, report.
#
#   bash bench/run.sh [criterion args...]
#
# Default criterion args: --warm-up-time 1 --measurement-time 3 (2-core shared
# machine budget). TURNFIT_BENCH_RUNS=N (default 1) repeats the criterion phase
# N times (about 7.5 min each here); the report gives the median over runs
# and the spread. TURNFIT_BENCH_CLOCK=cpu (default) or wall picks the clock.
# Everything is built first and the built binaries are then run directly, so
# all measurements use one snapshot of ../core even if it is being edited.
# The report goes to stdout and to bench/target/turnfit-bench/report.md.
set -euo pipefail
cd "$(dirname "$0")"
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(--warm-up-time 1 --measurement-time 3)
start=$(date +%s)
python3 gen_inputs.py inputs
bench_exe=$(cargo bench --bench tokenizers --no-run --message-format=json-render-diagnostics \
  | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "tokenizers" and m.get("executable"):
        print(m["executable"])')
cargo build --release --bins
built=$(date +%s)
# Criterion is run the way `cargo bench` runs it (`--bench`, cwd = bench/).
# Each run's medians are snapshotted; saved criterion baselines are kept.
rm -rf target/turnfit-bench/runs
for i in $(seq "${TURNFIT_BENCH_RUNS:-1}"); do
  "$bench_exe" --bench "${args[@]}"
  python3 report.py --snapshot
done
benched=$(date +%s)
target/release/first_use
python3 sizes.py --no-build
end=$(date +%s)
python3 report.py | tee target/turnfit-bench/report.md
echo "timing: build $((built - start)) s, benches $((benched - built)) s, first_use + sizes $((end - benched)) s, total $((end - start)) s"
