"""Validates JSON documents against the committed schemas/ (issue 14).

- every fenced example in docs/formats.md that is marked with its schema
  (a line `<!-- schema: NAME -->` right before the fence; `NAME.json` must
  exist under schemas/; `NAME (one element)` for one element of an array
  shape; `NAME (one per line)` for JSON Lines, each line one document), and every ```json fence that is not checked must say why with
  `<!-- schema: none (reason) -->`, so no example goes unchecked silently;
- every conformance vector's inputs and expectations (tests/vectors/*.json)
  that are JSON shapes of the ABI, per the table OPS below;
- a self-test: a document known to be invalid must be rejected by each of a
  few schemas, so the check can fail.

Vectors' expectations are subsets of the outputs (the runners compare only
the keys a vector gives), so they are validated with `required` dropped;
every other keyword (types, enums, ranges, unknown keys where a type refuses
them) applies. Inputs of vectors that expect an error are skipped: many are
malformed on purpose.

Prints `schemas: N documents valid` and exits 1 on the first report of any
failure (all failures are listed).
"""

import copy
import glob
import json
import os
import re
import sys

import jsonschema
import referencing

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# op -> list of (where in the vector, schema name). "input.x" / "expected"
# / "expected.x"; a missing or null value is skipped (optional inputs).
OPS = {
    "count_conversation": [("input.conversation", "conversation")],
    "preflight": [("input.conversation", "conversation"), ("input.budget", "window-budget"),
                  ("expected", "preflight-report")],
    "repair": [("input.conversation", "conversation"), ("expected.conversation", "conversation"),
               ("expected.changes", "repair-changes"), ("expected.issues", "validation-issues")],
    "fit": [("input.conversation", "conversation"), ("input.options", "fit-options"),
            ("expected.conversation", "conversation"), ("expected.report", "fit-report")],
    # Handoff inputs are not checked: the parser also takes camelCase names
    # and fills defaults (handoff/mod.rs), so the output type's schema is
    # stricter than what it reads; there is no input type to derive one from.
    "handoff_validate": [("expected", "handoff")],
    "handoff_render": [("input.options", "handoff-render-options"),
                       ("expected", "handoff-render-result")],
    "handoff_filter": [("input.conversation", "conversation"), ("input.options", "handoff-filter-options"),
                       ("expected", "handoff-filter-result")],
    "skills_list": [("input.options", "skills-open-options"), ("expected", "skills-list")],
    "skills_body": [("input.options", "skills-open-options"), ("expected", "skill-body")],
    "skills_index": [("input.options", "skills-open-options"), ("input.index_options", "skills-index-options"),
                     ("expected", "skills-index")],
    "classify": [("input.headers", "classify-headers"), ("expected", "classification")],
    "backoff": [("input", "backoff-request"), ("expected", "backoff-decision")],
    "breaker": [("input.config", "breaker-config")],
    "callstack": [("expected", "callstack")],
    "trace": [("input.config", "tracer-config")],
    "toolset": [("input.request", "toolset-request")],
    "model_lookup": [("expected", "model-info")],
    "assemble": [("input.request", "assemble-request"), ("expected", "assemble-result")],
}
# Ops whose vectors hold no JSON shape of the ABI (token ids, text, counts).
NO_SHAPE = {"encode", "decode", "count_until_limit", "truncate", "count", "encode_special",
            "decode_with_offsets", "token_bytes", "encode_bytes", "special_tokens",
            # Tokenizers from a file: text in, ids or text out, no JSON shape.
            "file_encode", "file_decode"}


def load_schemas():
    schemas = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "schemas", "*.json"))):
        with open(path, encoding="utf-8") as f:
            schemas[os.path.basename(path)[:-5]] = json.load(f)
    return schemas


def relaxed(schema):
    """The schema with every `required` dropped (for partial expectations)."""
    s = copy.deepcopy(schema)

    def walk(v):
        if isinstance(v, dict):
            v.pop("required", None)
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(s)
    return s


def validator(schema):
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=None)


def errors(schema, doc):
    return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message[:300]}"
            for e in validator(schema).iter_errors(doc)]


def pick(case, where):
    v = case
    for part in where.split("."):
        if not isinstance(v, dict) or part not in v:
            return None
        v = v[part]
    return v


def check_vectors(schemas, fail):
    n = 0
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "vectors", "*.json"))):
        if path.endswith(".cases.json"):
            continue  # the same inputs are in the generated file beside it
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        name = os.path.relpath(path, ROOT)
        for case in doc.get("vectors", []):
            op = case.get("op")
            if op in NO_SHAPE:
                continue
            if op not in OPS:
                fail(f"{name} {case.get('name')}: op {op!r} has no entry in OPS (add its shapes or list it in NO_SHAPE)")
                continue
            is_error = isinstance(case.get("expected"), dict) and "error" in case["expected"]
            for where, schema_name in OPS[op]:
                if is_error:
                    continue
                value = pick(case, where)
                if value is None:
                    continue
                schema = schemas[schema_name]
                if where.startswith("expected"):
                    schema = relaxed(schema)
                for e in errors(schema, value):
                    fail(f"{name} {case['name']} {where} vs schemas/{schema_name}.json: {e}")
                n += 1
    return n


MARK = re.compile(r"^<!-- schema: ([a-z0-9-]+(?: \(one element\)| \(one per line\))?|none \(.+\)) -->$")


def check_formats(schemas, fail):
    path = os.path.join(ROOT, "docs", "formats.md")
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    n = 0
    i = 0
    while i < len(lines):
        if lines[i].startswith("```json"):
            start = i
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            body = "\n".join(lines[start + 1:j])
            k = start - 1
            while k >= 0 and lines[k].strip() == "":
                k -= 1
            m = MARK.match(lines[k].strip()) if k >= 0 else None
            where = f"docs/formats.md:{start + 1}"
            if not m:
                fail(f"{where}: ```json example without a `<!-- schema: NAME -->` line before it")
            elif not m.group(1).startswith("none"):
                name = m.group(1)
                one = name.endswith(" (one element)")
                per_line = name.endswith(" (one per line)")
                name = name.removesuffix(" (one element)").removesuffix(" (one per line)")
                docs = [line for line in body.split("\n") if line.strip()] if per_line else [body]
                if name not in schemas:
                    fail(f"{where}: schema {name!r} does not exist under schemas/")
                else:
                    for text in docs:
                        try:
                            doc = json.loads(text)
                        except ValueError as e:
                            fail(f"{where}: example is not JSON: {e}")
                        else:
                            for e in errors(schemas[name], [doc] if one else doc):
                                fail(f"{where} vs schemas/{name}.json: {e}")
                            n += 1
            i = j + 1
        else:
            i += 1
    return n


def self_test(schemas, fail):
    """Documents each schema must refuse: the check can fail."""
    bad = [
        ("fit-options", {"max_tokens": "many"}),
        ("fit-options", {"no_such_option": 1}),
        ("window-budget", {"context_window": -1}),
        ("conversation", {"messages": "not an array"}),
        ("backoff-request", {"policy": {}}),  # failed_attempts is required
        ("model-info", {"model": "x", "encoding": "no_such_encoding"}),
    ]
    for name, doc in bad:
        if not errors(schemas[name], doc):
            fail(f"self-test: schemas/{name}.json accepted an invalid document {json.dumps(doc)}")
    return len(bad)


def main():
    schemas = load_schemas()
    if not schemas:
        print("schemas: no schemas/*.json found")
        return 1
    problems = []
    for name, s in schemas.items():
        try:
            validator(s)
        except jsonschema.SchemaError as e:
            problems.append(f"schemas/{name}.json is not a valid schema: {e.message}")
        if s.get("$id") != f"https://example.invalid/turnfit/schemas/{name}.json":
            problems.append(f"schemas/{name}.json: $id does not name the file")
    refused = self_test(schemas, problems.append)
    vectors = check_vectors(schemas, problems.append)
    examples = check_formats(schemas, problems.append)
    for p in problems:
        print("FAIL:", p)
    print(f"schemas: {len(schemas)} schemas; {vectors} vector documents and {examples} docs/formats.md "
          f"examples checked; {refused} invalid documents refused; {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
