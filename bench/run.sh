#!/usr/bin/env bash
# Full benchmark run: inputs, criterion benches, first use, sizes, report.
#   bash bench/run.sh [criterion args...]
# Default criterion args: --warm-up-time 1 --measurement-time 3 (2-core shared
# machine budget). The report goes to stdout and bench/target/ctxkit-bench/report.md.
set -euo pipefail
cd "$(dirname "$0")"
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(--warm-up-time 1 --measurement-time 3)
start=$(date +%s)
python3 gen_inputs.py inputs
cargo bench --bench tokenizers --no-run
built=$(date +%s)
cargo bench --bench tokenizers -- "${args[@]}"
benched=$(date +%s)
cargo run --release --bin first_use
python3 sizes.py
end=$(date +%s)
python3 report.py | tee target/ctxkit-bench/report.md
echo "timing: build $((built - start)) s, benches $((benched - built)) s, first_use + sizes $((end - benched)) s, total $((end - start)) s"
