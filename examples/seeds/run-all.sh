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
