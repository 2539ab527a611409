#!/bin/sh
# Fails (listing them) when a function declared in the C header is not called
# from the C harness. Comments and string literals are stripped from both
# files first, so a name mentioned only in prose or in a message does not
# count as a call.
#
# usage: check_coverage.sh [HEADER] [HARNESS]
set -eu
LC_ALL=C
export LC_ALL

header=${1:-../../include/turnfit.h}
harness=${2:-harness.c}

for f in "$header" "$harness"; do
    if [ ! -r "$f" ]; then
        echo "check_coverage: cannot read $f" >&2
        exit 2
    fi
done

# Prints the file without /* */ and // comments and without "..." literals.
strip() {
    awk '
    {
        line = $0
        out = ""
        while (length(line) > 0) {
            if (in_comment) {
                i = index(line, "*/")
                if (i == 0) { line = "" } else { line = substr(line, i + 2); in_comment = 0 }
                continue
            }
            b = index(line, "/*"); s = index(line, "//"); q = index(line, "\"")
            first = 0
            if (b > 0) first = b
            if (s > 0 && (first == 0 || s < first)) first = s
            if (q > 0 && (first == 0 || q < first)) first = q
            if (first == 0) { out = out line; line = ""; continue }
            out = out substr(line, 1, first - 1)
            if (first == b) { line = substr(line, b + 2); in_comment = 1 }
            else if (first == s) { line = "" }
            else {
                # Skip a string literal, honouring backslash escapes.
                rest = substr(line, q + 1)
                j = 1
                while (j <= length(rest)) {
                    c = substr(rest, j, 1)
                    if (c == "\\") { j += 2; continue }
                    if (c == "\"") break
                    j++
                }
                line = substr(rest, j + 1)
                out = out "\"\""
            }
        }
        print out
    }' "$1"
}

tmp=${TMPDIR:-/tmp}/turnfit-coverage.$$
trap 'rm -f "$tmp".*' EXIT INT TERM

# Declared functions: identifiers starting with turnfit_ followed by "(" in
# the comment-free header (types and macros never are).
strip "$header" | grep -o 'turnfit_[A-Za-z0-9_]*[[:space:]]*(' | sed 's/[[:space:]]*($//' | sort -u >"$tmp.declared"
strip "$harness" | grep -o 'turnfit_[A-Za-z0-9_]*[[:space:]]*(' | sed 's/[[:space:]]*($//' | sort -u >"$tmp.called"

declared=$(wc -l <"$tmp.declared" | tr -d ' ')
if [ "$declared" -eq 0 ]; then
    echo "check_coverage: found no function declarations in $header" >&2
    exit 2
fi

missing=$(comm -23 "$tmp.declared" "$tmp.called")
if [ -n "$missing" ]; then
    echo "check_coverage: $(echo "$missing" | wc -l | tr -d ' ') of $declared functions declared in $header are never called in $harness:" >&2
    echo "$missing" | sed 's/^/  /' >&2
    exit 1
fi
echo "coverage: all $declared functions declared in $header are called in $harness"
