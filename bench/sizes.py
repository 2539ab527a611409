#!/usr/bin/env python3
"""Stripped size of a minimal binary per engine (cl100k_base + o200k_base).

    python3 bench/sizes.py [--no-build]   # builds `cargo build --release --bins` in bench/

Each probe (src/bin/size_*.rs) counts argv[1] with both encodings and prints
the two counts; size_baseline has the same I/O and no tokenizer. Every probe
is copied to target/turnfit-bench/sizes/, stripped with `strip`, run once on
"hello world" (expects "2 2"), and measured. Then the script looks for each
known embedded vocabulary blob (whole file, byte for byte) inside each
stripped binary, which says what the vocabulary data contributes:
  - turnfit and tiktoken-rs: the .tiktoken rank files (core/data/, and
    tiktoken-rs' assets/),
  - bpe-openai: the serialized dictionaries its build script writes to OUT_DIR,
  - tiktoken 4.x: its compressed .tkv.zst vocabularies.
Writes target/turnfit-bench/sizes.json and prints a markdown table.
"""

import glob
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = os.environ.get("CARGO_TARGET_DIR") or os.path.join(HERE, "target")
OUT = os.path.join(TARGET, "turnfit-bench", "sizes")
PROBES = [("(no tokenizer)", "size_baseline"), ("turnfit", "size_turnfit"),
          ("tiktoken-rs", "size_tiktoken_rs"), ("bpe-openai", "size_bpe_openai"),
          ("tiktoken", "size_tiktoken")]


def registry_src(pattern):
    home = os.environ.get("CARGO_HOME") or os.path.expanduser("~/.cargo")
    return sorted(glob.glob(os.path.join(home, "registry", "src", "*", pattern)))


def blobs():
    found = []
    for p in sorted(glob.glob(os.path.join(HERE, "..", "core", "data", "*.tiktoken"))):
        found.append(("core/data/" + os.path.basename(p), p))
    for d in registry_src("tiktoken-rs-0.12.1"):
        for p in sorted(glob.glob(os.path.join(d, "assets", "*.tiktoken"))):
            found.append(("tiktoken-rs assets/" + os.path.basename(p), p))
    for p in sorted(glob.glob(os.path.join(TARGET, "release", "build", "bpe-openai-*", "out", "*.dict"))):
        found.append(("bpe-openai OUT_DIR/" + os.path.basename(p), p))
    for d in registry_src("tiktoken-4.1.2"):
        for p in sorted(glob.glob(os.path.join(d, "src", "encodings", "*.tkv.zst"))):
            found.append(("tiktoken src/encodings/" + os.path.basename(p), p))
    return found


def main():
    if "--no-build" not in sys.argv[1:]:
        subprocess.run(["cargo", "build", "--release", "--bins"], cwd=HERE, check=True)
    os.makedirs(OUT, exist_ok=True)
    # Identical files under two names (core/data and tiktoken-rs' assets hold
    # the same rank files) are one candidate named "a = b".
    candidates = []
    for name, p in blobs():
        blob = open(p, "rb").read()
        for i, (other, ob) in enumerate(candidates):
            if ob == blob:
                if name not in other.split(" = "):
                    candidates[i] = (other + " = " + name, ob)
                break
        else:
            candidates.append((name, blob))
    rows = []
    for engine, binname in PROBES:
        src = os.path.join(TARGET, "release", binname)
        dst = os.path.join(OUT, binname)
        shutil.copyfile(src, dst)
        os.chmod(dst, 0o755)
        unstripped = os.path.getsize(dst)
        subprocess.run(["strip", dst], check=True)
        out = subprocess.run([dst, "hello world"], check=True, capture_output=True, text=True).stdout.strip()
        if binname != "size_baseline" and out != "2 2":
            sys.exit("%s printed %r, expected '2 2'" % (binname, out))
        data = open(dst, "rb").read()
        embedded = []
        for name, blob in candidates:
            if blob in data:
                embedded.append({"blob": name, "bytes": len(blob)})
        rows.append({"engine": engine, "binary": binname, "unstripped_bytes": unstripped,
                     "stripped_bytes": len(data), "embedded": embedded,
                     "embedded_bytes": sum(e["bytes"] for e in embedded)})
    base = rows[0]["stripped_bytes"]
    with open(os.path.join(TARGET, "turnfit-bench", "sizes.json"), "w") as f:
        json.dump({"rows": rows}, f, indent=2)
    print("| engine | stripped bytes | minus baseline | embedded vocabulary blobs found (bytes) |")
    print("|---|---:|---:|---|")
    for r in rows:
        emb = ", ".join("%s (%s)" % (e["blob"], format(e["bytes"], ",")) for e in r["embedded"]) or "-"
        print("| %s | %s | %s | %s |" % (r["engine"], format(r["stripped_bytes"], ","),
                                       format(r["stripped_bytes"] - base, ","), emb))
    return 0


if __name__ == "__main__":
    sys.exit(main())
