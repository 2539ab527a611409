# Runs of the musl .node and the musllinux wheel (sourced by
# scripts/dist-cross.sh after run.sh), each chrooted into a root of its own
# that holds a musl loader and no glibc at all, laid out as Alpine's
# (/lib/ld-musl-x86_64.so.1, /usr/bin/ldd): the same loaders, runtimes and
# detection a user's Alpine container has, from the registries only.
#   .node   under Bun's musl build (npm @oven/bun-linux-x64-musl): Bun
#           implements Node-API, but it is not Node.js (no musl Node.js comes
#           from Debian or npm); Debian trixie's musl 1.2.5.
#   wheel   pip-installed into a venv of a CPython built here with musl
#           (musl-python.sh); Debian bookworm's musl 1.2.3, the one it was
#           built against.
# Both run every file of tests/vectors through the package (N/N) and the fit
# of examples/data/agent-loop.json, compared with the x86-64 glibc run.
# They need root: chroot and a mount namespace (unshare) for /proc and /dev.

source "$root/scripts/cross/apt.sh"
source "$root/scripts/cross/musl-python.sh"

bun_musl=@oven/bun-linux-x64-musl@1.4.5
# Bun's musl build needs libstdc++.so.6 and libgcc_s built for musl, which no
# Debian package has. numpy's musllinux wheel carries Alpine's copies (grafted
# by auditwheel; GCC's runtime licence, GPL-3.0 with the runtime exception).
bun_cxx_wheel=numpy==2.2.6
# Those use DT_RELR relocations, which musl applies from 1.2.4 on: under
# bookworm's 1.2.3 Bun jumps to an unrelocated address (SIGSEGV at 0x4290,
# seen here). Debian trixie's musl is 1.2.5, as Alpine 3.20 and newer have
# (the pinned revision, else trixie's current one; VERSION records it).
musl_trixie=musl:amd64=1.2.5-3.1~deb13u1

# musl_rooted: whether this machine can make and enter a root (chroot as
# root, a mount namespace), else why not, returning 3.
musl_rooted() {
    [ "$(id -u)" = 0 ] && command -v chroot >/dev/null && unshare --mount true 2>/dev/null \
        || { echo "the musl root needs root, chroot and unshare --mount" >&2; return 3; }
}

# musl_root NAME LOADER: makes target/cross/root-NAME and prints its path:
# LOADER as /lib/ld-musl-x86_64.so.1 and libc.musl-x86_64.so.1 (Alpine's
# names), Alpine's /usr/bin/ldd (napi-rs's loader reads it to tell musl from
# glibc), empty proc, dev, tmp and app.
musl_root() {
    local r=$cross_cache/root-$1
    rm -rf "$r" && mkdir -p "$r/lib" "$r/usr/bin" "$r/usr/lib" "$r/opt" "$r/proc" "$r/dev" "$r/tmp" "$r/app"
    cp "$2" "$r/lib/ld-musl-x86_64.so.1"
    ln -s ld-musl-x86_64.so.1 "$r/lib/libc.musl-x86_64.so.1"
    printf '#!/bin/sh\nexec /lib/ld-musl-x86_64.so.1 --list "$@"\n' > "$r/usr/bin/ldd"
    echo "$r"
}

# in_root ROOT APP CMD...: CMD chrooted into ROOT, in a mount namespace of its
# own (gone when CMD ends) with /proc, /dev, APP as /app and the checkout's
# tests/ and examples/ read-only as /app/tests and /app/examples, where the
# vectors runners look for them.
in_root() {
    local r=$1 app=$2; shift 2
    mkdir -p "$app/tests" "$app/examples"
    unshare --mount --fork -- sh -c 'set -e; r=$1 app=$2 src=$3; shift 3
        mount --bind /proc "$r/proc"; mount --rbind /dev "$r/dev"; mount --bind "$app" "$r/app"
        mount --bind -o ro "$src/tests" "$r/app/tests"; mount --bind -o ro "$src/examples" "$r/app/examples"
        exec chroot "$r" "$@"' sh "$r" "$app" "$root" "$@"
}

# trixie_musl: prints the path of Debian trixie's musl libc.so (its loader).
trixie_musl() {
    local d=$cross_cache/musl-trixie
    if [ ! -x "$d/usr/lib/x86_64-linux-musl/libc.so" ]; then
        command -v apt-get >/dev/null || { echo "apt-get is needed to fetch Debian trixie's musl" >&2; return 3; }
        apt_lists trixie "deb http://deb.debian.org/debian trixie main" || return 3
        rm -rf "$d" && mkdir -p "$d/debs"
        (cd "$d/debs" && { apt_with trixie download -q "$musl_trixie" || apt_with trixie download -q "${musl_trixie%%=*}"; } >/dev/null 2>&1) \
            || { echo "apt-get download $musl_trixie (trixie) failed" >&2; return 3; }
        dpkg -x "$d"/debs/musl_*.deb "$d"
        dpkg-deb -f "$d"/debs/musl_*.deb Version > "$d/VERSION" && rm -rf "$d/debs"
    fi
    echo "$d/usr/lib/x86_64-linux-musl/libc.so"
}

# bun_musl_dir: prints a folder with bin/bun (Bun's musl build) and lib/ (the
# musl libstdc++.so.6 and libgcc_s it needs), fetching them first.
bun_musl_dir() {
    local d=$cross_cache/bun-musl/${bun_musl##*@} whl
    if [ ! -x "$d/bin/bun" ] || [ ! -e "$d/lib/libstdc++.so.6" ]; then
        command -v npm >/dev/null || { echo "npm is needed to fetch $bun_musl" >&2; return 3; }
        rm -rf "$d" && mkdir -p "$d/pkg" "$d/lib"
        (cd "$d/pkg" && npm pack --silent "$bun_musl" >/dev/null) || { echo "npm pack $bun_musl failed" >&2; return 3; }
        tar -C "$d" --strip-components=1 -xzf "$d"/pkg/*.tgz package/bin/bun package/package.json
        python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary :all: \
            --platform musllinux_1_2_x86_64 --python-version 3.11 --implementation cp -d "$d/pkg" "$bun_cxx_wheel" >/dev/null 2>&1 \
            || { echo "pip download $bun_cxx_wheel (musllinux_1_2_x86_64) failed" >&2; return 3; }
        whl=$(ls "$d"/pkg/*.whl)
        # auditwheel names each graft libNAME-HASH.so and patches NEEDED to
        # that name: libstdc++ keeps its, Bun asks for libstdc++.so.6.
        python3 - "$whl" "$d/lib" <<'PY'
import os, re, sys, zipfile
whl, out = sys.argv[1:]
with zipfile.ZipFile(whl) as z:
    for name in z.namelist():
        base = os.path.basename(name)
        if re.match(r"lib(stdc\+\+|gcc_s)-[0-9a-f]+\.so", base):
            data = z.read(name)
            target = "libstdc++.so.6" if base.startswith("libstdc++") else base
            open(os.path.join(out, target), "wb").write(data)
PY
        [ -e "$d/lib/libstdc++.so.6" ] || { echo "$bun_cxx_wheel's wheel holds no libstdc++" >&2; return 3; }
        rm -rf "$d/pkg"
    fi
    echo "$d"
}

# run_node_musl PLATFORM_TGZ EXPECTED: node_app's app under Bun's musl build
# in a root of trixie's musl: tests/vectors through the package (bun test
# runs bindings/node/test/vectors.test.js, node:test as Bun implements it),
# then check.cjs.
run_node_musl() {
    local tgz=$1 want=$2 loader bun r app=$cross_cache/node-app-musl out line
    musl_rooted || return 3
    loader=$(trixie_musl) || return 3
    bun=$(bun_musl_dir) || return 3
    r=$(musl_root bun "$loader")
    # Hard links, as for the CPython: no 100 MB copy per run.
    mkdir -p "$r/opt/bun/bin" && cp -l "$bun/bin/bun" "$r/opt/bun/bin/" && cp -l "$bun"/lib/* "$r/usr/lib/"
    node_app "$app" linux-x64-musl "$tgz"
    cp "$want" "$app/want.out"
    out=$(in_root "$r" "$app" /opt/bun/bin/bun test --cwd /app /app/node_modules/turnfit/test/vectors.test.js 2>&1) \
        || { echo "$out" | grep -v '^(pass)' | tail -40; echo "musl .node: tests/vectors failed under Bun"; exit 1; }
    line=$(in_root "$r" "$app" /opt/bun/bin/bun /app/check.cjs /app/examples/data/agent-loop.json /app/want.out linux-x64-musl x64)
    echo ".node run under Bun ${bun_musl##*@} musl (npm $bun_musl; Node-API, not Node.js) in a root of Debian's musl $(cat "$cross_cache/musl-trixie/VERSION"), libstdc++ from $bun_cxx_wheel's musllinux wheel: vectors $(vectors_line "$out"); $line"
}

# run_wheel_musl WHEEL EXPECTED: the wheel pip-installed (which must accept
# its musllinux_1_2 tag) into a venv of the musl CPython, chrooted in a root
# of bookworm's musl; tests/vectors through it (bindings/python/tests/
# vectors.py), then wheel_check's program.
run_wheel_musl() {
    local whl=$1 want=$2 py pyhome loader r app=$cross_cache/wheel-app-musl out line pip
    musl_rooted || return 3
    py=$(musl_python) || return 3
    loader=$(musl_loader) || return 3
    r=$(musl_root python "$loader")
    # Hard links: the cached build stays as built (the venv is in /app).
    pyhome=$(dirname "$(dirname "$py")")
    cp -al "$pyhome" "$r/opt/"
    rm -rf "$app" && mkdir -p "$app/bindings/python/tests"
    cp "$whl" "$want" "$app/" && mv "$app/$(basename "$want")" "$app/want.out"
    cp bindings/python/tests/vectors.py "$app/bindings/python/tests/"
    wheel_check "$app/check.py"
    pip=$(in_root "$r" "$app" /opt/python3.11/bin/python3.11 -c 'import ensurepip; print(ensurepip.version())')
    in_root "$r" "$app" /opt/python3.11/bin/python3.11 -m venv /app/venv >&2
    out=$(in_root "$r" "$app" /app/venv/bin/python -m pip install -q --no-index --disable-pip-version-check "/app/$(basename "$whl")" 2>&1) \
        || { echo "$out"; echo "pip $pip on musl CPython refused $(basename "$whl")"; exit 1; }
    out=$(in_root "$r" "$app" /app/venv/bin/python /app/bindings/python/tests/vectors.py 2>&1) \
        || { echo "$out" | tail -40; echo "musl wheel: tests/vectors failed"; exit 1; }
    line=$(in_root "$r" "$app" /app/venv/bin/python /app/check.py /app/examples/data/agent-loop.json /app/want.out \
        /app/venv/lib/python3.11/site-packages x86_64)
    echo "wheel installed by pip $pip into a venv of a CPython 3.11.2 built with musl-gcc, in a root of Debian's musl $(cat "$cross_cache/sysroot-musl/VERSION"): vectors $(vectors_line "$out"); $line"
}
