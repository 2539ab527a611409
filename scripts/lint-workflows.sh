#!/usr/bin/env bash
# The release workflow (.github/workflows/release.yml) runs only on a hosted CI,
# so it is checked here in the two ways that need no runner:
#  1. actionlint (pinned in scripts/lint-requirements.txt, into target/lint/venv):
#     syntax, expressions, job needs, matrix keys, action inputs, and the run:
#     scripts through shellcheck when Debian's shellcheck is installed;
#  2. the npm main package names only platform packages the workflow builds:
#     bindings/node/package.json's napi.targets (dist.sh turns them into
#     optionalDependencies) must be the `native` job's matrix targets, and
#     every bindings/node/npm/<platform> folder one of them.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv=$root/target/lint/venv
req=$root/scripts/lint-requirements.txt
stamp="$venv/.requirements-$(sha256sum "$req" | cut -c1-16)"
if [ ! -e "$stamp" ]; then
    rm -rf "$venv" && python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$req"
    touch "$stamp"
fi
if ! command -v shellcheck >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing shellcheck with apt-get (actionlint checks the run: scripts with it)"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends shellcheck >/dev/null
fi
command -v shellcheck >/dev/null || echo "note: shellcheck not installed; actionlint skips the run: scripts"
"$venv/bin/actionlint" -version | head -1
"$venv/bin/actionlint" .github/workflows/*.yml
echo "actionlint: $(ls .github/workflows/*.yml | wc -l) workflow(s) clean"

python3 - <<'PY'
import json, re, sys
from pathlib import Path

wf = Path(".github/workflows/release.yml").read_text()
m = re.search(r"^  native:\n(.*?)^  \S", wf, re.S | re.M)
if not m:
    sys.exit("release.yml: no `native` job")
built = re.findall(r"target: ([a-z0-9_]+-[a-z0-9_-]+)", m.group(1))
pkg = json.loads(Path("bindings/node/package.json").read_text())
declared = pkg["napi"]["targets"]
if sorted(built) != sorted(declared):
    sys.exit(f"napi.targets {sorted(declared)} != release.yml's native targets {sorted(built)}: "
             "the npm main package would name a platform package nobody builds")
npm_dirs = sorted(p.name for p in Path("bindings/node/npm").iterdir() if p.is_dir())
names = sorted(re.findall(r"npm: ([a-z0-9-]+)", m.group(1)))
if npm_dirs != names:
    sys.exit(f"bindings/node/npm/ holds {npm_dirs}, release.yml's native job packs {names}")
print(f"release.yml builds every npm platform package the main package names ({len(built)}: {', '.join(names)})")
PY
