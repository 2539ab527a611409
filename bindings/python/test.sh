#!/usr/bin/env bash
# The Python binding's suite (run by scripts/test.sh):
#  1. a venv with the pinned requirements-test.txt from PyPI (kept in
#     target/python/venv-test and rebuilt when the file changes);
#  2. the abi3 wheel built by maturin in the dev profile into the workspace
#     target/ (the same cargo build cache as everything else);
#  3. the wheel installed offline (`pip install --no-index`) into a fresh,
#     empty venv and imported there;
#  4. pytest over bindings/python/tests (tiktoken's vendored suite included),
#     the conformance vectors (prints `vectors: N/N`), and examples/python.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
pkg=$root/bindings/python
py=${PYTHON:-python3}
command -v "$py" >/dev/null || { echo "python3 is required"; exit 1; }
start=$SECONDS

venv=$root/target/python/venv-test
stamp="$venv/.requirements-$(cat "$pkg/requirements-test.txt" "$pkg/constraints-test.txt" | sha256sum | cut -c1-16)"
if [ ! -e "$stamp" ]; then
    echo "creating $venv (pinned requirements from PyPI)"
    rm -rf "$venv"
    "$py" -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$pkg/requirements-test.txt" -c "$pkg/constraints-test.txt"
    touch "$stamp"
fi

# The TypedDicts of the options, reports and events come from schemas/.
python3 "$pkg/scripts/schema_types.py" --check

echo "building the wheel (maturin, dev profile, target dir $root/target)"
wheels=$root/target/python/wheels
rm -rf "$wheels"
CARGO_TARGET_DIR=$root/target "$venv/bin/maturin" build --locked -q \
    --manifest-path "$pkg/Cargo.toml" --out "$wheels" --interpreter "$venv/bin/python" 2>&1 | grep -v '^📦\|^🔗\|^🐍\|^✏️' || true
wheel=$(ls "$wheels"/turnfit-*.whl 2>/dev/null | head -1)
[ -n "$wheel" ] || { echo "maturin produced no wheel"; exit 1; }
echo "wheel: $(basename "$wheel")"
case "$wheel" in *abi3*) ;; *) echo "the wheel is not abi3"; exit 1 ;; esac

echo "installing the wheel offline into a fresh venv"
fresh=$root/target/python/venv-fresh
rm -rf "$fresh"
"$py" -m venv "$fresh"
"$fresh/bin/pip" install -q --disable-pip-version-check --no-index "$wheel"
"$fresh/bin/python" -c 'import turnfit, turnfit.tiktoken; n = turnfit.Tokenizer("o200k_base").count_tokens("Hello, world!"); assert n == 4, n; print("fresh venv: import turnfit ok, version", turnfit.__version__)'

"$venv/bin/pip" install -q --disable-pip-version-check --no-index --no-deps --force-reinstall "$wheel"

cd "$pkg"
# The stubs as installed from the wheel: a typed usage file passes mypy
# --strict (and runs), and a wrong one fails with the two errors it holds.
"$venv/bin/python" -m mypy --strict --cache-dir "$root/target/python/mypy-cache" tests/types/usage.py
"$venv/bin/python" tests/types/usage.py
if bad=$("$venv/bin/python" -m mypy --strict --cache-dir "$root/target/python/mypy-cache" tests/types/bad_usage.py 2>&1); then
    echo "mypy accepted tests/types/bad_usage.py"; exit 1
fi
echo "$bad" | grep -q 'has no key "tokens_afterr"' && echo "$bad" | grep -q 'Incompatible types in assignment' \
    || { echo "mypy did not report the expected errors in tests/types/bad_usage.py:"; echo "$bad"; exit 1; }
echo "mypy: tests/types/usage.py passes --strict; bad_usage.py is refused as expected"
# The framework adapters are typed inline (no .pyi): --strict against the pinned frameworks.
"$venv/bin/python" -m mypy --strict --cache-dir "$root/target/python/mypy-cache" \
    python/turnfit/_adapters.py python/turnfit/openai_agents.py python/turnfit/pydantic_ai.py

set +e
"$venv/bin/python" -m pytest -q -p no:cacheprovider --ignore=tests/tiktoken_suite tests
rc=$?
set -e
if [ $rc = 5 ]; then echo "pytest collected no tests"; exit 1; fi
[ $rc = 0 ] || { echo "pytest failed ($rc)"; exit 1; }

# tiktoken's own suite in its own process: its conftest points `tiktoken` at
# turnfit.tiktoken for the whole process. -rxX lists the known failures.
echo "tiktoken 0.14.0's test suite against turnfit.tiktoken:"
set +e
"$venv/bin/python" -m pytest -q -p no:cacheprovider -rxX tests/tiktoken_suite
rc=$?
set -e
if [ $rc = 5 ]; then echo "pytest collected no tiktoken tests"; exit 1; fi
[ $rc = 0 ] || { echo "tiktoken suite failed ($rc)"; exit 1; }

"$venv/bin/python" tests/vectors.py

for ex in "$root"/examples/python/*.py; do
    [ -e "$ex" ] || continue
    echo "example: examples/python/$(basename "$ex")"
    "$venv/bin/python" "$ex" > "$root/target/python/example.out"
    tail -5 "$root/target/python/example.out"
done
echo "python binding suite: $((SECONDS - start)) s"
