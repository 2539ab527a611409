#!/usr/bin/env python3
"""The 16 MB inputs of the in-process peer comparison (issue 36).

    python3 bench/gen_big_inputs.py [OUT_DIR]     # default: bench/inputs/big

Writes (each valid UTF-8):
  prose.txt         16 MiB: bench/inputs/prose.txt (gen_inputs.py) 16 times
  code.txt          16 MiB: bench/inputs/code.txt 16 times
  a.txt              8 MiB: the letter 'a'
  unique_prose.txt  16 MiB of text with no repeated line: the Markdown files
                    of the local cargo registry, then Debian's changelogs and
                    copyright files under /usr/share/doc; every line that was
                    already seen (after stripping) is dropped
  unique_code.txt   16 MiB of Rust sources from the local cargo registry, one
                    version per crate, each distinct file once (by content)

The repeated rows are what agent hosts count most (the same tool output,
log or document again); the unique rows leave no piece to a cache. The
unique files depend on what this machine has installed, so their SHA-256 is
printed and recorded with the figures.
"""
import glob
import gzip
import hashlib
import os
import re
import sys

MIB = 1024 * 1024
HERE = os.path.dirname(os.path.abspath(__file__))
REGISTRY = sorted(glob.glob(os.path.expanduser("~/.cargo/registry/src/*")))


def cut(data, size):
    data = data[:size]
    while data:
        try:
            data.decode("utf-8")
            break
        except UnicodeDecodeError as e:
            data = data[: e.start]
    assert len(data) > size - 4, "not enough text"
    return data


def crates():
    """One directory per crate name (the highest version string), sorted."""
    best = {}
    for reg in REGISTRY:
        for d in sorted(os.listdir(reg)):
            m = re.match(r"^(.*)-(\d+\.\d+\.\d+.*)$", d)
            if m:
                best[m.group(1)] = os.path.join(reg, d)
    return [best[k] for k in sorted(best)]


def files_under(dirs, exts):
    for d in dirs:
        for root, subdirs, files in os.walk(d):
            subdirs.sort()
            for f in sorted(files):
                if f.endswith(exts):
                    yield os.path.join(root, f)


def read_text(path):
    try:
        raw = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
        raw.decode("utf-8")
        return raw
    except (OSError, UnicodeDecodeError, EOFError):
        return None


def unique_code(size):
    seen, out, n = set(), [], 0
    for p in files_under(crates(), (".rs",)):
        raw = read_text(p)
        if not raw:
            continue
        h = hashlib.sha256(raw).digest()
        if h in seen:
            continue
        seen.add(h)
        out.append(raw)
        n += len(raw)
        if n >= size + 64:
            break
    return cut(b"".join(out), size)


def unique_prose(size):
    paths = list(files_under(crates(), (".md",)))
    docs = "/usr/share/doc"
    paths += [p for p in files_under([docs], (".gz", "copyright")) if "changelog" in p or p.endswith("copyright")]
    seen, out, n = set(), [], 0
    for p in paths:
        raw = read_text(p)
        if not raw:
            continue
        for line in raw.split(b"\n"):
            key = line.strip()
            if key:
                if key in seen:
                    continue
                seen.add(key)
            out.append(line + b"\n")
            n += len(line) + 1
        if n >= size + 64:
            break
    return cut(b"".join(out), size)


def main(argv):
    out_dir = argv[1] if len(argv) > 1 else os.path.join(HERE, "inputs", "big")
    os.makedirs(out_dir, exist_ok=True)
    small = os.path.join(HERE, "inputs")
    files = {
        "prose": open(os.path.join(small, "prose.txt"), "rb").read() * 16,
        "code": open(os.path.join(small, "code.txt"), "rb").read() * 16,
        "a": b"a" * (8 * MIB),
        "unique_prose": unique_prose(16 * MIB),
        "unique_code": unique_code(16 * MIB),
    }
    for name, data in files.items():
        data.decode("utf-8")
        with open(os.path.join(out_dir, name + ".txt"), "wb") as f:
            f.write(data)
        print("%-13s %9d bytes  sha256 %s" % (name, len(data), hashlib.sha256(data).hexdigest()))


if __name__ == "__main__":
    main(sys.argv)
