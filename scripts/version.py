#!/usr/bin/env python3
"""The one version of every package, and the check that nothing drifted from it.

The version is set in one place: `version` under `[workspace.package]` in the
root Cargo.toml. Every Rust crate inherits it (`version.workspace = true`),
the C library reports it (turnfit_version(), ffi/src/version.rs checks its
macros against it), maturin reads it for the wheel (pyproject.toml's
`dynamic = ["version"]`), and scripts/dist.sh writes it into the POM and
turnfit.pc. The files below carry a copy because their tools read no
Cargo.toml; `--sync` rewrites them, `--check` fails when one differs.

  python3 scripts/version.py            # print the version
  python3 scripts/version.py --check    # exit 1, naming each file that drifted
  python3 scripts/version.py --sync     # rewrite the copies from Cargo.toml
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def workspace_version() -> str:
    text = (ROOT / "Cargo.toml").read_text()
    m = re.search(r'^\[workspace\.package\]\s*$(.*?)^\[', text, re.S | re.M)
    if not m:
        sys.exit("Cargo.toml: no [workspace.package] table")
    v = re.search(r'^version\s*=\s*"([^"]+)"', m.group(1), re.M)
    if not v:
        sys.exit("Cargo.toml: no version in [workspace.package]")
    return v.group(1)


class Copy:
    """One place that repeats the version: how to read it and rewrite it."""

    def __init__(self, path: str, pattern: str, desc: str):
        self.path = ROOT / path
        self.rel = path
        self.re = re.compile(pattern, re.M)
        self.desc = desc

    def read(self) -> list[str]:
        return [m.group(2) for m in self.re.finditer(self.path.read_text())]

    def write(self, version: str) -> None:
        text = self.path.read_text()
        new = self.re.sub(lambda m: m.group(1) + version + m.group(3), text)
        if new != text:
            self.path.write_text(new)


def copies() -> list[Copy]:
    out = [
        Copy("Cargo.toml", r'^(turnfit = \{ path = "core", version = ")([^"]+)(")', "the core's workspace dependency"),
        Copy("bindings/node/package.json", r'^(  "version": ")([^"]+)(")', "npm package turnfit"),
        Copy("bindings/haskell/turnfit.cabal", r'^(version:\s+)(\S+)()$', "cabal package turnfit"),
        # napi-rs's generated loader compares the platform package's version
        # with its own (bindings/node/scripts/binding.mjs regenerates it).
        Copy("bindings/node/binding.js", r"(bindingPackageVersion !== ')([^']+)(')", "the Node loader's check"),
        Copy("bindings/node/binding.js", r"(mismatch, expected )([0-9][^ ]*)( but)", "the Node loader's message"),
    ]
    for pj in sorted((ROOT / "bindings/node/npm").glob("*/package.json")):
        rel = str(pj.relative_to(ROOT))
        out.append(Copy(rel, r'^(  "version": ")([^"]+)(")', f"npm package {json.loads(pj.read_text())['name']}"))
    return out


def lock_versions() -> list[str]:
    """bindings/node/package-lock.json names the root package's version twice."""
    lock = json.loads((ROOT / "bindings/node/package-lock.json").read_text())
    return [lock.get("version", ""), lock.get("packages", {}).get("", {}).get("version", "")]


def sync_lock(version: str) -> None:
    path = ROOT / "bindings/node/package-lock.json"
    text = path.read_text()
    # Only the first two "version" keys are the root package's (top level and packages[""]).
    n = 0

    def sub(m: re.Match[str]) -> str:
        nonlocal n
        n += 1
        return m.group(1) + version + m.group(3) if n <= 2 else m.group(0)

    path.write_text(re.sub(r'("version": ")([^"]+)(")', sub, text))


def abi_macros() -> str:
    src = (ROOT / "ffi/src/version.rs").read_text()
    parts = [re.search(rf"TURNFIT_VERSION_{k}: u32 = (\d+);", src) for k in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(p.group(1) if p else "?" for p in parts)


def main() -> int:
    version = workspace_version()
    args = sys.argv[1:]
    if not args:
        print(version)
        return 0
    if args == ["--sync"]:
        for c in copies():
            c.write(version)
        sync_lock(version)
        print(f"version {version} written to every copy")
        # ffi/src/version.rs's macros are C ABI constants: edited by hand
        # (its unit test fails when they differ from Cargo.toml).
        if abi_macros() != version:
            print(f"note: ffi/src/version.rs says {abi_macros()}: edit TURNFIT_VERSION_* by hand (a contract change)")
        return 0
    if args != ["--check"]:
        print(__doc__)
        return 2
    drift = []
    for c in copies():
        found = c.read()
        if not found:
            drift.append(f"{c.rel}: no version found ({c.desc})")
        for v in found:
            if v != version:
                drift.append(f"{c.rel}: {v} ({c.desc})")
    for v in lock_versions():
        if v != version:
            drift.append(f"bindings/node/package-lock.json: {v or 'missing'} (root package)")
    if abi_macros() != version:
        drift.append(f"ffi/src/version.rs: TURNFIT_VERSION_MAJOR/MINOR/PATCH say {abi_macros()}")
    if drift:
        print(f"version drift: Cargo.toml [workspace.package] says {version}, but")
        for d in drift:
            print(f"  {d}")
        print("fix: python3 scripts/version.py --sync (and ffi/src/version.rs by hand)")
        return 1
    print(f"version {version}: Cargo.toml, {len(copies())} copies (package manifests, loader), package-lock.json and ffi/src/version.rs agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
