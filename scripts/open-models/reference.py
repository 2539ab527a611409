"""The reference ids: HF `tokenizers` on one tokenizer.json for every text of
the corpus. Usage: reference.py FAMILY TOKENIZER_JSON CORPUS_JSON > OUT.json

Each text is encoded as `encode(text, add_special_tokens=False)` (special
tokens written in the text are recognized, HF's default) and, for the
first text, with `add_special_tokens=True` too.
"""
import json
import sys

import tokenizers

family, path, corpus_path = sys.argv[1:4]
tok = tokenizers.Tokenizer.from_file(path)
corpus = json.load(open(corpus_path, encoding="utf-8"))
cases = []
for case in corpus:
    ids = tok.encode(case["text"], add_special_tokens=False).ids
    cases.append({"name": case["name"], "text": case["text"], "ids": ids})
with_special = tok.encode(corpus[0]["text"], add_special_tokens=True).ids
json.dump(
    {
        "family": family,
        "file": path,
        "reference": f"tokenizers {tokenizers.__version__}",
        "cases": cases,
        "add_special": {"text": corpus[0]["text"], "ids": with_special},
    },
    sys.stdout,
    ensure_ascii=False,
)
