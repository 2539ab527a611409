#!/usr/bin/env bash
# Quick end-to-end timings of the release CLI on generated inputs (vocabulary
# load included). Not a substitute for the criterion suite of issue 5; it only
# backs the figures quoted in docs/benchmarks.md. Prints medians of 5 runs.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q --release -p turnfit-cli
bin=target/release/turnfit
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
python3 - "$dir" <<'PY'
import random, sys
d = sys.argv[1]
open(f"{d}/tiny.txt", "w").write("hi\n")
open(f"{d}/a_1mb.txt", "w").write("a" * (1 << 20))
open(f"{d}/ab_1mb.txt", "w").write("ab" * (1 << 19))
open(f"{d}/spaces_100kb.txt", "w").write(" " * 100_000 + "x")
r = random.Random(7)
open(f"{d}/letters_100kb.txt", "w").write("".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(100_000)))
words = "the of and to in is for on that with as are this by be from at or an it context window token budget agent tool call".split()
open(f"{d}/prose_1mb.txt", "w").write(" ".join(r.choice(words) for _ in range(190_000))[: 1 << 20])
PY
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-18s %-12s %s\n' input encoding "median seconds (5 runs)"
for enc in cl100k_base o200k_base; do
    for f in tiny a_1mb ab_1mb spaces_100kb letters_100kb prose_1mb; do
        t=$(for _ in 1 2 3 4 5; do /usr/bin/time -f %e "$bin" count --encoding "$enc" "$dir/$f.txt" 2>&1 >/dev/null; done | median)
        printf '%-18s %-12s %s\n' "$f" "$enc" "$t"
    done
done
