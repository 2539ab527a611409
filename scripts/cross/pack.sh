# The packages of one cross target (sourced by scripts/dist-cross.sh, which
# sets root, version, profile, pdir and PATH with zig, maturin and auditwheel).
# They are laid out as scripts/dist.sh lays out this machine's, so the release
# workflow and a user see one shape per package whatever the target.

# strip_debug FILE...: debug info off the copies of a debug build (release
# builds are kept as cargo made them, as dist.sh does). rust-objcopy (LLVM's,
# which rustc ships for `-C strip`, with its libLLVM beside rustc's) reads
# every ELF machine; the host's strip may know only its own.
rust_sysroot=$(rustc --print sysroot)
objcopy=$rust_sysroot/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/rust-objcopy
strip_debug() {
    [ "$profile" = release ] && return 0
    local f
    for f in "$@"; do LD_LIBRARY_PATH=$rust_sysroot/lib "$objcopy" --strip-debug "$f"; done
}

# pack_c TARGET LIBDIR ARCH OUT: the C tarball turnfit-V-linux-ARCH.tar.gz,
# the tree of scripts/install.sh (`make install`) from LIBDIR's libturnfit.so
# and libturnfit.a, as dist/c's. Prints the tree's path (target/cross/c/...).
pack_c() {
    local t=$1 lib=$2 arch=$3 out=$4 stage=$root/target/cross/c/$1
    rm -rf "$stage" && mkdir -p "$stage"
    TURNFIT_LIB_DIR=$lib PROFILE=$profile STRIP=0 bash scripts/install.sh "$stage/turnfit-$version" >/dev/null
    strip_debug "$stage/turnfit-$version/lib/libturnfit.so.$abi.$version" "$stage/turnfit-$version/lib/libturnfit.a"
    tar -C "$stage" -czf "$out/turnfit-$version-linux-$arch.tar.gz" "turnfit-$version"
    echo "$stage/turnfit-$version"
}

# pack_node PLATFORM SO OUT: the npm platform package turnfit-PLATFORM-V.tgz
# (bindings/node/npm/PLATFORM/package.json, whose os/cpu/libc npm matches
# against the machine; the .node named as the main package's loader asks).
pack_node() {
    local plat=$1 so=$2 out=$3 stage=$root/target/cross/node/$1
    rm -rf "$stage" && mkdir -p "$stage"
    cp "bindings/node/npm/$plat/package.json" "bindings/node/npm/$plat/README.md" "$stage/"
    cp "$so" "$stage/turnfit.$plat.node"
    strip_debug "$stage/turnfit.$plat.node"
    (cd "$stage" && npm pack --silent --pack-destination "$out" >/dev/null)
    [ -e "$out/turnfit-$plat-$version.tgz" ] || { echo "npm pack did not write turnfit-$plat-$version.tgz"; exit 1; }
}

# pack_jna PREFIX SO OUT: turnfit-natives-PREFIX-V.jar, a jar holding only
# PREFIX/libturnfit_uniffi.so, where JNA looks for the library on the class
# path (PREFIX is JNA's <os>-<arch>, e.g. linux-aarch64): beside the main
# jar on the class path it adds that platform. Then jna_fat_jar.
pack_jna() {
    local prefix=$1 so=$2 out=$3 stage=$root/target/cross/jna/$1
    rm -rf "$stage" && mkdir -p "$stage/$prefix"
    cp "$so" "$stage/$prefix/libturnfit_uniffi.so"
    strip_debug "$stage/$prefix/libturnfit_uniffi.so"
    python3 - "$stage" "$prefix" "$out/turnfit-natives-$prefix-$version.jar" <<'PY'
import os, sys, zipfile
stage, prefix, natives = sys.argv[1:]
name = f"{prefix}/libturnfit_uniffi.so"
with zipfile.ZipFile(natives, "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\nCreated-By: scripts/dist-cross.sh\r\n\r\n")
    z.writestr(name, open(os.path.join(stage, name), "rb").read())
PY
    jna_fat_jar "$out/turnfit-natives-$prefix-$version.jar"
}

# jna_fat_jar NATIVES_JAR: when dist/jvm holds the main jar (`make dist`),
# dist/cross/jvm/turnfit-V.jar is that jar with NATIVES_JAR's platform folder
# added (made from dist/jvm's each time, so a newer one is never missed).
jna_fat_jar() {
    python3 - "$1" "$root/dist/jvm/turnfit-$version.jar" "$root/dist/cross/jvm/turnfit-$version.jar" <<'PY'
import os, shutil, sys, zipfile
natives, main_jar, fat_jar = sys.argv[1:]
if os.path.exists(main_jar):
    with zipfile.ZipFile(natives) as z:
        add = {i.filename: (i, z.read(i)) for i in z.infolist() if not i.filename.startswith("META-INF/")}
    os.makedirs(os.path.dirname(fat_jar), exist_ok=True)
    tmp = fat_jar + ".tmp"
    with zipfile.ZipFile(main_jar) as zin, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            if item.filename not in add:
                zout.writestr(item, zin.read(item))
        for info, data in add.values():
            zout.writestr(info, data)
    shutil.move(tmp, fat_jar)
PY
}

# pack_wheel TARGET COMPAT TARGET_DIR OUT: the abi3 wheel for TARGET tagged
# COMPAT (manylinux2014, musllinux_1_2), maturin linking with zig; for
# manylinux auditwheel show must agree with the tag. Prints the wheel's path.
pack_wheel() {
    local t=$1 compat=$2 tdir=$3 out=$4 prof=() whl shown
    [ "$profile" = debug ] || prof=(--profile "$profile")
    # musl: mimalloc's TLS model is chosen in bindings/python/Cargo.toml
    # (local-dynamic on musl, whose dlopen refuses initial-exec), so a wheel
    # built from the sdist gets it too; musl_needed checks it (STATIC_TLS).
    CARGO_TARGET_DIR=$tdir maturin build --locked -q "${prof[@]}" --zig --target "$t" --compatibility "$compat" \
        --manifest-path bindings/python/Cargo.toml --out "$out" --interpreter python3 2>&1 \
        | grep -v '^📦\|^🔗\|^🐍\|^✏️\|^🍹\|^🛠️\|^⚠️  Warning: `build-backend`' >&2 || true
    whl=$(ls "$out"/turnfit-"$version"-cp39-abi3-*"$compat"*.whl 2>/dev/null | head -1)
    [ -n "$whl" ] || { echo "maturin built no $compat wheel for $t" >&2; ls "$out" >&2; exit 1; }
    # auditwheel show cannot judge a musl wheel on a glibc machine: it looks
    # the NEEDED libc.so up here and finds glibc's linker script (ELFError).
    # dist-cross.sh's own musl checks stand in (musl_needed, musl_resolves).
    case $compat in musllinux*) echo "$whl"; return 0 ;; esac
    # manylinux2014 is manylinux_2_17 by its PEP 600 name, which auditwheel prints.
    local tag=$compat; [ "$compat" = manylinux2014 ] && tag=manylinux_2_17
    shown=$(auditwheel show "$whl")
    grep -q "\"${tag}_" <<<"$shown" \
        || { echo "auditwheel show does not find $(basename "$whl") $tag:" >&2; echo "$shown" >&2; exit 1; }
    echo "$whl"
}
