#!/usr/bin/env bash
# Billing set 3 (issue 53): the recordings behind docs/accuracy.md's
# "Set 3: fit and check parts", and the table itself.
#
#   scripts/billing/set3.sh fetch    # pip download the pinned sdists into target/billing-3/
#   scripts/billing/set3.sh verify   # re-collect from that cache; compare with the committed files
#   scripts/billing/set3.sh table    # regenerate docs/accuracy.md (all sets) from the committed files
#   scripts/billing/set3.sh          # verify (skipped with a message when the cache is absent), then
#                                    # check docs/accuracy.md is what the harness produces
#
# The records are committed (tests/fixtures/billing/*-3.jsonl; MIT and
# Apache-2.0, SOURCES.md), so the table needs no download; `verify` shows
# they are what the pinned packages ship. pydantic-ai's Chat recordings come
# from a git checkout of 4fda389 (PYDANTIC_AI_REPO=/path/to/clone for fetch).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=$root/target/billing-3
sdists="mirascope==2.8.2 opentelemetry-instrumentation-openai-v2==2.4b0 opentelemetry-instrumentation-agno==0.62.4
opentelemetry-instrumentation-haystack==0.62.4 langchain-openai==1.8.1"
dirs="mirascope-2.8.2 langchain_openai-1.8.1 opentelemetry_instrumentation_openai_v2-2.4b0
opentelemetry_instrumentation_agno-0.62.4 opentelemetry_instrumentation_haystack-0.62.4"
pyd=pydantic-ai-4fda38988f2939fa6ea9cdefcf120693e10ef491

fetch() {
    mkdir -p "$cache/sdists" "$cache/un"
    # shellcheck disable=SC2086
    python3 -m pip download -q --no-deps --no-binary :all: -d "$cache/sdists" $sdists
    for f in "$cache"/sdists/*.tar.gz; do tar xzf "$f" -C "$cache/un"; done
    if [ -n "${PYDANTIC_AI_REPO:-}" ]; then
        git -C "$PYDANTIC_AI_REPO" grep -l 'chat/completions' 4fda38988f2939fa6ea9cdefcf120693e10ef491 -- 'tests/**/*.yaml' |
            sed 's/^[0-9a-f]*://' | while read -r p; do
                mkdir -p "$cache/un/$pyd/$(dirname "$p")"
                git -C "$PYDANTIC_AI_REPO" show "4fda38988f2939fa6ea9cdefcf120693e10ef491:$p" >"$cache/un/$pyd/$p" || true
            done
    fi
}

verify() {
    for d in $dirs $pyd; do
        if [ ! -d "$cache/un/$d" ]; then
            echo "set3: SKIP verify: $cache/un/$d is absent (run: scripts/billing/set3.sh fetch)"
            return 0
        fi
    done
    if ! python3 -c 'import yaml' 2>/dev/null; then
        echo "set3: SKIP verify: PyYAML is not installed"
        return 0
    fi
    out=$(mktemp -d)
    # shellcheck disable=SC2086
    (cd "$cache/un" && BILLING_OUT=$out python3 "$root/scripts/billing/collect.py" --set 3 $dirs $pyd >/dev/null 2>&1 &&
        BILLING_OUT=$out python3 "$root/scripts/billing/collect.py" --set responses-3 $dirs >/dev/null 2>&1)
    for f in openai-3.jsonl anthropic-3.jsonl openai-responses-3.jsonl; do
        cmp -s "$out/$f" "$root/tests/fixtures/billing/$f" || { echo "set3: $f differs from a fresh collection ($out)"; exit 1; }
    done
    rm -rf "$out"
    echo "set3: the committed set-3 records are what the pinned packages ship"
}

case "${1:-check}" in
fetch) fetch ;;
verify) verify ;;
table) cd "$root" && TURNFIT_WRITE_ACCURACY=1 cargo test -q -p turnfit --test billing report_matches_docs ;;
check)
    verify
    for f in openai-3.jsonl anthropic-3.jsonl openai-responses-3.jsonl; do
        [ -f "$root/tests/fixtures/billing/$f" ] || { echo "set3: SKIP: tests/fixtures/billing/$f is absent"; exit 0; }
    done
    cd "$root" && cargo test -q -p turnfit --test billing report_matches_docs
    ;;
*) echo "usage: $0 [fetch|verify|table|check]" >&2; exit 2 ;;
esac
