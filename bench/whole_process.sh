#!/usr/bin/env bash
# Whole-process counting (issue 36): each run is a fresh process that loads
# one engine, reads one input and counts it once (`peers --once`); the figure
# is the process's CPU time (user + system, from /usr/bin/time), median of
# REPS runs, engines interleaved run by run. Same inputs as `peers`.
#
#   bash bench/whole_process.sh [REPS] [ENGINE ...]   # default 5; turnfit toktok-rs wordchipper
set -euo pipefail
cd "$(dirname "$0")"
reps=${1:-5}
shift || true
engines=("$@")
[ ${#engines[@]} -gt 0 ] || engines=(turnfit toktok-rs wordchipper)
bin=target/release/peers
echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
for enc in cl100k_base o200k_base; do
    for input in prose code a unique_prose unique_code; do
        declare -A times=()
        for ((r = 0; r < reps; r++)); do
            for e in "${engines[@]}"; do
                t=$( { /usr/bin/time -f "%U %S" "$bin" --once "$e" "$enc" "$input" >/dev/null; } 2>&1 | tail -1 | awk '{print $1 + $2}')
                times[$e]+="$t "
            done
        done
        line="| ${enc%%_*} ${input//_/ } |"
        first=""
        best=""
        for e in "${engines[@]}"; do
            m=$(echo "${times[$e]}" | tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}')
            line+=" $m |"
            if [ -z "$first" ]; then first=$m; elif [ -z "$best" ] || awk "BEGIN{exit !($m < $best)}"; then best=$m; fi
        done
        [ -n "$best" ] && line+=" $(awk "BEGIN{printf \"%.2fx\", $best / $first}") |"
        echo "$line"
        unset times
    done
done
