"""The .pyi stubs describe the module as it is: same public names, same
parameters (names, kinds, defaults), properties where the runtime has them."""

import ast
import inspect
from pathlib import Path

import turnfit

STUB = Path(turnfit.__file__).with_name("__init__.pyi")


def _stub_params(fn: ast.FunctionDef, is_method: bool):
    a = fn.args
    out = []
    pos = a.posonlyargs + a.args
    defaults = [None] * (len(pos) - len(a.defaults)) + a.defaults
    for arg, d in zip(pos, defaults):
        out.append((arg.arg, "POSITIONAL_OR_KEYWORD", None if d is None else ast.literal_eval(d)))
    if a.vararg:
        out.append((a.vararg.arg, "VAR_POSITIONAL", None))
    for arg, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append((arg.arg, "KEYWORD_ONLY", None if d is None else ast.literal_eval(d)))
    if a.kwarg:
        out.append((a.kwarg.arg, "VAR_KEYWORD", None))
    decorators = {getattr(d, "id", None) for d in fn.decorator_list}
    if is_method and "staticmethod" not in decorators:
        out = out[1:]
    return out


def _runtime_params(obj):
    sig = inspect.signature(obj)
    out = []
    for p in sig.parameters.values():
        kind = p.kind.name
        if kind == "POSITIONAL_ONLY":
            kind = "POSITIONAL_OR_KEYWORD"
        out.append((p.name, kind, None if p.default is inspect.Parameter.empty else p.default))
    return out


def test_stub_matches_module():
    tree = ast.parse(STUB.read_text())
    stub_names = set()
    checked = 0
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stub_names.add(node.name)
            assert hasattr(turnfit, node.name), node.name
            assert _stub_params(node, False) == _runtime_params(getattr(turnfit, node.name)), node.name
            checked += 1
        elif isinstance(node, ast.ClassDef):
            stub_names.add(node.name)
            cls = getattr(turnfit, node.name)
            assert isinstance(cls, type), node.name
            stub_members = set()
            for m in node.body:
                if not isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                stub_members.add(m.name)
                rt = inspect.getattr_static(cls, m.name)
                decorators = {getattr(d, "id", None) for d in m.decorator_list}
                if "property" in decorators:
                    assert not callable(rt) or isinstance(rt, property), f"{node.name}.{m.name} is not a property"
                    continue
                if m.name == "__init__" and not hasattr(cls.__init__, "__code__"):
                    target = cls  # native class: the constructor's signature is the class's
                    params = _runtime_params(target)
                else:
                    params = _runtime_params(getattr(cls, m.name))
                    if "staticmethod" not in decorators and not isinstance(rt, staticmethod) and params and params[0][0] == "self":
                        params = params[1:]
                stub = _stub_params(m, True)
                # PyO3 shows a default that is not a literal as `...`.
                params = [(n, k, sd if d is Ellipsis else d) for (n, k, d), (_, _, sd) in zip(params, stub + [(None,) * 3] * len(params))]
                assert stub == params, f"{node.name}.{m.name}"
                checked += 1
            public = {n for n in dir(cls) if not n.startswith("_") and n not in ("kind", "args", "with_traceback", "add_note")}
            annotated = {t.target.id for t in node.body if isinstance(t, ast.AnnAssign)}
            missing = public - stub_members - annotated
            assert not missing, f"{node.name}: not in the stub: {missing}"
    assert set(turnfit.__all__) <= stub_names, set(turnfit.__all__) - stub_names
    assert checked > 60
