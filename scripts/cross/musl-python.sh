# A CPython on musl, to run the musllinux wheel (sourced by scripts/cross/musl-root.sh,
# or run alone: `bash scripts/cross/musl-python.sh` prints the interpreter).
# No registry carries a musl CPython (Debian's and PyPI's are glibc builds),
# so it is built here from Debian bookworm's python3.11 source package (the
# upstream 3.11.2 tarball as Debian ships it, PSF licence) and zlib's (for
# zipfile, so pip can read a wheel), with Debian's musl-gcc (musl-tools,
# musl 1.2.3). Minimal: no OpenSSL, libffi, sqlite, readline, bz2, lzma; the
# C API, the stdlib modules turnfit and pip use, and ensurepip's bundled pip.
# Cached in target/cross/musl-python/<hash of the sources and this recipe>/,
# rebuilt only when they change (6.6 minutes of wall time, 3.1 of CPU, here
# beside other builds).

: "${root:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${cross_cache:=$root/target/cross}"
musl_python_src=(python3.11=3.11.2-6+deb12u9 zlib=1:1.2.13.dfsg-1)
source "$root/scripts/cross/apt.sh"

# musl_python: prints the path of the built python3.11 (a musl program; its
# prefix is /opt/python3.11 inside the musl root run.sh makes), building it
# first. Returns 3 with the reason when the tools are missing.
musl_python() {
    local recipe key dir src build z
    command -v musl-gcc >/dev/null || {
        [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null \
            && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends musl-tools >/dev/null 2>&1
        command -v musl-gcc >/dev/null || { echo "no musl-gcc (Debian's musl-tools) to build a musl CPython" >&2; return 3; }
    }
    recipe=$(declare -f musl_python_build)
    key=$( { printf '%s\n' "${musl_python_src[@]}" "$recipe" "$(dpkg-query -W -f='${Version}' musl-dev)"; } | sha256sum | cut -c1-16)
    dir=$cross_cache/musl-python/$key
    if [ ! -x "$dir/opt/python3.11/bin/python3.11" ]; then
        src=$cross_cache/musl-python/src
        mkdir -p "$src"
        if ! ls "$src"/python3.11_3.11.2.orig.tar.gz "$src"/zlib_1.2.13.dfsg.orig.tar.bz2 >/dev/null 2>&1; then
            apt_lists src "deb-src http://deb.debian.org/debian bookworm main" \
                "deb-src http://deb.debian.org/debian bookworm-updates main" \
                "deb-src http://deb.debian.org/debian-security bookworm-security main" || return 3
            # The pinned revisions, else the current ones: only the upstream
            # tarballs are used, which every bookworm revision shares.
            (cd "$src" && { apt_with src source -qq --download-only "${musl_python_src[@]}" \
                || apt_with src source -qq --download-only "${musl_python_src[@]%%=*}"; } >/dev/null 2>&1) \
                && ls "$src"/python3.11_3.11.2.orig.tar.gz "$src"/zlib_1.2.13.dfsg.orig.tar.bz2 >/dev/null 2>&1 \
                || { echo "apt-get source ${musl_python_src[*]} failed" >&2; return 3; }
        fi
        rm -rf "$cross_cache/musl-python"/[0-9a-f]*[0-9a-f]
        build=$cross_cache/musl-python/build && rm -rf "$build" && mkdir -p "$build"
        (musl_python_build "$src" "$build" "$dir") > "$build/log" 2>&1 \
            || { tail -30 "$build/log" >&2; echo "the musl CPython build failed (log: $build/log)" >&2; exit 1; }
        rm -rf "$build"
    fi
    echo "$dir/opt/python3.11/bin/python3.11"
}

# musl_python_build SRC BUILD DEST: zlib (static, -fPIC) then CPython, both
# with musl-gcc, CPython installed as DEST/opt/python3.11.
musl_python_build() {
    local src=$1 build=$2 dest=$3 z=$2/zlib
    # musl-gcc is gcc with musl's specs, but gcc's -print-multiarch still
    # says x86_64-linux-gnu: configure refuses it beside the musl triplet, and
    # setup.py would add /usr/include/x86_64-linux-gnu (glibc's headers) to
    # every extension, as it would from dpkg-architecture. Neither answers
    # here; pkg-config sees zlib only (none of the system's glibc libraries).
    mkdir -p "$build/bin"
    printf '#!/bin/sh\ncase "$1" in -print-multiarch|--print-multiarch) exit 0;; esac\nexec musl-gcc "$@"\n' > "$build/bin/cc"
    printf '#!/bin/sh\nexit 1\n' > "$build/bin/dpkg-architecture"
    chmod +x "$build/bin/cc" "$build/bin/dpkg-architecture"
    export CC=$build/bin/cc PATH=$build/bin:$PATH PKG_CONFIG_LIBDIR=$z/lib/pkgconfig PKG_CONFIG_PATH=
    tar -C "$build" -xjf "$src"/zlib_1.2.13.dfsg.orig.tar.bz2 || return 1
    (cd "$build"/zlib-1.2.13* && CFLAGS="-O2 -fPIC" ./configure --static --prefix="$z" && nice -n 10 make -j2 && make install) || return 1
    tar -C "$build" -xzf "$src"/python3.11_3.11.2.orig.tar.gz || return 1
    cd "$build/Python-3.11.2" || return 1
    # musl-gcc searches musl's headers only; CPython's configure drops the
    # features whose Linux headers it does not find.
    CPPFLAGS="-I$z/include" LDFLAGS="-L$z/lib" ./configure --prefix=/opt/python3.11 \
        --disable-test-modules --with-ensurepip=no || return 1
    nice -n 10 make -j2 || return 1
    make install DESTDIR="$dest" || return 1
    # Run here by musl's loader, /lib/ld-musl-x86_64.so.1 (Debian's musl).
    "$dest/opt/python3.11/bin/python3.11" -c 'import zlib, json, _struct, _queue, binascii, select, _socket' \
        || { echo "the built CPython lacks a module pip or turnfit needs"; return 1; }
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    musl_python
fi
