#!/usr/bin/env bash
# The C/C++ install step (`make install PREFIX=...`): the header, the shared
# library under its real name with the SONAME links, the static library and
# the pkg-config files, from target/$PROFILE (debug unless PROFILE=release).
#
#   PREFIX/include/turnfit.h
#   PREFIX/lib/libturnfit.so.<ABI>.<VERSION>        the file (e.g. libturnfit.so.2.0.1.0)
#   PREFIX/lib/libturnfit.so.<ABI> -> that file     the SONAME the loader asks for
#   PREFIX/lib/libturnfit.so -> libturnfit.so.<ABI> what `-lturnfit` links
#   PREFIX/lib/libturnfit.a
#   PREFIX/lib/pkgconfig/turnfit.pc                 cc app.c $(pkg-config --cflags --libs turnfit)
#   PREFIX/lib/pkgconfig/turnfit-static.pc          cc app.c $(pkg-config --cflags --libs turnfit-static)
#
# The .pc files locate the prefix from their own place (${pcfiledir}), so an
# installed tree can be moved or unpacked anywhere (dist/c's tarball is).
# STRIP=1 removes debug info from the copies (scripts/dist.sh sets it).
#
#   usage: scripts/install.sh PREFIX   (env: PROFILE=debug|release, LIBDIR, STRIP=0|1, TURNFIT_LIB_DIR)
set -euo pipefail
[ $# = 1 ] || { echo "usage: $0 PREFIX" >&2; exit 2; }
cd "$(dirname "$0")/.."
prefix=$1
profile=${PROFILE:-debug}
libdir=${LIBDIR:-$prefix/lib}
# TURNFIT_LIB_DIR: take the libraries from there instead (scripts/dist.sh
# passes its zig build for glibc 2.17, target/cross/x86_64-unknown-linux-gnu/PROFILE).
src=${TURNFIT_LIB_DIR:-target/$profile}
for f in libturnfit.so libturnfit.a; do
    [ -e "$src/$f" ] || { echo "$src/$f missing: build first (cargo build -p turnfit-ffi${profile:+ --profile $profile})" >&2; exit 1; }
done
version=$(python3 scripts/version.py)
abi=$(sed -n 's/^pub const TURNFIT_ABI_VERSION: u32 = \([0-9]*\);/\1/p' ffi/src/version.rs)
[ -n "$abi" ] || { echo "TURNFIT_ABI_VERSION not found in ffi/src/version.rs" >&2; exit 1; }
soname=$(readelf -d "$src/libturnfit.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = "libturnfit.so.$abi" ] || { echo "$src/libturnfit.so has SONAME '$soname', expected libturnfit.so.$abi" >&2; exit 1; }
real=libturnfit.so.$abi.$version

mkdir -p "$prefix/include" "$libdir/pkgconfig"
install -m 644 include/turnfit.h "$prefix/include/turnfit.h"
install -m 755 "$src/libturnfit.so" "$libdir/$real"
install -m 644 "$src/libturnfit.a" "$libdir/libturnfit.a"
if [ "${STRIP:-0}" = 1 ]; then
    strip --strip-debug "$libdir/$real" "$libdir/libturnfit.a"
fi
ln -sfn "$real" "$libdir/libturnfit.so.$abi"
ln -sfn "libturnfit.so.$abi" "$libdir/libturnfit.so"

# Relative path from the .pc files to the prefix and to libdir/includedir.
rel_prefix=$(python3 -c 'import os,sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$prefix" "$libdir/pkgconfig")
rel_lib=$(python3 -c 'import os,sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$libdir" "$prefix")
# The native libraries a Rust staticlib needs (`cargo rustc -p turnfit-ffi
# --crate-type staticlib -- --print native-static-libs`, as tests/c/Makefile
# records), less the implicit -lc.
static_deps="-lgcc_s -lutil -lrt -lpthread -lm -ldl"
common="prefix=\${pcfiledir}/$rel_prefix
libdir=\${prefix}/$rel_lib
includedir=\${prefix}/include
"
# No URL field (optional in pkg-config): the project has no public home yet,
# and a placeholder would send users nowhere.
desc="Exact token counting and context-window management for LLM agents (C ABI $abi)"
cat > "$libdir/pkgconfig/turnfit.pc" <<PC
${common}
Name: turnfit
Description: $desc
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -lturnfit
Libs.private: $static_deps
PC
cat > "$libdir/pkgconfig/turnfit-static.pc" <<PC
${common}
Name: turnfit-static
Description: $desc; links libturnfit.a into the program
Version: $version
Cflags: -I\${includedir}
Libs: \${libdir}/libturnfit.a $static_deps
PC
echo "installed turnfit $version (ABI $abi, $profile build) into $prefix:"
(cd "$prefix" && find . -path ./lib/pkgconfig -prune -o \( -type f -o -type l \) -print | grep -E 'turnfit' | sort | sed 's/^\.\//  /')
echo "  ${libdir#$prefix/}/pkgconfig/turnfit.pc, turnfit-static.pc"
