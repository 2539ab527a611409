#!/usr/bin/env bash
# `make dist-cross`: the C library for other Linux targets, linked with Zig
# (ziglang and cargo-zigbuild from PyPI, scripts/cross-requirements.txt; the
# Rust standard library of each target through `rustup target add`), into
# dist/cross/<target>/, each checked by its ELF headers:
#
#   aarch64-unknown-linux-gnu   libturnfit.so (AArch64, SONAME libturnfit.so.2,
#                               glibc symbols <= 2.17: zig links against that
#                               glibc) and libturnfit.a
#   x86_64-unknown-linux-musl   libturnfit.a and the turnfit CLI, static (no
#                               INTERP, no NEEDED), run here on the agent loop
#                               and compared with the glibc CLI's report. No
#                               libturnfit.so: Rust's musl targets link the C
#                               runtime statically and make no cdylib.
#
# Not a suite of `make test`: each target compiles the core and its
# dependencies from scratch (minutes on two cores) in target/cross, a cache
# of its own. Debug builds like the rest of dist/ unless PROFILE=release.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$root/dist/cross
profile=${PROFILE:-debug}
targets=(${CROSS_TARGETS:-aarch64-unknown-linux-gnu x86_64-unknown-linux-musl})
start=$SECONDS

command -v rustup >/dev/null || { echo "rustup is needed to add the targets' standard libraries"; exit 1; }
venv=$root/target/cross/venv
req=$root/scripts/cross-requirements.txt
stamp="$venv/.requirements-$(sha256sum "$req" | cut -c1-16)"
if [ ! -e "$stamp" ]; then
    rm -rf "$venv" && python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$req"
    touch "$stamp"
fi
export PATH="$venv/bin:$PATH"
version=$(python3 scripts/version.py)
abi=$(sed -n 's/^pub const TURNFIT_ABI_VERSION: u32 = \([0-9]*\);/\1/p' ffi/src/version.rs)
prof=(); [ "$profile" = debug ] || prof=(--profile "$profile")
pdir=$profile; [ "$profile" = dev ] && pdir=debug

mkdir -p "$out"
printf 'turnfit %s, %s builds, cross-linked with zig\n' "$version" "$profile" > "$out/MANIFEST"
for t in "${targets[@]}"; do
    t0=$SECONDS
    rustup target list --installed | grep -qx "$t" || rustup target add "$t"
    case $t in
        aarch64-unknown-linux-gnu)
            # .2.17: the glibc version zig links against (the oldest it and Rust support).
            cargo zigbuild --locked "${prof[@]}" --target "$t.2.17" -p turnfit-ffi --target-dir target/cross
            d=target/cross/$t/$pdir
            mkdir -p "$out/$t"
            cp "$d/libturnfit.so" "$d/libturnfit.a" "$out/$t/"
            # No strip here: the host's binutils may not know AArch64.
            so=$out/$t/libturnfit.so
            readelf -h "$so" | grep -q 'Machine:.*AArch64' || { echo "$t: libturnfit.so is not AArch64"; readelf -h "$so"; exit 1; }
            readelf -h "$so" | grep -q 'Type:.*DYN' || { echo "$t: libturnfit.so is not a shared object"; exit 1; }
            readelf -d "$so" | grep -q "Library soname: \[libturnfit.so.$abi\]" || { echo "$t: SONAME is not libturnfit.so.$abi"; exit 1; }
            maxglibc=$(readelf -V "$so" | grep -o 'GLIBC_[0-9.]*' | sort -t. -k2,2n -k3,3n -u | tail -1)
            case $maxglibc in GLIBC_2.17|GLIBC_2.1[0-6]*|GLIBC_2.[0-9]) ;; *) echo "$t: needs $maxglibc (> 2.17)"; exit 1 ;; esac
            # Every member of the archive (read whole: grep -q would cut readelf's pipe).
            machines=$(readelf -h "$out/$t/libturnfit.a" | sed -n 's/^ *Machine: *//p' | sort -u)
            [ "$machines" = AArch64 ] || { echo "$t: libturnfit.a members are for: $machines"; exit 1; }
            echo "  $t: libturnfit.so (ELF64 AArch64 DYN, SONAME libturnfit.so.$abi, glibc <= ${maxglibc#GLIBC_}), libturnfit.a ($((SECONDS - t0)) s)" | tee -a "$out/MANIFEST"
            ;;
        x86_64-unknown-linux-musl)
            cargo zigbuild --locked "${prof[@]}" --target "$t" -p turnfit-ffi -p turnfit-cli --target-dir target/cross
            d=target/cross/$t/$pdir
            mkdir -p "$out/$t"
            cp "$d/libturnfit.a" "$d/turnfit" "$out/$t/"
            [ "$profile" = release ] || strip --strip-debug "$out/$t/libturnfit.a" "$out/$t/turnfit"
            cli=$out/$t/turnfit
            readelf -h "$cli" | grep -q 'Machine:.*X86-64' || { echo "$t: the CLI is not x86-64"; exit 1; }
            phdrs=$(readelf -l "$cli"); dyn=$(readelf -d "$cli" 2>&1 || true)
            ! grep -q INTERP <<<"$phdrs" || { echo "$t: the CLI asks for a dynamic loader"; exit 1; }
            ! grep -q NEEDED <<<"$dyn" || { echo "$t: the CLI needs shared libraries"; exit 1; }
            got=$("$cli" fit examples/data/agent-loop.json --model gpt-4o --max-tokens 16000 2>&1 >/dev/null | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["tokens_before"], r["tokens_after"])')
            want=$(target/debug/turnfit fit examples/data/agent-loop.json --model gpt-4o --max-tokens 16000 2>&1 >/dev/null | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["tokens_before"], r["tokens_after"])')
            [ "$got" = "$want" ] || { echo "$t: the static CLI reports $got, the glibc one $want"; exit 1; }
            echo "  $t: libturnfit.a, turnfit CLI (static, no INTERP/NEEDED; fit ${got/ / -> } as on glibc) ($((SECONDS - t0)) s)" | tee -a "$out/MANIFEST"
            ;;
        *) echo "no recipe for $t"; exit 1 ;;
    esac
done
(cd "$out" && find . -type f ! -name MANIFEST ! -name SHA256SUMS | LC_ALL=C sort | xargs sha256sum > SHA256SUMS)
echo "dist/cross: turnfit $version for ${targets[*]} in $((SECONDS - start)) s"
