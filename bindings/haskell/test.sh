#!/usr/bin/env bash
# The Haskell binding's suite (run by scripts/test.sh): checks Raw.hs against
# include/turnfit.h, builds the cabal package offline against Debian's GHC
# packages, and runs the hspec suite against target/debug/libturnfit.so as
# `make install` places it (found through pkg-config).
# Without GHC and not root (so nothing can be installed): prints SKIPPED: and
# exits 0.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
pkg=bindings/haskell

debs=(ghc cabal-install libghc-hspec-dev libghc-quickcheck2-dev libghc-aeson-dev libghc-monad-logger-dev)
missing=()
for d in "${debs[@]}"; do
    dpkg-query -W -f='${Status}' "$d" 2>/dev/null | grep -q 'install ok installed' || missing+=("$d")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "installing ${missing[*]} with apt-get"
        apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    else
        echo "SKIPPED: Haskell binding suite: ${missing[*]} not installed and not root (apt-get install -y --no-install-recommends ${debs[*]})"
        exit 0
    fi
fi
command -v python3 >/dev/null || { echo "python3 is needed for the Raw.hs drift check"; exit 1; }

python3 "$pkg/gen_raw.py" --check

if [ ! -e target/debug/libturnfit.so ]; then
    echo "target/debug/libturnfit.so missing: cargo build -p turnfit-ffi --locked"
    cargo build -p turnfit-ffi --locked
fi

# cabal, offline, with a config that names no repository: only the global
# package database (Debian's libghc-*-dev) is used; Hackage is never asked.
export CABAL_DIR="$root/target/haskell/cabal"
mkdir -p "$CABAL_DIR"
printf 'offline: True\n' > "$CABAL_DIR/config"
# The package finds libturnfit through pkg-config (pkgconfig-depends:
# turnfit): the C install step (scripts/install.sh, `make install`) puts the
# debug build, its SONAME links and turnfit.pc under target/haskell/prefix.
prefix=$root/target/haskell/prefix
bash "$root/scripts/install.sh" "$prefix" >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cd "$pkg"
cabal_args=(--offline --builddir="$root/target/haskell/dist")
log="$root/target/haskell/build.log"
if ! cabal "${cabal_args[@]}" build all >"$log" 2>&1; then
    cat "$log"; echo "cabal build failed"; exit 1
fi
grep -A6 'warning: \[-W' "$log" || true  # GHC warnings only
cabal "${cabal_args[@]}" test --test-show-details=direct --test-options='--format=failed-examples'

# Seed document 004's scenario in Haskell (examples/seeds/004-haskell-framework,
# run by examples/seeds/run-all.sh after this suite): the binary is copied
# where run.sh looks for it (TURNFIT_HASKELL_SEED overrides).
mkdir -p "$root/target/haskell/bin"
cp "$(cabal "${cabal_args[@]}" list-bin seed-004)" "$root/target/haskell/bin/seed-004"

echo "examples/haskell/AgentLoop.hs (agent-loop):"
out=$("$(cabal "${cabal_args[@]}" list-bin agent-loop)")
echo "$out"
grep -q 'refused (TURNFIT_STATUS_CYCLE_DETECTED)' <<<"$out" || { echo "agent-loop: the call stack did not stop the cycle"; exit 1; }
grep -q 'summary applied' <<<"$out" || { echo "agent-loop: no summary was applied"; exit 1; }
