#!/usr/bin/env python3
"""`turnfit_fit` through the C ABI, in process (ctypes), on the error-heavy
agent transcripts of bench/gen_log_transcripts.py (issue 52), beside
LangChain's `trim_messages` with a tiktoken counter on the same messages.

    python3 bench/cabi/fit_cabi.py [--lib NAME=PATH[:PREFIX]]... [--runs N]
        [--budgets 16000,64000] [--sizes 5,12,44] [--trim] [--check] [--inputs DIR]

Each `--lib` is one build of the C library (`target/release/libturnfit.so`
by default); PREFIX is its symbols' prefix (`turnfit`, or `ctxkit` for a
build from before the rename), so two builds can be timed in one process,
interleaved call by call (a change in the machine's load falls on both).
A row is the median of RUNS calls after one warm-up, in CPU time of this
process (`time.process_time`: what a shared machine distorts least) and
wall time. `--trim` adds `trim_messages` (langchain-core, tiktoken
o200k_base counter, strategy "last", the system prompt kept), timed the
same way (RUNS capped at 3: it takes seconds). `--check` fails when two
builds' results differ in their token figures.

The options are `{"model": "gpt-4o", "max_tokens": B, "reserve_output": 0}`:
the budget is the whole prompt, as `trim_messages`' `max_tokens` is.
"""
import argparse
import ctypes
import json
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Str(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p), ("len", ctypes.c_size_t)]


class Lib:
    def __init__(self, name, path, prefix):
        self.name = name
        self.lib = ctypes.CDLL(path)
        self.fit_fn = getattr(self.lib, f"{prefix}_fit")
        self.fit_fn.restype = ctypes.c_int32
        self.fit_fn.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                ctypes.c_size_t, ctypes.POINTER(Str), ctypes.POINTER(Str),
                                ctypes.POINTER(ctypes.c_void_p)]
        self.free = getattr(self.lib, f"{prefix}_string_free")
        self.free.argtypes = [ctypes.POINTER(Str)]
        self.err_msg = getattr(self.lib, f"{prefix}_error_message")
        self.err_msg.restype = ctypes.c_char_p
        self.err_msg.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
        self.err_free = getattr(self.lib, f"{prefix}_error_free")
        self.err_free.argtypes = [ctypes.c_void_p]

    def fit(self, doc, options, keep=False):
        """One call; the report's token figures (and the result, with keep)."""
        conv, report, err = Str(), Str(), ctypes.c_void_p()
        st = self.fit_fn(None, doc, len(doc), options, len(options), ctypes.byref(conv), ctypes.byref(report),
                         ctypes.byref(err))
        if st != 0:
            n = ctypes.c_size_t()
            msg = self.err_msg(err, ctypes.byref(n))
            self.err_free(err)
            raise RuntimeError(f"{self.name}: status {st}: {msg.decode(errors='replace')}")
        rep = json.loads(ctypes.string_at(report.ptr, report.len))
        out = ctypes.string_at(conv.ptr, conv.len) if keep else None
        self.free(ctypes.byref(conv))
        self.free(ctypes.byref(report))
        return (rep["tokens_before"], rep["tokens_after"], len(rep.get("changes", rep.get("manifest", [])))), out


def timed(fn, runs):
    fn()
    cpu, wall = [], []
    for _ in range(runs):
        c, w = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    return statistics.median(cpu), statistics.median(wall)


def trim_runner(messages, budget):
    sys.path.insert(0, os.path.join(ROOT, "bindings", "python", "tests"))
    import tiktoken_offline  # the rank files turnfit embeds, so tiktoken runs offline

    tiktoken_offline.setup()
    import tiktoken
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage, trim_messages

    enc = tiktoken.get_encoding("o200k_base")

    def to_lc(m):
        c = m.get("content") or ""
        if m["role"] == "system":
            return SystemMessage(c)
        if m["role"] == "user":
            return HumanMessage(c)
        if m["role"] == "tool":
            return ToolMessage(c, tool_call_id=m["tool_call_id"])
        return AIMessage(c, tool_calls=[{"id": t["id"], "name": t["function"]["name"],
                                         "args": json.loads(t["function"]["arguments"])}
                                        for t in m.get("tool_calls") or []])

    msgs = [to_lc(m) for m in messages]

    def counter(ms):
        # OpenAI's recipe with tiktoken (what a LangChain user writes).
        n = 3
        for m in ms:
            n += 4 + len(enc.encode(m.content if isinstance(m.content, str) else json.dumps(m.content)))
            for t in getattr(m, "tool_calls", None) or []:
                n += len(enc.encode(t["name"])) + len(enc.encode(json.dumps(t["args"])))
        return n

    return lambda: trim_messages(msgs, max_tokens=budget, token_counter=counter, strategy="last",
                                 include_system=True, allow_partial=False)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", action="append", default=[])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--budgets", default="16000,64000")
    ap.add_argument("--sizes", default="5,12,44")
    ap.add_argument("--trim", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--inputs", default=os.path.join(ROOT, "bench", "inputs", "logs"),
                    help="where the transcripts are (generated there when missing)")
    args = ap.parse_args()
    libs = []
    for spec in args.lib or [f"HEAD={ROOT}/target/release/libturnfit.so"]:
        name, rest = spec.split("=", 1)
        path, _, prefix = rest.partition(":")
        libs.append(Lib(name, path, prefix or "turnfit"))
    inputs = args.inputs
    if not os.path.exists(os.path.join(inputs, "agent_logs_44mb.json")):
        import subprocess
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_log_transcripts.py"), inputs], check=True)
    cols = [lib.name for lib in libs] + (["trim_messages"] if args.trim else [])
    print("| transcript, budget | " + " | ".join(f"{c} CPU (wall)" for c in cols) + " | result (before → after, changes) |")
    print("|---|" + "---:|" * len(cols) + "---|")
    failed = False
    for mb in [int(s) for s in args.sizes.split(",")]:
        with open(os.path.join(inputs, f"agent_logs_{mb}mb.json"), "rb") as f:
            doc = f.read()
        messages = json.loads(doc)["messages"] if args.trim else None
        for budget in [int(b) for b in args.budgets.split(",")]:
            options = json.dumps({"model": "gpt-4o", "max_tokens": budget, "reserve_output": 0}).encode()
            results = [lib.fit(doc, options)[0] for lib in libs]
            if args.check and len(set(r[:2] for r in results)) > 1:
                failed = True
            # Interleaved: each run calls every build once, in turn.
            samples = {lib.name: ([], []) for lib in libs}
            for _ in range(args.runs):
                for lib in libs:
                    c, w = time.process_time(), time.perf_counter()
                    lib.fit(doc, options)
                    samples[lib.name][0].append(time.process_time() - c)
                    samples[lib.name][1].append(time.perf_counter() - w)
            cells = [f"{statistics.median(samples[lib.name][0]) * 1e3:.1f} ms ({statistics.median(samples[lib.name][1]) * 1e3:.1f})"
                     for lib in libs]
            if args.trim:
                cpu, wall = timed(trim_runner(messages, budget), min(args.runs, 3))
                cells.append(f"{cpu * 1e3:,.0f} ms ({wall * 1e3:,.0f})")
            res = "; ".join(f"{lib.name} {r[0]:,} → {r[1]:,}, {r[2]}" for lib, r in zip(libs, results))
            print(f"| {len(doc) / 1e6:.1f} MB, {budget // 1000}k | " + " | ".join(cells) + f" | {res} |", flush=True)
    if failed:
        sys.exit("the builds' token figures differ (--check)")


if __name__ == "__main__":
    main()
