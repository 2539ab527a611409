# The jar's linux-aarch64 native run by an arm64 JVM under qemu-aarch64
# (sourced by scripts/dist-cross.sh after run.sh): Debian bookworm's arm64
# OpenJDK 17 and JNA's arm64 libjnidispatch (libjna-jni), unpacked into the
# arm64 root run.sh makes, run the Kotlin program scripts/dist-test.sh
# compiles from the README (its class files, which are the same on every
# machine) against dist/cross/jvm/turnfit-V.jar with only JNA, kotlin-stdlib
# and kotlinx-coroutines beside it, as the README's class path has it.

# jvm_arm64: prints the arm64 root's java, adding the JVM packages to the
# root first. libjna-jni at the version of this machine's libjna-java (the
# jna.jar on the class path): JNA refuses a libjnidispatch of another version.
jvm_arm64() {
    local sysroot jna debs stamp
    qemu_arm64 && sysroot=$(arm64_root) || return 3
    jna=$(dpkg-query -W -f='${Version}' libjna-java 2>/dev/null) || { echo "Debian's libjna-java is not installed (the class path's jna.jar)" >&2; return 3; }
    local pkgs=(openjdk-17-jre-headless:arm64 "libjna-jni:arm64=$jna")
    stamp=$sysroot/.jvm-$(printf '%s\n' "${pkgs[@]}" | sha256sum | cut -c1-16)
    if [ ! -e "$stamp" ]; then
        debs=$cross_cache/debs-arm64-jvm
        rm -rf "$debs" && mkdir -p "$debs"
        (cd "$debs" && apt-get download -q "${pkgs[@]}" >/dev/null 2>&1) \
            || { echo "apt-get download ${pkgs[*]} failed" >&2; return 3; }
        for d in "$debs"/*.deb; do dpkg -x "$d" "$sysroot"; done
        rm -rf "$debs"
        touch "$stamp"
    fi
    echo "$sysroot/usr/lib/jvm/java-17-openjdk-arm64/bin/java"
}

# run_jar_arm64 JAR EXPECTED: App.kt's class files (target/dist/jvm-app.jar,
# kept by scripts/dist-test.sh jvm) run on the arm64 JVM with JAR on the
# class path; JNA must load linux-aarch64/libturnfit_uniffi.so from JAR
# (jna.debug_load) and its libjnidispatch from the root (jna.debug_load.jna), and the count and fit must be EXPECTED's. C1 only
# (-XX:TieredStopAtLevel=1): under qemu it starts faster than the default
# tiers and as fast as -Xint here.
run_jar_arm64() {
    local jar=$1 want=$2 java sysroot run=$cross_cache/jvm-app-arm64 app=$root/target/dist/jvm-app.jar
    local klib=$root/bindings/uniffi/kotlin/node_modules/kotlin-compiler/lib before after out jna
    [ -e "$jar" ] || { echo "no $jar (make dist first: it adds linux-aarch64/ to dist/jvm's jar)" >&2; return 3; }
    [ -e "$app" ] || { echo "no $app (scripts/dist-test.sh jvm compiles it)" >&2; return 3; }
    [ -e "$klib/kotlin-stdlib.jar" ] || { echo "no kotlinc lib/ (bindings/uniffi/kotlin/build-jar.sh installs it)" >&2; return 3; }
    unzip -l "$jar" | grep -q ' linux-aarch64/libturnfit_uniffi.so$' || { echo "$jar lacks linux-aarch64/libturnfit_uniffi.so"; exit 1; }
    java=$(jvm_arm64) || return 3
    sysroot=$(arm64_root)
    jna=$(dpkg-query -W -f='${Version}' libjna-java)
    rm -rf "$run" && mkdir -p "$run/tmp"
    cp "$app" "$run/app.jar" && cp "$jar" "$run/turnfit-$version.jar"
    cp /usr/share/java/jna.jar "$klib/kotlin-stdlib.jar" "$klib/kotlinx-coroutines-core-jvm.jar" examples/data/agent-loop.json "$run/"
    read -r before after < <(python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).read().split("\n")[2]); print(r["tokens_before"], r["tokens_after"])' "$want")
    out=$(cd "$run" && qemu-aarch64 -L "$sysroot" -E EXPECT_BEFORE="$before" -E EXPECT_AFTER="$after" "$java" -XX:TieredStopAtLevel=1 \
        -Djna.debug_load=true -Djna.debug_load.jna=true -Djna.tmpdir="$run/tmp" \
        -cp "app.jar:turnfit-$version.jar:jna.jar:kotlin-stdlib.jar:kotlinx-coroutines-core-jvm.jar" AppKt 2>&1) \
        || { echo "$out" | tail -30; echo "the arm64 JVM run failed"; exit 1; }
    grep -q "Found library resource at jar:file:.*turnfit-$version.jar!/linux-aarch64/libturnfit_uniffi.so" <<<"$out" \
        || { echo "$out"; echo "JNA did not load linux-aarch64/libturnfit_uniffi.so from the jar"; exit 1; }
    grep -q "Found jnidispatch at /usr/lib/aarch64-linux-gnu/jni/" <<<"$out" \
        || { echo "$out"; echo "JNA did not load Debian's arm64 libjnidispatch"; exit 1; }
    out=$(grep '^jvm:' <<<"$out") || { echo "App.kt printed no result"; exit 1; }
    grep -q "^jvm: .*: $(head -1 "$want"), fit $before -> $after," <<<"$out" || { echo "$out"; echo "not $(head -1 "$want")"; exit 1; }
    echo "jar run under qemu-aarch64 on Debian's arm64 OpenJDK $(sed -n 's/^JAVA_VERSION="\(.*\)"/\1/p' "$sysroot/usr/lib/jvm/java-17-openjdk-arm64/release") (-XX:TieredStopAtLevel=1), JNA $jna's arm64 libjnidispatch: App.kt ${out#jvm: turnfit.jar with no library path: }; JNA loaded linux-aarch64/libturnfit_uniffi.so from jvm/turnfit-$version.jar"
}
