#!/usr/bin/env bash
# `turnfit_fit` through the C ABI on the error-heavy agent transcripts
# (issue 52; figures in docs/benchmarks.md). Builds the release library,
# makes a venv with the pinned tiktoken and langchain-core (for the
# trim_messages column), and runs bench/cabi/fit_cabi.py with the arguments
# given (it generates the transcripts, in bench/inputs/logs or --inputs DIR,
# when they are missing), e.g.
#
#   bash bench/cabi/run.sh --trim --runs 5
#   bash bench/cabi/run.sh --lib OLD=/path/libctxkit.so:ctxkit --lib NEW=target/release/libturnfit.so
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=$PWD/target/python/venv-cabi
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q tiktoken==0.14.0 langchain-core==1.6.13
fi
cargo build -q --release --locked -p turnfit-ffi
"$venv/bin/python" bench/cabi/fit_cabi.py "$@"
