#!/usr/bin/env python3
"""Writes tests/vectors/file_tokenizer.json: HF `tokenizers`' ids for small
tokenizer files of our own (tests/vectors/files/), so every binding checks
its `FileTokenizer` (a tokenizer loaded from a model's file) against the
reference without fetching a model's vocabulary.

The two files are trained here on tests/fixtures/open-models/corpus.json
(turnfit's own texts) with the two pipelines open-weight models use:
byte-level BPE with Llama 3's split (Llama 3, Qwen, DeepSeek, gpt-oss) and
SentencePiece-style BPE with `▁` and byte fallback (Llama 2, Mistral v1,
Gemma). `--train` retrains them; without it the committed files are read
as they are, so the vectors always describe the committed files.

usage: python3 tests/vectors/gen_file_tokenizer_vectors.py [--train]
(needs `pip install tokenizers==0.23.3`)
"""
import json
import sys
from pathlib import Path

import tokenizers
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FILES = HERE / "files"
CORPUS = ROOT / "tests" / "fixtures" / "open-models" / "corpus.json"
LLAMA3_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)

TEXTS = [
    "",
    "Hello, world!",
    "The quick brown fox jumps over the lazy dog.",
    "  leading and trailing spaces  ",
    "tabs\tand\nnewlines\r\n\n\nthree",
    "def f(x):\n    return x * 2  # doubled\n",
    '{"role": "tool", "content": "ok", "id": 12345}',
    "Zahlen: 1234567 und 3.14159; ¿Qué tal? ça va — très bien…",
    "日本語のテキストと中文文本",
    "Привет, мир! नमस्ते दुनिया مرحبا بالعالم",
    "emoji 👩\u200d💻 and flags 🇫🇷 and e\u0301 (decomposed)",
    "a special token <|end|> inside text, and <s> too",
    "x" * 300,
    "word " * 50,
]


def corpus():
    return [item["text"] for item in json.loads(CORPUS.read_text(encoding="utf-8"))]


def train_byte_level(path):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(tokenizers.Regex(LLAMA3_SPLIT), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=["<|begin_of_text|>", "<|end|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(corpus(), trainer)
    bos = tok.token_to_id("<|begin_of_text|>")
    tok.post_processor = processors.TemplateProcessing(
        single="<|begin_of_text|> $A", special_tokens=[("<|begin_of_text|>", bos)])
    tok.save(str(path))


def train_sentencepiece(path):
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Sequence([
        decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    byte_tokens = [f"<0x{b:02X}>" for b in range(256)]
    trainer = trainers.BpeTrainer(vocab_size=700, special_tokens=["<unk>", "<s>", "</s>"] + byte_tokens,
                                  show_progress=False)
    tok.train_from_iterator(corpus(), trainer)
    # The byte tokens are ordinary vocabulary in SentencePiece files, not added tokens.
    data = json.loads(tok.to_str())
    data["added_tokens"] = [t for t in data["added_tokens"] if not t["content"].startswith("<0x")]
    tok = Tokenizer.from_str(json.dumps(data))
    bos = tok.token_to_id("<s>")
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", bos)])
    tok.save(str(path))


def as_text(tok, text):
    """The ids with special-token text counted as ordinary text (turnfit's
    default for untrusted text; HF's `encode_special_tokens`)."""
    tok.encode_special_tokens = True
    try:
        return tok.encode(text, add_special_tokens=False).ids
    finally:
        tok.encode_special_tokens = False


FAMILIES = [
    ("tiny-byte-level.tokenizer.json", train_byte_level),
    ("tiny-sentencepiece.tokenizer.json", train_sentencepiece),
]


def main():
    FILES.mkdir(exist_ok=True)
    if "--train" in sys.argv:
        for name, train in FAMILIES:
            train(FILES / name)
    vectors = []
    for name, _ in FAMILIES:
        file = f"files/{name}"
        tok = Tokenizer.from_file(str(FILES / name))
        stem = name.split(".")[0]
        for i, text in enumerate(TEXTS):
            ids = tok.encode(text, add_special_tokens=False).ids
            for special, want in (("recognize", ids), ("ordinary", as_text(tok, text))):
                vectors.append({
                    "name": f"file_encode/{stem}/{i}/{special}", "op": "file_encode",
                    "input": {"file": file, "text": text, "special": special, "add_special": False},
                    "expected": {"ids": want, "count": len(want)},
                })
            with_special = tok.encode(text, add_special_tokens=True).ids
            vectors.append({
                "name": f"file_encode/{stem}/{i}/add_special", "op": "file_encode",
                "input": {"file": file, "text": text, "special": "recognize", "add_special": True},
                "expected": {"ids": with_special, "count": len(ids)},
            })
            vectors.append({
                "name": f"file_decode/{stem}/{i}", "op": "file_decode",
                "input": {"file": file, "ids": ids},
                "expected": {"text": tok.decode(ids, skip_special_tokens=False)},
            })
        vectors.append({
            "name": f"file_decode/{stem}/unknown-id", "op": "file_decode",
            "input": {"file": file, "ids": [tok.get_vocab_size(with_added_tokens=True) + 5]},
            "expected": {"error": "unknown_token"},
        })
    doc = {
        "format": 1,
        "description": "HF tokenizers' ids for small tokenizer files of turnfit's own (tests/vectors/files/), "
                       "loaded as FileTokenizer: `file` is relative to tests/vectors; `special` ordinary counts "
                       "special-token text as text (HF encode_special_tokens); `count` excludes what add_special adds.",
        "generated_by": "tests/vectors/gen_file_tokenizer_vectors.py",
        "oracle": f"tokenizers {tokenizers.__version__} (HF, PyPI)",
        "vectors": vectors,
    }
    (HERE / "file_tokenizer.json").write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote file_tokenizer.json: {len(vectors)} vectors")


if __name__ == "__main__":
    main()
