"""The sdist's PEP 517 backend: maturin's, after a check that Rust is there.

Building the sdist compiles turnfit's Rust core. Without cargo, maturin's own
backend asks pip for `puccinialin` and downloads a Rust toolchain at build time;
offline or behind a proxy that ends in a long download traceback that names
neither Rust nor the way out. This module fails first instead, with one message
that says what to install (or to take the wheel, which needs no Rust). Set
MATURIN_NO_INSTALL_RUST=0 to let maturin download Rust as it would by default.
Everything else is maturin's backend unchanged.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import maturin
from maturin import *  # noqa: F401,F403  (every hook maturin defines)

MESSAGE = """
turnfit: building from the source distribution needs Rust {need} (cargo and rustc on PATH),
and {why}.

  - Install Rust: https://rustup.rs (rustup installs cargo and rustc into ~/.cargo/bin), or
    your system's packages if they are new enough (Debian/Ubuntu: apt install cargo rustc;
    Fedora: dnf install cargo; Alpine: apk add cargo), then run the install again.
  - Or install a prebuilt wheel instead, where there is one for this platform (no Rust
    needed, one abi3 wheel for every CPython >= 3.9): pip install --only-binary turnfit turnfit

(MATURIN_NO_INSTALL_RUST=0 lets maturin download a Rust toolchain itself during the build.)
"""


def _rust_version() -> str:
    """The workspace's rust-version from the sdist's Cargo.toml (the build runs in its root)."""
    try:
        with open("Cargo.toml", encoding="utf-8") as f:
            m = re.search(r'^rust-version\s*=\s*"([^"]+)"', f.read(), re.M)
    except OSError:
        m = None
    return f">= {m.group(1)}" if m else "(the rust-version in Cargo.toml)"


def _need_rust() -> None:
    if os.environ.get("MATURIN_NO_INSTALL_RUST") == "0":
        os.environ.pop("MATURIN_NO_INSTALL_RUST")
        return
    # maturin's hooks download Rust unless this is set; with it they only fail.
    os.environ["MATURIN_NO_INSTALL_RUST"] = "1"
    cargo = shutil.which("cargo")
    if cargo is None:
        why = "cargo was not found on PATH"
    else:
        try:
            out = subprocess.run([cargo, "--version"], capture_output=True, text=True, check=True).stdout
        except (OSError, subprocess.SubprocessError) as e:
            why = f"{cargo} --version failed ({e})"
        else:
            if out.startswith("cargo "):
                return
            why = f"{cargo} --version printed {out.strip()!r}"
    sys.stderr.write(MESSAGE.format(need=_rust_version(), why=why))
    sys.exit(1)


def get_requires_for_build_wheel(config_settings=None):
    _need_rust()
    return maturin.get_requires_for_build_wheel(config_settings)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    _need_rust()
    return maturin.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _need_rust()
    return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    _need_rust()
    return maturin.build_editable(wheel_directory, config_settings, metadata_directory)
