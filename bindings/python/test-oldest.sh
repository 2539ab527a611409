#!/usr/bin/env bash
# The adapters' tests and replays against the OLDEST framework versions the
# package declares (issue 47: "the oldest supported"): the lower ends of
# pyproject.toml's extras (langchain-core 1.8, langchain 1.5, langgraph 1.2,
# openai-agents 0.24, pydantic-ai-slim 2.78), read from the file. Everything
# else as requirements-test.txt pins it; pip resolves what the old releases
# need. A venv of its own (target/python/venv-oldest), the wheel built as
# test.sh builds it.
#
#   usage: bash bindings/python/test-oldest.sh [pytest args, default: the adapter tests and replays]
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
pkg=$root/bindings/python
py=${PYTHON:-python3}
start=$SECONDS

# name==lowest for every framework the extras name with a lower bound.
pins=$("$py" - "$pkg/pyproject.toml" <<'PY'
import re, sys, tomllib
extras = tomllib.load(open(sys.argv[1], "rb"))["project"]["optional-dependencies"]
low = {}
for reqs in extras.values():
    for r in reqs:
        m = re.match(r"^([A-Za-z0-9_.-]+)\s*>=\s*([0-9][0-9.]*)", r)
        if m:
            low[m.group(1)] = m.group(2) if m.group(2).count(".") >= 2 else m.group(2) + ".0"
print(" ".join(f"{k}=={v}" for k, v in sorted(low.items())))
PY
)
echo "oldest declared: $pins"

venv=$root/target/python/venv-oldest
rm -rf "$venv"
"$py" -m venv "$venv"
# The test tools as pinned, the frameworks at their oldest: pip picks their dependencies.
grep -vE '^(#|$|langchain|langgraph|openai-agents|pydantic-ai)' "$pkg/requirements-test.txt" > "$venv/tools.txt"
# shellcheck disable=SC2086
"$venv/bin/pip" install -q --disable-pip-version-check -r "$venv/tools.txt" $pins langchain-openai

wheels=$root/target/python/wheels-oldest
rm -rf "$wheels"
CARGO_TARGET_DIR=$root/target "$venv/bin/maturin" build --locked -q \
    --manifest-path "$pkg/Cargo.toml" --out "$wheels" --interpreter "$venv/bin/python" 2>&1 | grep -v '^📦\|^🔗\|^🐍\|^✏️' || true
"$venv/bin/pip" install -q --disable-pip-version-check --no-index --no-deps "$wheels"/turnfit-*.whl
echo "installed:"
"$venv/bin/pip" list --disable-pip-version-check 2>/dev/null | grep -iE '^(langchain|langchain-core|langgraph|openai-agents|pydantic-ai-slim|openai)[[:space:]]' | sed 's/^/  /'

cd "$pkg"
if [ $# -eq 0 ]; then
    set -- tests/test_replay_adapters.py tests/test_adapter_options.py tests/test_langchain.py tests/test_langchain_agent.py \
        tests/test_langgraph.py tests/test_openai_agents.py tests/test_pydantic_ai.py
fi
# The adapters warn (RuntimeWarning) on a version outside their tested range: the
# summary lists them; a declared version that warns is a range to widen or a floor to raise.
"$venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
echo "python oldest-versions tests: done in $((SECONDS - start)) s"
