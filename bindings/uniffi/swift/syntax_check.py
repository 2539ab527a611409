"""A Swift syntax check for the machines without a Swift compiler: parses
each file with tree-sitter's Swift grammar (PyPI `tree-sitter-swift`, pinned
in syntax-requirements.txt) and fails on any ERROR or MISSING node, printing
file:line:column. It checks syntax only (no types, no name resolution), and
only on the Swift this repository writes (SchemaTypes.swift, Facade.swift,
the tests, examples/swift): uniffi's generated Turnfit.swift uses
underscored attributes (`@_documentation(visibility:)`) the grammar lacks.

    python syntax_check.py FILE.swift...
"""
import sys

import tree_sitter
import tree_sitter_swift


def errors(parser, src):
    out = []
    stack = [parser.parse(src).root_node]
    while stack:
        n = stack.pop()
        if n.type == "ERROR" or n.is_missing:
            out.append(n)
        stack.extend(n.children)
    return sorted(out, key=lambda n: n.start_point)


def main(paths):
    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_swift.language()))
    # The check can fail: a declaration without its colon must be refused.
    if not errors(parser, b"struct S { var x Int }"):
        print("syntax_check: the grammar accepted an invalid declaration")
        return 1
    bad = 0
    for path in paths:
        src = open(path, "rb").read()
        errs = errors(parser, src)
        lines = src.split(b"\n")
        for n in errs[:10]:
            row, col = n.start_point
            what = f"missing {n.type}" if n.is_missing else "syntax error"
            print(f"{path}:{row + 1}:{col + 1}: {what}: {lines[row].decode(errors='replace').strip()[:100]}")
        bad += len(errs)
    print(f"swift syntax (tree-sitter-swift): {len(paths)} files, {bad} errors")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
