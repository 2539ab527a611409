#!/usr/bin/env python3
"""Checks that every PT_LOAD segment of each ELF shared object is aligned to
at least 16 KiB (Android 15+ devices with 16 KB pages refuse libraries whose
LOAD segments are aligned to 4 KiB). Reads the ELF program headers directly
(32/64-bit, either byte order); no readelf needed.

    python3 check_elf_alignment.py [--min 16384] lib.so [lib.so ...]

Exit 0 when every file passes, 1 otherwise. Prints one line per file.
"""
import struct
import sys

PT_LOAD = 1


def load_alignments(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF":
        raise ValueError("not an ELF file")
    is64 = data[4] == 2
    end = "<" if data[5] == 1 else ">"
    if is64:
        phoff, = struct.unpack_from(end + "Q", data, 0x20)
        phentsize, phnum = struct.unpack_from(end + "HH", data, 0x36)
    else:
        phoff, = struct.unpack_from(end + "I", data, 0x1C)
        phentsize, phnum = struct.unpack_from(end + "HH", data, 0x2A)
    machine, = struct.unpack_from(end + "H", data, 0x12)
    aligns = []
    for i in range(phnum):
        off = phoff + i * phentsize
        p_type, = struct.unpack_from(end + "I", data, off)
        if p_type != PT_LOAD:
            continue
        if is64:
            p_align, = struct.unpack_from(end + "Q", data, off + 0x30)
        else:
            p_align, = struct.unpack_from(end + "I", data, off + 0x1C)
        aligns.append(p_align)
    return machine, aligns


def main(argv):
    minimum = 16384
    if len(argv) >= 2 and argv[0] == "--min":
        minimum = int(argv[1])
        argv = argv[2:]
    if not argv:
        print(__doc__)
        return 2
    ok = True
    for path in argv:
        try:
            machine, aligns = load_alignments(path)
        except (OSError, ValueError, struct.error) as e:
            print(f"FAIL {path}: {e}")
            ok = False
            continue
        worst = min(aligns) if aligns else 0
        good = bool(aligns) and worst >= minimum
        ok &= good
        print(f"{'ok  ' if good else 'FAIL'} {path}: e_machine {machine}, {len(aligns)} LOAD segments, "
              f"smallest alignment {worst} (need >= {minimum})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
