# apt-get with package lists of its own (sourced by scripts/cross/*.sh): the
# Debian source packages and the trixie binaries the cross runs take, fetched
# with Debian's own client, while the system's sources and lists stay as
# they are. Lists and downloads live under target/cross/apt-NAME.

: "${root:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${cross_cache:=$root/target/cross}"

# apt_lists NAME LINE...: the sources of target/cross/apt-NAME (one LINE
# each, the signed-by keyring added), read once by `apt-get update`.
apt_lists() {
    local d=$cross_cache/apt-$1 line lines=; shift
    for line in "$@"; do
        lines+="${line%% *} [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${line#* }"$'\n'
    done
    if [ "$(cat "$d/sources.list" 2>/dev/null)" != "${lines%$'\n'}" ]; then
        rm -rf "$d" && mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
        printf '%s' "$lines" > "$d/sources.list"
        apt_with "${d##*/apt-}" update -qq >/dev/null 2>&1 || { rm -rf "$d"; echo "apt-get update of $d/sources.list failed" >&2; return 3; }
    fi
}

# apt_with NAME ARGS...: apt-get ARGS... on those lists only.
apt_with() {
    local d=$cross_cache/apt-$1; shift
    apt-get -o Dir::Etc::SourceList="$d/sources.list" -o Dir::Etc::SourceParts=/nonexistent \
        -o Dir::State::Lists="$d/lists" -o Dir::Cache="$d/cache" "$@"
}
