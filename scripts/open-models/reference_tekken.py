"""The reference ids for a Mistral Tekken file: mistral-common's own
Tekkenizer (`encode(text, bos=False, eos=False)`, which never finds special
tokens in text, hence special_as_text) for every text of the corpus, and
`bos=True` for the first text.
Usage: reference_tekken.py FAMILY TEKKEN_JSON CORPUS_JSON > OUT.json
"""
import json
import sys
from importlib.metadata import version

from mistral_common.tokens.tokenizers.tekken import Tekkenizer

family, path, corpus_path = sys.argv[1:4]
tok = Tekkenizer.from_file(path)
corpus = json.load(open(corpus_path, encoding="utf-8"))
cases = [{"name": c["name"], "text": c["text"], "ids": tok.encode(c["text"], bos=False, eos=False)} for c in corpus]
json.dump(
    {
        "family": family,
        "file": path,
        "reference": f"mistral-common {version('mistral-common')}",
        "special_as_text": True,
        "cases": cases,
        "add_special": {"text": corpus[0]["text"], "ids": tok.encode(corpus[0]["text"], bos=True, eos=False)},
    },
    sys.stdout,
    ensure_ascii=False,
)
