import pytest

import turnfit
from turnfit import _native

EXPECTED = {
    "invalid_argument": "InvalidArgumentError",
    "invalid_utf8": "InvalidUtf8Error",
    "unknown_encoding": "UnknownEncodingError",
    "unknown_model": "UnknownModelError",
    "unknown_token": "UnknownTokenError",
    "limit_exceeded": "LimitExceededError",
    "invalid_json": "InvalidJsonError",
    "does_not_fit": "DoesNotFitError",
    "io": "IoError",
    "unsafe_path": "UnsafePathError",
    "cycle_detected": "CycleDetectedError",
    "depth_exceeded": "DepthExceededError",
    "invalid_yaml": "InvalidYamlError",
    "internal": "InternalError",
}


def test_every_core_kind_has_its_own_subclass():
    kinds = dict(_native._error_kinds())
    assert kinds == EXPECTED  # core's ErrorKind::ALL, mapped one to one
    classes = set()
    for kind, name in kinds.items():
        cls = getattr(turnfit, name)
        assert issubclass(cls, turnfit.TurnfitError) and cls is not turnfit.TurnfitError
        assert cls.kind == kind
        classes.add(cls)
        with pytest.raises(cls) as e:
            _native._raise_kind(kind)
        assert e.value.kind == kind
        assert type(e.value) is cls
    assert len(classes) == len(kinds)


def test_kinds_raised_by_real_calls():
    cases = [
        (lambda: turnfit.Tokenizer("nope"), turnfit.UnknownEncodingError),
        (lambda: turnfit.Tokenizer.for_model("nope-model"), turnfit.UnknownModelError),
        (lambda: turnfit.Tokenizer("cl100k_base").decode([100256]), turnfit.UnknownTokenError),
        (lambda: turnfit.fit_json("{not json", {"model": "gpt-4o"}), turnfit.InvalidJsonError),
        (lambda: turnfit.CallStack(5).enter("a").enter("a"), turnfit.CycleDetectedError),
        (lambda: turnfit.CallStack(1).enter("a").enter("b"), turnfit.DepthExceededError),
        (lambda: turnfit.Skills("/nonexistent/turnfit/skills"), turnfit.IoError),
        (lambda: turnfit.Tokenizer("o200k_base").count_tokens(b"\xff"), turnfit.InvalidUtf8Error),
        (
            lambda: turnfit.fit(
                [{"role": "system", "content": "word " * 3000}, {"role": "user", "content": "hi"}],
                model="gpt-4o",
                max_tokens=100,
            ),
            turnfit.DoesNotFitError,
        ),
    ]
    for call, cls in cases:
        with pytest.raises(cls) as e:
            call()
        assert e.value.kind == cls.kind
        assert str(e.value)  # the core's message, unchanged


def test_panic_surfaces_as_internal_error_not_panic_exception():
    for detached in (False, True):
        with pytest.raises(turnfit.InternalError, match="test panic") as e:
            _native._panic(detached)
        assert e.value.kind == "internal"
        assert isinstance(e.value, Exception)  # PanicException derives from BaseException
        assert type(e.value).__name__ == "InternalError"
