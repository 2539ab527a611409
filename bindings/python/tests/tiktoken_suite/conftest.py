"""Runs tiktoken's vendored test suite against ctxkit.tiktoken (see README.md)."""

import sys

import pytest

import ctxkit.tiktoken

sys.modules["tiktoken"] = ctxkit.tiktoken

# test node id (file::name, parameters stripped) -> why it cannot pass yet.
KNOWN_FAILURES = {
    "test_encoding.py::test_encode_bytes": "encoding bytes that are not UTF-8 (tiktoken's _encode_bytes) needs core support (issue 19 item 1)",
    "test_encoding.py::test_hyp_encode_bytes": "encoding bytes that are not UTF-8 (tiktoken's _encode_bytes) needs core support (issue 19 item 1)",
    "test_offsets.py::test_hyp_offsets": "draws ids through enc._mergeable_ranks, a tiktoken internal (the rank dict) ctxkit does not expose",
    "test_pickle.py::test_pickle": "pickles tiktoken's Python objects and builds a custom Encoding from rank dicts (tiktoken internals)",
}

# Depend on encodings and model names the 'models' branch adds to core
# (o200k_harmony, p50k_edit, gpt2 under its own name); they pass once it is merged.
PENDING_CORE = {
    "test_misc.py::test_encoding_for_model": "needs the gpt2 encoding name, p50k_edit and gpt-oss -> o200k_harmony (issue 19, 'models' branch)",
    "test_simple_public.py::test_encoding_for_model": "as test_misc.py::test_encoding_for_model",
}


def _key(item: pytest.Item) -> str:
    return f"{item.path.name}::{item.originalname}"


def pytest_collection_modifyitems(config, items):
    import ctxkit

    shipped = set(ctxkit.list_encodings())
    for item in items:
        k = _key(item)
        reason = KNOWN_FAILURES.get(k)
        if reason is None and k in PENDING_CORE and not {"gpt2", "p50k_edit", "o200k_harmony"} <= shipped:
            reason = PENDING_CORE[k]
        if reason is not None:
            item.add_marker(pytest.mark.xfail(reason=reason, strict=True))
