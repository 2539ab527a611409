"""Generates python/turnfit/schema_types.pyi, the TypedDicts of the JSON shapes
the Python binding passes as dicts (options, reports, events), from the
committed JSON Schemas in schemas/ (themselves generated from the core's
types), so the stubs do not restate them by hand. `--check` fails when the
committed file differs (the drift check of bindings/python/test.sh).

A stub-only module: type checkers read it (`from turnfit.schema_types import
FitReport` under `typing.TYPE_CHECKING`); at run time the values are plain
dicts. Stubs may use typing_extensions (NotRequired) on every Python the
wheel supports, since a type checker, not the interpreter, reads them.

Mapping: an object with properties is a TypedDict (functional syntax, so keys
like `from` work; keys not in `required` are NotRequired); a oneOf/anyOf of
objects is a Union of TypedDicts named after their tag (`status`, `kind`);
enum/const are Literal; a nested object without a name is Dict[str, Any].
An unknown keyword makes it fail, not guess (the same rule as the Node
generator, bindings/node/scripts/schema-types.mjs).
"""

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
OUT = HERE.parent / "python" / "turnfit" / "schema_types.pyi"

# schema file stem -> the name of its root type (the Node binding's names).
ROOTS = {
    "window-budget": "Budget",
    "preflight-report": "Preflight",
    "validation-issues": "Issues",
    "repair-changes": "Changes",
    "compaction-policy": "Policy",
    "compact-result": "CompactOutcome",
    "compact-report": "CompactReport",
    "fit-options": "FitOptions",
    "fit-report": "FitReport",
    "turn-report": "TurnReport",
    "summarizer-call": "SummarizerCall",
    "assemble-request": "AssembleRequest",
    "assemble-result": "AssembleResult",
    "event": "Event",
    "file-tokenizer-info": "FileTokenizerInfo",
}

KNOWN = {
    "$schema", "$id", "title", "description", "type", "properties", "required", "$ref", "$defs",
    "anyOf", "oneOf", "allOf", "enum", "const", "items", "additionalProperties", "format", "minimum",
    "maximum", "default", "minItems", "maxItems", "uniqueItems", "examples", "deprecated",
}


class Gen:
    def __init__(self):
        self.decls = {}  # name -> text
        self.defs = {}  # name -> schema (for $ref merging)

    def declare(self, name, text):
        if name in self.decls and self.decls[name] != text:
            raise SystemExit(f"schema_types: two schemas define {name} differently")
        self.decls[name] = text

    def ref_name(self, ref):
        prefix = "#/$defs/"
        if not ref.startswith(prefix):
            raise SystemExit(f"schema_types: $ref {ref} is not local")
        return ref[len(prefix):]

    def check(self, s):
        for k in s:
            if k not in KNOWN:
                raise SystemExit(f"schema_types: schema keyword {k} is not handled")

    def ty(self, s, hint):
        """The Python type of schema `s`; `hint` names a variant if one is needed."""
        if s is True or s == {}:
            return "Any"
        if s is False:
            return "NoReturn"
        self.check(s)
        if "$ref" in s and "properties" not in s:
            return self.ref_name(s["$ref"])
        if "const" in s:
            return f"Literal[{json.dumps(s['const'])}]"
        if "enum" in s:
            vals = [v for v in s["enum"] if v is not None]
            lit = f"Literal[{', '.join(json.dumps(v) for v in vals)}]"
            return f"Optional[{lit}]" if None in s["enum"] else lit
        alts = s.get("anyOf") or s.get("oneOf")
        if alts:
            return self.union([self.variant(a, hint, i) for i, a in enumerate(alts)])
        if "allOf" in s:
            if len(s["allOf"]) == 1:
                return self.ty(s["allOf"][0], hint)
            return "Dict[str, Any]"
        t = s.get("type")
        if isinstance(t, list):
            return self.union([self.ty({**s, "type": x}, hint) for x in t])
        if t == "string":
            return "str"
        if t == "integer":
            return "int"
        if t == "number":
            return "float"
        if t == "boolean":
            return "bool"
        if t == "null":
            return "None"
        if t == "array":
            return f"List[{self.ty(s.get('items', True), hint)}]"
        if t == "object" or t is None and "properties" in s:
            if "properties" in s and hint:
                return self.typed_dict(hint, s)
            extra = s.get("additionalProperties")
            if "properties" not in s and isinstance(extra, dict):
                return f"Dict[str, {self.ty(extra, None)}]"
            return "Dict[str, Any]"
        if t is None:
            return "Any"
        raise SystemExit(f"schema_types: type {t} is not handled")

    def union(self, parts):
        flat = []
        for p in parts:
            if p not in flat:
                flat.append(p)
        if "None" in flat and len(flat) == 2:
            other = flat[0] if flat[1] == "None" else flat[1]
            return f"Optional[{other}]"
        return flat[0] if len(flat) == 1 else f"Union[{', '.join(flat)}]"

    def variant(self, s, hint, i):
        """One alternative of a oneOf/anyOf: an object variant gets its own name."""
        if isinstance(s, dict) and s.get("type") == "object" and "properties" in s and hint:
            tag = next((v["const"] for v in s["properties"].values() if isinstance(v, dict) and "const" in v), None)
            suffix = "".join(w.capitalize() for w in str(tag).split("_")) if tag is not None else str(i)
            return self.typed_dict(f"{hint}{suffix}", s)
        return self.ty(s, None)

    def fields(self, s):
        """Properties and required names, with a `$ref` beside them merged in."""
        props = dict(s.get("properties", {}))
        required = set(s.get("required", []))
        if "$ref" in s:
            base = self.defs[self.ref_name(s["$ref"])]
            base_props, base_req = self.fields(base)
            props = {**base_props, **props}
            required |= base_req
        return props, required

    def typed_dict(self, name, s):
        props, required = self.fields(s)
        lines = []
        for key, p in props.items():
            t = self.ty(p, None)
            lines.append(f"        {json.dumps(key)}: {t if key in required else f'NotRequired[{t}]'},")
        doc = (s.get("description") or "").split("\n\n")[0].replace("\n", " ").strip()
        head = f"# {doc}\n" if doc else ""
        body = "\n".join(lines)
        self.declare(name, f'{head}{name} = TypedDict(\n    "{name}",\n    {{\n{body}\n    }},\n)\n')
        return name


def generate():
    g = Gen()
    roots = []
    for stem, root in ROOTS.items():
        schema = json.loads((ROOT / "schemas" / f"{stem}.json").read_text(encoding="utf-8"))
        defs = schema.get("$defs", {})
        for name, d in defs.items():
            if name in g.defs and g.defs[name] != d:
                raise SystemExit(f"schema_types: two schemas define {name} differently (schemas/{stem}.json)")
            g.defs[name] = d
        for name, d in defs.items():
            if name in ROOTS.values():
                continue  # declared as a root
            t = g.ty(d, name)
            if t != name:
                g.declare(name, f"{name} = {t}\n")
        top = {k: v for k, v in schema.items() if k != "$defs"}
        t = g.ty(top, root)
        if t != root:
            g.declare(root, f"# schemas/{stem}.json\n{root} = {t}\n")
        roots.append(root)
    out = [
        "# Generated by bindings/python/scripts/schema_types.py from schemas/*.json",
        "# (which xtask generates from the core's types). Do not edit; run",
        "# `python3 bindings/python/scripts/schema_types.py` and commit the result.",
        "",
        "from typing import Any, Dict, List, Literal, NoReturn, Optional, Union",
        "",
        "from typing_extensions import NotRequired, TypedDict",
        "",
        f"__all__ = {json.dumps(sorted(g.decls))}",
        "",
    ]
    for name in sorted(g.decls):
        out.append(g.decls[name])
    return "\n".join(out)


def main():
    fresh = generate()
    if "--check" in sys.argv[1:]:
        committed = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if committed != fresh:
            print("schema_types.pyi is out of date with schemas/; run `python3 bindings/python/scripts/schema_types.py` and commit it", file=sys.stderr)
            sys.exit(1)
        print("schema_types.pyi matches schemas/")
    else:
        OUT.write_text(fresh, encoding="utf-8")
        print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
