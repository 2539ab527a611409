#!/usr/bin/env bash
# Facts the README states that would otherwise drift: the link flags (which
# must be the ones the C harness uses), the C example (which must build and
# run with them, dynamically and statically), and the main-job command.
set -euo pipefail
cd "$(dirname "$0")/.."
fail() { echo "check-docs: $*" >&2; exit 1; }

var() { make -s -C tests/c "print-$1"; }
dyn=$(var TURNFIT_DYNAMIC_LIBS); static=$(var TURNFIT_STATIC_LIBS)
[ -n "$dyn" ] && [ -n "$static" ] || fail "TURNFIT_DYNAMIC_LIBS / TURNFIT_STATIC_LIBS not found in tests/c/Makefile"
grep -qF -- "$dyn" README.md || fail "README does not show the harness's dynamic link flags: $dyn"
grep -qF -- "$static" README.md || fail "README does not show the harness's static link flags: $static"

# Every core source file is named in docs/architecture.md (by its path
# under core/src or, inside a per-folder table, by its file name).
while IFS= read -r f; do
    grep -qF "\`$f\`" docs/architecture.md || grep -qF "\`$(basename "$f")\`" docs/architecture.md \
        || fail "core/src/$f is not named in docs/architecture.md"
done < <(cd core/src && find . -name '*.rs' ! -name tests.rs ! -path '*/tests/*' | sed 's|^\./||' | sort)
echo "docs/architecture.md names every core source file"

# The import graph between core's top-level modules has no cycle beyond the
# known events knot (docs/architecture.md, "The public API of core").
python3 scripts/module-graph.py

# Every C function that takes or returns JSON is named in docs/formats.md.
missing=$(python3 - <<'PY'
import re
h = open("include/turnfit.h").read()
doc = open("docs/formats.md").read()
for m in re.finditer(r"\n[a-z_ ]+\*? ?(turnfit_\w+)\(([^)]*)\);", h):
    if "json" in m.group(2) and m.group(1) not in doc:
        print(m.group(1))
PY
)
[ -z "$missing" ] || fail "functions taking or returning JSON not named in docs/formats.md: $missing"
echo "docs/formats.md names every JSON-carrying C function"

lib=target/debug
[ -e "$lib/libturnfit.so" ] && [ -e "$lib/libturnfit.a" ] || fail "build libturnfit first (cargo build -p turnfit-ffi)"
# The loader asks for the SONAME (libturnfit.so.<ABI>, ffi/build.rs).
soname=$(readelf -d "$lib/libturnfit.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ -z "$soname" ] || ln -sf libturnfit.so "$lib/$soname"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Expand $(LIBDIR)-style references the Makefile may use.
expand() { sed -e "s#\$(LIBDIR)#$lib#g" <<<"$1"; }
cc -std=c11 -Wall -Wextra -Wpedantic -Werror -Iinclude examples/c/count.c -L"$lib" $(expand "$dyn") -Wl,-rpath,"$PWD/$lib" -o "$out/dyn"
cc -std=c11 -Wall -Wextra -Wpedantic -Werror -Iinclude examples/c/count.c -L"$lib" $(expand "$static") -o "$out/static"
for b in dyn static; do
    got=$("$out/$b" "Hello, world!")
    [ "$got" = "4 tokens for gpt-4o (turnfit $(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1))" ] || fail "$b example printed: $got"
done
echo "C example: dynamic and static builds print the expected count"

main='fit examples/data/agent-loop.json --model gpt-4o --max-tokens 16000'
grep -qF "cargo run -q -p turnfit-cli -- $main > fitted.json" README.md \
    || fail "README's main-job command changed; update scripts/check-docs.sh and the Makefile's demo target together"
# The figures the README quotes must be what the command reports.
report=$("$lib/turnfit" $main 2>&1 >/dev/null)
for figure in '"tokens_before": 30800' '"tokens_after": 11980'; do
    grep -qF "$figure" <<<"$report" || fail "main job no longer reports $figure; update the README"
done
grep -qF 'tokens_before` 30,800' README.md && grep -qF 'tokens_after` 11,980' README.md || fail "README figures differ from the script's"
grep -qx 'make test' README.md || fail "README does not show the test command"
grep -q '^make test$' .ci/run || fail ".ci/run does not call the README's test command"
echo "README: link flags, main job and test command verified"
