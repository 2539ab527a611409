#!/bin/sh
# Fails (listing them) when a pointer+length parameter of the C header is not
# probed by guard_pages.c (issue 48): every `const T *name` followed by
# `size_t name_len` (or `len`) in a function's parameters must have a
# {"function", "name", ...} row in its table. Callback typedefs are the
# host's functions, not turnfit's, and are left out.
#
# usage: check_ptrlen.sh [HEADER] [GUARD_PAGES_C]
set -eu
LC_ALL=C
export LC_ALL

header=${1:-../../include/turnfit.h}
probes=${2:-guard_pages.c}

pairs=$(awk '
/^[a-z_]+ turnfit_[a-z0-9_]+\(/ { infn = 1; sig = "" }
infn { sig = sig $0 " " }
infn && /\);/ {
    infn = 0
    match(sig, /turnfit_[a-z0-9_]+\(/); fn = substr(sig, RSTART, RLENGTH - 1)
    body = substr(sig, RSTART + RLENGTH); sub(/\).*/, "", body)
    n = split(body, ps, ",")
    prev = ""; prevptr = 0
    for (i = 1; i <= n; i++) {
        p = ps[i]; gsub(/^ +| +$/, "", p); gsub(/ +/, " ", p)
        name = p; sub(/.*[ *]/, "", name)
        isptr = (p ~ /^const / && p ~ /\*/ && p !~ /\*\*/ && p !~ /^const struct turnfit_/)
        if (p ~ /^size_t [a-z_]+$/ && prevptr && (name == prev "_len" || name == "len")) print fn " " prev
        prev = name; prevptr = isptr
    }
}' "$header")

if [ -z "$pairs" ]; then
    echo "check_ptrlen: found no pointer+length parameters in $header" >&2
    exit 2
fi
missing=$(echo "$pairs" | while read -r fn param; do
    grep -q "{\"$fn\", \"$param\"," "$probes" || echo "  $fn($param)"
done)
total=$(echo "$pairs" | wc -l | tr -d ' ')
if [ -n "$missing" ]; then
    echo "check_ptrlen: pointer+length parameters not probed by $probes:" >&2
    echo "$missing" >&2
    exit 1
fi
echo "check_ptrlen: all $total pointer+length parameters are probed"
