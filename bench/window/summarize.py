#!/usr/bin/env python3
"""Prints the results of one run.sh invocation (stdlib only).

    python3 summarize.py OUT_DIR        # default: target/window-run

OUT_DIR holds env.txt, counts.json and run-1 ... run-K, each with criterion/
(criterion's <group>/<id>/new/estimates.json for that repetition only),
bench.log and langchain.json. Every figure printed is a median criterion or
timeit measured, or a ratio of two of them; "across runs" is the median of
the K per-run medians.
"""

import glob
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BENCHES = [
    "append_preflight/10",
    "append_preflight/10000",
    "fit_cold/1mb",
    "fit_cold/1mb_tool_output_max_2000",
    "fit_parts/parse_1mb",
    "fit_parts/count_1mb",
]
TARGET_MS = 30.0


def crit_median(run, bench):
    with open(os.path.join(run, "criterion", bench, "new", "estimates.json")) as f:
        return json.load(f)["median"]["point_estimate"]


def fmt(ns):
    if ns < 1e6:
        return f"{ns / 1e3:.2f} µs"
    return f"{ns / 1e6:.2f} ms"


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "target", "window-run")
    runs = sorted(glob.glob(os.path.join(out, "run-*")), key=lambda p: int(p.rsplit("-", 1)[1]))
    counts = json.load(open(os.path.join(out, "counts.json")))
    lcs = [json.load(open(os.path.join(r, "langchain.json"))) for r in runs]
    rows = {b: [crit_median(r, b) for r in runs] for b in BENCHES}
    rows["langchain_trim"] = [lc["trim_median_ms"] * 1e6 for lc in lcs]
    rows["langchain_from_json"] = [lc["end_to_end_median_ms"] * 1e6 for lc in lcs]
    names = {
        "langchain_trim": f"LangChain `trim_messages`, fresh messages, counting included (timeit, median of {lcs[0]['runs']})",
        "langchain_from_json": f"LangChain json.loads + build messages + `trim_messages` (timeit, median of {lcs[0]['runs']})",
    }
    med = {k: statistics.median(v) for k, v in rows.items()}

    k = len(runs)
    print("| benchmark | " + " | ".join(f"run {i + 1}" for i in range(k)) + " | median across runs |")
    print("| --- | " + " | ".join("---:" for _ in range(k)) + " | ---: |")
    for b, v in rows.items():
        print(f"| {names.get(b, f'`{b}`')} | " + " | ".join(fmt(x) for x in v) + f" | **{fmt(med[b])}** |")
    print()

    def ratio_line(label, num, den, digits=3):
        per = [n / d for n, d in zip(rows[num], rows[den])]
        print(f"| {label} | " + " | ".join(f"{x:.{digits}f}" for x in per) + f" | **{med[num] / med[den]:.{digits}f}** |")

    print("| ratio | " + " | ".join(f"run {i + 1}" for i in range(k)) + " | from the medians across runs |")
    print("| --- | " + " | ".join("---:" for _ in range(k)) + " | ---: |")
    ratio_line("append_preflight 10,000 / 10", "append_preflight/10000", "append_preflight/10")
    per = [x / 1e6 / TARGET_MS for x in rows["fit_cold/1mb"]]
    print("| fit_cold/1mb / 30 ms target | " + " | ".join(f"{x:.2f}" for x in per) + f" | **{med['fit_cold/1mb'] / 1e6 / TARGET_MS:.2f}** |")
    ratio_line("fit_parts/count_1mb / fit_cold/1mb", "fit_parts/count_1mb", "fit_cold/1mb", 2)
    ratio_line("LangChain trim / turnfit fit_cold/1mb", "langchain_trim", "fit_cold/1mb", 2)
    ratio_line("LangChain from JSON / turnfit fit_cold/1mb", "langchain_from_json", "fit_cold/1mb", 2)
    print()

    fit = med["fit_cold/1mb"] / 1e6
    verdict = "meets it" if fit <= TARGET_MS else f"misses it by {fit - TARGET_MS:.2f} ms"
    print(f"- fit_cold/1mb median across runs {fit:.2f} ms vs the 30 ms target: {verdict}")
    print()
    print("From each run's bench log (the last run's lines; figures printed by the bench itself):")
    print()
    for r in runs:
        for line in open(os.path.join(r, "bench.log")):
            if line.startswith("append_preflight interleaved"):
                print(f"    {os.path.basename(r)}: {line.rstrip()}")
    log = open(os.path.join(runs[-1], "bench.log")).read()
    for line in log.splitlines():
        if line.startswith(("warm-up: first", "append_preflight/", "fit_cold/")) and "Benchmarking" not in line and "time:" not in line and ": " in line:
            print(f"    {line}")
    print()
    lc = lcs[-1]
    minmax = "; ".join(fmt(x["trim_min_ms"] * 1e6) + " / " + fmt(x["trim_max_ms"] * 1e6) for x in lcs)
    print(f"- LangChain: langchain-core {lc['langchain_core']}, tiktoken {lc['tiktoken']}, Python {lc['python']}; "
          f"encoding load {', '.join(str(x['encoding_load_ms']) for x in lcs)} ms per run (excluded); "
          f"trim min/max per run: {minmax}")
    print(f"- input: {lc['messages_in']} messages, {lc['tool_calls_in']} tool calls; LangChain's counter says {lc['lc_count_in']} tokens, "
          f"turnfit {counts['input']['tokens']} (difference {counts['input']['tokens'] - lc['lc_count_in']}; "
          f"3 x {lc['tool_calls_in']} tool calls = {3 * lc['tool_calls_in']})")
    print(f"- trim_messages called the counter {lc['token_counter_calls_per_trim']} times per trim, on {lc['messages_counted_per_trim']} messages in all "
          f"({lc['messages_counted_per_trim'] / lc['messages_in']:.1f}x the conversation's {lc['messages_in']})")
    for who in ("turnfit", "langchain"):
        c = counts[who]
        print(f"- {who} result: {c['messages']} messages, {c['tokens']} tokens by turnfit's count "
              f"({'fits' if c['tokens'] <= 90000 else 'DOES NOT fit'} 90,000), turnfit validate: {c['issues']} issues {c['issue_kinds']}")
    print(f"- LangChain's result by the script's own pair check: pairs intact = {lc['pairs_intact']}; by its own counter {lc['lc_count_out']} tokens; "
          f"first message after the system prompt: {lc['first_out_after_system']}")
    print(f"- the two results are the same messages with the same content: {counts['identical']}")


if __name__ == "__main__":
    main()
