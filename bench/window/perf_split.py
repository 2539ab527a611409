#!/usr/bin/env python3
"""Splits a `perf script -F comm,ip,sym` dump of the window bench by where
fit's time goes (stdlib only). Only samples with `fit_cold` on the stack count.

    CARGO_TARGET_DIR=/tmp/wb-prof CARGO_PROFILE_BENCH_DEBUG=line-tables-only \
        cargo bench --bench window --no-run
    perf record -F 499 --call-graph dwarf,16384 -o /tmp/fit.data \
        /tmp/wb-prof/release/deps/window-<hash> --bench --profile-time 5 'fit_cold/1mb$'
    perf script -i /tmp/fit.data -F comm,ip,sym > /tmp/fit.txt
    python3 perf_split.py /tmp/fit.txt
"""

import collections
import sys


def samples(path):
    cur = []
    for line in open(path, errors="replace"):
        if line.startswith("window-"):
            if cur:
                yield cur
            cur = []
        elif line.strip():
            parts = line.strip().split(" ", 1)
            cur.append(parts[1] if len(parts) > 1 else parts[0])
    if cur:
        yield cur


def main():
    top = collections.Counter()
    inner = collections.Counter()
    for frames in samples(sys.argv[1]):
        j = " | ".join(frames)
        if "fit_cold" not in j:
            continue
        if "truncate_tool_outputs" in j and "Tokenizer>::truncate" in j:
            k = "truncate_tool_outputs -> Tokenizer::truncate"
        elif "Accountant::message" in j or "Accountant::conversation" in j:
            k = "counting (Accountant::message -> tokenizer)"
            if any("fancy_regex" in f or "regex_automata" in f for f in frames):
                inner["pre-tokenizer regex (fancy_regex / regex_automata)"] += 1
            elif any("merge" in f for f in frames):
                inner["BPE merge"] += 1
            elif any("HashMap" in f or "hashbrown" in f or "memcmp" in f for f in frames):
                inner["whole-piece rank lookup (hash, memcmp)"] += 1
            else:
                inner["count loop, other"] += 1
        elif "Conversation::parse" in j or "serde_json" in j:
            k = "JSON parse"
        elif "validate" in j:
            k = "validate"
        elif "clone" in j:
            k = "clone"
        elif "drop_in_place" in j:
            k = "drop"
        elif "select" in j or "turns" in j:
            k = "turn split / selection"
        else:
            k = "other"
        top[k] += 1
    for title, c in (("samples inside fit", top), ("inside counting", inner)):
        n = sum(c.values())
        print(f"{title}: {n}")
        for k, v in c.most_common():
            print(f"  {100 * v / n:5.1f}%  {v:6}  {k}")


if __name__ == "__main__":
    main()
