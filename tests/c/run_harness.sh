#!/bin/sh
# Runs one harness binary and decides pass/fail from everything it produced,
# not only its exit status:
#   - the exit status is 0;
#   - the last line of its stdout is exactly "PREFIX: N passed, 0 failed";
#   - its stderr (and the valgrind log, when given) holds no sanitizer report;
#   - with a valgrind log: "ERROR SUMMARY: 0 errors" and no definitely-lost
#     bytes ("definitely lost: 0 bytes" or "All heap blocks were freed").
# stderr (and the valgrind summary) is replayed first and stdout last, so on
# success the "N passed, M failed" line is the last line printed.
#
# usage: run_harness.sh NAME PREFIX LOGDIR [VALGRIND_LOG] -- COMMAND [ARGS...]
set -u

name=$1
prefix=$2
logdir=$3
shift 3
vglog=
if [ "$1" != "--" ]; then
    vglog=$1
    shift
fi
[ "$1" = "--" ] || { echo "run_harness: usage error" >&2; exit 2; }
shift

out="$logdir/$name.stdout"
err="$logdir/$name.stderr"
"$@" >"$out" 2>"$err"
status=$?

cat "$err" >&2
if [ -n "$vglog" ]; then
    grep -E '(definitely lost|indirectly lost|possibly lost|still reachable|suppressed): [0-9,]+ bytes|ERROR SUMMARY|All heap blocks' "$vglog" >&2
fi
cat "$out"

problems=
fail() { problems="$problems
  - $*"; }

[ "$status" -eq 0 ] || fail "exit status $status"

last=$(tail -n 1 "$out")
if ! printf '%s\n' "$last" | grep -Eq "^$prefix: [0-9]+ passed, 0 failed\$"; then
    fail "last stdout line is \"$last\", expected \"$prefix: N passed, 0 failed\""
fi

for f in "$err" $vglog; do
    if grep -Eq 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|WARNING: ThreadSanitizer|SUMMARY: (Address|Leak|UndefinedBehavior)Sanitizer' "$f"; then
        fail "sanitizer report in $f"
    fi
done

if [ -n "$vglog" ]; then
    grep -Eq 'ERROR SUMMARY: 0 errors' "$vglog" || fail "valgrind reported errors (see $vglog)"
    if ! grep -Eq 'definitely lost: 0 bytes|All heap blocks were freed' "$vglog"; then
        fail "valgrind reported definitely lost bytes (see $vglog)"
    fi
fi

if [ -n "$problems" ]; then
    echo "$name: FAILED:$problems" >&2
    exit 1
fi
