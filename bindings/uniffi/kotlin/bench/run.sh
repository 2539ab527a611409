#!/usr/bin/env bash
# JVM benchmark (figures in docs/benchmarks.md, "Kotlin on the JVM"):
#
#   bash bindings/uniffi/kotlin/bench/run.sh [JTOKKIT_DIR]
#
# turnfit's release cdylib through the generated Kotlin (JNA), against jtokkit
# when JTOKKIT_DIR is a source tree of github.com/knuddelsgmbh/jtokkit (its
# lib/src/main/java and lib/src/main/resources). jtokkit is not on Debian and
# Maven Central is not reachable from these machines, so it is compiled here
# with plain javac into a temporary folder; nothing of it is committed. A
# source tree can be had with `git clone https://github.com/knuddelsgmbh/jtokkit`
# (the figures were taken at commit da7311d). Without it, turnfit runs alone.
# SKIP_BUILD=1 uses the libraries already in target/ (no cargo). Needs what bindings/uniffi/test.sh installs (JNA, kotlinc under
# bindings/uniffi/kotlin/node_modules).
set -euo pipefail
cd "$(dirname "$0")/../../../.."
root=$PWD
jt=${1:-}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

[ -n "${SKIP_BUILD:-}" ] || cargo build --release -p turnfit-uniffi --locked
[ -n "${SKIP_BUILD:-}" ] || cargo build -p turnfit-uniffi-bindgen --locked
lib=$root/target/release/libturnfit_uniffi.so
kc=$root/bindings/uniffi/kotlin/node_modules/kotlin-compiler
[ -x "$kc/bin/kotlinc" ] || { echo "run bindings/uniffi/test.sh first (it installs the pinned kotlinc)"; exit 1; }
python3 bench/gen_inputs.py target/bench-inputs >/dev/null

"$root/target/debug/uniffi-bindgen" generate --library "$lib" --language kotlin --out-dir "$out/kotlin" --no-format >/dev/null
cp=/usr/share/java/jna.jar:$kc/lib/kotlinx-coroutines-core-jvm.jar
"$kc/bin/kotlinc" -nowarn -jvm-target 17 -cp "$cp" -d "$out/turnfit.jar" \
    $(find "$out/kotlin" -name '*.kt') bindings/uniffi/kotlin/src/main/kotlin/dev/turnfit/Facade.kt 2>&1 | grep -v '^warning' || true
"$kc/bin/kotlinc" -nowarn -jvm-target 17 -cp "$cp:$out/turnfit.jar" -d "$out/bench.jar" \
    bindings/uniffi/kotlin/bench/Bench.kt 2>&1 | grep -v '^warning' || true
run_cp=$cp:$out/turnfit.jar:$out/bench.jar:$kc/lib/kotlin-stdlib.jar

if [ -n "$jt" ]; then
    [ -d "$jt/lib/src/main/java" ] || { echo "$jt has no lib/src/main/java (a jtokkit source tree)"; exit 1; }
    mkdir -p "$out/jtokkit"
    javac -nowarn -encoding UTF-8 -d "$out/jtokkit" $(find "$jt/lib/src/main/java" -name '*.java')
    cp -r "$jt/lib/src/main/resources/." "$out/jtokkit/"
    run_cp=$run_cp:$out/jtokkit
    echo "jtokkit: compiled from $jt with $(javac -version 2>&1)"
fi
java -version 2>&1 | head -1
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
java -Xss4m -Djna.library.path="$root/target/release" -cp "$run_cp" BenchKt target/bench-inputs
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
