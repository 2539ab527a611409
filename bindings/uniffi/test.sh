#!/usr/bin/env bash
# The uniffi binding's suite (run by scripts/test.sh):
#  1. Debian's JNA, JUnit 5 console, Gson and clang (apt-get as root; without
#     them and not root: SKIPPED, exit 0), kotlinc pinned by
#     kotlin/package-lock.json (npm ci into kotlin/node_modules);
#  2. the cdylib and the uniffi-bindgen binary, dev profile, in the shared
#     workspace target/ (timed);
#  3. the schema types (Kotlin data classes, Swift Codable structs) compared
#     with what scripts/schema_types.py generates from schemas/ (drift check);
#     Kotlin generated in library mode into target/uniffi/kotlin; Swift
#     regenerated into a temporary folder and compared with the committed
#     swift/ sources (drift check); the FFI header through clang -fsyntax-only;
#  4. the Kotlin sources and tests compiled with kotlinc and run with the
#     JUnit 5 console launcher on the JVM (vectors N/N, errors, threads,
#     coroutines, lone surrogates, 100k create/close);
#  5. the Kotlin jar installed into an empty folder and used offline;
#  6. Swift tests: run where `swift` exists, else SKIPPED with the reason.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
pkg=$root/bindings/uniffi
out=$root/target/uniffi
start=$SECONDS
mkdir -p "$out"

debs=(libjna-java junit5 libgoogle-gson-java clang)
missing=()
for d in "${debs[@]}"; do
    dpkg-query -W -f='${Status}' "$d" 2>/dev/null | grep -q 'install ok installed' || missing+=("$d")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "installing ${missing[*]} with apt-get"
        apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    else
        echo "SKIPPED: uniffi binding suite: ${missing[*]} not installed and not root (apt-get install -y --no-install-recommends ${debs[*]})"
        exit 0
    fi
fi
command -v java >/dev/null || { echo "SKIPPED: uniffi binding suite: no java (OpenJDK 17)"; exit 0; }
command -v npm >/dev/null || { echo "SKIPPED: uniffi binding suite: no npm to install the pinned kotlinc"; exit 0; }

# The schema types: committed, regenerated from schemas/ and compared.
python3 "$pkg/scripts/schema_types.py" --check

kdir=$pkg/kotlin
kc=$kdir/node_modules/kotlin-compiler
kotlinc=$kc/bin/kotlinc
klib=$kc/lib

t0=$SECONDS
# One cargo invocation for both, so their features unify once (building them
# separately would compile the core twice: uniffi's `cli` feature turns on
# indexmap/serde and memchr/std, which serde_json and so the core depend on).
# Inside the test command this is the shared workspace build, a no-op here.
bash "$root/scripts/cargo-build.sh" turnfit-uniffi turnfit-uniffi-bindgen
echo "cdylib + uniffi-bindgen (dev profile) built in $((SECONDS - t0)) s"
lib=$root/target/debug/libturnfit_uniffi.so
bindgen=$root/target/debug/uniffi-bindgen

# Kotlin: generated and compiled into target/uniffi/turnfit.jar by
# kotlin/build-jar.sh (installs kotlinc on first use; skips kotlinc when
# nothing changed), the same jar scripts/dist.sh packages.
bash "$kdir/build-jar.sh"
# Swift: committed under swift/; regenerate and compare.
rm -rf "$out/swift" && mkdir -p "$out/swift"
"$bindgen" generate --library "$lib" --language swift --out-dir "$out/swift" --no-format >/dev/null
bash "$pkg/swift/sync.sh" --check "$out/swift"
clang -fsyntax-only -Wall -Wextra -Werror -x c-header "$pkg/swift/Sources/TurnfitFFI/include/TurnfitFFI.h"
echo "swift: committed sources match the generator; TurnfitFFI.h passes clang -fsyntax-only"
# No Swift compiler here: the Swift this repository writes gets a syntax check
# with tree-sitter's Swift grammar (PyPI, pinned; venv kept under target/).
venv=$out/swift-syntax-venv
sstamp="$venv/.requirements-$(sha256sum "$pkg/swift/syntax-requirements.txt" | cut -c1-16)"
if [ ! -e "$sstamp" ]; then
    rm -rf "$venv"
    if python3 -m venv "$venv" >/dev/null 2>&1 \
        && "$venv/bin/pip" install -q --disable-pip-version-check -r "$pkg/swift/syntax-requirements.txt" >/dev/null 2>&1; then
        touch "$sstamp"
    fi
fi
if [ -e "$sstamp" ]; then
    "$venv/bin/python" "$pkg/swift/syntax_check.py" "$pkg/swift/Sources/Turnfit/SchemaTypes.swift" \
        "$pkg/swift/Sources/Turnfit/Facade.swift" "$pkg/swift/Sources/Turnfit/FitTurn.swift" \
        "$pkg"/swift/Tests/TurnfitTests/*.swift "$root"/examples/swift/Sources/*/*.swift
else
    echo "SKIPPED: Swift syntax check: could not install tree-sitter-swift (pip, offline?)"
fi

# Android recipe's alignment check, on the Linux build (x86-64 linkers align
# LOAD segments to 4 KiB here; Android builds must pass the 16 KiB default).
python3 "$pkg/android/check_elf_alignment.py" --min 4096 "$lib"
python3 "$pkg/android/check_elf_alignment.py" "$lib" || echo "(for information: this Linux build is not 16 KiB aligned; the Android recipe links with -z max-page-size=16384)"

# Main (generated + facade + schema types) is compiled by build-jar.sh above;
# the tests here. Gson is needed to compile the typed entry points (Typed.kt,
# types/SchemaTypes.kt), not to run the rest: the empty-folder check below
# runs without it.
cp=/usr/share/java/jna.jar:$klib/kotlinx-coroutines-core-jvm.jar
testcp=$cp:/usr/share/java/gson.jar:$klib/kotlin-test.jar:$klib/kotlin-test-junit5.jar:/usr/share/java/junit-jupiter-api.jar:/usr/share/java/opentest4j.jar:/usr/share/java/apiguardian-api.jar
t0=$SECONDS
rm -rf "$out/classes" "$out/test-classes"
"$kotlinc" -nowarn -jvm-target 17 -cp "$testcp:$out/turnfit.jar" -d "$out/turnfit-tests.jar" \
    $(find "$kdir/src/test/kotlin" -name '*.kt') 2>&1 | grep -v '^warning' || true
[ -s "$out/turnfit-tests.jar" ] || { echo "kotlinc failed (tests)"; exit 1; }
echo "kotlinc (tests): $((SECONDS - t0)) s"

run_cp=$testcp:$out/turnfit.jar:$out/turnfit-tests.jar:$klib/kotlin-stdlib.jar
# A bounded heap, so the create/close test measures native memory, not heap growth.
jvm=(java -Xmx256m -Djna.library.path="$root/target/debug" -Dturnfit.repo="$root" -Xss4m)
"${jvm[@]}" -jar /usr/share/java/junit-platform-console-standalone.jar \
    --class-path "$run_cp" $(for c in VectorsTest FastCountTest TokenizerTest HostCounterTest BytesTest TracerTest ErrorsTest ConcurrencyTest LifetimeTest WindowTest SchemaTypesTest TypedTest EventsTest TurnTest ErrorContextTest; do printf -- "--select-class dev.turnfit.%s " $c; done) --disable-banner --details=tree --fail-if-no-tests

# examples/kotlin: compiled against the jar and run.
"$kotlinc" -nowarn -jvm-target 17 -cp "$cp:/usr/share/java/gson.jar:$out/turnfit.jar" -d "$out/example.jar" \
    "$root/examples/kotlin/AgentLoop.kt" 2>&1 | grep -v '^warning' || true
[ -s "$out/example.jar" ] || { echo "kotlinc failed (examples/kotlin)"; exit 1; }
ex_out=$("${jvm[@]}" -cp "$cp:/usr/share/java/gson.jar:$out/turnfit.jar:$out/example.jar:$klib/kotlin-stdlib.jar" AgentLoopKt)
echo "examples/kotlin/AgentLoop.kt:"; echo "$ex_out" | tail -6
grep -q 'handoff refused (cycle_detected)' <<<"$ex_out" || { echo "example: the call stack did not refuse the cycle"; exit 1; }
grep -q 'summary applied' <<<"$ex_out" || { echo "example: no summary was applied"; exit 1; }
grep -q 'event compacted: {"kind":"compacted"' <<<"$ex_out" || { echo "example: no compacted event was logged"; exit 1; }

# The jar in an empty folder, offline: only the jar, JNA, the Kotlin stdlib
# and the native library.
empty=$(mktemp -d)
cp "$out/turnfit.jar" /usr/share/java/jna.jar "$klib/kotlin-stdlib.jar" "$lib" "$empty/"
cat > "$empty/Main.kt" <<'KT'
import dev.turnfit.countTokens
fun main() {
    dev.turnfit.Tokenizer.forModel("gpt-4o").use { println("empty folder: gpt-4o counts 'Hello, world!' as ${it.countTokens("Hello, world!")}") }
}
KT
(cd "$empty" && "$kotlinc" -nowarn -jvm-target 17 -cp turnfit.jar -d main.jar Main.kt 2>/dev/null \
    && java -Djna.library.path=. -cp main.jar:turnfit.jar:jna.jar:kotlin-stdlib.jar MainKt) | tee "$out/empty.out"
grep -q "as 4$" "$out/empty.out" || { echo "the jar did not work from an empty folder"; exit 1; }
rm -rf "$empty"

echo "ok: Kotlin on the JVM"
echo "SKIPPED: Swift tests (bindings/uniffi/swift/Tests/TurnfitTests): no swift compiler on this machine" \
    "$(command -v swift >/dev/null && echo '(found one: run swift test in bindings/uniffi/swift)' || true)"
echo "uniffi binding suite: $((SECONDS - start)) s"
