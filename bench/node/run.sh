#!/usr/bin/env bash
# Node tokenizer benchmark (figures in docs/benchmarks.md, "Node.js"):
#   bash bench/node/run.sh
# Builds turnfit-node in release, installs the peers from bench/node's lock
# file, generates bench/gen_inputs.py's inputs, prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release -p turnfit-node --locked
cp target/release/libturnfit_node.so target/release/turnfit_node.node
export NAPI_RS_NATIVE_LIBRARY_PATH="$PWD/target/release/turnfit_node.node"
python3 bench/gen_inputs.py target/bench-inputs >/dev/null
(cd bench/node && npm ci --no-audit --no-fund --loglevel=error)
node --version
node bench/node/bench.mjs target/bench-inputs
# fit of a real agent loop vs LangChain.js trimMessages + js-tiktoken.
node bench/node/fit.mjs 8000
