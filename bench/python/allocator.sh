#!/usr/bin/env bash
# The Python wheel's allocator (docs/benchmarks.md, "the allocator measured
# alone"): builds the release wheel twice, with mimalloc (the default
# feature) and without (`--no-default-features`: glibc's malloc), each into
# a venv of its own, then runs bench/python/fit_alone.py with each build in
# turn, ROUNDS_LIST transcripts, REPEAT sittings, and the peak RSS of one
# 9,700-round process per build.
#
#   bash bench/python/allocator.sh [RUNS] [REPEAT]     # default 5 calls, 2 sittings
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
runs=${1:-5}
repeat=${2:-2}
maturin_pin=$(grep -i '^maturin==' bindings/python/requirements-test.txt)
for build in mimalloc glibc; do
    venv=$root/target/python/venv-alloc-$build
    [ -x "$venv/bin/maturin" ] || { python3 -m venv "$venv" && "$venv/bin/pip" install -q "$maturin_pin"; }
    flags=(); [ "$build" = glibc ] && flags=(--no-default-features)
    rm -rf "target/python/wheels-alloc-$build"
    CARGO_TARGET_DIR=$root/target "$venv/bin/maturin" build --release --locked -q "${flags[@]}" \
        --manifest-path bindings/python/Cargo.toml --out "target/python/wheels-alloc-$build" --interpreter "$venv/bin/python"
    "$venv/bin/pip" install -q --no-index --no-deps --force-reinstall target/python/wheels-alloc-$build/turnfit-*.whl
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= repeat; r++)); do
    for rounds in 9700 2700; do
        for build in glibc mimalloc; do
            printf '%-8s ' "$build"
            "$root/target/python/venv-alloc-$build/bin/python" bench/python/fit_alone.py "$rounds" "$runs"
        done
    done
done
for build in glibc mimalloc; do
    /usr/bin/time -f "$build: peak RSS %M KiB (9700 rounds, 3 calls)" \
        "$root/target/python/venv-alloc-$build/bin/python" bench/python/fit_alone.py 9700 3 >/dev/null
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
