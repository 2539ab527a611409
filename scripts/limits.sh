#!/usr/bin/env bash
# Oversized inputs under a capped address space (issue 6, part 4): a JSON
# conversation nested 100,000 deep, a 1,000,000-message conversation and a
# 100 MB string, each through the CLI (target/debug/turnfit) and the C ABI
# (tests/limits/limits.c linked to target/debug/libturnfit.so), plus the
# message and text limits themselves. Every case must end with its status
# (LIMIT_EXCEEDED naming the limit, or OK at the limit) and a normal exit:
# not an abort (Rust aborts when an allocation fails), not a signal. Peak RSS
# is reported and checked against a bound (below). Inputs are generated into
# a temporary directory and removed afterwards.
#
# Address-space cap: 1 GiB (`ulimit -v 1048576`). The largest input any
# case builds is the 100 MB string; a debug CLI or test program maps about
# 100 MiB before it reads anything (binary with the embedded vocabularies,
# libc, the loader). 1 GiB leaves room for the inputs the documented limits
# admit (64 MiB of text or JSON, read once and parsed once) and nothing
# like what an unchecked parse of the oversized inputs would take: the
# million messages alone would need several hundred MiB as JSON values, the
# 100 MB string another copy per pass.
#
# RSS bound per case: peak RSS <= 3 x input bytes + 128 MiB. The 128 MiB is
# the process's own footprint (the debug binary's pages, the vocabulary
# tables); 3 x input allows the input itself, one parsed copy and slack. A
# refusal that happened only after building the whole input (all million
# messages as values, or a copy of the 100 MB string) would exceed it.
# Cases *at* the message limit are accepted and do the full work on
# 100,000 tiny messages, where per-message structures (the JSON value, the
# typed view, compaction's working copy and turns) outweigh the 30 bytes of
# input each: their bound is 128 MiB + 4 KiB per message.
#
# Needs the debug build (cargo build --workspace) and gcc; about 20 s.
set -euo pipefail
cd "$(dirname "$0")/.."

CAP_KIB=$((1024 * 1024))
BASE_KIB=$((128 * 1024))
lib=target/debug
cli=$lib/turnfit
for f in "$lib/libturnfit.so" "$cli" include/turnfit.h; do
    [ -e "$f" ] || { echo "limits: $f missing; build first (cargo build --workspace)" >&2; exit 1; }
done
command -v gcc >/dev/null || { echo "limits: gcc not installed" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "limits: /usr/bin/time not installed (apt-get install time)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -std=c11 -O1 -Wall -Wextra -Werror -Iinclude tests/limits/limits.c -L"$lib" -lturnfit \
    -Wl,-rpath,"$PWD/$lib" -o "$tmp/limits"

failed=0
fail() { echo "FAIL: $*"; failed=1; }

# The RSS bound in KiB for INPUT_BYTES: "input" (3 x input + base) or
# "messages:N" (base + 4 KiB per message).
bound_kib() {
    case $1 in
        input) echo $((3 * $2 / 1024 + BASE_KIB)) ;;
        messages:*) echo $((4 * ${1#messages:} + BASE_KIB)) ;;
    esac
}

# check NAME RC WANT_RC OUTPUT NEEDLE INPUT_BYTES RSS_KIB BOUND_SPEC
check() {
    local name=$1 rc=$2 want=$3 out=$4 needle=$5 input=$6 rss=$7
    local bound; bound=$(bound_kib "$8" "$input")
    printf '%-34s exit %-3s peak RSS %7d KiB (bound %7d KiB, input %9d bytes)\n' "$name" "$rc" "$rss" "$bound" "$input"
    if [ "$rc" -ge 128 ]; then fail "$name: killed by signal $((rc - 128)): $out"; return; fi
    [ "$rc" = "$want" ] || fail "$name: exit $rc, expected $want: $out"
    grep -qF -- "$needle" <<<"$out" || fail "$name: output lacks '$needle': $out"
    [ "$rss" -le "$bound" ] || fail "$name: peak RSS $rss KiB is over the bound $bound KiB"
}

# run_cli NAME BOUND_SPEC WANT_RC NEEDLE FILE ARGS...: the CLI under the
# cap (with /usr/bin/time, which reports the child's peak RSS).
run_cli() {
    local name=$1 spec=$2 want=$3 needle=$4 file=$5; shift 5
    local rc=0
    ( ulimit -v "$CAP_KIB"; exec /usr/bin/time -f '%M' -o "$tmp/rss" "$cli" "$@" "$file" ) >"$tmp/out" 2>&1 || rc=$?
    check "cli $name" "$rc" "$want" "$(head -c 800 "$tmp/out")" "$needle" "$(stat -c %s "$file")" "$(tail -n1 "$tmp/rss")" "$spec"
}

# run_abi NAME BOUND_SPEC NEEDLE ARGS...: the C program under the cap; it
# reports its own peak RSS (getrusage) and the input size.
run_abi() {
    local name=$1 spec=$2 needle=$3; shift 3
    local rc=0
    ( ulimit -v "$CAP_KIB"; exec "$tmp/limits" "$@" ) >"$tmp/out" 2>&1 || rc=$?
    local out; out=$(cat "$tmp/out")
    local rss input
    rss=$(sed -n 's/.* peak_rss_kib=\([0-9]*\).*/\1/p' <<<"$out" | head -n1)
    input=$(sed -n 's/.* input_bytes=\([0-9]*\).*/\1/p' <<<"$out" | head -n1)
    check "abi $name" "$rc" 0 "$(head -c 800 <<<"$out")" "$needle" "${input:-0}" "${rss:-0}" "$spec"
}

echo "address space capped at $((CAP_KIB / 1024)) MiB (ulimit -v $CAP_KIB); RSS bound: 3 x input + $((BASE_KIB / 1024)) MiB"
echo "(at the message limit: $((BASE_KIB / 1024)) MiB + 4 KiB per message)"

# (a) 100,000-deep JSON conversation, and the depth limit itself (127).
python3 - "$tmp/deep.json" <<'PY'
import sys
n = 100_000 - 3  # inside {"messages":[{...}]}: 100,000 levels in all
open(sys.argv[1], "w").write('{"messages":[{"role":"user","content":"x","extra":' + "[" * n + "]" * n + "}]}")
PY
run_cli "deep JSON (100,000 levels), fit" input 2 "recursion limit exceeded" "$tmp/deep.json" fit --model gpt-4o
run_abi "deep JSON (100,000 levels), fit" input "status=TURNFIT_STATUS_LIMIT_EXCEEDED" deep 100000
run_abi "deep JSON (128 levels), fit" input "status=TURNFIT_STATUS_LIMIT_EXCEEDED" deep 128
run_abi "deep JSON (127 levels), fit" input "status=TURNFIT_STATUS_OK" deep 127

# (b) 1,000,000 messages, and the message limit itself (100,000).
python3 - "$tmp" <<'PY'
import sys
one = '{"role":"user","content":"x"}'
for n in (1_000_000, 100_000):
    open(f"{sys.argv[1]}/messages-{n}.json", "w").write("[" + ",".join([one] * n) + "]")
PY
run_cli "1,000,000 messages, fit" input 2 "the limit is 100000 (MAX_MESSAGES)" "$tmp/messages-1000000.json" fit --model gpt-4o
run_cli "100,000 messages, preflight" messages:100000 0 '"verdict"' "$tmp/messages-100000.json" preflight --model gpt-4o
run_abi "1,000,000 messages, fit" input "the limit is 100000 (MAX_MESSAGES)" messages 1000000
run_abi "100,001 messages, fit" input "the limit is 100000 (MAX_MESSAGES)" messages 100001
run_abi "100,000 messages, fit" messages:100000 "status=TURNFIT_STATUS_OK" messages 100000

# (c) A 100 MB string, and the 64 MiB text limit itself. (`count` exits 1
# when a file cannot be counted and goes on with the next.)
head -c 100000000 /dev/zero | tr '\0' 'a' > "$tmp/big.txt"
run_cli "100 MB string, count" input 1 "the limit is 67108864" "$tmp/big.txt" count --model gpt-4o
run_abi "100 MB string, count" input "is 100000000 bytes; the limit is 67108864" string 100000000
run_abi "64 MiB + 1 string, count" input "is 67108865 bytes; the limit is 67108864" string 67108865
run_abi "64 MiB string, count_until_limit" input "status=TURNFIT_STATUS_OK" string-at-limit

if [ "$failed" != 0 ]; then
    echo "limits: FAILED"
    exit 1
fi
echo "limits: every case ended with its status, under the cap, within the RSS bound"
