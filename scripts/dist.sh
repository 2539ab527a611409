#!/usr/bin/env bash
# `make dist`: every package, built into dist/ (gitignored) from the one debug
# cargo build the test command shares, at the one version of Cargo.toml
# ([workspace.package]; scripts/version.py --check refuses drift first).
#
#   dist/python/  turnfit-V-cp39-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl
#                 (maturin --zig; auditwheel show must agree), turnfit-V.tar.gz (sdist)
#   dist/node/    turnfit-V.tgz (main package; optionalDependencies name every
#                 platform package, as napi-rs publishes them),
#                 turnfit-linux-x64-gnu-V.tgz (this machine's platform package)
#   dist/jvm/     turnfit-V.jar (classes for Java 8 + linux-x86-64/libturnfit_uniffi.so
#                 as a JNA resource), turnfit-V.pom, android/ (the AAR's manifest and
#                 proguard.txt; its classes.jar and jni/ need android.jar and the NDK)
#   dist/c/       turnfit-V-linux-x86_64.tar.gz (`make install`'s tree: header,
#                 libturnfit.so.ABI.V + SONAME links, libturnfit.a, pkg-config)
#   dist/haskell/ turnfit-V.tar.gz (cabal sdist; cabal check must pass)
#   dist/MANIFEST what was built, what was skipped and why; SHA256SUMS
#
# The packages are debug builds (opt-level 3 for the core and dependencies,
# see Cargo.toml), the native files linked for glibc 2.17 (1b), with debug info stripped from the
# native libraries copied into the jar, the npm package and the C tree; the
# wheel is maturin's build as is. PROFILE=release builds release packages
# (cargo build --release first; slower, not used by the tests).
#
# A language whose toolchain is missing is skipped with the reason (in
# dist/MANIFEST); scripts/dist-test.sh then skips its install check too.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dist=$root/dist
work=$root/target/dist
profile=${PROFILE:-debug}
start=$SECONDS
say() { printf '  %-8s %s\n' "$1" "$2"; }

python3 scripts/version.py --check
version=$(python3 scripts/version.py)
# dist/cross (scripts/dist-cross.sh, `make dist-cross`) is kept; the rest is new.
mkdir -p "$dist" "$work"
find "$dist" -mindepth 1 -maxdepth 1 ! -name cross -exec rm -rf {} +
manifest=$dist/MANIFEST
printf 'turnfit %s, %s build, %s\n' "$version" "$profile" "$(uname -m)-$(uname -s | tr A-Z a-z)" > "$manifest"
skip() { echo "skipped $1: $2" | tee -a "$manifest"; }

# 1. The shared build. Inside the test command (TURNFIT_SHARED_BUILD=1) and by
# default this is the test command's own `cargo build --workspace
# --all-targets`, a no-op after it; TURNFIT_SHARED_BUILD=0 builds only the
# packages below.
export NAPI_TYPE_DEF_TMP_FOLDER="$root/target/napi-typedef"
mkdir -p "$NAPI_TYPE_DEF_TMP_FOLDER"
t0=$SECONDS
if [ "$profile" = debug ]; then
    TURNFIT_SHARED_BUILD=${TURNFIT_SHARED_BUILD:-1} bash scripts/cargo-build.sh \
        turnfit-ffi turnfit-node turnfit-uniffi turnfit-uniffi-bindgen
else
    cargo build --locked --profile "$profile" -p turnfit-ffi -p turnfit-node -p turnfit-uniffi -p turnfit-uniffi-bindgen
fi
echo "cargo build ($profile): $((SECONDS - t0)) s"
tdir=$root/target/$profile

# 1b. The shipped x86-64 natives (the .node, the jar's JNA resource, the C
# library, and below the wheel) are linked with zig against glibc 2.17, so
# they load on RHEL/CentOS 7 and 8, Amazon Linux 2, Debian 9+ and Ubuntu
# 18.04+, not only on this machine's glibc: cargo-zigbuild's
# x86_64-unknown-linux-gnu.2.17 (scripts/cross-requirements.txt, the venv and
# target dir `make dist-cross` uses). It is a build of the core of its own
# (target/cross): about 7 min of CPU the first time (19 min of wall time on a
# two-core machine shared with five other builds), a no-op after that.
# TURNFIT_DIST_GLIBC=host packages the host build instead (no zig; the
# packages then need this machine's glibc, dist/MANIFEST says so and
# dist-test.sh skips its glibc check).
t0=$SECONDS
gnu217=x86_64-unknown-linux-gnu.2.17
native_dir=$tdir
if [ "${TURNFIT_DIST_GLIBC:-2.17}" = 2.17 ]; then
    zvenv=$root/target/cross/venv
    zreq=$root/scripts/cross-requirements.txt
    zstamp="$zvenv/.requirements-$(sha256sum "$zreq" | cut -c1-16)"
    if [ ! -e "$zstamp" ]; then
        rm -rf "$zvenv" && python3 -m venv "$zvenv"
        "$zvenv/bin/pip" install -q --disable-pip-version-check -r "$zreq"
        touch "$zstamp"
    fi
    zprof=(); [ "$profile" = debug ] || zprof=(--profile "$profile")
    PATH="$zvenv/bin:$PATH" cargo zigbuild --locked -q "${zprof[@]}" --target "$gnu217" \
        -p turnfit-ffi -p turnfit-node -p turnfit-uniffi --target-dir "$root/target/cross"
    native_dir=$root/target/cross/x86_64-unknown-linux-gnu/$profile
    echo "cargo zigbuild ($profile, $gnu217): $((SECONDS - t0)) s"
    echo "natives: $gnu217 (zig), glibc 2.17 or newer" >> "$manifest"
else
    echo "natives: host build, this machine's glibc $(ldd --version | head -1 | grep -o '[0-9.]*$') or newer (TURNFIT_DIST_GLIBC=$TURNFIT_DIST_GLIBC)" | tee -a "$manifest"
fi

# 2. Node: napi-rs's layout, staged under target/dist/node and packed.
t0=$SECONDS
if command -v node >/dev/null && command -v npm >/dev/null; then
    node_pkg=$root/bindings/node
    triple=$(node -p 'process.platform + "-" + process.arch')
    [ "$triple" = linux-x64 ] || { echo "node: only linux-x64-gnu is built here (this is $triple)"; exit 1; }
    plat=linux-x64-gnu
    # Generated loader and types must match the Rust sources: the Node suite's
    # check, repeated when its devDependencies (@napi-rs/cli) are installed.
    if [ -d "$node_pkg/node_modules/@napi-rs/cli" ]; then
        node "$node_pkg/scripts/binding.mjs" --check --lib "$tdir/libturnfit_node.so" >/dev/null
    fi
    stage=$work/node && rm -rf "$stage" && mkdir -p "$stage/main" "$stage/$plat" "$dist/node"
    # The main package: its "files" less the .node (that is the platform
    # package's), read from package.json, so a file it names is never left out;
    # every file "exports" names must be among them.
    main_files=$(node - "$node_pkg/package.json" <<'JS'
const pkg = JSON.parse(require('fs').readFileSync(process.argv[2], 'utf8'))
const files = pkg.files.filter((f) => f !== '*.node')
const pattern = files.find((f) => /[*?[]/.test(f))
if (pattern) throw new Error(`package.json "files" holds the pattern ${pattern}: dist.sh copies names only`)
const targets = (e) => (typeof e === 'string' ? [e] : Object.values(e ?? {}).flatMap(targets))
for (const [sub, entry] of Object.entries(pkg.exports)) {
  for (const t of targets(entry)) {
    const f = t.replace(/^\.\//, '')
    if (f !== 'package.json' && !files.includes(f)) throw new Error(`exports["${sub}"] names ${t}, which "files" lacks`)
  }
}
console.log([...files, 'README.md'].join('\n'))
JS
)
    while read -r f; do cp "$node_pkg/$f" "$stage/main/"; done <<<"$main_files"
    node - "$node_pkg/package.json" "$stage/main/package.json" <<'JS'
const fs = require('fs')
const [src, dst] = process.argv.slice(2)
const pkg = JSON.parse(fs.readFileSync(src, 'utf8'))
const names = { 'x86_64-unknown-linux-gnu': 'linux-x64-gnu', 'aarch64-unknown-linux-gnu': 'linux-arm64-gnu',
  'x86_64-unknown-linux-musl': 'linux-x64-musl', 'aarch64-unknown-linux-musl': 'linux-arm64-musl',
  'x86_64-apple-darwin': 'darwin-x64', 'aarch64-apple-darwin': 'darwin-arm64', 'x86_64-pc-windows-msvc': 'win32-x64-msvc' }
pkg.optionalDependencies = {}
for (const t of pkg.napi.targets) {
  if (!names[t]) throw new Error(`no npm platform name for ${t}`)
  pkg.optionalDependencies[`${pkg.napi.binaryName}-${names[t]}`] = pkg.version
}
pkg.files = pkg.files.filter((f) => f !== '*.node')
delete pkg.devDependencies
delete pkg.scripts
fs.writeFileSync(dst, JSON.stringify(pkg, null, 2) + '\n')
JS
    cp "$node_pkg/npm/$plat/package.json" "$node_pkg/npm/$plat/README.md" "$stage/$plat/"
    cp "$native_dir/libturnfit_node.so" "$stage/$plat/turnfit.$plat.node"
    [ "$profile" = release ] || strip --strip-debug "$stage/$plat/turnfit.$plat.node"
    (cd "$stage/main" && npm pack --silent --pack-destination "$dist/node" >/dev/null)
    (cd "$stage/$plat" && npm pack --silent --pack-destination "$dist/node" >/dev/null)
    for t in "turnfit-$version.tgz" "turnfit-$plat-$version.tgz"; do
        [ -e "$dist/node/$t" ] || { echo "npm pack did not write $t"; ls "$dist/node"; exit 1; }
    done
    # Listings are read whole (grep -q would cut the pipe, and pipefail then
    # turns a match into a failure of the pipeline).
    listing=$(tar -tzf "$dist/node/turnfit-$version.tgz")
    if grep -q '\.node$' <<<"$listing"; then
        echo "the main npm package carries a .node file; it belongs to the platform package"; exit 1
    fi
    while read -r f; do
        grep -qxF "package/$f" <<<"$listing" || { echo "the main npm package lacks $f (package.json names it)"; exit 1; }
    done <<<"$main_files"
    say node "turnfit-$version.tgz, turnfit-$plat-$version.tgz ($((SECONDS - t0)) s)" | tee -a "$manifest"
else
    skip node "node and npm not installed"
fi

# 3. JVM: the classes jar (bindings/uniffi/kotlin/build-jar.sh, shared with the
# uniffi suite; Kotlin generated from this profile's library, compiled for
# JVM 1.8) plus the native library where JNA looks for it on the class path
# (<os>-<arch>/lib<name>.so); a POM with coordinates and dependencies. Debian's
# JNA and Gson are on kotlinc's class path: installed here when root, as the
# suites install theirs.
t0=$SECONDS
jvm_debs=(libjna-java libgoogle-gson-java)
jvm_missing=()
for d in "${jvm_debs[@]}"; do
    dpkg-query -W -f='${Status}' "$d" 2>/dev/null | grep -q 'install ok installed' || jvm_missing+=("$d")
done
if [ ${#jvm_missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing ${jvm_missing[*]} with apt-get (the jar's compile class path)"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${jvm_missing[@]}" >/dev/null
    jvm_missing=()
fi
if ! command -v java >/dev/null || ! command -v jar >/dev/null || ! command -v npm >/dev/null || [ ${#jvm_missing[@]} -gt 0 ]; then
    skip jvm "needs java and jar (OpenJDK 17), npm (kotlinc) and Debian's ${jvm_missing[*]:-${jvm_debs[*]}}"
else
    bash bindings/uniffi/kotlin/build-jar.sh "$profile"
    classes=target/uniffi/turnfit.jar; [ "$profile" = debug ] || classes=target/uniffi/$profile/turnfit.jar
    klib=$root/bindings/uniffi/kotlin/node_modules/kotlin-compiler/lib
    kver=$(node -p "require('$root/bindings/uniffi/kotlin/node_modules/kotlin-compiler/package.json').version")
    cver=$(unzip -p "$klib/kotlinx-coroutines-core-jvm.jar" META-INF/kotlinx_coroutines_core.version)
    jver=$(dpkg-query -W -f='${Version}' libjna-java | sed 's/-.*//')
    gver=$(dpkg-query -W -f='${Version}' libgoogle-gson-java | sed 's/-.*//')
    jstage=$work/jvm && rm -rf "$jstage" && mkdir -p "$jstage/res/linux-x86-64" "$dist/jvm"
    cp "$native_dir/libturnfit_uniffi.so" "$jstage/res/linux-x86-64/"
    [ "$profile" = release ] || strip --strip-debug "$jstage/res/linux-x86-64/libturnfit_uniffi.so"
    jarfile=$dist/jvm/turnfit-$version.jar
    cp "$classes" "$jarfile"
    jar --update --file "$jarfile" -C "$jstage/res" linux-x86-64
    # The class files' major version: 52 is Java 8 (what build-jar.sh compiles for).
    jmajor=$(unzip -p "$jarfile" dev/turnfit/Tokenizer.class | od -An -j6 -N2 -tu1 | awk '{print $1 * 256 + $2}')
    [ "$jmajor" = 52 ] || { echo "the jar's classes are for class file version $jmajor, not 52 (Java 8)"; exit 1; }
    cat > "$dist/jvm/turnfit-$version.pom" <<POM
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dev.turnfit</groupId>
  <artifactId>turnfit</artifactId>
  <version>$version</version>
  <packaging>jar</packaging>
  <name>turnfit</name>
  <description>Exact token counting and context-window management for LLM agents (Kotlin/JVM over the Rust core, bytecode for Java 8; linux-x86-64 native library inside)</description>
  <licenses>
    <license><name>MIT</name></license>
    <license><name>Apache-2.0</name></license>
  </licenses>
  <dependencies>
    <dependency>
      <groupId>net.java.dev.jna</groupId>
      <artifactId>jna</artifactId>
      <version>$jver</version>
    </dependency>
    <dependency>
      <groupId>org.jetbrains.kotlin</groupId>
      <artifactId>kotlin-stdlib</artifactId>
      <version>$kver</version>
    </dependency>
    <!-- the suspend twins (countTokensAsync, fitAsync, ...) -->
    <dependency>
      <groupId>org.jetbrains.kotlinx</groupId>
      <artifactId>kotlinx-coroutines-core-jvm</artifactId>
      <version>$cver</version>
    </dependency>
    <!-- the typed entry points (dev.turnfit.types) only -->
    <dependency>
      <groupId>com.google.code.gson</groupId>
      <artifactId>gson</artifactId>
      <version>$gver</version>
      <optional>true</optional>
    </dependency>
  </dependencies>
</project>
POM
    # The Android AAR stays a recipe (bindings/uniffi/README.md, "Android"):
    # its jni/<abi>/libturnfit_uniffi.so need the NDK, and its classes.jar
    # Kotlin generated with `android = true` compiled against android.jar;
    # neither is here. The pieces that need neither are produced.
    mkdir -p "$dist/jvm/android"
    cp bindings/uniffi/android/consumer-rules.pro "$dist/jvm/android/proguard.txt"
    printf '<manifest xmlns:android="http://schemas.android.com/apk/res/android" package="dev.turnfit">\n  <uses-sdk android:minSdkVersion="21" />\n</manifest>\n' \
        > "$dist/jvm/android/AndroidManifest.xml"
    listing=$(unzip -l "$jarfile")
    grep -q ' linux-x86-64/libturnfit_uniffi.so$' <<<"$listing" || { echo "the jar lacks linux-x86-64/libturnfit_uniffi.so"; exit 1; }
    say jvm "turnfit-$version.jar (Java 8 bytecode + linux-x86-64/libturnfit_uniffi.so), turnfit-$version.pom, android/{AndroidManifest.xml,proguard.txt} ($((SECONDS - t0)) s)" | tee -a "$manifest"
fi

# 4. C/C++: `make install` into a staging prefix, packed.
t0=$SECONDS
cstage=$work/c/turnfit-$version && rm -rf "$work/c" && mkdir -p "$cstage" "$dist/c"
strip_c=1; [ "$profile" = release ] && strip_c=0
# `make install` itself (its build step is the shared build, a no-op here).
# The libraries are the glibc 2.17 build (1b) when there is one.
TURNFIT_LIB_DIR=$native_dir TURNFIT_SHARED_BUILD=${TURNFIT_SHARED_BUILD:-1} STRIP=$strip_c \
    make --no-print-directory install PREFIX="$cstage" PROFILE="$profile" >/dev/null
ctar=turnfit-$version-linux-$(uname -m).tar.gz
tar -C "$work/c" -czf "$dist/c/$ctar" "turnfit-$version"
say c "$ctar ($((SECONDS - t0)) s)" | tee -a "$manifest"

# 5. Python: the abi3 wheel and the sdist (maturin, pinned with auditwheel in
# bindings/python/requirements-dist.txt). The wheel is built exactly as
# bindings/python/test.sh builds it (same maturin, target dir and flags), so
# cargo has little left to do after that suite. It comes after every other
# cargo call: maturin builds PyO3 with its own PYO3_CONFIG_FILE, which
# `cargo build --workspace` does not set, so each of the two rebuilds PyO3
# and the extension module (about 20 s) after the other.
t0=$SECONDS
if command -v python3 >/dev/null && python3 -m venv --help >/dev/null 2>&1; then
    venv=$work/venv
    req=$root/bindings/python/requirements-dist.txt
    stamp="$venv/.requirements-$(sha256sum "$req" | cut -c1-16)"
    if [ ! -e "$stamp" ]; then
        rm -rf "$venv" && python3 -m venv "$venv"
        "$venv/bin/pip" install -q --disable-pip-version-check -r "$req"
        touch "$stamp"
    fi
    mkdir -p "$dist/python"
    prof=(); [ "$profile" = debug ] || prof=(--profile "$profile")
    # For glibc 2.17 (1b): maturin links with zig (the ziglang of target/cross/venv,
    # first on the PATH) as manylinux2014, in target/cross beside the other
    # 2.17 natives, whose build of the core it shares.
    wheel_env=(CARGO_TARGET_DIR="$root/target") wheel_args=()
    if [ "$native_dir" != "$tdir" ]; then
        wheel_env=(CARGO_TARGET_DIR="$root/target/cross" PATH="$zvenv/bin:$PATH")
        wheel_args=(--zig --target x86_64-unknown-linux-gnu --compatibility manylinux2014)
    fi
    env "${wheel_env[@]}" "$venv/bin/maturin" build --locked -q "${prof[@]}" "${wheel_args[@]}" \
        --manifest-path bindings/python/Cargo.toml --out "$dist/python" --interpreter python3 2>&1 \
        | grep -v '^📦\|^🔗\|^🐍\|^✏️\|^🍹' || true
    "$venv/bin/maturin" sdist --manifest-path bindings/python/Cargo.toml --out "$dist/python" 2>&1 \
        | grep -v '^📦\|^🔗\|^🐍\|^✏️\|^🍹' || true
    wheel=$(ls "$dist"/python/turnfit-"$version"-cp39-abi3-*.whl 2>/dev/null | head -1)
    [ -n "$wheel" ] || { echo "maturin built no abi3 wheel for $version"; ls "$dist/python"; exit 1; }
    [ -e "$dist/python/turnfit-$version.tar.gz" ] || { echo "maturin built no sdist"; exit 1; }
    shown=$("$venv/bin/auditwheel" show "$wheel")
    tag=$(sed -n 's/.*consistent with.*//; s/^the following platform tag: "\(.*\)"\./\1/p' <<<"$shown" | head -1)
    [ -n "$tag" ] || tag=$(grep -o '"manylinux[^"]*"' <<<"$shown" | head -1 | tr -d '"')
    case "$tag" in manylinux*) ;; *) echo "auditwheel show: not a manylinux wheel:"; echo "$shown"; exit 1 ;; esac
    case "$wheel" in *"$tag"*) ;; *) echo "the wheel's name does not carry auditwheel's tag $tag: $(basename "$wheel")"; exit 1 ;; esac
    say python "$(basename "$wheel") (auditwheel show: $tag), turnfit-$version.tar.gz ($((SECONDS - t0)) s)" | tee -a "$manifest"
else
    skip python "python3 with venv not installed"
fi

# 6. Haskell: cabal sdist, and cabal check (what Hackage would refuse fails).
t0=$SECONDS
if command -v cabal >/dev/null; then
    export CABAL_DIR=$work/cabal
    mkdir -p "$CABAL_DIR" && printf 'offline: True\n' > "$CABAL_DIR/config"
    mkdir -p "$dist/haskell"
    (cd bindings/haskell && cabal check >"$work/cabal-check.log" 2>&1) || { cat "$work/cabal-check.log"; echo "cabal check failed"; exit 1; }
    (cd bindings/haskell && cabal sdist --builddir="$work/cabal-dist" --output-dir "$dist/haskell" >/dev/null)
    hs=$dist/haskell/turnfit-$version.tar.gz
    [ -e "$hs" ] || { echo "cabal sdist wrote no turnfit-$version.tar.gz"; exit 1; }
    listing=$(tar -tzf "$hs")
    if grep -q '\.\./' <<<"$listing"; then echo "the cabal sdist names files outside the package"; exit 1; fi
    say haskell "turnfit-$version.tar.gz (cabal check ok) ($((SECONDS - t0)) s)" | tee -a "$manifest"
else
    skip haskell "cabal not installed"
fi

(cd "$dist" && find . -path ./cross -prune -o -type f ! -name SHA256SUMS ! -name MANIFEST -print | LC_ALL=C sort | xargs sha256sum > SHA256SUMS)
echo "dist/: $(du -sh --exclude=cross "$dist" | cut -f1) in $((SECONDS - start)) s"
