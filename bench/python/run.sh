#!/usr/bin/env bash
# Benchmarks of the Python binding (figures in docs/benchmarks.md). Builds the
# wheel in the release profile into target/python/venv-bench (pinned
# requirements from bindings/python/requirements-test.txt), generates
# bench/inputs if missing, and runs bench/python/bench.py.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
venv=$root/target/python/venv-bench
if [ ! -x "$venv/bin/maturin" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q -r bindings/python/requirements-test.txt -c bindings/python/constraints-test.txt
fi
[ -e bench/inputs/prose.txt ] || python3 bench/gen_inputs.py
CARGO_TARGET_DIR=$root/target "$venv/bin/maturin" build --release --locked -q \
    --manifest-path bindings/python/Cargo.toml --out target/python/wheels-release --interpreter "$venv/bin/python"
"$venv/bin/pip" install -q --no-index --no-deps --force-reinstall target/python/wheels-release/turnfit-*.whl
"$venv/bin/python" bench/python/bench.py "$@"
