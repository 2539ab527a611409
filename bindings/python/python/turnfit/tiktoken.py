"""tiktoken's public API backed by turnfit: ``import turnfit.tiktoken as tiktoken``.

Everything tiktoken computes is computed by turnfit's core (token-identical to
tiktoken, checked against it): encoding with ``allowed_special`` /
``disallowed_special`` sets and the check that raises on disallowed text,
token bytes, single-token lookup, ``_encode_bytes`` of bytes that are not
UTF-8, ``decode`` with ``errors="replace"``, ``"ignore"`` or ``"strict"``,
and ``decode_with_offsets``. This module only converts: turnfit's errors to
the exceptions tiktoken raises (``KeyError``, ``ValueError``), and any other
``errors=`` handler of ``bytes.decode`` applied to the token bytes.

Not provided: pickling, custom encodings from rank files, ``encode_to_numpy``,
``encode_with_unstable``.
"""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor
from typing import AbstractSet, Collection, Dict, List, Literal, Optional, Sequence, Tuple, Union

from . import _native
from ._native import TurnfitError, InvalidArgumentError, InvalidUtf8Error, Tokenizer, UnknownModelError, UnknownTokenError

__all__ = ["Encoding", "get_encoding", "encoding_for_model", "encoding_name_for_model", "list_encoding_names"]

_AllowedSpecial = Union[Literal["all"], AbstractSet[str]]
_DisallowedSpecial = Union[Literal["all"], Collection[str]]


class Encoding:
    """tiktoken's ``Encoding`` for one of turnfit's encodings."""

    def __init__(self, name: str) -> None:
        self._ordinary = Tokenizer(name)
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
        allowed = "all" if allowed_special == "all" else frozenset(allowed_special)
        disallowed = "all" if disallowed_special == "all" else frozenset(disallowed_special)
        try:
            return self._ordinary.encode_special(text, allowed, disallowed)
        except InvalidArgumentError as e:
            raise ValueError(str(e)) from None

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
        """Encodes a list of strings on a thread pool (turnfit releases the GIL)."""
        encoder = functools.partial(self.encode, allowed_special=allowed_special, disallowed_special=disallowed_special)
        with ThreadPoolExecutor(num_threads) as e:
            return list(e.map(encoder, text))

    def encode_ordinary_batch(self, text: Sequence[str], *, num_threads: int = 8) -> List[List[int]]:
        with ThreadPoolExecutor(num_threads) as e:
            return list(e.map(self.encode_ordinary, text))

    def _encode_bytes(self, text: bytes) -> List[int]:
        """tiktoken's ``_encode_bytes``: the ids of bytes that need not be UTF-8."""
        return self._ordinary.encode_bytes(bytes(text))

    # ------------------------------------------------------------ decoding

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """The bytes of ``tokens`` (``KeyError`` for an id not in the vocabulary)."""
        try:
            return self._ordinary.decode_bytes(tokens)
        except UnknownTokenError as e:
            raise KeyError(str(e)) from e

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        """Decodes tokens to text; ``errors`` as for ``bytes.decode``."""
        if errors not in ("replace", "ignore", "strict"):
            return self.decode_bytes(tokens).decode("utf-8", errors=errors)
        try:
            return self._ordinary.decode(tokens, errors)
        except UnknownTokenError as e:
            raise KeyError(str(e)) from None
        except InvalidUtf8Error as e:
            data = self.decode_bytes(tokens)
            raise UnicodeDecodeError("utf-8", data, 0, len(data), str(e)) from None

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token (``KeyError`` for an id not in the vocabulary)."""
        try:
            return self._ordinary.token_bytes(token)
        except UnknownTokenError:
            raise KeyError(token) from None

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> List[bytes]:
        return [self.decode_single_token_bytes(t) for t in tokens]

    def decode_with_offsets(self, tokens: Sequence[int]) -> Tuple[str, List[int]]:
        """The text and, per token, the offset of the character it starts in (tiktoken's rule)."""
        try:
            return self._ordinary.decode_with_offsets(tokens)
        except UnknownTokenError as e:
            raise KeyError(str(e)) from None
        except InvalidUtf8Error as e:
            data = self.decode_bytes(tokens)
            raise UnicodeDecodeError("utf-8", data, 0, len(data), str(e)) from None

    def decode_batch(self, batch: Sequence[Sequence[int]], *, errors: str = "replace", num_threads: int = 8) -> List[str]:
        decoder = functools.partial(self.decode, errors=errors)
        with ThreadPoolExecutor(num_threads) as e:
            return list(e.map(decoder, batch))

    def decode_bytes_batch(self, batch: Sequence[Sequence[int]], *, num_threads: int = 8) -> List[bytes]:
        with ThreadPoolExecutor(num_threads) as e:
            return list(e.map(self.decode_bytes, batch))

    # ------------------------------------------------------------ misc

    def token_byte_values(self) -> List[bytes]:
        """Every ordinary token's bytes, sorted (tiktoken's ``token_byte_values``)."""
        return sorted(self._mergeable_ranks)

    @functools.cached_property
    def _mergeable_ranks(self) -> Dict[bytes, int]:
        """tiktoken's rank dict ``{bytes: id}`` of the ordinary tokens (built on first use)."""
        return self._ordinary.mergeable_ranks()

    @property
    def eot_token(self) -> int:
        return self._special_tokens["<|endoftext|>"]

    def is_special_token(self, token: int) -> bool:
        return isinstance(token, int) and 0 <= token < 2**32 and self._ordinary.is_special_token(token)


_cache: Dict[str, Encoding] = {}


def get_encoding(encoding_name: str) -> Encoding:
    """The encoding called ``encoding_name`` (``ValueError`` if turnfit does not ship it)."""
    enc = _cache.get(encoding_name)
    if enc is None:
        try:
            enc = Encoding(encoding_name)
        except TurnfitError as e:
            raise ValueError(f"Unknown encoding {encoding_name}. {e}") from e
        if enc.name != encoding_name:
            # An alias turnfit resolves to another encoding (e.g. gpt2 -> r50k_base
            # before turnfit ships gpt2 under its own name): same ranks, other name.
            pass
        _cache[encoding_name] = enc
    return enc


def list_encoding_names() -> List[str]:
    return list(_native.list_encodings())


def encoding_name_for_model(model_name: str) -> str:
    """The encoding turnfit's model registry gives ``model_name`` (``KeyError`` if unknown)."""
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
