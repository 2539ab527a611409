#!/usr/bin/env bash
# `make dist-cross`: the packages for other Linux targets, linked with Zig
# (ziglang and cargo-zigbuild from PyPI, scripts/cross-requirements.txt; the
# Rust standard library of each target through `rustup target add`; maturin
# and auditwheel from bindings/python/requirements-dist.txt), into
# dist/cross/<target>/, each checked by its ELF headers and run where this
# x86-64 machine can run it (scripts/cross/run.sh):
#
#   aarch64-unknown-linux-gnu   the manylinux2014 aarch64 wheel, the npm
#       platform package turnfit-linux-arm64-gnu, the C tarball
#       (turnfit-V-linux-aarch64.tar.gz: libturnfit.so and .a), the JNA
#       natives jar (linux-aarch64/libturnfit_uniffi.so; added to
#       dist/cross/jvm/turnfit-V.jar when `make dist` made dist/jvm's jar):
#       each AArch64, glibc symbols <= 2.17 (zig links against that glibc).
#       Run under qemu-aarch64 in a root of Debian's arm64 packages: the C
#       library (a C program built with zig), the wheel (Debian's arm64
#       CPython), the .node (Node.js arm64 from npm) and the jar (Debian's
#       arm64 OpenJDK 17, scripts/cross/jvm-arm64.sh), each compared with
#       this machine's count and fit.
#   x86_64-unknown-linux-musl   libturnfit.a and the turnfit CLI, static (no
#       INTERP, no NEEDED), run here on the agent loop and compared with the
#       glibc CLI's report; and, built with -crt-static off (a dynamic musl
#       libc, which Python, Node and dlopen need) in target/cross/musl-dynamic:
#       the musllinux_1_2 wheel, the npm platform package turnfit-linux-x64-musl
#       and the C tarball's libturnfit.so (turnfit-V-linux-x86_64-musl.tar.gz),
#       each needing musl's libc.so and nothing of glibc. The C library is run
#       by Debian's musl loader; the wheel (pip-installed into a CPython built
#       here with musl-gcc) and the .node (under Bun's musl build: Node-API,
#       not Node.js, of which no musl build comes from Debian or npm) run
#       every file of tests/vectors and the fit in a chroot of musl
#       (scripts/cross/musl-root.sh).
#
# Not a suite of `make test` (nor of CI, whose run has 40 minutes): each
# target compiles the core and its dependencies from scratch (several minutes
# of CPU each on two cores) in target/cross, a cache of its own. Debug builds
# like the rest of dist/ unless PROFILE=release. The runs need root for
# apt-get (qemu-user, Debian's arm64 and musl packages), chroot and unshare,
# and npm; without them the package is ELF-checked only and
# dist/cross/MANIFEST says why. CROSS_CHECK_ONLY=1 builds nothing and runs
# the checks again on what dist/cross holds.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$root/dist/cross
profile=${PROFILE:-debug}
targets=(${CROSS_TARGETS:-aarch64-unknown-linux-gnu x86_64-unknown-linux-musl})
start=$SECONDS

command -v rustup >/dev/null || { echo "rustup is needed to add the targets' standard libraries"; exit 1; }
# venv DIR REQUIREMENTS: a venv with those pinned requirements (remade when
# the file changes), as scripts/dist.sh makes the same two.
venv() {
    local stamp; stamp="$1/.requirements-$(sha256sum "$2" | cut -c1-16)"
    if [ ! -e "$stamp" ]; then
        rm -rf "$1" && python3 -m venv "$1"
        "$1/bin/pip" install -q --disable-pip-version-check -r "$2"
        touch "$stamp"
    fi
}
venv "$root/target/cross/venv" "$root/scripts/cross-requirements.txt"
venv "$root/target/dist/venv" "$root/bindings/python/requirements-dist.txt"
# zig's venv first (python3 -m ziglang), then maturin's tools (not its python).
export PATH="$root/target/cross/venv/bin:$PATH:$root/target/dist/venv/bin"
version=$(python3 scripts/version.py)
abi=$(sed -n 's/^pub const TURNFIT_ABI_VERSION: u32 = \([0-9]*\);/\1/p' ffi/src/version.rs)
prof=(); [ "$profile" = debug ] || prof=(--profile "$profile")
pdir=$profile; [ "$profile" = dev ] && pdir=debug
source scripts/cross/checks.sh
source scripts/cross/pack.sh
source scripts/cross/run.sh
source scripts/cross/musl-root.sh
source scripts/cross/jvm-arm64.sh
# CROSS_CHECK_ONLY=1: no build; the checks and runs below on the packages an
# earlier run left in dist/cross (each a few seconds to a minute, not the
# 20-60 minutes of a target's build).
check_only=${CROSS_CHECK_ONLY:-}
# took T0: the header's time: the build's, or that nothing was built.
took() { if [ -n "$check_only" ]; then echo "checks only, packages built earlier"; else echo "$((SECONDS - $1)) s"; fi; }
# built FILE: FILE, which an earlier run must have left (check-only mode).
built() { [ -e "$1" ] || { echo "CROSS_CHECK_ONLY: no $1 (make dist-cross builds it)" >&2; exit 1; }; echo "$1"; }
# unpack_c TARGET TARBALL: the C tree pack_c made, again from TARBALL; prints its path.
unpack_c() {
    local stage=$root/target/cross/c/$1
    rm -rf "$stage" && mkdir -p "$stage" && tar -C "$stage" -xzf "$(built "$2")"
    echo "$stage/turnfit-$version"
}
# ran WHAT CMD...: CMD's line for the MANIFEST with the seconds it took
# (fetching and building what it runs on included), or "WHAT: ELF-checked only
# (why it could not run here)" when CMD returns 3; any other failure stops.
ran() {
    local what=$1 line rc err=$root/target/cross/run.err t=$SECONDS; shift
    # Not in an || list, so that set -e holds inside the command's subshell.
    set +e; line=$(set -e; "$@" 2>"$err"); rc=$?; set -e
    case $rc in
        0) echo "    $line [$((SECONDS - t)) s]" ;;
        3) echo "    $what: ELF-checked only, not run here ($(tail -1 "$err"))" ;;
        *) cat "$err" >&2; echo "$line"; echo "$what: the run failed"; exit 1 ;;
    esac
}

# newest_glibc FILE...: each is a shared object for MACHINE (first argument)
# needing glibc <= 2.17; prints the newest version any of them needs.
newest_glibc() {
    local machine=$1 f v all=(); shift
    for f in "$@"; do
        elf_machine "$f" "$machine"; elf_shared "$f"
        v=$(glibc_max "$f"); all+=("$v")
    done
    printf '%s\n' "${all[@]}" | sort -V | tail -1
}
# unpack_natives DIR WHEEL NODE_TGZ [JAR]: the native files as the packages
# ship them, under DIR/{wheel,node,jar}.
unpack_natives() {
    rm -rf "$1" && mkdir -p "$1/wheel" "$1/node" "$1/jar"
    unzip -q -d "$1/wheel" "$2" 'turnfit/*.so'
    tar -C "$1/node" -xzf "$3"
    [ -z "${4:-}" ] || unzip -q -d "$1/jar" "$4" '*.so'
}

mkdir -p "$out"
printf 'turnfit %s, %s builds, cross-linked with zig%s\n' "$version" "$profile" "${check_only:+ (CROSS_CHECK_ONLY: checked and run again, not rebuilt)}" > "$out/MANIFEST"
want=$root/target/cross/fit-host.out
reference "$want"
for t in "${targets[@]}"; do
    t0=$SECONDS
    o=$out/$t
    if [ -z "$check_only" ]; then
        rustup target list --installed | grep -qx "$t" || rustup target add "$t"
        rm -rf "$o" && mkdir -p "$o"
    fi
    chk=$root/target/cross/check/$t
    case $t in
        aarch64-unknown-linux-gnu)
            if [ -z "$check_only" ]; then
                # .2.17: the glibc version zig links against (the oldest it and Rust support).
                cargo zigbuild --locked -q "${prof[@]}" --target "$t.2.17" -p turnfit-ffi -p turnfit-node -p turnfit-uniffi --target-dir target/cross
                d=target/cross/$t/$pdir
                tree=$(pack_c "$t" "$d" aarch64 "$o")
                pack_node linux-arm64-gnu "$d/libturnfit_node.so" "$o"
                pack_jna linux-aarch64 "$d/libturnfit_uniffi.so" "$o"
                # maturin in a target dir of its own: it hands the build scripts
                # other CC/linker wrappers than cargo-zigbuild, so in one dir each
                # would rebuild what the other built last (seen here).
                whl=$(pack_wheel "$t" manylinux2014 "$root/target/cross/wheel" "$o")
            else
                tree=$(unpack_c "$t" "$o/turnfit-$version-linux-aarch64.tar.gz")
                whl=$(built "$(ls "$o"/turnfit-"$version"-cp39-abi3-*manylinux2014_aarch64*.whl 2>/dev/null | head -1)")
                jna_fat_jar "$(built "$o/turnfit-natives-linux-aarch64-$version.jar")"
            fi
            node_tgz=$o/turnfit-linux-arm64-gnu-$version.tgz
            unpack_natives "$chk" "$whl" "$node_tgz" "$o/turnfit-natives-linux-aarch64-$version.jar"
            lib=$tree/lib/libturnfit.so.$abi.$version
            readelf -d "$lib" | grep -q "Library soname: \[libturnfit.so.$abi\]" || { echo "$t: the SONAME is not libturnfit.so.$abi"; exit 1; }
            elf_machine "$tree/lib/libturnfit.a" AArch64
            max=$(newest_glibc AArch64 "$lib" "$chk"/wheel/turnfit/*.so "$chk"/node/package/*.node "$chk/jar/linux-aarch64/libturnfit_uniffi.so")
            {
                echo "  $t ($(took $t0)): $(basename "$whl"), $(basename "$node_tgz"), turnfit-$version-linux-aarch64.tar.gz, turnfit-natives-linux-aarch64-$version.jar$([ -e "$out/jvm/turnfit-$version.jar" ] && echo ", jvm/turnfit-$version.jar (+ linux-aarch64/)")"
                echo "    every native file ELF64 AArch64 DYN, glibc symbol versions <= $max (readelf -V); libturnfit.so SONAME libturnfit.so.$abi"
                ran "C library" run_c_arm64 "$tree" "$want"
                ran wheel run_wheel_arm64 "$whl" "$want"
                ran .node run_node_arm64 "$node_tgz" "$want"
                ran "jar natives (linux-aarch64/libturnfit_uniffi.so)" run_jar_arm64 "$out/jvm/turnfit-$version.jar" "$want"
            } | tee -a "$out/MANIFEST"
            [ "${PIPESTATUS[0]}" = 0 ] || exit 1
            ;;
        x86_64-unknown-linux-musl)
            # 1. The C runtime linked dynamically (-crt-static off, as Alpine's
            # own packages are): Python and Node load extensions with dlopen,
            # which a static musl cannot do, and Rust makes a cdylib for musl
            # only so. Its own target dir: the flag changes every crate.
            dt=$root/target/cross/musl-dynamic
            if [ -z "$check_only" ]; then
                RUSTFLAGS="-C target-feature=-crt-static" cargo zigbuild --locked -q "${prof[@]}" --target "$t" \
                    -p turnfit-ffi -p turnfit-node --target-dir "$dt"
                d=$dt/$t/$pdir
                tree=$(pack_c "$t" "$d" x86_64-musl "$o")
                pack_node linux-x64-musl "$d/libturnfit_node.so" "$o"
            else
                tree=$(unpack_c "$t" "$o/turnfit-$version-linux-x86_64-musl.tar.gz")
            fi
            node_tgz=$(built "$o/turnfit-linux-x64-musl-$version.tgz")
            rm -rf "$chk" && mkdir -p "$chk/node" && tar -C "$chk/node" -xzf "$node_tgz"
            elf_machine "$tree/lib/libturnfit.a" X86-64
            # musl_libs FILE...: each an x86-64 shared object on musl; prints what they need.
            musl_libs() {
                local f needs=()
                for f in "$@"; do
                    elf_machine "$f" X86-64; elf_shared "$f"
                    needs+=("$(basename "$f") needs $(musl_needed "$f")")
                done
                (IFS=';'; echo "${needs[*]}")
            }
            {
                echo "  $t ($(took $t0)): turnfit-$version-linux-x86_64-musl.tar.gz, $(basename "$node_tgz")"
                echo "    ELF64 X86-64 DYN on musl, no glibc symbol version: $(musl_libs "$tree/lib/libturnfit.so.$abi.$version" "$chk"/node/package/*.node)"
                ran "C library" run_c_musl "$tree" "$want"
                ran ".node symbols" musl_resolves "$(ls "$chk"/node/package/*.node)" napi_
                ran .node run_node_musl "$node_tgz" "$want"
            } | tee -a "$out/MANIFEST"
            [ "${PIPESTATUS[0]}" = 0 ] || exit 1
            # 2. The wheel: maturin's own build of the core, in its own target
            # dir as for aarch64.
            t1=$SECONDS
            if [ -z "$check_only" ]; then
                whl=$(RUSTFLAGS="-C target-feature=-crt-static" pack_wheel "$t" musllinux_1_2 "$root/target/cross/wheel" "$o")
            else
                whl=$(built "$(ls "$o"/turnfit-"$version"-cp39-abi3-musllinux_1_2_x86_64.whl 2>/dev/null | head -1)")
            fi
            mkdir -p "$chk/wheel" && unzip -q -d "$chk/wheel" "$whl" 'turnfit/*.so'
            {
                echo "  $t ($(took $t1)): $(basename "$whl")"
                echo "    ELF64 X86-64 DYN on musl, no glibc symbol version: $(musl_libs "$chk"/wheel/turnfit/*.so)"
                ran "wheel symbols" musl_resolves "$(ls "$chk"/wheel/turnfit/*.so)" '_\?Py'
                ran wheel run_wheel_musl "$whl" "$want"
            } | tee -a "$out/MANIFEST"
            [ "${PIPESTATUS[0]}" = 0 ] || exit 1
            # 3. Rust's default for musl: the C runtime linked statically, so
            # the CLI runs on any x86-64 Linux, no loader, no libc.
            t1=$SECONDS
            cli=$o/turnfit
            if [ -z "$check_only" ]; then
                cargo zigbuild --locked -q "${prof[@]}" --target "$t" -p turnfit-cli --target-dir target/cross
                cp "target/cross/$t/$pdir/turnfit" "$cli"
                strip_debug "$cli"
            fi
            built "$cli" >/dev/null
            elf_machine "$cli" X86-64
            phdrs=$(readelf -l "$cli"); dyn=$(readelf -d "$cli" 2>&1 || true)
            ! grep -q INTERP <<<"$phdrs" || { echo "$t: the CLI asks for a dynamic loader"; exit 1; }
            ! grep -q NEEDED <<<"$dyn" || { echo "$t: the CLI needs shared libraries"; exit 1; }
            got=$("$cli" fit examples/data/agent-loop.json --model gpt-4o --max-tokens 16000 2>&1 >/dev/null | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["tokens_before"], r["tokens_after"])')
            wantcli=$(python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).read().split("\n")[2]); print(r["tokens_before"], r["tokens_after"])' "$want")
            [ "$got" = "$wantcli" ] || { echo "$t: the static CLI reports $got, the glibc library $wantcli"; exit 1; }
            echo "  $t ($(took $t1)): turnfit CLI, static (no INTERP, no NEEDED), run here: fit ${got/ / -> } as the glibc library" | tee -a "$out/MANIFEST"
            ;;
        *) echo "no recipe for $t"; exit 1 ;;
    esac
done
(cd "$out" && find . -type f ! -name '*.tmp'  ! -name MANIFEST ! -name SHA256SUMS | LC_ALL=C sort | xargs sha256sum > SHA256SUMS)
echo "dist/cross: turnfit $version for ${targets[*]} in $((SECONDS - start)) s"
