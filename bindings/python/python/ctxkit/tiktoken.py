"""tiktoken's public API backed by ctxkit: ``import ctxkit.tiktoken as tiktoken``.

Token ids come from ctxkit's engine (identical to tiktoken's on every input).
What tiktoken itself does in Python is done the same way here: the check for
disallowed special tokens (a regex search), ``decode`` as token bytes decoded
with the caller's ``errors``, and ``decode_with_offsets``. Two things ctxkit's
core does not offer yet (issue 19, item 1) are built from what it does offer:

- special tokens allowed as a *subset*: the text is split at the allowed
  special tokens, each piece encoded ordinarily (exactly what tiktoken's core
  does with its special regex);
- ``_encode_bytes`` of bytes that are not UTF-8 is not available and raises
  ``NotImplementedError``.

Not provided: tiktoken internals (``_mergeable_ranks``, ``_core_bpe``,
pickling, custom encodings from rank files, ``encode_to_numpy``).
"""

from __future__ import annotations

import functools
import re
from concurrent.futures import ThreadPoolExecutor
from typing import AbstractSet, Collection, Dict, FrozenSet, List, Literal, Optional, Sequence, Tuple, Union

from . import _native
from ._native import CtxkitError, Tokenizer, UnknownModelError, UnknownTokenError

__all__ = ["Encoding", "get_encoding", "encoding_for_model", "encoding_name_for_model", "list_encoding_names"]

_AllowedSpecial = Union[Literal["all"], AbstractSet[str]]
_DisallowedSpecial = Union[Literal["all"], Collection[str]]


def _raise_disallowed_special_token(token: str) -> None:
    raise ValueError(
        f"Encountered text corresponding to disallowed special token {token!r}.\n"
        "If you want this text to be encoded as a special token, "
        f"pass it to `allowed_special`, e.g. `allowed_special={{{token!r}, ...}}`.\n"
        f"If you want this text to be encoded as normal text, disable the check for this token "
        f"by passing `disallowed_special=(enc.special_tokens_set - {{{token!r}}})`.\n"
        "To disable this check for all special tokens, pass `disallowed_special=()`.\n"
    )


@functools.lru_cache(maxsize=128)
def _special_token_regex(tokens: FrozenSet[str]) -> "re.Pattern[str]":
    inner = "|".join(re.escape(token) for token in sorted(tokens))
    return re.compile(f"({inner})")


class Encoding:
    """tiktoken's ``Encoding`` for one of ctxkit's encodings."""

    def __init__(self, name: str) -> None:
        self._ordinary = Tokenizer(name)
        self._recognize = Tokenizer(name, special_tokens="recognize")
        self.name: str = self._ordinary.encoding
        self._special_tokens: Dict[str, int] = dict(self._ordinary.special_token_list())
        self.special_tokens_set: AbstractSet[str] = frozenset(self._special_tokens)
        self.n_vocab: int = self._ordinary.vocab_size
        self.max_token_value: int = self.n_vocab - 1

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r}>"

    # ------------------------------------------------------------ encoding

    def encode_ordinary(self, text: str) -> List[int]:
        """Encodes a string into tokens, ignoring special tokens."""
        return self._ordinary.encode(text)

    def encode(
        self,
        text: str,
        *,
        allowed_special: _AllowedSpecial = set(),  # noqa: B006
        disallowed_special: _DisallowedSpecial = "all",
    ) -> List[int]:
        """Encodes a string into tokens (tiktoken's rules for special tokens)."""
        if allowed_special == "all":
            allowed_special = self.special_tokens_set
        if disallowed_special == "all":
            disallowed_special = self.special_tokens_set - allowed_special
        if disallowed_special:
            if not isinstance(disallowed_special, frozenset):
                disallowed_special = frozenset(disallowed_special)
            match = _special_token_regex(disallowed_special).search(text)
            if match:
                _raise_disallowed_special_token(match.group())
        allowed = frozenset(allowed_special) & self.special_tokens_set
        if not allowed:
            return self._ordinary.encode(text)
        if allowed == self.special_tokens_set:
            return self._recognize.encode(text)
        # A subset: split at the allowed special tokens (leftmost first, as
        # tiktoken's core does) and encode the text between them ordinarily.
        out: List[int] = []
        pos = 0
        for m in _special_token_regex(allowed).finditer(text):
            if m.start() > pos:
                out.extend(self._ordinary.encode(text[pos : m.start()]))
            out.append(self._special_tokens[m.group()])
            pos = m.end()
        if pos < len(text):
            out.extend(self._ordinary.encode(text[pos:]))
        return out

    def encode_single_token(self, text_or_bytes: Union[str, bytes]) -> int:
        """The id of the single token whose bytes are ``text_or_bytes``; ``KeyError`` otherwise."""
        try:
            return self._ordinary.token_id(text_or_bytes)
        except UnknownTokenError as e:
            raise KeyError(text_or_bytes) from e

    def encode_batch(
        self,
        text: Sequence[str],
        *,
        num_threads: int = 8,
        allowed_special: _AllowedSpecial = set(),  # noqa: B006
        disallowed_special: _DisallowedSpecial = "all",
    ) -> List[List[int]]:
        """Encodes a list of strings on a thread pool (ctxkit releases the GIL)."""
        encoder = functools.partial(self.encode, allowed_special=allowed_special, disallowed_special=disallowed_special)
        with ThreadPoolExecutor(num_threads) as e:
            return list(e.map(encoder, text))

    def encode_ordinary_batch(self, text: Sequence[str], *, num_threads: int = 8) -> List[List[int]]:
        with ThreadPoolExecutor(num_threads) as e:
            return list(e.map(self.encode_ordinary, text))

    def _encode_bytes(self, text: bytes) -> List[int]:
        try:
            s = text.decode("utf-8")
        except UnicodeDecodeError:
            raise NotImplementedError(
                "encoding bytes that are not UTF-8 needs core support ctxkit does not have yet (issue 19)"
            ) from None
        return self._ordinary.encode(s)

    # ------------------------------------------------------------ decoding

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """The bytes of ``tokens`` (``KeyError`` for an id not in the vocabulary)."""
        try:
            return self._ordinary.decode_bytes(tokens)
        except UnknownTokenError as e:
            raise KeyError(str(e)) from e

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        """Decodes tokens to text; ``errors`` as for ``bytes.decode``."""
        if errors == "replace":
            try:
                return self._ordinary.decode(tokens)
            except UnknownTokenError as e:
                raise KeyError(str(e)) from e
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        return self.decode_bytes([token])

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> List[bytes]:
        return [self.decode_single_token_bytes(t) for t in tokens]

    def decode_with_offsets(self, tokens: Sequence[int]) -> Tuple[str, List[int]]:
        """The text and, per token, the offset of the character it starts in (tiktoken's rule)."""
        token_bytes = self.decode_tokens_bytes(tokens)
        text_len = 0
        offsets = []
        for token in token_bytes:
            offsets.append(max(0, text_len - (0x80 <= token[0] < 0xC0)))
            text_len += sum(1 for c in token if not 0x80 <= c < 0xC0)
        text = b"".join(token_bytes).decode("utf-8", errors="strict")
        return text, offsets

    def decode_batch(self, batch: Sequence[Sequence[int]], *, errors: str = "replace", num_threads: int = 8) -> List[str]:
        decoder = functools.partial(self.decode, errors=errors)
        with ThreadPoolExecutor(num_threads) as e:
            return list(e.map(decoder, batch))

    def decode_bytes_batch(self, batch: Sequence[Sequence[int]], *, num_threads: int = 8) -> List[bytes]:
        with ThreadPoolExecutor(num_threads) as e:
            return list(e.map(self.decode_bytes, batch))

    # ------------------------------------------------------------ misc

    def token_byte_values(self) -> List[bytes]:
        out = []
        for i in range(self.n_vocab):
            if i in self._special_tokens.values():
                continue
            try:
                out.append(self.decode_single_token_bytes(i))
            except KeyError:
                pass
        return out

    @property
    def eot_token(self) -> int:
        return self._special_tokens["<|endoftext|>"]

    def is_special_token(self, token: int) -> bool:
        return token in self._special_tokens.values()


_cache: Dict[str, Encoding] = {}


def get_encoding(encoding_name: str) -> Encoding:
    """The encoding called ``encoding_name`` (``ValueError`` if ctxkit does not ship it)."""
    enc = _cache.get(encoding_name)
    if enc is None:
        try:
            enc = Encoding(encoding_name)
        except CtxkitError as e:
            raise ValueError(f"Unknown encoding {encoding_name}. {e}") from e
        if enc.name != encoding_name:
            # An alias ctxkit resolves to another encoding (e.g. gpt2 -> r50k_base
            # before ctxkit ships gpt2 under its own name): same ranks, other name.
            pass
        _cache[encoding_name] = enc
    return enc


def list_encoding_names() -> List[str]:
    return list(_native.list_encodings())


def encoding_name_for_model(model_name: str) -> str:
    """The encoding ctxkit's model registry gives ``model_name`` (``KeyError`` if unknown)."""
    try:
        info = __import__("json").loads(_native._lookup_model_json(model_name, None))
    except UnknownModelError as e:
        raise KeyError(
            f"Could not automatically map {model_name} to a tokeniser. "
            f"Please use `tiktoken.get_encoding` to explicitly get the tokeniser you expect. ({e})"
        ) from None
    return info["encoding"]


def encoding_for_model(model_name: str) -> Encoding:
    return get_encoding(encoding_name_for_model(model_name))


_ = Optional  # typing re-export kept for stub parity
