#!/usr/bin/env bash
# Validates docs/formats.md's examples and tests/vectors/*.json against
# schemas/ (check_examples.py). The validator is the Python `jsonschema`
# package from PyPI, pinned in requirements.txt, in a venv kept under
# target/schemas/venv (rebuilt when the pins change): no Rust compile cost,
# where the `jsonschema` crate would add ~40 crates to the shared build.
set -euo pipefail
cd "$(dirname "$0")/../.."
py=${PYTHON:-python3}
venv=target/schemas/venv
stamp="$venv/.requirements-$(sha256sum scripts/schemas/requirements.txt | cut -c1-16)"
if [ ! -e "$stamp" ]; then
    rm -rf "$venv"
    "$py" -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r scripts/schemas/requirements.txt
    touch "$stamp"
fi
"$venv/bin/python" scripts/schemas/check_examples.py
