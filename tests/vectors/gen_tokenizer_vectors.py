#!/usr/bin/env python3
"""Generate tests/vectors/tokenizer.json: tokenizer conformance vectors whose
expected values come from OpenAI's own `tiktoken` package, an oracle that is
independent of turnfit's Rust engine.

Runs fully offline: each encoding is built from the rank files shipped in
core/data/ (checked against the SHA-256 that tiktoken itself expects), with the
split pattern and special tokens taken from tiktoken's `tiktoken_ext.openai_public`.

Usage (see tests/vectors/README.md):
    python3 -m venv /tmp/vecenv
    /tmp/vecenv/bin/pip install tiktoken==0.14.0
    /tmp/vecenv/bin/python tests/vectors/gen_tokenizer_vectors.py [-o OUT]

The output is deterministic: running the script twice gives byte-identical files.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import sys
import unicodedata
from pathlib import Path

PINNED_TIKTOKEN = "0.14.0"

# Disable tiktoken's download cache: nothing is fetched and nothing is written
# outside the output file. (Must be set before tiktoken reads rank files.)
os.environ["TIKTOKEN_CACHE_DIR"] = ""

try:
    import tiktoken
    import tiktoken.load
    import tiktoken_ext.openai_public as openai_public
except ImportError:
    sys.exit(
        "error: the Python package `tiktoken` is not importable.\n"
        f"Install it (ideally in a venv) with:  pip install tiktoken=={PINNED_TIKTOKEN}"
    )

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DATA = REPO / "core" / "data"
DEFAULT_OUT = HERE / "tokenizer.json"
GENERATED_BY = "tests/vectors/gen_tokenizer_vectors.py"

ENCODINGS = ["cl100k_base", "o200k_base", "p50k_base", "r50k_base"]
# Encodings that reuse one of the above's ranks with their own name and
# special tokens: encode (both modes) and special-token decode vectors only.
ALIAS_ENCODINGS = ["o200k_harmony", "p50k_edit", "gpt2"]
DEFAULT_MARKER = "\n[... {removed} tokens truncated ...]\n"
UNKNOWN_ID = 10**7


# --------------------------------------------------------------------------
# Building the encodings offline
# --------------------------------------------------------------------------

_original_load_tiktoken_bpe = tiktoken.load.load_tiktoken_bpe


def _load_local_bpe(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
    """Stand-in for tiktoken's loader: reads core/data/<basename of url>
    instead of downloading it, and keeps tiktoken's expected-hash check."""
    path = DATA / url.rsplit("/", 1)[-1]
    data = path.read_bytes()
    actual = hashlib.sha256(data).hexdigest()
    if expected_hash is not None and actual != expected_hash:
        sys.exit(
            f"error: {path} has SHA-256 {actual}, but tiktoken expects {expected_hash}"
        )
    return _original_load_tiktoken_bpe(str(path), expected_hash)


def _gpt2_ranks(**_files) -> dict[bytes, int]:
    """Stand-in for tiktoken's GPT-2 loader (which downloads GPT-2's
    vocab.bpe and encoder.json): r50k_base's ranks. They are the same ranks:
    the gpt2.tiktoken that OpenAI ships in the openai-whisper package on PyPI
    is byte-identical to r50k_base.tiktoken (docs/formats.md)."""
    return _load_local_bpe("r50k_base.tiktoken", R50K_SHA256)


R50K_SHA256 = "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"


def load_encoding(name: str) -> "tiktoken.Encoding":
    openai_public.load_tiktoken_bpe = _load_local_bpe
    original_data_gym = openai_public.data_gym_to_mergeable_bpe_ranks
    openai_public.data_gym_to_mergeable_bpe_ranks = _gpt2_ranks
    try:
        params = openai_public.ENCODING_CONSTRUCTORS[name]()
    finally:
        openai_public.load_tiktoken_bpe = _original_load_tiktoken_bpe
        openai_public.data_gym_to_mergeable_bpe_ranks = original_data_gym
    return tiktoken.Encoding(**params)


# --------------------------------------------------------------------------
# Reference operations (the contract the Rust engine must match)
# --------------------------------------------------------------------------


def count(enc, text: str) -> int:
    return len(enc.encode_ordinary(text))


def is_char_boundary(data: bytes, offset: int) -> bool:
    return offset == len(data) or (data[offset] & 0xC0) != 0x80


# How many truncate results needed more than one candidate (the re-count
# found the first cut too long); printed in the summary so coverage of the
# shrink loop is visible.
TRUNCATE_RETRIES = [0]


def truncate_ref(enc, text: str, max_tokens: int, side: str, marker: str | None):
    """The reference truncation algorithm; returns the `expected` object."""
    candidates = 0
    ids = enc.encode_ordinary(text)
    n = len(ids)
    if n <= max_tokens:
        return {
            "text": text,
            "tokens": n,
            "original_tokens": n,
            "removed_tokens": 0,
            "truncated": False,
        }
    data = text.encode("utf-8")
    prefix = [0]
    for t in ids:
        prefix.append(prefix[-1] + len(enc.decode_single_token_bytes(t)))
    assert prefix[-1] == len(data)

    def boundary(k: int) -> bool:
        return is_char_boundary(data, prefix[k])

    mx = max_tokens
    if side == "head":
        k = mx
        while True:
            while k > 0 and not boundary(k):
                k -= 1
            cand = data[: prefix[k]]
            candidates += 1
            c = count(enc, cand.decode("utf-8"))
            if c <= mx:
                out, kept = cand, k
                break
            k -= max(1, min(c - mx, k))
    elif side == "tail":
        s = n - mx
        while True:
            while s < n and not boundary(s):
                s += 1
            cand = data[prefix[s] :]
            candidates += 1
            c = count(enc, cand.decode("utf-8"))
            if c <= mx:
                out, kept = cand, n - s
                break
            s += max(1, min(c - mx, n - s))
    elif side == "both":
        template = DEFAULT_MARKER if marker is None else marker

        def render(r: int) -> str:
            return template.replace("{removed}", str(r))

        m = count(enc, render(n))
        if m >= mx:
            return {"error": "invalid_argument"}
        avail = mx - m
        h, t = avail - avail // 2, avail // 2
        while True:
            hk = h
            while hk > 0 and not boundary(hk):
                hk -= 1
            ts = n - t
            while ts < n and not boundary(ts):
                ts += 1
            ts = max(ts, hk)
            removed = ts - hk
            cand = data[: prefix[hk]] + render(removed).encode("utf-8") + data[prefix[ts] :]
            candidates += 1
            c = count(enc, cand.decode("utf-8"))
            if c <= mx:
                out, kept = cand, n - removed
                break
            if h + t == 0:
                return {"error": "invalid_argument"}
            for _ in range(max(1, c - mx)):
                if h >= t and h > 0:
                    h -= 1
                elif t > 0:
                    t -= 1
    else:
        raise ValueError(side)

    out_text = out.decode("utf-8")
    if candidates > 1:
        TRUNCATE_RETRIES[0] += 1
    # Self-checks of the contract (independent of how we got here).
    assert count(enc, out_text) == c <= mx
    if side == "head":
        assert text.startswith(out_text)
    if side == "tail":
        assert text.endswith(out_text)
    return {
        "text": out_text,
        "tokens": c,
        "original_tokens": n,
        "removed_tokens": n - kept,
        "truncated": True,
    }


def decode_ref(enc, ids: list[int], mode: str):
    try:
        data = enc.decode_bytes(ids)
    except KeyError:
        return {"error": "unknown_token"}
    if mode == "replace":
        text = enc.decode(ids, errors="replace")
        assert text == data.decode("utf-8", errors="replace")
        return {"text": text}
    try:
        return {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"error": "invalid_utf8"}


def count_until_limit_ref(enc, text: str, limit: int):
    n = count(enc, text)
    if n <= limit:
        return {"tokens": n, "exceeded": False}
    return {"exceeded": True, "tokens_min": limit + 1}


# --------------------------------------------------------------------------
# Inputs (all deterministic)
# --------------------------------------------------------------------------

WORDS = (
    "the of and to in is that for it as was with be by on not he this are or "
    "his from at which but have an they you were her she there been one all "
    "would their we him when who will more if no out so said what up its about "
    "into than them can only other new some time could these two may then do "
    "first any my now such like our over man me even most made after also did "
    "many before must through back years where much your way well down should "
    "because each just those people how too little state good very make world "
    "still own see men work long get here between both life being under never "
    "day same another know while last might us great old year off come since "
    "against go came right used take three tokenizer budget context window "
    "streaming agent request response latency throughput deterministic"
).split()


def prose(rng: random.Random, n_chars: int) -> str:
    """Prose-like text: sentences of words from WORDS with punctuation,
    occasional numbers, quotes, contractions and paragraph breaks."""
    out: list[str] = []
    size = 0
    while size < n_chars:
        n_words = 4 + rng.randrange(14)
        words = [WORDS[rng.randrange(len(WORDS))] for _ in range(n_words)]
        words[0] = words[0].capitalize()
        roll = rng.randrange(10)
        if roll == 0:
            words.insert(rng.randrange(len(words)), str(rng.randrange(100000)))
        elif roll == 1:
            words[-1] = words[-1] + "'s"
        elif roll == 2:
            i = rng.randrange(len(words))
            words[i] = '"' + words[i] + '"'
        if n_words > 8 and rng.randrange(3) == 0:
            words[n_words // 2] += ","
        sentence = " ".join(words) + ".?!"[rng.randrange(3) if rng.randrange(4) == 0 else 0]
        sep = "\n\n" if rng.randrange(7) == 0 else " "
        out.append(sentence + sep)
        size += len(sentence) + len(sep)
    return "".join(out)[:n_chars]


def random_letters(rng: random.Random, n: int) -> str:
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    return "".join(alphabet[rng.randrange(len(alphabet))] for _ in range(n))


def random_mixed(rng: random.Random, n: int) -> str:
    pieces = [
        "fn ", "let ", "x", "_", "0", "42", " = ", "(", ")", "{", "}", ";\n", "    ",
        "é", "日本", "語", "👍", "🏽", "ß", "Ω", "\t", "\r\n", "'s", "'LL", "://",
        " ", "  ", "\u00a0", "\u3000", "-->", "#", "Привет", "مرحبا", "नमस्ते",
    ]
    out: list[str] = []
    size = 0
    while size < n:
        p = pieces[rng.randrange(len(pieces))]
        out.append(p)
        size += len(p)
    return "".join(out)


def base64_like(rng: random.Random, n: int) -> str:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    body = "".join(alphabet[rng.randrange(64)] for _ in range(n - 2))
    return body + "=="


RUST_SNIPPET = """\
use std::collections::HashMap;

/// Counts words.
pub fn count_words(text: &str) -> HashMap<&str, usize> {
    let mut map = HashMap::new();
    for w in text.split_whitespace() {
        *map.entry(w).or_insert(0) += 1;
    }
    map
}
"""

PYTHON_SNIPPET = """\
def fib(n: int) -> int:
    \"\"\"Return the n-th Fibonacci number.\"\"\"
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a

if __name__ == "__main__":
    print([fib(i) for i in range(10)])
"""

JSON_SNIPPET = (
    '{"model": "gpt-4o", "messages": [{"role": "system", "content": "You are '
    'helpful."}, {"role": "user", "content": "Hi!\\nHow are you?"}], '
    '"temperature": 0.7, "max_tokens": 256, "stream": false, "stop": null}'
)

SHELL_SNIPPET = (
    "find /var/log -type f -name '*.log' -mtime +7 -exec gzip -9 {} \\; && "
    "tar --exclude='./node_modules' -czvf ~/backups/app-$(date +%Y%m%d).tar.gz "
    "./src 2>&1 | tee -a /tmp/backup.log"
)


def encode_texts() -> list[tuple[str, str]]:
    rng = random.Random(1234)
    texts = [
        # whitespace and basics
        ("empty", ""),
        ("space", " "),
        ("hello-world", "hello world"),
        ("hello-world-punct", "Hello, World!"),
        ("lead-trail-ws", "   leading and trailing   "),
        ("trailing-newline", "line\n"),
        ("tabs", "\tindented\twith\ttabs\t\t"),
        ("crlf", "first line\r\nsecond line\r\n\r\nthird\r\n"),
        ("multi-newlines", "para one\n\n\n\npara two\n\n"),
        ("space-newline-mix", "a  \n  b \n\n  \n c  \n  "),
        ("only-ws-mix", "  \n  "),
        ("nbsp", "100\u00a0km and\u00a0\u00a0more"),
        ("em-space", "word\u2003word \u2003 word"),
        ("ideographic-space", "日本\u3000語 a\u3000b"),
        ("zero-width-space", "zero\u200bwidth\u200b\u200bspace"),
        ("line-separator", "line\u2028separator\u2029para"),
        ("bom", "\ufeffstarts with a BOM\ufeff"),
        # contractions and numbers
        ("contractions-upper", "I'M sure They'Re fine, it'S WE'LL see, you'Ve"),
        ("contractions-lower", "i'm they're it's we'll you've he'd can't"),
        ("contractions-odd", "'s 's's ''ll x'LL O'Neil rock'n'roll"),
        ("digits-13", "1234567890123"),
        ("digits-40", "1234567890123456789012345678901234567890"),
        ("digits-words", "abc123def4567 89x"),
        ("decimal", "3.14159"),
        ("thousands", "1,000,000"),
        ("numbers-mixed", "-42 +7 0.5e-10 1_000 0x1F 2024-01-15T10:30:00Z"),
        # code and machine text
        ("code-rust", RUST_SNIPPET),
        ("code-python", PYTHON_SNIPPET),
        ("code-json", JSON_SNIPPET),
        ("code-shell", SHELL_SNIPPET),
        ("url", "https://example.com/path/to/page?query=a%20b&x=1#frag-ment"),
        ("file-path", "/home/user/projects/turnfit/core/src/tokens/truncate.rs:42:7"),
        ("windows-path", "C:\\Users\\Admin\\AppData\\Local\\Temp\\file (1).txt"),
        ("base64", base64_like(rng, 300)),
        ("hex-hashes", "sha256:223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7 "
                       "commit 13573a0f9e2c d41d8cd98f00b204e9800998ecf8427e"),
        # scripts
        ("chinese", "我们今天去公园散步，天气非常好。机器学习是人工智能的一个分支。"),
        ("japanese", "東京は日本の首都です。ひらがなとカタカナ、そして漢字を使います。"),
        ("korean", "안녕하세요. 오늘 날씨가 정말 좋네요! 한국어 토큰화 테스트입니다."),
        ("arabic", "مرحبا بالعالم. اللغة العربية تكتب من اليمين إلى اليسار."),
        ("hebrew", "שלום עולם. עברית נכתבת מימין לשמאל."),
        ("hindi", "नमस्ते दुनिया। हिन्दी देवनागरी लिपि में लिखी जाती है।"),
        ("thai", "สวัสดีครับ ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ"),
        ("russian", "Привет, мир! Съешь же ещё этих мягких французских булок."),
        ("greek", "Γειά σου Κόσμε! Ξεσκεπάζω την ψυχοφθόρα βδελυγμία."),
        ("math-alnum", "𝐀𝐁𝐂 𝑥𝑦𝑧 𝔸𝔹 𝟘𝟙𝟚 ∑∫√∞ ≤≥≠"),
        ("combining-acute", "e\u0301e\u0301e\u0301 cafe\u0301 re\u0301sume\u0301"),
        ("precomposed", "café résumé naïve Ångström"),
        ("zalgo", "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034fa\u0310\u0300\u0303l\u0352\u0351\u0300go\u0489\u0321"),
        ("mixed-scripts", "English, 中文, русский, العربية, हिन्दी and emoji 🎉 together."),
        # emoji
        ("emoji-zwj-family", "👨\u200d👩\u200d👧\u200d👦"),
        ("emoji-rainbow-flag", "🏳\ufe0f\u200d🌈"),
        ("emoji-skin-tone", "👍🏽 👋🏿 👌🏻"),
        ("emoji-flags", "🇺🇸🇯🇵 🇩🇪"),
        ("emoji-keycap", "#\ufe0f\u20e3 1\ufe0f\u20e3"),
        ("emoji-sentence", "I love 🍕 and 🍣! 😂😂😂 ❤️"),
        # misc
        ("punctuation-runs", "!!!??? ... --- *** ### ;;; :::: <<>> ``` ~~~"),
        ("html", "<div class=\"a\"><p>Hi &amp; bye</p><br/></div>"),
        ("markdown", "# Title\n\n- item **bold** _it_\n- `code`\n\n> quote\n"),
        ("ascii-controls", "a\x00b\x01c\x07d\x1b[0me\x7f"),
        ("c1-controls", "x\u0080y\u009fz"),
        ("rtl-marks", "abc\u200fdef\u200e\u202eghi\u202c"),
        ("private-use", "\ue000\uf8ff\U000f0000"),
        ("noncharacters", "\ufffe\uffff\U0010ffff"),
        ("replacement-char", "bad \ufffd byte"),
        # pathological
        ("repeat-a-5000", "a" * 5000),
        ("spaces-3000-x", " " * 3000 + "x"),
        ("newlines-2000", "\n" * 2000),
        ("random-letters", random_letters(rng, 2000)),
        ("ab-2000", "ab" * 2000),
        ("random-mixed", random_mixed(rng, 1500)),
    ]
    return texts


SPECIAL_TEXTS = [
    ("special-endoftext", "<|endoftext|>"),
    ("special-embedded", "a<|endoftext|>b"),
    ("special-fim", "<|fim_prefix|>x<|fim_suffix|>"),
    ("special-endofprompt", "<|endofprompt|>"),
    ("special-not-a-special", "<|notaspecial|>"),
    ("special-unterminated", "<|endoftext"),
    ("special-adjacent", "<|endoftext|><|endoftext|> <|endoftext|>\n"),
    ("special-fim-middle", "<|fim_middle|>"),
    # o200k_harmony's chat format; plain text everywhere else.
    ("special-harmony-turns",
     "<|start|>user<|message|>hi<|end|><|start|>assistant<|channel|>final<|message|>ok<|return|>"),
    ("special-harmony-reserved", "<|reserved_200000|><|reserved_201087|><|reserved_201088|><|call|>"),
    ("special-harmony-shared-id", "<|endofprompt|><|reserved_200018|><|startoftext|>"),
]

DECODE_STRINGS = [
    ("e-acute", "é"),
    ("nihon", "日本"),
    ("zwj-family", "👨\u200d👩\u200d👧\u200d👦"),
    ("rainbow-flag", "🏳\ufe0f\u200d🌈"),
    ("math-bold", "𝐀𝐁"),
    ("hindi", "नमस्ते"),
    ("thai", "สวัสดี"),
    ("mixed", "a日b👍🏽c"),
]


# --------------------------------------------------------------------------
# Vector generation
# --------------------------------------------------------------------------


class Vectors:
    def __init__(self) -> None:
        self.items: list[dict] = []
        self.names: set[str] = set()

    def add(self, name: str, op: str, inp: dict, expected: dict) -> None:
        if name in self.names:
            raise AssertionError(f"duplicate vector name {name}")
        self.names.add(name)
        self.items.append({"name": name, "op": op, "input": inp, "expected": expected})


def gen_encode(v: Vectors, encs: dict) -> None:
    texts = encode_texts()
    for enc_name in ENCODINGS:
        enc = encs[enc_name]
        for tname, text in texts:
            ids = enc.encode_ordinary(text)
            assert enc.decode_bytes(ids) == text.encode("utf-8")
            v.add(
                f"encode/{enc_name}/{tname}",
                "encode",
                {"encoding": enc_name, "text": text, "special": "ordinary"},
                {"ids": ids, "count": len(ids)},
            )
        # A few plain texts in recognize mode too (no special tokens in them,
        # so the result must equal the ordinary one).
        for tname, text in texts[:4] + [t for t in texts if t[0] in ("code-json", "html")]:
            ids = enc.encode(text, allowed_special="all", disallowed_special=())
            v.add(
                f"encode/{enc_name}/{tname}/recognize",
                "encode",
                {"encoding": enc_name, "text": text, "special": "recognize"},
                {"ids": ids, "count": len(ids)},
            )
        for tname, text in SPECIAL_TEXTS:
            for mode in ("ordinary", "recognize"):
                if mode == "ordinary":
                    ids = enc.encode_ordinary(text)
                else:
                    ids = enc.encode(text, allowed_special="all", disallowed_special=())
                v.add(
                    f"encode/{enc_name}/{tname}/{mode}",
                    "encode",
                    {"encoding": enc_name, "text": text, "special": mode},
                    {"ids": ids, "count": len(ids)},
                )


def gen_alias_encodings(v: Vectors, encs: dict) -> None:
    texts = encode_texts()
    for enc_name in ALIAS_ENCODINGS:
        enc = encs[enc_name]
        assert enc.name == enc_name
        for tname, text in texts:
            ids = enc.encode_ordinary(text)
            v.add(f"encode/{enc_name}/{tname}", "encode",
                  {"encoding": enc_name, "text": text, "special": "ordinary"},
                  {"ids": ids, "count": len(ids)})
        for tname, text in SPECIAL_TEXTS:
            for mode in ("ordinary", "recognize"):
                if mode == "ordinary":
                    ids = enc.encode_ordinary(text)
                else:
                    ids = enc.encode(text, allowed_special="all", disallowed_special=())
                v.add(f"encode/{enc_name}/{tname}/{mode}", "encode",
                      {"encoding": enc_name, "text": text, "special": mode},
                      {"ids": ids, "count": len(ids)})
        specials = sorted(set(enc._special_tokens.values()))
        # Every named special token and the edges of harmony's reserved range.
        chosen = [i for i in specials if i < 200013 or i in (200018, 201087)]
        for i in chosen:
            v.add(f"decode/{enc_name}/special-{i}/strict", "decode",
                  {"encoding": enc_name, "ids": [i], "mode": "strict"}, decode_ref(enc, [i], "strict"))
        for name, ids in [("n-vocab", [enc.n_vocab]), ("hello-world", enc.encode_ordinary("hello world"))]:
            v.add(f"decode/{enc_name}/{name}/replace", "decode",
                  {"encoding": enc_name, "ids": ids, "mode": "replace"}, decode_ref(enc, ids, "replace"))


def _invalid_cuts(enc, ids: list[int]):
    """(prefix, suffix, middle) slices of ids whose bytes are not valid
    UTF-8, or None for each when there is none."""

    def invalid(sub):
        try:
            enc.decode_bytes(sub).decode("utf-8")
            return False
        except UnicodeDecodeError:
            return True

    prefix = next((ids[:k] for k in range(1, len(ids)) if invalid(ids[:k])), None)
    suffix = next((ids[k:] for k in range(len(ids) - 1, 0, -1) if invalid(ids[k:])), None)
    middle = None
    for a in range(1, len(ids)):
        for b in range(len(ids) - 1, a, -1):
            if invalid(ids[a:b]):
                middle = ids[a:b]
                break
        if middle is not None:
            break
    return prefix, suffix, middle


def gen_decode(v: Vectors, encs: dict) -> None:
    def add(name, enc_name, ids, modes=("replace", "strict")):
        for mode in modes:
            v.add(
                f"decode/{enc_name}/{name}/{mode}",
                "decode",
                {"encoding": enc_name, "ids": ids, "mode": mode},
                decode_ref(encs[enc_name], ids, mode),
            )

    for enc_name in ENCODINGS:
        enc = encs[enc_name]
        add("empty", enc_name, [])
        add("hello-world", enc_name, enc.encode_ordinary("hello world"))
        for sname, s in DECODE_STRINGS:
            ids = enc.encode_ordinary(s)
            add(f"{sname}/full", enc_name, ids)
            prefix, suffix, middle = _invalid_cuts(enc, ids)
            if prefix is not None:
                add(f"{sname}/cut-prefix", enc_name, prefix)
            if suffix is not None:
                add(f"{sname}/cut-suffix", enc_name, suffix)
            if middle is not None and middle != prefix and middle != suffix:
                add(f"{sname}/cut-middle", enc_name, middle)
        # Single byte-level tokens that are not valid UTF-8 on their own.
        lone = [enc.encode_single_token(bytes([b])) for b in (0xE6, 0x97, 0xFF)]
        add("lone-bytes", enc_name, lone)
        # Ill-formed byte sequences built from single-byte tokens: how many
        # U+FFFD "replace" yields is fixed by the Unicode "maximal subpart"
        # practice (Python's and Rust's lossy decoders both follow it).
        def byte_ids(bs: bytes) -> list[int]:
            return [enc.encode_single_token(bytes([b])) for b in bs]

        for bname, bs in [
            ("bytes-overlong", b"\xe0\x80\xaf"),
            ("bytes-surrogate", b"\xed\xa0\x80"),
            ("bytes-above-max", b"\xf4\x90\x80\x80"),
            ("bytes-truncated-then-ascii", b"\xf0\x9f\x91a\xe6\x97"),
        ]:
            add(bname, enc_name, byte_ids(bs))
        # Invalid bytes surrounded by valid text.
        add(
            "invalid-inside-valid",
            enc_name,
            enc.encode_ordinary("ok ") + lone[:1] + enc.encode_ordinary(" fine"),
        )
        # Special tokens decode to their text.
        specials = sorted(enc._special_tokens.items(), key=lambda kv: kv[1])
        add("special-tokens", enc_name, [i for _, i in specials])
        add("special-in-text", enc_name,
            enc.encode("a<|endoftext|>b", allowed_special="all", disallowed_special=()))
        # Ids that are not in the vocabulary.
        add("unknown-id", enc_name, [UNKNOWN_ID])
        add("unknown-id-after-valid", enc_name, enc.encode_ordinary("hi") + [UNKNOWN_ID])
        add("unknown-id-n-vocab", enc_name, [enc.n_vocab])
        present = set(enc._mergeable_ranks.values()) | set(enc._special_tokens.values())
        gaps = [i for i in range(enc.n_vocab) if i not in present]
        if gaps:
            add("unknown-id-gap", enc_name, [gaps[0]])
        # The highest mergeable id and id 0 are valid.
        add("edge-ids", enc_name, [0, max(enc._mergeable_ranks.values())])


def gen_count_until_limit(v: Vectors, encs: dict) -> None:
    texts = dict(encode_texts())
    short = [
        "empty", "space", "hello-world-punct", "crlf", "contractions-upper",
        "digits-40", "code-python", "chinese", "hindi", "emoji-zwj-family",
    ]
    chosen = [(t, texts[t]) for t in short]
    chosen.append(("special-endoftext", "<|endoftext|>"))
    rng = random.Random(20240601)
    long_prose = prose(rng, 20000)
    long_mixed = random_mixed(rng, 8000)

    for enc_name in ENCODINGS:
        enc = encs[enc_name]

        def add(tname, text, label, limit):
            v.add(
                f"count_until_limit/{enc_name}/{tname}/limit-{label}",
                "count_until_limit",
                {"encoding": enc_name, "text": text, "limit": limit},
                count_until_limit_ref(enc, text, limit),
            )

        for tname, text in chosen:
            n = count(enc, text)
            seen: set[int] = set()
            for label, limit in [("0", 0), ("1", 1), ("n", n), ("n-1", n - 1),
                                 ("large", 10**9)]:
                if limit < 0 or limit in seen:
                    continue
                seen.add(limit)
                add(tname, text, label, limit)
        n_prose = count(enc, long_prose)
        for label, limit in [("100", 100), ("n", n_prose)]:
            add("long-prose-20000", long_prose, label, limit)
        n_mixed = count(enc, long_mixed)
        for label, limit in [("5", 5), ("n-1", n_mixed - 1)]:
            add("long-mixed-8000", long_mixed, label, limit)


def truncate_texts() -> list[tuple[str, str]]:
    rng = random.Random(4321)
    return [
        ("prose", prose(rng, 400)),
        ("code", RUST_SNIPPET),
        ("cjk", "東京は日本の首都です。我们今天去公园散步，天气非常好。안녕하세요, 오늘 날씨가 정말 좋네요! "
                "ひらがなとカタカナ、そして漢字を使います。机器学习是人工智能的一个分支。"),
        ("emoji", "Family 👨\u200d👩\u200d👧\u200d👦 flag 🏳\ufe0f\u200d🌈 thumbs 👍🏽👍🏿 "
                  "flags 🇺🇸🇯🇵🇩🇪 keycap #\ufe0f\u20e3 party 🎉🎉🎉 end"),
        # Byte-level tokens split these characters, so many token cuts fall
        # inside a character and the boundary search has to move.
        ("multibyte-cuts", "𝐀𝐁𝐂𝐃𝐄 नमस्ते दुनिया สวัสดีครับ e\u0301e\u0301 Z\u0351\u036b\u0343a\u0310l "
                           "𓀀𓀁𓀂 ꙮꙮ 🀄🃏 ༀ ᚠᚢᚦ"),
        ("short", "Hi there"),
    ]


# Inputs on which the first candidate cut re-counts to more than the budget,
# so the shrink loop runs (found by a brute-force search; the effect depends
# on the encoding, and every case runs on all four). E.g. in o200k_base
# "<\n//" is ["<", "\n//"], but its suffix "\n//" alone is ["\n", "//"]: the
# pattern ` ?[^\s\p{L}\p{N}]+[\r\n/]*` glues "\n//" to the punctuation
# before it, so a tail cut there grows by one token.
RETRY_CASES = [
    ("o200k-newline-slashes", "<\n//", 1, "tail", None),
    ("o200k-newline-slashes-head", "<\n//", 1, "head", None),
    ("o200k-emoji-comment", "total: 5 👍\n// next\n", 3, "tail", None),
    ("marker-quote-s-a", "'?-.\n\u0301.sB", 4, "both", "'s{removed}'"),
    ("marker-quote-s-b", "'?-.\n\u0301.sB", 6, "both", "'s{removed}'"),
    ("marker-quote-s-c", " >'x'a👍1", 4, "both", "'s{removed}'"),
    ("marker-angle-a", "9👍日/é\n<x", 6, "both", "<<{removed} cut>>"),
    ("marker-angle-b", ".ll\n\n\n.23hello worlda's-/", 11, "both", "<<{removed} cut>>"),
    ("default-marker", "é]9é23?/.'xashello1/'", 11, "both", None),
    ("default-marker-b", "(\n\nBé1x'\n\n.[9<<👍>B👍日all/'", 11, "both", None),
]


def gen_truncate(v: Vectors, encs: dict) -> None:
    texts = truncate_texts()
    for enc_name in ENCODINGS:
        enc = encs[enc_name]

        def add(name, text, max_tokens, side, marker=None):
            inp = {"encoding": enc_name, "text": text, "max_tokens": max_tokens, "side": side}
            if marker is not None:
                inp["marker"] = marker
            v.add(name, "truncate", inp, truncate_ref(enc, text, max_tokens, side, marker))

        for tname, text in texts:
            n = count(enc, text)
            for side in ("head", "tail", "both"):
                seen: set[int] = set()
                for label, mx in [("0", 0), ("1", 1), ("5", 5), ("17", 17), ("50", 50),
                                  ("n", n)]:
                    if mx in seen:
                        continue
                    seen.add(mx)
                    add(f"truncate/{enc_name}/{side}/{tname}/max-{label}", text, mx, side)
            # Custom markers.
            for label, mx in [("5", 5), ("17", 17), ("50", 50)]:
                add(f"truncate/{enc_name}/both/{tname}/custom-marker/max-{label}",
                    text, mx, "both", "<<{removed} cut>>")
        prose_text = texts[0][1]
        # A marker with no placeholder, one with two, and one too big for the budget.
        add(f"truncate/{enc_name}/both/prose/marker-no-placeholder/max-20",
            prose_text, 20, "both", " ... ")
        add(f"truncate/{enc_name}/both/prose/marker-two-placeholders/max-30",
            prose_text, 30, "both", "[{removed}|{removed}]")
        add(f"truncate/{enc_name}/both/prose/empty-marker/max-10",
            prose_text, 10, "both", "")
        big_marker = "[" + " removed tokens here" * 6 + ": {removed}]"
        add(f"truncate/{enc_name}/both/prose/marker-too-big/max-20",
            prose_text, 20, "both", big_marker)
        add(f"truncate/{enc_name}/both/prose/default-marker-too-big/max-8",
            prose_text, 8, "both")
        for cname, text, mx, side, marker in RETRY_CASES:
            add(f"truncate/{enc_name}/{side}/retry-{cname}/max-{mx}", text, mx, side, marker)
        # Empty input never truncates, even at max 0.
        for side in ("head", "tail", "both"):
            add(f"truncate/{enc_name}/{side}/empty/max-0", "", 0, side)


# --------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------

# Characters written as \u escapes even though ensure_ascii is off: every
# control, format, separator or unassigned/private character, so invisible
# characters (NBSP, ZWJ, BOM, U+2028...) stay visible and diff-able.
_ESCAPE_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"}


def _escape_char(m: re.Match) -> str:
    ch = m.group(0)
    if unicodedata.category(ch) not in _ESCAPE_CATEGORIES:
        return ch
    cp = ord(ch)
    if cp > 0xFFFF:
        cp -= 0x10000
        return "\\u%04x\\u%04x" % (0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF))
    return "\\u%04x" % cp


_NON_ASCII_RE = re.compile(r"[^\x00-\x7e]")


def dump(doc: dict) -> str:
    # Non-ASCII characters (and DEL) only occur inside JSON strings, so escaping them in
    # the serialized text yields an equivalent document.
    text = json.dumps(doc, indent=1, ensure_ascii=False)
    return _NON_ASCII_RE.sub(_escape_char, text) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", type=Path, default=DEFAULT_OUT,
                    help=f"where to write the vectors (default: {DEFAULT_OUT})")
    args = ap.parse_args()

    version = tiktoken.__version__
    if version != PINNED_TIKTOKEN:
        print(f"warning: tiktoken {version} is installed; the committed vectors were "
              f"made with {PINNED_TIKTOKEN} (pip install tiktoken=={PINNED_TIKTOKEN})",
              file=sys.stderr)

    encs = {name: load_encoding(name) for name in ENCODINGS + ALIAS_ENCODINGS}
    v = Vectors()
    gen_encode(v, encs)
    gen_alias_encodings(v, encs)
    gen_decode(v, encs)
    gen_count_until_limit(v, encs)
    gen_truncate(v, encs)

    doc = {
        "format": 1,
        "generated_by": GENERATED_BY,
        "oracle": f"tiktoken {version} (OpenAI)",
        "vectors": v.items,
    }
    out = dump(doc)
    assert json.loads(out) == doc
    args.output.write_text(out, encoding="utf-8", newline="\n")

    per_op: dict[str, int] = {}
    for item in v.items:
        per_op[item["op"]] = per_op.get(item["op"], 0) + 1
    summary = ", ".join(f"{op} {n}" for op, n in per_op.items())
    print(f"wrote {len(v.items)} vectors ({summary}) to {args.output} "
          f"({len(out.encode('utf-8'))} bytes), oracle tiktoken {version}; "
          f"{TRUNCATE_RETRIES[0]} truncate vectors exercise the shrink loop")


if __name__ == "__main__":
    main()
