#!/usr/bin/env python3
"""Markdown report of the tokenizer benchmarks (stdlib only).

    python3 bench/report.py [--target DIR]     # default DIR: bench/target
    python3 bench/report.py --snapshot [--target DIR]

Reads
  DIR/criterion/**/new/{benchmark,estimates}.json   criterion results (median
                                                    point estimate per iteration)
  DIR/turnfit-bench/checks.json    counts of the pre-timing correctness pass
  DIR/turnfit-bench/skipped.json   cells too slow for criterion (one-shot time used)
  DIR/turnfit-bench/first_use.json (cargo run --release --bin first_use)
  DIR/turnfit-bench/sizes.json     (python3 bench/sizes.py)
and prints markdown. `--snapshot` saves the last run's medians to
DIR/turnfit-bench/runs/; when that folder holds snapshots, the report combines
them (median over runs, and the spread). It prints: the machine, throughput tables (rows = input, columns =
engine, cells = median MB/s with MB = 10^6 bytes, plus "turnfit / best peer"),
count_until_limit, first use, memory and binary sizes. Missing parts are
skipped with a note.
"""

import datetime
import glob
import json
import os
import platform
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ENGINES = ["turnfit", "tiktoken-rs", "bpe-openai", "tiktoken"]
PEERS = ENGINES[1:]
ENCODINGS = ["cl100k_base", "o200k_base"]
INPUTS = ["prose", "code", "multilingual", "base64", "a", "random_letters", "spaces"]


def sh(cmd, cwd=None):
    try:
        return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def machine():
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    repo = os.path.dirname(HERE)
    head = sh(["git", "rev-parse", "--short", "HEAD"], cwd=repo)
    tok = ["--", "core/src/tokens", "core/data", "core/Cargo.toml"]
    tok_commit = sh(["git", "log", "-1", "--format=%h %s"] + tok, cwd=repo)
    dirty = sh(["git", "status", "--porcelain"] + tok, cwd=repo)
    lines = [
        "- date (UTC): %s" % datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
        "- nproc: %s" % sh(["nproc"]),
        "- CPU: %s" % cpu,
        "- kernel: %s %s" % (platform.system(), platform.release()),
        "- rustc: %s" % sh(["rustc", "--version"]),
        "- turnfit: repository HEAD %s; tokenizer engine (core/src/tokens, core/data, core/Cargo.toml) "
        "last changed in %s, %s at report time" % (
            head, tok_commit,
            "no uncommitted changes" if dirty == "" else "UNCOMMITTED CHANGES" if dirty != "unknown" else "state unknown"),
    ]
    return "\n".join(lines)


def criterion_results(target, since=0.0):
    """{(group_id, function_id, value_str): median_ns}, only results written
    at or after `since` (unix time): the last full run, not older leftovers."""
    out = {}
    for bj in glob.glob(os.path.join(target, "criterion", "**", "new", "benchmark.json"), recursive=True):
        if os.path.getmtime(bj) < since:
            continue
        meta = load_json(bj)
        est = load_json(os.path.join(os.path.dirname(bj), "estimates.json"))
        if not meta or not est:
            continue
        out[(meta["group_id"], meta["function_id"], meta.get("value_str"))] = est["median"]["point_estimate"]
    return out


def criterion_fastest(target, since=0.0):
    """{(group_id, function_id, value_str): fastest per-iteration ns among the
    samples} (sample.json). On a machine whose interference only ever slows a
    sample down, this is the most repeatable figure."""
    out = {}
    for bj in glob.glob(os.path.join(target, "criterion", "**", "new", "benchmark.json"), recursive=True):
        if os.path.getmtime(bj) < since:
            continue
        meta = load_json(bj)
        smp = load_json(os.path.join(os.path.dirname(bj), "sample.json"))
        if not meta or not smp:
            continue
        out[(meta["group_id"], meta["function_id"], meta.get("value_str"))] = min(
            t / i for t, i in zip(smp["times"], smp["iters"]))
    return out


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def snapshot(target):
    """Saves the last run's criterion medians (and run.json) to
    turnfit-bench/runs/run-<start>.json so later reports can combine runs."""
    extra = os.path.join(target, "turnfit-bench")
    run = load_json(os.path.join(extra, "run.json"))
    if not run:
        sys.exit("no run.json: run the benchmark first")
    res = criterion_results(target, run["started_unix"])
    fastest = criterion_fastest(target, run["started_unix"])
    os.makedirs(os.path.join(extra, "runs"), exist_ok=True)
    path = os.path.join(extra, "runs", "run-%d.json" % run["started_unix"])
    with open(path, "w") as f:
        json.dump({"run": run, "results": [{"group": g, "function": fn, "value": v, "median_ns": ns,
                                            "fastest_ns": fastest.get((g, fn, v))}
                                           for (g, fn, v), ns in sorted(res.items(), key=str)]}, f, indent=1)
    print("saved %d results to %s" % (len(res), path))


def fmt_mbs(x):
    if x >= 100:
        return "%.0f" % x
    if x >= 10:
        return "%.1f" % x
    return "%.2f" % x


def throughput_tables(res, checks, skipped, kind, inputs):
    sizes = (checks or {}).get("input_bytes", {})
    oneshot = {}
    for c in (checks or {}).get("cells", []):
        oneshot[(c["encoding"], c["input"], c["engine"])] = c["oneshot_secs"]
    parts = []
    marked = False
    for enc in ENCODINGS:
        rows = []
        for inp in inputs:
            nbytes = sizes.get(inp)
            cells, vals = [], {}
            for eng in ENGINES:
                runs_ns = res.get(("%s/%s/%s" % (kind, enc, inp), eng, None))
                full = "%s/%s/%s/%s" % (kind, enc, inp, eng)
                if runs_ns and nbytes:
                    mbs = [nbytes / ns * 1e3 for ns in runs_ns]
                    vals[eng] = median(mbs)
                    cell = fmt_mbs(vals[eng])
                    if len(mbs) > 1:
                        cell += " ±%.0f%%" % ((max(mbs) - min(mbs)) / 2 / vals[eng] * 100)
                    cells.append(cell)
                elif full in skipped and (enc, inp, eng) in oneshot and nbytes:
                    vals[eng] = nbytes / oneshot[(enc, inp, eng)] / 1e6
                    cells.append(fmt_mbs(vals[eng]) + " †")
                    marked = True
                else:
                    cells.append("–")
            peers = [vals[p] for p in PEERS if p in vals]
            if "turnfit" in vals and peers:
                best = max(peers)
                best_name = [p for p in PEERS if vals.get(p) == best][0]
                ratio = "%.2f (%s)" % (vals["turnfit"] / best, best_name)
            else:
                ratio = "–"
            if any(c != "–" for c in cells):
                rows.append("| %s | %s | %s | %s |" % (inp, format(nbytes or 0, ","), " | ".join(cells), ratio))
        if rows:
            parts.append("### %s, %s (MB/s, higher is better)\n" % (kind, enc))
            parts.append("| input | bytes | %s | turnfit / best peer |" % " | ".join(ENGINES))
            parts.append("|---|---:|%s---|" % ("---:|" * len(ENGINES)))
            parts.extend(rows)
            parts.append("")
    if marked:
        parts.append("† one-shot time of the correctness pass (the cell was too slow for criterion).\n")
    return "\n".join(parts)


def until_limit_table(res):
    rows = []
    for enc in ENCODINGS:
        g = "count_until_limit/%s/prose" % enc
        lim = res.get((g, "turnfit", "limit=1000"))
        full = res.get((g, "turnfit", "full"))
        if not lim or not full:
            continue
        lim, full = median(lim), median(full)
        rows.append("| %s | %.3f ms | %.1f ms | %.0fx |" % (enc, lim / 1e6, full / 1e6, full / lim))
    if not rows:
        return ""
    return "\n".join(["### count_until_limit (turnfit, 1 MiB prose, median time per call)\n",
                      "| encoding | limit 1000 | full count | full / limited |",
                      "|---|---:|---:|---:|"] + rows) + "\n"


def first_use_table(fu):
    if not fu:
        return "(no first_use.json: run `cargo run --release --bin first_use` in bench/)\n"
    mib = lambda b: b / (1024 * 1024)
    out = ["### First use in a fresh process (median of %d spawns)\n" % fu["reps"],
           "Construct the encoding object, then count \"hello\" once. \"Whole process\" is spawn to exit "
           "as seen by the parent. RSS deltas are /proc/self/statm around construction + first count; "
           "\"anon\" excludes file-backed pages (such as the embedded vocabulary text being read).\n",
           "| engine | encoding | construct (ms) | construct + count (ms) | same, CPU time (ms) | whole process (ms) | RSS delta (MiB) | anon RSS delta (MiB) |",
           "|---|---|---:|---:|---:|---:|---:|---:|"]
    notes = []
    for c in fu["cells"]:
        out.append("| %s | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |" % (
            c["engine"], c["encoding"], c["construct_ns"] / 1e6, c["total_ns"] / 1e6,
            c.get("cpu_ns", float("nan")) / 1e6, c["process_ns"] / 1e6, mib(c["rss_delta"]), mib(c["anon_delta"])))
        if c.get("reported_bytes", -1) >= 0:
            notes.append("- turnfit %s: `Tokenizer::memory_bytes()` reports %s bytes (%.1f MiB)" % (
                c["encoding"], format(c["reported_bytes"], ","), mib(c["reported_bytes"])))
    return "\n".join(out + [""] + notes) + "\n"


def sizes_table(sz):
    if not sz:
        return "(no sizes.json: run `python3 bench/sizes.py`)\n"
    rows = sz["rows"]
    base = rows[0]["stripped_bytes"]
    out = ["### Stripped size of a minimal binary (cl100k_base + o200k_base)\n",
           "| engine | stripped bytes | minus no-tokenizer baseline | embedded vocabulary data found in the binary |",
           "|---|---:|---:|---|"]
    for r in rows:
        emb = "; ".join("%s: %s B" % (e["blob"], format(e["bytes"], ",")) for e in r["embedded"])
        if r["embedded"]:
            emb = "%s B total: %s" % (format(r["embedded_bytes"], ","), emb)
        out.append("| %s | %s | %s | %s |" % (r["engine"], format(r["stripped_bytes"], ","),
                                             format(r["stripped_bytes"] - base, ","), emb or "–"))
    return "\n".join(out) + "\n"


def main(argv):
    target = os.path.join(HERE, "target")
    args = argv[1:]
    do_snapshot = "--snapshot" in args
    args = [a for a in args if a != "--snapshot"]
    if len(args) == 2 and args[0] == "--target":
        target = args[1]
    elif args:
        print(__doc__.strip())
        return 2
    if do_snapshot:
        snapshot(target)
        return 0
    extra = os.path.join(target, "turnfit-bench")
    # Saved runs (report.py --snapshot) if any, else the last run's results.
    runs, fast = [], {}
    for p in sorted(glob.glob(os.path.join(extra, "runs", "run-*.json"))):
        snap = load_json(p)
        if snap:
            runs.append((snap["run"], {(r["group"], r["function"], r["value"]): r["median_ns"]
                                       for r in snap["results"]}))
            for r in snap["results"]:
                if r.get("fastest_ns"):
                    fast.setdefault((r["group"], r["function"], r["value"]), []).append(r["fastest_ns"])
    run = load_json(os.path.join(extra, "run.json"))
    if runs and run and run["started_unix"] > max(r["started_unix"] for r, _ in runs) + 1:
        runs = []  # a newer run that was not snapshotted: report it alone
    if not runs:
        fast = {k: [v] for k, v in criterion_fastest(target, (run or {}).get("started_unix", 0.0)).items()}
        if run:
            runs.append((run, criterion_results(target, run["started_unix"])))
        else:
            runs.append(({}, criterion_results(target)))
    res = {}
    for _, r in runs:
        for k, ns in r.items():
            res.setdefault(k, []).append(ns)
    checks = load_json(os.path.join(extra, "checks.json"))
    skipped = set(load_json(os.path.join(extra, "skipped.json")) or [])
    print("## Machine\n")
    print(machine() + "\n")
    print("## Correctness (pre-timing pass)\n")
    try:
        with open(os.path.join(extra, "counts.md")) as f:
            print(f.read().strip() + "\n")
    except OSError:
        print("(no counts.md: run the benchmark)\n")
    if checks is not None:
        dis = checks.get("disagreements", [])
        print("Peer disagreements: %s\n" % ("none" if not dis else "; ".join(dis)))
    print("## Timing runs\n")
    print("Each cell is a criterion median (per-iteration time of one run, converted to MB/s = 10^6 bytes/s);")
    print("with several runs, the cell is the median over runs and ±N% is half the max-min range over runs.\n")
    for i, (run, _) in enumerate(runs, 1):
        if not run:
            print("- run %d: no run.json\n" % i)
            continue
        clock = {"cpu": "CPU time of the benchmarking thread (CLOCK_THREAD_CPUTIME_ID)",
                 "wall": "wall clock (criterion's WallTime)"}.get(run["clock"], run["clock"])
        started = datetime.datetime.fromtimestamp(run["started_unix"], datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        print("- run %d: started %s; clock: %s; criterion arguments `%s`; load average (1/5/15 min) "
              "%s before, %s after; criterion phase %.0f s wall" % (
                  i, started, clock, run["args"], run["loadavg_before"], run["loadavg_after"],
                  run["timing_wall_secs"]))
    print()
    print("## Throughput: count\n")
    print(throughput_tables(res, checks, skipped, "count", INPUTS))
    print("## Throughput: encode (ids materialized)\n")
    print(throughput_tables(res, checks, skipped, "encode", ["prose", "code"]))
    print(until_limit_table(res))
    if fast:
        nfast = max(len(v) for v in fast.values())
        print("## Throughput from the fastest sample\n")
        print("Same cells, but each is the fastest criterion sample (per-iteration time) of the runs that "
              "recorded samples (%d run(s)), best over those runs. Interference on a shared machine only "
              "slows a sample down, so on a noisy machine this is the more repeatable comparison; the "
              "median tables above are the primary figures.\n" % nfast)
        best = {k: [min(v)] for k, v in fast.items()}
        print(throughput_tables(best, checks, skipped, "count", INPUTS).replace("(MB/s, higher", "(fastest-sample MB/s, higher"))
        print(throughput_tables(best, checks, skipped, "encode", ["prose", "code"]).replace("(MB/s, higher", "(fastest-sample MB/s, higher"))
    print("## First use and memory\n")
    print(first_use_table(load_json(os.path.join(extra, "first_use.json"))))
    print("## Binary size\n")
    print(sizes_table(load_json(os.path.join(extra, "sizes.json"))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
