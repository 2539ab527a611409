#!/usr/bin/env python3
"""The import graph between core's top-level modules has no cycle (issue 24).

Reads every non-test source file under core/src, takes each `crate::<module>`
path (in `use` lines and inline paths, comments stripped) as an edge from the
file's top-level module to <module>, and fails naming any cycle. With
`--print` it prints the graph.

The types events carry live in `events::payload`, below the modules that
emit them, so `events` imports none of its emitters; nothing is exempt.
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "core", "src")



def modules():
    names = set()
    for n in os.listdir(ROOT):
        p = os.path.join(ROOT, n)
        if n.endswith(".rs") and n != "lib.rs":
            names.add(n[:-3])
        elif os.path.isdir(p):
            names.add(n)
    return names


def source(path):
    text = open(path, encoding="utf-8").read()
    # Inline unit tests may use anything; they are not part of the house.
    cut = re.search(r"#\[cfg\(test\)\]\s*mod tests\s*\{", text)
    if cut:
        text = text[: cut.start()]
    return re.sub(r"//[^\n]*", "", text)


def graph(names):
    edges = {n: set() for n in names}
    for dirpath, _, files in os.walk(ROOT):
        for f in files:
            rel = os.path.relpath(os.path.join(dirpath, f), ROOT)
            if not f.endswith(".rs") or f == "tests.rs" or "/tests/" in "/" + rel:
                continue
            top = rel.split(os.sep)[0].removesuffix(".rs")
            if top == "lib":
                continue
            text = source(os.path.join(dirpath, f))
            found = set(re.findall(r"\bcrate::(\w+)", text))
            for group in re.findall(r"\buse crate::\{([^}]*)\}", text):
                found.update(re.findall(r"\b(\w+)\b", group))
            edges[top].update(t for t in found if t in names and t != top)
    return edges


def cycles(edges):
    state, stack, out = {}, [], []

    def visit(u):
        state[u] = 1
        stack.append(u)
        for v in sorted(edges[u]):
            if state.get(v) == 1:
                out.append(stack[stack.index(v) :] + [v])
            elif v not in state:
                visit(v)
        stack.pop()
        state[u] = 2

    for u in sorted(edges):
        if u not in state:
            visit(u)
    return out


def main():
    edges = graph(modules())
    if "--print" in sys.argv:
        for k in sorted(edges):
            print(f"{k} -> {', '.join(sorted(edges[k])) or '-'}")
    found = cycles(edges)
    if found:
        sys.exit("module-graph: import cycles between core modules: " + "; ".join(" -> ".join(c) for c in found))
    print(f"core module graph: {len(edges)} top-level modules, no import cycle")


if __name__ == "__main__":
    main()
