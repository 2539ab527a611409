from array import array

import pytest

import turnfit


def test_count_encode_decode_roundtrip():
    t = turnfit.Tokenizer("o200k_base")
    assert t.count_tokens("Hello, world!") == 4
    ids = t.encode("Hello, world!")
    assert isinstance(ids, list) and len(ids) == 4
    assert t.decode(ids) == "Hello, world!"
    arr = t.encode_array("Hello, world!")
    assert isinstance(arr, array) and arr.typecode == "I" and list(arr) == ids
    assert t.decode(arr) == "Hello, world!"
    assert t.decode_bytes(ids) == b"Hello, world!"
    assert t.encoding == "o200k_base" and t.vocab_size == 200019
    assert t.model_info is None


def test_for_model_and_module_count():
    t = turnfit.Tokenizer.for_model("gpt-4o")
    assert t.encoding == "o200k_base"
    assert t.model_info["encoding"] == "o200k_base"
    assert turnfit.count_tokens("hello world", model="gpt-4") == 2
    assert turnfit.count_tokens("hello world", encoding="cl100k_base") == 2
    t = turnfit.Tokenizer.for_model("no-such-model-x", fallback_encoding="cl100k_base")
    assert t.model_info["exact"] is False


def test_count_until_limit():
    t = turnfit.Tokenizer("cl100k_base")
    assert t.count_until_limit("hello world", 10) == (2, False)
    tokens, exceeded = t.count_until_limit("hello " * 1000, 5)
    assert exceeded and tokens > 5


def test_truncate():
    t = turnfit.Tokenizer("o200k_base")
    text = "word " * 500
    r = t.truncate(text, 20, "both")
    assert r["truncated"] and r["tokens"] <= 20 and r["original_tokens"] == t.count_tokens(text)
    assert t.count_tokens(r["text"]) == r["tokens"]
    r = t.truncate(text, 10, "head")
    assert text.startswith(r["text"])
    with pytest.raises(turnfit.InvalidArgumentError):
        t.truncate(text, 1, "both")
    with pytest.raises(ValueError):
        t.truncate(text, 10, "middle")


def test_special_tokens_modes():
    plain = turnfit.Tokenizer("cl100k_base")
    rec = turnfit.Tokenizer("cl100k_base", special_tokens="recognize")
    assert rec.encode("<|endoftext|>") == [100257]
    assert len(plain.encode("<|endoftext|>")) > 1
    assert ("<|endoftext|>", 100257) in plain.special_token_list()
    assert plain.token_id(b"hello") == plain.encode("hello")[0]
    assert plain.token_id("<|endoftext|>") == 100257
    with pytest.raises(turnfit.UnknownTokenError):
        plain.token_id(b"definitely not one token")


def test_bytes_input_and_invalid_utf8():
    t = turnfit.Tokenizer("o200k_base")
    assert t.count_tokens("héllo".encode()) == t.count_tokens("héllo")
    with pytest.raises(turnfit.InvalidUtf8Error, match="offset 2"):
        t.count_tokens(b"ab\xffcd")
    with pytest.raises(turnfit.InvalidUtf8Error):
        t.encode(b"\xc3")


def test_lone_surrogates_become_replacement_char_like_tiktoken():
    t = turnfit.Tokenizer("cl100k_base")
    assert t.encode("\ud83d") == t.encode("\ufffd")
    assert t.encode("a\udc00b") == t.encode("a\ufffdb")
    # A surrogate pair written as two code points is one character, as in tiktoken.
    assert t.encode("\ud83d\udc4d") == t.encode("👍") == [9468, 239, 235]


def test_decode_modes_and_bad_ids():
    t = turnfit.Tokenizer("cl100k_base")
    ids = t.encode("日本")
    part = ids[:1] if len(t.decode_bytes(ids[:1])) % 3 else ids
    assert t.decode([9468]) == "\ufffd"
    with pytest.raises(turnfit.InvalidUtf8Error):
        t.decode([9468], errors="strict")
    with pytest.raises(turnfit.UnknownTokenError):
        t.decode([10_000_000])
    with pytest.raises(turnfit.UnknownTokenError):
        t.decode([-1])
    with pytest.raises(turnfit.UnknownTokenError):
        t.decode([2**40])
    assert t.decode(part) is not None


def test_wrong_argument_types_are_type_errors():
    t = turnfit.Tokenizer("o200k_base")
    for bad in (None, 42, ["a"], 3.5):
        with pytest.raises(TypeError):
            t.count_tokens(bad)
    with pytest.raises(TypeError):
        t.decode("abc")
    with pytest.raises(TypeError):
        t.decode([1, "2"])
    with pytest.raises(TypeError):
        turnfit.Tokenizer(123)
    with pytest.raises(TypeError):
        t.count_until_limit("x", "10")


def test_oversized_text_is_limit_exceeded():
    t = turnfit.Tokenizer("o200k_base")
    big = "a" * (64 * 1024 * 1024 + 1)
    with pytest.raises(turnfit.LimitExceededError):
        t.count_tokens(big)


def test_unknown_names():
    with pytest.raises(turnfit.UnknownEncodingError, match="o200k_base"):
        turnfit.Tokenizer("o200k_bsae")
    with pytest.raises(turnfit.UnknownModelError) as e:
        turnfit.Tokenizer.for_model("gtp-4o")
    assert e.value.kind == "unknown_model"
    assert "gpt-4o" in str(e.value)


def test_pathological_inputs_match_tiktoken():
    import tiktoken

    assert "turnfit" not in tiktoken.__file__  # OpenAI's package, not the shim
    for name in ("cl100k_base", "o200k_base"):
        ours = turnfit.Tokenizer(name)
        theirs = tiktoken.get_encoding(name)
        for text in ("a" * 20000, " " * 5000, "\n" * 3000, "ab" * 5000, "日本語" * 3000, "x1" * 4000):
            assert ours.encode(text) == theirs.encode_ordinary(text), (name, text[:10])
