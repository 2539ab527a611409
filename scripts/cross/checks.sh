# ELF checks of the cross-built native files (sourced by scripts/dist-cross.sh).
# Each reads the file's own headers with the host's readelf, which knows every
# ELF machine, and exits naming the file and what is wrong.

# elf_machine FILE MACHINE: FILE is an ELF whose readelf machine name ends in
# MACHINE (AArch64; X86-64, which readelf prints as "Advanced Micro Devices
# X86-64"); for an archive, every member is.
elf_machine() {
    local got
    # Read whole (grep -q would cut readelf's pipe, and pipefail fail it).
    got=$(readelf -h "$1" | sed -n 's/^ *Machine: *//p' | sort -u)
    [ -n "$got" ] || { echo "$1: not an ELF file" >&2; exit 1; }
    case $got in *$'\n'*|'') echo "$1: members built for $(echo $got)" >&2; exit 1 ;; *"$2") ;;
        *) echo "$1: built for $got, not $2" >&2; exit 1 ;; esac
}

# elf_shared FILE: a shared object (what dlopen, Python, Node and JNA load).
elf_shared() {
    readelf -h "$1" | grep -q 'Type: *DYN' || { echo "$1: not a shared object" >&2; exit 1; }
}

# glibc_max FILE: prints the newest GLIBC_ symbol version FILE needs (the
# loader's view, readelf -V) and fails if it is above 2.17 or if there is none
# (then FILE is no glibc build).
glibc_max() {
    local need max
    need=$(readelf -V --wide "$1" | grep -o 'Name: GLIBC_[0-9][0-9.]*' | sed 's/Name: //' | sort -uV)
    [ -n "$need" ] || { echo "$1: needs no glibc symbol version: not a glibc build?" >&2; exit 1; }
    max=$(tail -1 <<<"$need")
    if [ "$(printf '%s\n' GLIBC_2.17 "$max" | sort -V | tail -1)" != GLIBC_2.17 ]; then
        echo "$1: needs $max (more than GLIBC_2.17)" >&2; exit 1
    fi
    echo "${max#GLIBC_}"
}

# musl_needed FILE: FILE is linked dynamically against musl: it needs musl's
# libc.so and no glibc library or symbol version (a glibc build would need
# libc.so.6 and GLIBC_ versions; a static one, no NEEDED at all). Prints the
# NEEDED list.
musl_needed() {
    local needed
    needed=$(readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
    grep -qw 'libc\.so' <<<"$needed" || { echo "$1: does not need musl's libc.so (NEEDED: ${needed:-none})" >&2; exit 1; }
    ! grep -q 'libc\.so\.6\|ld-linux' <<<"$needed" || { echo "$1: needs glibc (NEEDED: $needed)" >&2; exit 1; }
    ! readelf -V --wide "$1" | grep -q 'GLIBC_' || { echo "$1: asks for GLIBC_ symbol versions" >&2; exit 1; }
    # Initial-exec TLS (the STATIC_TLS flag): musl's dlopen refuses it
    # ("initial-exec TLS resolves to dynamic definition"), so Python, Node
    # and JNA could not load FILE.
    ! readelf -d "$1" | grep -q 'FLAGS).*STATIC_TLS' || { echo "$1: uses initial-exec TLS (STATIC_TLS), which musl's dlopen refuses" >&2; exit 1; }
    echo "${needed% }"
}
