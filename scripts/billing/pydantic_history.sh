#!/usr/bin/env bash
# Earlier recordings of pydantic-ai's cassettes, for the second Responses
# hold-out (tests/fixtures/billing/SOURCES.md, "openai-responses-2.jsonl").
#
#   scripts/billing/pydantic_history.sh /path/to/pydantic-ai-clone OUTDIR
#
# For every commit before 4fda389 (the commit the first Responses set was
# read from) that changed a cassette whose path names OpenAI, Responses,
# tools, capabilities, phases, thinking or multimodal input, writes that
# cassette as it was at that commit to OUTDIR/pydantic-ai-COMMIT/PATH
# (cassettes whose blob the clone lacks are skipped), and prints the
# directories newest first: the order to pass them to collect.py, which
# keeps each recording once, under the first directory that holds it.
set -euo pipefail
repo=$1 out=$2
base=4fda38988f2939fa6ea9cdefcf120693e10ef491
mkdir -p "$out"
git -C "$repo" log --format='COMMIT %H' --name-only "$base" -- tests |
    awk '/^COMMIT/ { c = $2; next } NF { print c " " $0 }' |
    grep cassettes | grep -E '\.ya?ml$' | grep -iE 'openai|responses|tool|capab|phase|thinking|multimodal' |
    grep -v "^$base " |
    while read -r c p; do
        o=$(git -C "$repo" rev-parse -q --verify "$c:$p" 2>/dev/null) || continue
        d="$out/pydantic-ai-$c"
        mkdir -p "$d/$(dirname "$p")"
        git -C "$repo" cat-file blob "$o" >"$d/$p" 2>/dev/null || rm -f "$d/$p"
    done
git -C "$repo" log --format='%H' "$base" -- tests | while read -r c; do
    if [ -d "$out/pydantic-ai-$c" ]; then echo "$out/pydantic-ai-$c"; fi
done
