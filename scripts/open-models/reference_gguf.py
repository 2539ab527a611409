"""The reference ids for a llama.cpp test vocabulary: its own expected
tokenizations (`ggml-vocab-NAME.gguf.inp` / `.out`, written by llama.cpp's
convert tooling and checked by its test-tokenizer-0, which tokenizes with
add_special=false and parse_special=false), as the suite's JSON.
Usage: reference_gguf.py FAMILY GGUF > OUT.json
"""
import json
import sys

family, path = sys.argv[1:3]
raw = open(path + ".inp", encoding="utf-8", newline="").read()
texts = raw.split("\n__ggml_vocab_test__\n")
if raw.endswith("\n__ggml_vocab_test__\n"):
    texts.pop()  # llama.cpp's reader makes no empty test after a final separator
outs = open(path + ".out", encoding="utf-8", newline="").read().split("\n")
if outs and outs[-1] == "":
    outs.pop()
if len(texts) != len(outs):
    sys.exit(f"{path}: {len(texts)} inputs but {len(outs)} outputs")
cases = [{"name": f"vector {i}", "text": t, "ids": [int(x) for x in o.split()]} for i, (t, o) in enumerate(zip(texts, outs))]
json.dump({"family": family, "file": path, "reference": "llama.cpp's test vectors (llama-cpp-python 0.3.36 sdist)",
           "special_as_text": True, "cases": cases, "add_special": None}, sys.stdout, ensure_ascii=False)
