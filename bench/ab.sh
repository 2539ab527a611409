#!/usr/bin/env bash
# Two builds of turnfit, counting the same files, interleaved (issue 36): the
# A/B figures of docs/benchmarks.md ("18-36% less CPU time", the table of
# what was tried). Each REV is a git revision, or `.` for the working tree
# as it is (an uncommitted experiment); each is built once, in its own
# worktree and target directory under target/ab/. Every process counts the
# file 20 times (`count_file ENC FILE 20`, load and first count included);
# the figure is the median user CPU time of ROUNDS processes, A and B
# alternating, and B/A.
#
#   bash bench/ab.sh REV_A REV_B [ROUNDS] [ENC:INPUT ...]
#   bash bench/ab.sh 004962e 6b9cdf0 5        # before / after the 64-byte windows
#
# Inputs: bench/inputs/big/INPUT.txt (python3 bench/gen_big_inputs.py).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
[ $# -ge 2 ] || { echo "usage: bash bench/ab.sh REV_A REV_B [ROUNDS] [ENC:INPUT ...]"; exit 2; }
rev_a=$1 rev_b=$2 rounds=${3:-5}
shift $(($# < 3 ? $# : 3))
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(o200k_base:unique_prose cl100k_base:unique_prose o200k_base:unique_code
    cl100k_base:unique_code cl100k_base:prose cl100k_base:code o200k_base:prose o200k_base:code)
mkdir -p target/ab

# The count_file binary of one revision, built once.
build() {
    local rev=$1 dir name
    if [ "$rev" = . ]; then
        name=worktree dir=$root
    else
        name=$(git rev-parse --short "$rev") dir=$root/target/ab/src-$name
        [ -d "$dir" ] || git worktree add -q --detach "$dir" "$rev"
    fi
    (cd "$dir/bench" && CARGO_TARGET_DIR=$root/target/ab/target-$name cargo build -q --release --bin count_file) >&2
    cp "$root/target/ab/target-$name/release/count_file" "$root/target/ab/count_file-$name"
    echo "$root/target/ab/count_file-$name"
}
bin_a=$(build "$rev_a")
bin_b=$(build "$rev_b")
echo "A = $rev_a, B = $rev_b; load average $(cut -d' ' -f1-3 /proc/loadavg)"
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
for c in "${cases[@]}"; do
    enc=${c%%:*} input=bench/inputs/big/${c##*:}.txt
    ta=() tb=()
    for ((r = 0; r < rounds; r++)); do
        ta+=("$( { /usr/bin/time -f %U "$bin_a" "$enc" "$input" 20 >/dev/null; } 2>&1)")
        tb+=("$( { /usr/bin/time -f %U "$bin_b" "$enc" "$input" 20 >/dev/null; } 2>&1)")
    done
    a=$(printf '%s\n' "${ta[@]}" | median) b=$(printf '%s\n' "${tb[@]}" | median)
    echo "$enc ${c##*:}: A $a s, B $b s, B/A $(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", b / a}')"
done
