"""FileTokenizer: a tokenizer loaded from a model's file. The ids are HF
tokenizers' (tests/vectors/file_tokenizer.json runs every case through
vectors.py); these tests cover the Python surface and its errors."""

import threading
from pathlib import Path

import pytest

import turnfit

FILES = Path(__file__).resolve().parents[3] / "tests" / "vectors" / "files"
BYTE_LEVEL = FILES / "tiny-byte-level.tokenizer.json"
SENTENCEPIECE = FILES / "tiny-sentencepiece.tokenizer.json"


def test_counts_encodes_and_decodes_like_hf():
    t = turnfit.FileTokenizer(BYTE_LEVEL)
    assert t.encode("Hello, world!") == [525, 401, 80, 13, 422, 473, 306, 2]
    assert t.encode("Hello, world!", add_special=True)[0] == 0
    assert t.count_tokens("Hello, world!") == 8
    assert t.decode([525, 401, 80, 13, 422, 473, 306, 2]) == "Hello, world!"
    sp = turnfit.FileTokenizer(str(SENTENCEPIECE))
    assert sp.encode("Hello, world!") == [489, 299, 326, 333, 333, 336, 273, 489, 344, 336, 339, 635, 264]


def test_special_token_text_is_ordinary_unless_asked():
    ordinary = turnfit.FileTokenizer(BYTE_LEVEL)
    recognize = turnfit.FileTokenizer(BYTE_LEVEL, special_tokens="recognize")
    assert 1 not in ordinary.encode("a <|end|> b")
    assert 1 in recognize.encode("a <|end|> b")
    assert ordinary.info["special_tokens"] == "ordinary"
    assert recognize.info["special_tokens"] == "recognize"


def test_info_and_from_bytes():
    t = turnfit.FileTokenizer.from_bytes(BYTE_LEVEL.read_bytes(), "tiny.json")
    info = t.info
    assert info["name"] == "tiny.json" and t.name == "tiny.json"
    assert info["vocab_size"] == t.vocab_size == 600
    assert info["add_special"] is True
    assert info["has_chat_template"] is False and info["context_length"] is None
    assert t.count_tokens("Hello, world!") == 8


def test_bad_files_raise_specific_errors_naming_the_file(tmp_path):
    with pytest.raises(turnfit.IoError, match="missing.json"):
        turnfit.FileTokenizer(tmp_path / "missing.json")
    cut = tmp_path / "cut.json"
    cut.write_bytes(BYTE_LEVEL.read_bytes()[:1000])
    with pytest.raises(turnfit.InvalidJsonError, match="cut.json"):
        turnfit.FileTokenizer(cut)
    with pytest.raises(turnfit.InvalidArgumentError, match="not a regular file"):
        turnfit.FileTokenizer(tmp_path)
    with pytest.raises(turnfit.InvalidArgumentError, match="no pattern"):
        turnfit.FileTokenizer(BYTE_LEVEL, pattern="llama3")
    with pytest.raises(turnfit.InvalidArgumentError, match="m.gguf"):
        turnfit.FileTokenizer.from_bytes(b"GGUF\x03\x00\x00\x00", "m.gguf")
    with pytest.raises(ValueError, match="special_tokens"):
        turnfit.FileTokenizer(BYTE_LEVEL, special_tokens="all")
    t = turnfit.FileTokenizer(BYTE_LEVEL)
    with pytest.raises(turnfit.UnknownTokenError, match="4000000"):
        t.decode([4000000])
    with pytest.raises(TypeError):
        t.decode("abc")


def test_one_instance_serves_many_threads():
    t = turnfit.FileTokenizer(BYTE_LEVEL)
    text = "The quick brown fox jumps over the lazy dog. " * 2000
    want = t.count_tokens(text)
    got = []

    def work():
        got.append(t.count_tokens(text))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert got == [want] * 8
