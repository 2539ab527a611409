#!/usr/bin/env python3
"""turnfit's Python binding against OpenAI's tiktoken, side by side in one run.

    bash bench/python/run.sh            # builds a release wheel into a venv, then runs this

Rows (medians of --runs timed runs after one warm-up, wall clock,
time.perf_counter):
  * count, single thread: tiktoken len(enc.encode_ordinary(t)) vs turnfit count_tokens(t)
  * encode, single thread: tiktoken encode_ordinary(t) vs turnfit encode(t) (a list)
    and encode_array(t)
  * 1 KiB per-call overhead: the same on the first 1,024 bytes of prose (many calls)
  * batch: tiktoken encode_ordinary_batch(chunks, num_threads=T) vs
    turnfit.tiktoken's encode_ordinary_batch (a ThreadPoolExecutor over the
    GIL-free encode), 64 KiB chunks of the 1 MiB inputs
  * fit vs LangChain trim_messages with a tiktoken counter, on agent-loop
    conversations (bindings/python/tests/agent_loop.py)
on the inputs of bench/gen_inputs.py (1 MiB prose, code, multilingual, base64,
'a'; 100 KB random letters and spaces). tiktoken loads its rank files from
core/data (offline; tiktoken checks their SHA-256).
"""

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bindings" / "python" / "tests"))

import tiktoken_offline  # noqa: E402

tiktoken_offline.setup()

import tiktoken  # noqa: E402

import turnfit  # noqa: E402
import turnfit.tiktoken as ck_tiktoken  # noqa: E402

FILES = ["prose.txt", "code.txt", "multilingual.txt", "base64.txt", "a.txt", "random_letters.txt", "spaces.txt"]


def median_s(fn, runs):
    fn()
    xs = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        xs.append(time.perf_counter() - t0)
    return statistics.median(xs)


def row(name, t_tk, t_ck, nbytes=None):
    speed = ""
    if nbytes:
        speed = f" | {nbytes / t_tk / 1e6:8.1f} | {nbytes / t_ck / 1e6:8.1f}"
    print(f"| {name:<44} | {t_tk * 1e3:10.3f} | {t_ck * 1e3:10.3f} | {t_tk / t_ck:6.2f}x{speed} |", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--inputs", default=str(REPO / "bench" / "inputs"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--encodings", default="cl100k_base,o200k_base")
    ap.add_argument("--threads", type=int, default=2)
    # Agent-loop lengths for the fit rows; 2700 and 9700 rounds are 12 and
    # 44 MB of JSON, the transcript sizes issue 36 measured.
    ap.add_argument("--fit-rounds", default="50,200")
    # Only the fit rows (skips every counting row).
    ap.add_argument("--fit-only", action="store_true")
    # Only the cyclic GC's collections inside each fit call (docs/benchmarks.md,
    # "The GC"): per generation, and the time spent in them.
    ap.add_argument("--gc-trace", action="store_true")
    args = ap.parse_args()
    if args.gc_trace:
        gc_trace(args.runs, [int(r) for r in args.fit_rounds.split(",") if r])
        return
    inputs = Path(args.inputs)
    print(f"tiktoken {tiktoken.__version__ if hasattr(tiktoken, '__version__') else '?'}, turnfit {turnfit.__version__}, "
          f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, median of {args.runs}")
    print()
    print("| row | tiktoken ms | turnfit ms | turnfit speed-up | tiktoken MB/s | turnfit MB/s |")
    print("|---|---:|---:|---:|---:|---:|")
    for enc_name in [] if args.fit_only else args.encodings.split(","):
        tk = tiktoken.get_encoding(enc_name)
        ck = turnfit.Tokenizer(enc_name)
        ckt = ck_tiktoken.get_encoding(enc_name)
        for f in FILES:
            text = (inputs / f).read_text(encoding="utf-8")
            n = len(text.encode())
            assert tk.encode_ordinary(text) == ck.encode(text), f"{enc_name} {f}: ids differ"
            row(f"{enc_name} {f} count", median_s(lambda: len(tk.encode_ordinary(text)), args.runs),
                median_s(lambda: ck.count_tokens(text), args.runs), n)
            row(f"{enc_name} {f} encode (list)", median_s(lambda: tk.encode_ordinary(text), args.runs),
                median_s(lambda: ck.encode(text), args.runs), n)
            if f == "prose.txt":
                row(f"{enc_name} {f} encode_array", median_s(lambda: tk.encode_ordinary(text), args.runs),
                    median_s(lambda: ck.encode_array(text), args.runs), n)
                small = text.encode()[:1024].decode("utf-8", "ignore")
                reps = 2000

                def many(fn):
                    return lambda: [fn(small) for _ in range(reps)]

                t1 = median_s(many(lambda s: len(tk.encode_ordinary(s))), args.runs) / reps
                t2 = median_s(many(ck.count_tokens), args.runs) / reps
                row(f"{enc_name} 1 KiB prose count, per call", t1, t2)
                chunks = [text[i:i + 65536] for i in range(0, len(text), 65536)] * 4
                nb = sum(len(c.encode()) for c in chunks)
                row(f"{enc_name} batch 64 KiB x{len(chunks)}, {args.threads} threads",
                    median_s(lambda: tk.encode_ordinary_batch(chunks, num_threads=args.threads), args.runs),
                    median_s(lambda: ckt.encode_ordinary_batch(chunks, num_threads=args.threads), args.runs), nb)
    fit_rows(args.runs, [int(r) for r in args.fit_rounds.split(",") if r])


def fit_rows(runs, rounds_list):
    from agent_loop import agent_loop
    from langchain_core.messages import trim_messages

    import turnfit.langchain as ckl

    enc = tiktoken.get_encoding("o200k_base")

    def tk_counter(messages):
        # OpenAI's recipe with tiktoken (what a LangChain user writes).
        n = 3
        for m in ckl.to_openai(messages):
            n += 3 + len(enc.encode(m["role"])) + len(enc.encode(m.get("content") or ""))
            for c in m.get("tool_calls") or []:
                n += len(enc.encode(c["function"]["name"])) + len(enc.encode(c["function"]["arguments"]))
        return n

    for rounds in rounds_list:
        conv = agent_loop(rounds)
        msgs = ckl.from_openai(conv)
        full = turnfit.count_conversation(conv)
        budget = full // 3
        def lc():
            return trim_messages(msgs, max_tokens=budget, token_counter=tk_counter, strategy="last",
                                 include_system=True, allow_partial=False)

        def ck():
            return turnfit.fit(conv, model="gpt-4o", max_tokens=budget)

        # Interleaved (trim, fit, trim, fit, ...) after one warm-up each, so
        # a change in the machine's load falls on both; wall and CPU time
        # (process_time: this process only, what a shared machine distorts
        # least) are both kept.
        lc(), ck()
        wall = {lc: [], ck: []}
        cpu = {lc: [], ck: []}
        for _ in range(runs):
            for fn in (lc, ck):
                w, c = time.perf_counter(), time.process_time()
                fn()
                cpu[fn].append(time.process_time() - c)
                wall[fn].append(time.perf_counter() - w)
        med = statistics.median
        mb = len(json.dumps(conv, ensure_ascii=False, separators=(",", ":")).encode()) / 1e6
        name = f"fit vs trim_messages, {rounds} rounds ({mb:.1f} MB, {len(conv)} msgs, {full} -> {budget} tok)"
        row(name, med(wall[lc]), med(wall[ck]))
        row(name + ", CPU time", med(cpu[lc]), med(cpu[ck]))


def gc_trace(runs, rounds_list):
    """The collections the cyclic GC runs inside `turnfit.fit`, with the
    LangChain copy of the transcript alive as in the fit rows: per call, the
    number per generation and the milliseconds spent in them."""
    import gc

    from agent_loop import agent_loop

    import turnfit.langchain as ckl

    for rounds in rounds_list:
        conv = agent_loop(rounds)
        msgs = ckl.from_openai(conv)  # noqa: F841 (kept alive: the host's heap)
        budget = turnfit.count_conversation(conv) // 3
        for call in range(runs + 1):
            counts, spent, started = [0, 0, 0], [0.0], [0.0]

            def cb(phase, info):
                if phase == "start":
                    started[0] = time.perf_counter()
                else:
                    counts[info["generation"]] += 1
                    spent[0] += time.perf_counter() - started[0]

            gc.callbacks.append(cb)
            t0 = time.perf_counter()
            try:
                turnfit.fit(conv, model="gpt-4o", max_tokens=budget)
            finally:
                gc.callbacks.remove(cb)
            total = time.perf_counter() - t0
            print(f"{rounds} rounds, call {call}: collections by generation {counts}, "
                  f"{spent[0] * 1e3:.1f} ms in them, fit {total * 1e3:.1f} ms", flush=True)


if __name__ == "__main__":
    main()
