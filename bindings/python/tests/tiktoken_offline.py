"""Lets OpenAI's tiktoken (the oracle) run offline: its rank files are the
ones turnfit embeds (core/data/*.tiktoken, SHA-256 pinned by the core's tests),
placed in a TIKTOKEN_CACHE_DIR under the names tiktoken looks for (the SHA-1
of the download URL). tiktoken still checks each file's SHA-256."""

import hashlib
import os
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"


def setup() -> str:
    cache = REPO / "target" / "python" / "tiktoken-cache"
    cache.mkdir(parents=True, exist_ok=True)
    for name in ("r50k_base", "p50k_base", "cl100k_base", "o200k_base"):
        dst = cache / hashlib.sha1(URL.format(name).encode()).hexdigest()
        if not dst.exists():
            shutil.copyfile(REPO / "core" / "data" / f"{name}.tiktoken", dst)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    return str(cache)
