#!/usr/bin/env bash
# Runs every seed scenario (examples/seeds/NNN-*/run.sh). Each scenario
# configures turnfit to one design document's numbers (../shared/seeds/, see
# examples/seeds/README.md) and asserts that document's figures; a scenario
# exits non-zero when a figure does not hold. TURNFIT names the CLI binary
# (default: the debug build the test command already made).
set -uo pipefail
cd "$(dirname "$0")"
export TURNFIT="${TURNFIT:-$(cd ../.. && pwd)/target/debug/turnfit}"
[ -x "$TURNFIT" ] || { echo "seeds: $TURNFIT not built (cargo build -p turnfit-cli)"; exit 1; }
# The scenarios also run through the binding in each document's language:
# TURNFIT_PYTHON is a Python with the turnfit wheel installed (default: the
# venv bindings/python/test.sh makes).
export TURNFIT_PYTHON="${TURNFIT_PYTHON:-$(cd ../.. && pwd)/target/python/venv-test/bin/python}"
"$TURNFIT_PYTHON" -c 'import turnfit' 2>/dev/null \
    || { echo "seeds: $TURNFIT_PYTHON cannot import turnfit (bash bindings/python/test.sh, or set TURNFIT_PYTHON)"; exit 1; }
total=0 ok=0 failed=()
for s in [0-9][0-9][0-9]-*/run.sh; do
    [ -e "$s" ] || continue
    total=$((total + 1))
    name=$(dirname "$s")
    if (cd "$name" && bash ./run.sh); then ok=$((ok + 1)); echo "seed $name: ok"
    else failed+=("$name"); echo "seed $name: FAILED"; fi
done
echo "seed scenarios: $ok/$total"
[ ${#failed[@]} = 0 ]
