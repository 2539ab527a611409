#!/usr/bin/env bash
# Installs each package of dist/ (scripts/dist.sh) into an empty place and runs
# a small program against it there: count "Hello, world!" (4 tokens), fit the
# committed agent loop (examples/data/agent-loop.json, copied in) to 16,000
# tokens for gpt-4o and compare the report with the CLI's, and trigger an error
# and check its kind (unknown_model). Every program runs in a fresh temporary
# folder, from that folder, under `env -i` with a PATH that holds no cargo or
# rustc and a HOME of its own (empty npm cache, no pip config, no cabal store).
#
#   scripts/dist-test.sh python|node|jvm|c|haskell|all
#   scripts/dist-test.sh --check LANG   exit 0 when LANG can be tested here,
#                                       else print why not and exit 1
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dist=$root/dist
version=$(python3 scripts/version.py)
abi=$(sed -n 's/^pub const TURNFIT_ABI_VERSION: u32 = \([0-9]*\);/\1/p' ffi/src/version.rs)

# Tools each language needs, and its artifacts in dist/.
why_not() {
    local lang=$1
    case $lang in
        python) command -v python3 >/dev/null || { echo "python3 not installed"; return; }
                ls "$dist"/python/turnfit-"$version"-cp39-abi3-*.whl >/dev/null 2>&1 || { echo "no wheel in dist/python ($(manifest_skip python))"; return; } ;;
        node)   command -v node >/dev/null && command -v npm >/dev/null || { echo "node and npm not installed"; return; }
                [ -e "$dist/node/turnfit-$version.tgz" ] || { echo "no npm package in dist/node ($(manifest_skip node))"; return; }
                for d in typescript langchain @langchain/core @openai/agents-core; do
                    [ -e "bindings/node/node_modules/$d/package.json" ] || { echo "bindings/node/node_modules lacks $d (bindings/node/test.sh installs the pinned devDependencies the type check uses)"; return; }
                done ;;
        jvm)    command -v java >/dev/null || { echo "java not installed"; return; }
                [ -e /usr/share/java/jna.jar ] || { echo "Debian's libjna-java not installed"; return; }
                [ -x bindings/uniffi/kotlin/node_modules/kotlin-compiler/bin/kotlinc ] || { echo "kotlinc not installed (bindings/uniffi/kotlin/build-jar.sh installs it)"; return; }
                [ -e "$dist/jvm/turnfit-$version.jar" ] || { echo "no jar in dist/jvm ($(manifest_skip jvm))"; return; } ;;
        c)      command -v cc >/dev/null && command -v c++ >/dev/null && command -v pkg-config >/dev/null || { echo "cc, c++ or pkg-config not installed"; return; }
                ls "$dist"/c/turnfit-"$version"-linux-*.tar.gz >/dev/null 2>&1 || { echo "no C tarball in dist/c"; return; } ;;
        haskell) command -v ghc >/dev/null && command -v cabal >/dev/null && command -v pkg-config >/dev/null || { echo "ghc, cabal or pkg-config not installed"; return; }
                ghc-pkg list --global aeson 2>/dev/null | grep -q aeson || { echo "aeson not in GHC's global package db (Debian's libghc-aeson-dev)"; return; }
                ghc-pkg list --global monad-logger 2>/dev/null | grep -q monad-logger || { echo "monad-logger not in GHC's global package db (Debian's libghc-monad-logger-dev)"; return; }
                [ -e "$dist/haskell/turnfit-$version.tar.gz" ] || { echo "no cabal sdist in dist/haskell ($(manifest_skip haskell))"; return; }
                ls "$dist"/c/turnfit-"$version"-linux-*.tar.gz >/dev/null 2>&1 || { echo "no C tarball in dist/c (the Haskell package links it through pkg-config)"; return; } ;;
        *) echo "unknown language $lang"; return ;;
    esac
}
manifest_skip() { sed -n "s/^skipped $1: //p" "$dist/MANIFEST" 2>/dev/null | head -1 | grep . || echo "run make dist"; }

if [ "${1:-}" = --check ]; then
    reason=$(why_not "${2:?--check LANG}")
    [ -z "$reason" ] || { echo "$reason"; exit 1; }
    exit 0
fi

# What the CLI of the same build reports for the same fit: every language must agree.
cli=$root/target/${PROFILE:-debug}/turnfit
[ -x "$cli" ] || { echo "$cli missing: the CLI gives the expected figures (cargo build -p turnfit-cli)"; exit 1; }
fit_report=$("$cli" fit examples/data/agent-loop.json --model gpt-4o --max-tokens 16000 2>&1 >/dev/null)
before=$(python3 -c 'import json,sys; r=json.loads(sys.stdin.read()); print(r["tokens_before"])' <<<"$fit_report")
after=$(python3 -c 'import json,sys; r=json.loads(sys.stdin.read()); print(r["tokens_after"])' <<<"$fit_report")
[ "$before" -gt "$after" ] || { echo "the CLI's fit did not drop anything ($before -> $after); the check would prove nothing"; exit 1; }

# A PATH without cargo/rustc: the directories of PATH that hold neither.
clean_path=
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do
    [ -n "$d" ] && [ ! -e "$d/cargo" ] && [ ! -e "$d/rustc" ] || continue
    case ":$clean_path:" in *":$d:"*) ;; *) clean_path=${clean_path:+$clean_path:}$d ;; esac
done
# pyenv's shims need its HOME; use the interpreter they resolve to.
py=$(python3 -c 'import sys; print(sys.executable)')

tmps=()
cleanup() { for t in "${tmps[@]+"${tmps[@]}"}"; do rm -rf "$t"; done; }
trap cleanup EXIT
# new_place: an empty folder with the loop in it; sets $place.
new_place() {
    place=$(mktemp -d "${TMPDIR:-/tmp}/turnfit-dist-$1.XXXXXX")
    tmps+=("$place")
    mkdir -p "$place/home"
    cp examples/data/agent-loop.json "$place/"
}
# clean CMD...: run in $place, no inherited environment, no cargo.
clean() {
    (cd "$place" && env -i HOME="$place/home" PATH="$clean_path" LANG=C.UTF-8 TMPDIR="$place" \
        EXPECT_VERSION="$version" EXPECT_BEFORE="$before" EXPECT_AFTER="$after" ${CLEAN_ENV[@]+"${CLEAN_ENV[@]}"} "$@")
}
CLEAN_ENV=()
place=$(mktemp -d) && tmps+=("$place")
clean bash -c '! command -v cargo >/dev/null && ! command -v rustc >/dev/null' \
    || { echo "cargo or rustc still on the clean PATH ($clean_path)"; exit 1; }

# The README's install steps (section "Installing it"): the fenced block after
# the line `<!-- dist-test:NAME -->`, run as it stands, so a step that does not
# work as written fails here.
readme_steps() {
    local steps
    steps=$(awk -v m="<!-- dist-test:$1 -->" '$0 == m { f = 1; next } f == 1 && /^```/ { f = 2; next } f == 2 && /^```/ { exit } f == 2 { print }' README.md)
    [ -n "$steps" ] || { echo "README.md has no block after <!-- dist-test:$1 -->" >&2; exit 1; }
    printf '%s\n' "$steps"
}
# check_glibc WHAT FILE...: every glibc symbol version FILE needs (readelf -V,
# the loader's view) is GLIBC_2.17 or older, so the package loads on glibc
# 2.17 systems (RHEL/CentOS 7, Amazon Linux 2, Debian 9+, Ubuntu 18.04+); on
# failure objdump -T names the symbols that need more.
check_glibc() {
    local what=$1 f need max; shift
    for f in "$@"; do
        need=$(readelf -V --wide "$f" | grep -o 'Name: GLIBC_[0-9][0-9.]*' | sed 's/Name: //' | sort -uV)
        [ -n "$need" ] || { echo "$what: $(basename "$f") needs no glibc version at all: not a glibc build?"; exit 1; }
        max=$(tail -1 <<<"$need")
        if [ "$(printf '%s\n' GLIBC_2.17 "$max" | sort -V | tail -1)" != GLIBC_2.17 ]; then
            echo "$what: $(basename "$f") needs $max (more than GLIBC_2.17):"
            objdump -T "$f" | grep -F "($max)" | head -5
            exit 1
        fi
        echo "$what: $(basename "$f") needs glibc <= ${max#GLIBC_} (readelf -V; none above GLIBC_2.17)"
    done
}
# run_steps NAME: the README's block NAME in $place (clean, as above), echoed first.
run_steps() {
    local steps; steps=$(readme_steps "$1")
    sed 's/^/    $ /' <<<"$steps"
    clean bash -euo pipefail -c "$steps"
}

test_python() {
    new_place python
    local wheel; wheel=$(ls "$dist"/python/turnfit-"$version"-cp39-abi3-*.whl | head -1)
    cp "$wheel" "$place/"
    cat > "$place/app.py" <<'PY'
import json, os, turnfit
assert os.path.realpath(turnfit.__file__).startswith(os.path.realpath(os.getcwd()) + "/venv/"), turnfit.__file__
assert turnfit.__version__ == os.environ["EXPECT_VERSION"], turnfit.__version__
n = turnfit.Tokenizer("o200k_base").count_tokens("Hello, world!")
assert n == 4, n
with open("agent-loop.json") as f:
    conv = json.load(f)
fitted, report = turnfit.fit(conv, model="gpt-4o", max_tokens=16000)
assert (report["tokens_before"], report["tokens_after"]) == (int(os.environ["EXPECT_BEFORE"]), int(os.environ["EXPECT_AFTER"])), report
assert len(fitted["messages"]) < len(conv["messages"])
try:
    turnfit.Tokenizer.for_model("gtp-4o")
    raise SystemExit("no error for an unknown model")
except turnfit.UnknownModelError as e:
    assert e.kind == "unknown_model", e.kind
    kind = e.kind
# Every module the wheel ships (the framework adapters among them) imports
# without its framework installed: the frameworks load when an adapter is used.
import importlib, pkgutil
mods = sorted(m.name for m in pkgutil.iter_modules(turnfit.__path__, "turnfit."))
for name in ("turnfit.langchain", "turnfit.openai_agents", "turnfit.pydantic_ai"):
    assert name in mods, (name, mods)
for name in mods:
    importlib.import_module(name)
print(f"python: turnfit {turnfit.__version__} from the wheel in a fresh venv: count 4, fit {report['tokens_before']} -> {report['tokens_after']}, error {kind}, imported {', '.join(mods)}")
PY
    # The README's steps: a venv, the wheel from the folder, app.py. python3 is
    # the interpreter pyenv's shims resolve to (they need the real HOME).
    CLEAN_ENV=(PATH="$(dirname "$py"):$clean_path" PIP_DISABLE_PIP_VERSION_CHECK=1)
    run_steps python
    CLEAN_ENV=()
    # examples/python against the installed wheel.
    cp examples/python/agent_loop.py "$place/"
    clean venv/bin/python agent_loop.py > "$place/example.out"
    echo "python: examples/python/agent_loop.py ran against the wheel ($(wc -l < "$place/example.out") lines of output)"
    test_python_sdist
}

# The sdist where Rust is missing: the README's steps must stop at pip's build
# step with the message of bindings/python/build_backend/turnfit_backend.py
# (what to install), not with maturin's download of a Rust toolchain. pip
# installs maturin, the build requirement, from a local folder: no index.
test_python_sdist() {
    new_place python-sdist
    cp "$dist/python/turnfit-$version.tar.gz" "$place/"
    local wheelhouse=$root/target/dist/wheelhouse
    local mver; mver=$(sed -n 's/^maturin==//p' bindings/python/requirements-dist.txt)
    if [ ! -e "$wheelhouse/.maturin-$mver" ]; then
        rm -rf "$wheelhouse" && mkdir -p "$wheelhouse"
        "$root/target/dist/venv/bin/pip" download -q --disable-pip-version-check --no-deps --only-binary :all: \
            -d "$wheelhouse" "maturin==$mver"
        touch "$wheelhouse/.maturin-$mver"
    fi
    CLEAN_ENV=(PATH="$(dirname "$py"):$clean_path" PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INDEX=1 PIP_FIND_LINKS="$wheelhouse")
    if run_steps python-sdist > "$place/sdist.out" 2>&1; then
        cat "$place/sdist.out"; echo "the sdist installed with no cargo on the PATH"; exit 1
    fi
    CLEAN_ENV=()
    local msg; msg=$(cat "$place/sdist.out")
    grep -q 'turnfit: building from the source distribution needs Rust >= ' <<<"$msg" \
        && grep -q 'cargo was not found on PATH' <<<"$msg" && grep -q 'https://rustup.rs' <<<"$msg" \
        && grep -q 'pip install --only-binary turnfit turnfit' <<<"$msg" \
        || { cat "$place/sdist.out"; echo "the sdist without Rust did not say what to install"; exit 1; }
    ! grep -q 'Traceback\|puccinialin' <<<"$msg" || { cat "$place/sdist.out"; echo "the sdist without Rust printed a traceback"; exit 1; }
    echo "python (sdist, no Rust): pip stopped with the message naming Rust >= $(sed -n 's/.*needs Rust >= \([0-9.]*\).*/\1/p' <<<"$msg"), rustup and the wheel"
    # With cargo on the PATH the same backend is maturin's: its metadata hook
    # (cargo metadata, no compile) runs in the unpacked sdist.
    tar -C "$place" -xzf "$place/turnfit-$version.tar.gz"
    (cd "$place/turnfit-$version" && mkdir meta && PATH="$root/target/dist/venv/bin:$PATH" "$root/target/dist/venv/bin/python" -c \
        'import sys; sys.path.insert(0, "build_backend"); import turnfit_backend as b; print(b.prepare_metadata_for_build_wheel("meta"))' \
        > "$place/meta.out" 2>&1) || { cat "$place/meta.out"; echo "the sdist's backend failed with cargo on the PATH"; exit 1; }
    grep -q "^Version: $version\$" "$place/turnfit-$version/meta/turnfit-$version.dist-info/METADATA" \
        || { cat "$place/meta.out"; echo "the sdist's backend wrote no metadata for $version"; exit 1; }
    echo "python (sdist, cargo on the PATH): the backend hands over to maturin (metadata for turnfit $version)"
}

test_node() {
    new_place node
    mkdir -p "$place/app"
    cp "$dist"/node/*.tgz "$place/"
    printf '{"name":"app","version":"1.0.0","private":true}\n' > "$place/app/package.json"
    # The main package names every platform package as optional; only this
    # machine's is given, the others are skipped (offline, empty cache).
    CLEAN_ENV=(npm_config_cache="$place/npm-cache" npm_config_update_notifier=false)
    (place=$place/app; clean npm install --offline --no-audit --no-fund --loglevel=error \
        "../turnfit-$version.tgz" "../turnfit-linux-x64-gnu-$version.tgz")
    CLEAN_ENV=()
    [ -e "$place/app/node_modules/turnfit-linux-x64-gnu/turnfit.linux-x64-gnu.node" ] || { echo "the platform package was not installed"; exit 1; }
    ! ls "$place"/app/node_modules/turnfit/*.node >/dev/null 2>&1 || { echo "the main package carries a .node"; exit 1; }
    cp "$place/agent-loop.json" "$place/app/"
    cat > "$place/app/esm.mjs" <<'JS'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { countTokens, fit, Tokenizer, TurnfitError } from 'turnfit'
const require = createRequire(import.meta.url)
const native = require.resolve('turnfit-linux-x64-gnu')
if (!native.includes('/node_modules/turnfit-linux-x64-gnu/')) throw new Error(`native from ${native}`)
if (require('turnfit/package.json').version !== process.env.EXPECT_VERSION) throw new Error('version')
if (countTokens('Hello, world!') !== 4) throw new Error('count')
const conv = JSON.parse(readFileSync('agent-loop.json', 'utf8'))
const { conversation, report } = fit(conv, { model: 'gpt-4o', max_tokens: 16000 })
if (report.tokens_before !== +process.env.EXPECT_BEFORE || report.tokens_after !== +process.env.EXPECT_AFTER) throw new Error(JSON.stringify(report))
if (conversation.messages.length >= conv.messages.length) throw new Error('nothing dropped')
let kind
try { Tokenizer.forModel('gtp-4o') } catch (e) { if (!(e instanceof TurnfitError)) throw e; kind = e.code }
if (kind !== 'unknown_model') throw new Error(`kind ${kind}`)
console.log(`node (ESM): turnfit ${process.env.EXPECT_VERSION} from the tarballs: count 4, fit ${report.tokens_before} -> ${report.tokens_after}, error ${kind}`)
JS
    cat > "$place/app/cjs.cjs" <<'JS'
const { readFileSync } = require('node:fs')
const { countTokens, fit, Tokenizer, TurnfitError } = require('turnfit')
if (countTokens('Hello, world!') !== 4) throw new Error('count')
const { report } = fit(JSON.parse(readFileSync('agent-loop.json', 'utf8')), { model: 'gpt-4o', max_tokens: 16000 })
if (report.tokens_after !== +process.env.EXPECT_AFTER) throw new Error(JSON.stringify(report))
let kind
try { Tokenizer.forModel('gtp-4o') } catch (e) { if (!(e instanceof TurnfitError)) throw e; kind = e.code }
if (kind !== 'unknown_model') throw new Error(`kind ${kind}`)
console.log(`node (CommonJS): count 4, fit ${report.tokens_before} -> ${report.tokens_after}, error ${kind}`)
JS
    (place=$place/app; clean node esm.mjs && clean node cjs.cjs)
    # Every subpath of "exports" by import and require, every "files" entry present.
    cp bindings/node/scripts/subpath-imports.mjs "$place/app/"
    (place=$place/app; clean node subpath-imports.mjs)
    # Each adapter's declarations, as installed, from an .mts and a .cts, with
    # the TypeScript and framework types the Node suite pins (linked from its
    # node_modules: the offline, empty-cache install cannot fetch them).
    for d in typescript langchain @langchain @openai zod; do
        mkdir -p "$place/app/node_modules/$(dirname "$d")"
        ln -s "$root/bindings/node/node_modules/$d" "$place/app/node_modules/$d"
    done
    mkdir -p "$place/app/types"
    cp bindings/node/test/types/subpaths/*.mts bindings/node/test/types/subpaths/*.cts bindings/node/test/types/subpaths/tsconfig.json "$place/app/types/"
    (place=$place/app; clean node node_modules/typescript/bin/tsc -p types/tsconfig.json)
    echo "node: $(ls "$place/app/types" | grep -c 'ts$') .mts/.cts files type-check against the installed declarations (typescript $(node -p "require('$root/bindings/node/node_modules/typescript/package.json').version"))"
    # examples/node against the installed packages.
    cp examples/node/agent-loop.mjs "$place/app/"
    out=$(place=$place/app; clean node agent-loop.mjs)
    grep -q 'summary applied' <<<"$out" || { echo "examples/node/agent-loop.mjs:"; echo "$out"; exit 1; }
    echo "node: examples/node/agent-loop.mjs ran against the installed packages"
}

test_jvm() {
    new_place jvm
    local klib=$root/bindings/uniffi/kotlin/node_modules/kotlin-compiler/lib
    local kbin=$root/bindings/uniffi/kotlin/node_modules/kotlin-compiler/bin
    local pom=$dist/jvm/turnfit-$version.pom
    grep -q "<version>$version</version>" "$pom" || { echo "the POM lacks the version $version"; exit 1; }
    # The README's class path must be the jar plus exactly the POM's required
    # (non-optional) dependencies, each as <artifactId>.jar.
    local required cp_jars
    required=$(python3 - "$pom" <<'PY'
import sys, xml.etree.ElementTree as ET
ns = {"m": "http://maven.apache.org/POM/4.0.0"}
for d in ET.parse(sys.argv[1]).getroot().findall("m:dependencies/m:dependency", ns):
    if d.findtext("m:optional", "false", ns).strip() != "true":
        print(d.findtext("m:artifactId", "", ns) + ".jar")
PY
)
    required=$(LC_ALL=C sort <<<"$required")
    cp_jars=$(readme_steps jvm | sed -n 's/^CP=//p' | tr : '\n' | grep -v "^turnfit-$version.jar$" | LC_ALL=C sort)
    [ "$required" = "$cp_jars" ] || { echo "README's JVM class path ($(echo $cp_jars)) is not the POM's required dependencies ($(echo $required))"; exit 1; }
    # Those jars from where the README says they come: Debian's JNA, kotlinc's lib/.
    cp "$dist/jvm/turnfit-$version.jar" "$place/"
    local j
    for j in $required; do
        case $j in
            jna.jar) cp /usr/share/java/jna.jar "$place/" ;;
            kotlin-stdlib.jar|kotlinx-coroutines-core-jvm.jar) cp "$klib/$j" "$place/" ;;
            *) echo "the POM requires $j; scripts/dist-test.sh does not know where it comes from"; exit 1 ;;
        esac
    done
    cat > "$place/App.kt" <<'KT'
import dev.turnfit.Tokenizer
import dev.turnfit.TurnfitException
import dev.turnfit.countTokens
import dev.turnfit.fit
import dev.turnfit.kind
import java.io.File

fun main() {
    val n = Tokenizer.forModel("gpt-4o").use { it.countTokens("Hello, world!") }
    check(n == 4uL) { "count $n" }
    val r = fit(File("agent-loop.json").readText(), """{"model":"gpt-4o","max_tokens":16000}""")
    val before = Regex("\"tokens_before\":(\\d+)").find(r.report)!!.groupValues[1]
    val after = Regex("\"tokens_after\":(\\d+)").find(r.report)!!.groupValues[1]
    check(before == System.getenv("EXPECT_BEFORE") && after == System.getenv("EXPECT_AFTER")) { r.report }
    val kind = try { Tokenizer.forModel("gtp-4o"); "none" } catch (e: TurnfitException) { e.kind }
    check(kind == "unknown_model") { "kind $kind" }
    println("jvm: turnfit.jar with no library path: count 4, fit $before -> $after, error $kind")
}
KT
    # The README's steps: kotlinc at its default JVM target (1.8), which must
    # be able to inline the jar's inline functions (`use`), then java with the
    # class path alone. JAVA_TOOL_OPTIONS turns on JNA's load log.
    CLEAN_ENV=(PATH="$kbin:$clean_path" JAVA_TOOL_OPTIONS=-Djna.debug_load=true)
    run_steps jvm > "$place/run.out" 2>&1 || { cat "$place/run.out"; echo "the README's JVM steps failed"; exit 1; }
    CLEAN_ENV=()
    grep '^jvm:' "$place/run.out" || { cat "$place/run.out"; exit 1; }
    local major; major=$(unzip -p "$place/app.jar" AppKt.class | od -An -j6 -N2 -tu1 | awk '{print $1 * 256 + $2}')
    [ "$major" = 52 ] || { echo "kotlinc's default target made class file version $major, not 52 (Java 8): the check proves nothing"; exit 1; }
    grep -q "Found library resource at jar:file:.*turnfit-$version.jar!/linux-x86-64/libturnfit_uniffi.so" "$place/run.out" \
        || { echo "JNA did not load libturnfit_uniffi.so from the jar:"; cat "$place/run.out"; exit 1; }
    echo "jvm: App.kt compiled at kotlinc's default target (Java 8 class files); JNA loaded linux-x86-64/libturnfit_uniffi.so from the jar (jna.debug_load)"
    # Its class files, which `make dist-cross` runs on the arm64 JVM
    # (scripts/cross/jvm-arm64.sh): bytecode is the same on every machine.
    mkdir -p "$root/target/dist" && cp "$place/app.jar" "$root/target/dist/jvm-app.jar"
    # examples/kotlin against the jar, with Gson, the POM's optional
    # dependency for the typed API, added to the README's class path.
    cp examples/kotlin/AgentLoop.kt /usr/share/java/gson.jar "$place/"
    local cp; cp=turnfit-$version.jar:$(echo $required | tr ' ' :):gson.jar
    (cd "$place" && "$kbin/kotlinc" -nowarn -cp "$cp" -d example.jar AgentLoop.kt 2>&1 | grep -v '^warning' || true)
    [ -s "$place/example.jar" ] || { echo "kotlinc could not compile examples/kotlin/AgentLoop.kt against the jar"; exit 1; }
    out=$(clean java -cp "example.jar:$cp" AgentLoopKt)
    grep -q 'summary applied' <<<"$out" || { echo "examples/kotlin/AgentLoop.kt:"; echo "$out"; exit 1; }
    echo "jvm: examples/kotlin/AgentLoop.kt ran against the jar"
}

write_c_app() {
    cat > "$place/app.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "turnfit.h"

static long field(const char *json, const char *key) {
    const char *p = strstr(json, key);
    return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

int main(void) {
    turnfit_tokenizer *tok = NULL;
    turnfit_error *err = NULL;
    size_t n = 0;
    if (turnfit_tokenizer_new("o200k_base", 10, 0, &tok, &err) != TURNFIT_STATUS_OK
        || turnfit_tokenizer_count(tok, "Hello, world!", 13, &n, &err) != TURNFIT_STATUS_OK || n != 4) {
        fprintf(stderr, "count failed\n");
        return 1;
    }
    turnfit_tokenizer_free(tok);

    FILE *f = fopen("agent-loop.json", "rb");
    if (!f) return 1;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)len);
    if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) return 1;
    fclose(f);
    const char *opts = "{\"model\":\"gpt-4o\",\"max_tokens\":16000}";
    turnfit_string conv = {0}, report = {0};
    turnfit_status st = turnfit_fit(NULL, buf, (size_t)len, opts, strlen(opts), &conv, &report, &err);
    free(buf);
    if (st != TURNFIT_STATUS_OK) {
        fprintf(stderr, "fit: %s\n", turnfit_error_message(err, NULL));
        return 1;
    }
    long before = field(report.ptr, "\"tokens_before\":"), after = field(report.ptr, "\"tokens_after\":");
    turnfit_string_free(&conv);
    turnfit_string_free(&report);
    if (before != atol(getenv("EXPECT_BEFORE")) || after != atol(getenv("EXPECT_AFTER"))) {
        fprintf(stderr, "fit: %ld -> %ld\n", before, after);
        return 1;
    }

    st = turnfit_tokenizer_new_for_model(NULL, "gtp-4o", 6, NULL, 0, 0, &tok, &err);
    if (st != TURNFIT_STATUS_UNKNOWN_MODEL) return 1;
    turnfit_error_free(err);
    if (strcmp(turnfit_version(), getenv("EXPECT_VERSION")) != 0) return 1;
    printf("count 4, fit %ld -> %ld, error %s (turnfit %s)\n", before, after, turnfit_status_name(st), turnfit_version());
    return 0;
}
C
    cat > "$place/app.cpp" <<'CPP'
#include <cstring>
#include <iostream>
#include "turnfit.h"
int main() {
    turnfit_tokenizer *tok = nullptr;
    turnfit_error *err = nullptr;
    size_t n = 0;
    if (turnfit_tokenizer_new("o200k_base", 10, 0, &tok, &err) != TURNFIT_STATUS_OK) return 1;
    turnfit_status st = turnfit_tokenizer_count(tok, "Hello, world!", 13, &n, &err);
    turnfit_tokenizer_free(tok);
    if (st != TURNFIT_STATUS_OK || n != 4) return 1;
    std::cout << "count 4 from C++\n";
    return 0;
}
CPP
}

test_c() {
    new_place c
    local tarball; tarball=$(ls "$dist"/c/turnfit-"$version"-linux-*.tar.gz | head -1)
    # The README names the tarball of this machine.
    [ "$(basename "$tarball")" = "turnfit-$version-linux-$(uname -m).tar.gz" ] || { echo "unexpected C tarball $(basename "$tarball")"; exit 1; }
    cp "$tarball" "$place/"
    write_c_app
    # The README's steps: unpack in place, pkg-config from the tree, dynamic and static.
    echo "c: the README's steps in an empty folder:"
    run_steps c
    local lib=$place/turnfit-$version/lib
    [ "$(readlink "$lib/libturnfit.so")" = "libturnfit.so.$abi" ] && [ -f "$lib/$(readlink "$lib/libturnfit.so.$abi")" ] \
        || { echo "SONAME links: libturnfit.so -> $(readlink "$lib/libturnfit.so"), libturnfit.so.$abi -> $(readlink "$lib/libturnfit.so.$abi")"; exit 1; }
    readelf -d "$place/app" | grep -q "NEEDED.*\[libturnfit.so.$abi\]" || { echo "app does not need libturnfit.so.$abi"; exit 1; }
    dyn_static=$(readelf -d "$place/app-static")
    ! grep -q libturnfit <<<"$dyn_static" || { echo "app-static depends on libturnfit.so"; exit 1; }
    # C++ against the same tree.
    CLEAN_ENV=(PKG_CONFIG_PATH="$lib/pkgconfig" LD_LIBRARY_PATH="$lib")
    clean sh -c 'c++ -std=c++17 -Wall -Wextra -Werror app.cpp $(pkg-config --cflags --libs turnfit) -o app-cxx'
    echo "c++ (dynamic): $(clean ./app-cxx)"
    clean sh -c 'cc -std=c11 -Wall -Wextra -Werror app.c $(pkg-config --cflags --libs turnfit) -o app-strict'
    CLEAN_ENV=()
    test_c_system "$tarball"
}

# The README's system-wide steps (tar into /usr/local, ldconfig), run as root
# in a mount namespace of their own: /usr/local is an empty folder there and
# /etc a copy (ldconfig renames its new cache onto /etc/ld.so.cache, which a
# bind mount of that one file refuses), so the machine's own are untouched.
# PATH gains root's sbin folders (ldconfig).
test_c_system() {
    if [ "$(id -u)" != 0 ] || ! unshare --mount true 2>/dev/null; then
        echo "SKIPPED: c (system-wide steps): needs root and unshare --mount"; return 0
    fi
    new_place c-system
    cp "$1" "$place/"
    write_c_app
    mkdir -p "$place/usr-local"
    cp -a /etc "$place/etc"
    local steps; steps=$(readme_steps c-system)
    sed 's/^/    $ /' <<<"$steps"
    unshare --mount --propagation private env PLACE="$place" STEPS="$steps" CLEAN_PATH="$clean_path:/usr/sbin:/sbin" \
        EXPECT_VERSION="$version" EXPECT_BEFORE="$before" EXPECT_AFTER="$after" bash -euo pipefail -c '
        mount --bind "$PLACE/usr-local" /usr/local
        mount --bind "$PLACE/etc" /etc
        cd "$PLACE" && env -i HOME="$PLACE/home" PATH="$CLEAN_PATH" LANG=C.UTF-8 TMPDIR="$PLACE" \
            EXPECT_VERSION="$EXPECT_VERSION" EXPECT_BEFORE="$EXPECT_BEFORE" EXPECT_AFTER="$EXPECT_AFTER" bash -euo pipefail -c "$STEPS"'
    [ -e "$place/usr-local/lib/pkgconfig/turnfit.pc" ] && [ -e "$place/usr-local/include/turnfit.h" ] \
        || { echo "the system-wide steps did not place the tree under /usr/local"; exit 1; }
    strings "$place/etc/ld.so.cache" | grep -q "libturnfit.so.$abi" || { echo "ldconfig did not add libturnfit.so.$abi to the cache"; exit 1; }
    echo "c (system-wide, /usr/local and /etc in a mount namespace): the README's steps ran, ./app found libturnfit.so.$abi through ldconfig's cache"
}

test_haskell() {
    new_place haskell
    local tarball; tarball=$(ls "$dist"/c/turnfit-"$version"-linux-*.tar.gz | head -1)
    cp "$tarball" "$dist/haskell/turnfit-$version.tar.gz" "$place/"
    mkdir -p "$place/app"
    cat > "$place/app/app.cabal" <<'CABAL'
cabal-version: 2.4
name:          app
version:       0
build-type:    Simple
executable app
  default-language: Haskell2010
  main-is:          Main.hs
  build-depends:    base, aeson, bytestring, text, turnfit
CABAL
    cat > "$place/app/Main.hs" <<'HS'
{-# LANGUAGE OverloadedStrings #-}
import Control.Exception (try)
import qualified Data.Aeson as A
import Data.Aeson (Value (..), object, (.=))
import qualified Data.Aeson.KeyMap as KM
import qualified Data.ByteString.Lazy as BL
import qualified Data.Text as T
import System.Environment (getEnv)
import Turnfit

main :: IO ()
main = do
  t <- newTokenizer "o200k_base"
  let n = countTokens t "Hello, world!"
  if n /= 4 then fail ("count " ++ show n) else pure ()
  Just conv <- A.decode <$> BL.readFile "agent-loop.json"
  (_, Object report) <- fit conv (object ["model" .= ("gpt-4o" :: T.Text), "max_tokens" .= (16000 :: Int)])
  before <- read <$> getEnv "EXPECT_BEFORE"
  after <- read <$> getEnv "EXPECT_AFTER"
  let num k = case KM.lookup k report of Just (Number x) -> round x; _ -> (-1) :: Integer
  if (num "tokens_before", num "tokens_after") /= (before, after) then fail (show report) else pure ()
  r <- try (newTokenizerForModel Nothing "gtp-4o" Nothing Ordinary)
  case r of
    Left e | status e == statusUnknownModel ->
      putStrLn ("haskell: count 4, fit " ++ show before ++ " -> " ++ show after ++ ", error " ++ T.unpack (statusName (status e)))
    Left e -> fail (show e)
    Right _ -> fail "no error for an unknown model"
HS
    # The README's steps: the C tree unpacked, an empty ~/.cabal/config in the
    # fresh HOME, the sdist named in cabal.project, cabal build --offline
    # (Debian's global package db only), the program run.
    echo "haskell: the README's steps in an empty folder:"
    run_steps haskell > "$place/steps.out" 2>&1 || { cat "$place/steps.out"; echo "the README's Haskell steps failed"; exit 1; }
    grep '^haskell: ' "$place/steps.out" || { cat "$place/steps.out"; exit 1; }
    grep -q "turnfit-$version (lib)" "$place/steps.out" || { cat "$place/steps.out"; echo "cabal did not build turnfit $version from the sdist"; exit 1; }
}

# The glibc floor of each package's native file, read from the file in dist/
# itself (scripts/dist.sh links them with zig against glibc 2.17).
glibc_python() {
    local d; d=$(mktemp -d) && tmps+=("$d")
    unzip -q -d "$d" "$(ls "$dist"/python/turnfit-"$version"-cp39-abi3-*.whl | head -1)" 'turnfit/*.so'
    check_glibc python "$d"/turnfit/*.so
}
glibc_node() {
    local d; d=$(mktemp -d) && tmps+=("$d")
    tar -C "$d" -xzf "$dist/node/turnfit-linux-x64-gnu-$version.tgz"
    check_glibc node "$d"/package/*.node
}
glibc_jvm() {
    local d; d=$(mktemp -d) && tmps+=("$d")
    unzip -q -d "$d" "$dist/jvm/turnfit-$version.jar" 'linux-x86-64/*'
    check_glibc jvm "$d"/linux-x86-64/libturnfit_uniffi.so
}
glibc_c() {
    local d; d=$(mktemp -d) && tmps+=("$d")
    tar -C "$d" -xzf "$(ls "$dist"/c/turnfit-"$version"-linux-*.tar.gz | head -1)"
    check_glibc c "$d/turnfit-$version/lib/libturnfit.so.$abi.$version"
}

run() {
    local lang=$1 reason
    reason=$(why_not "$lang")
    if [ -n "$reason" ]; then echo "SKIPPED: $lang: $reason"; return 0; fi
    local t0=$SECONDS
    "test_$lang"
    if ! declare -F "glibc_$lang" >/dev/null; then :
    elif grep -q '^natives: host' "$dist/MANIFEST" 2>/dev/null; then
        echo "SKIPPED: $lang: glibc 2.17 check: $(sed -n 's/^natives: //p' "$dist/MANIFEST")"
    else "glibc_$lang"; fi
    echo "$lang: installed from dist/ and used in an empty folder ($((SECONDS - t0)) s)"
}

case ${1:-all} in
    all) for l in python node jvm c haskell; do run "$l"; done ;;
    python|node|jvm|c|haskell) run "$1" ;;
    *) echo "usage: $0 python|node|jvm|c|haskell|all | --check LANG" >&2; exit 2 ;;
esac
