#!/usr/bin/env python3
"""Writes the seeds of fuzz_stack_sidecar into corpus/stack_sidecar.

An encoder of the stack sidecar format written from its description
(README.md "Stack sidecar", user/format/stack_sidecar.c), apart from the C
writer: test_stack_sidecar.c reads one of these files back, so the
description, the writer and the reader cannot drift apart unnoticed.
"""
import os
import sys

MASK = (1 << 64) - 1


def uvarint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def zigzag(delta):
    """Zigzag of a delta taken modulo 2^64 (0, -1, 1, -2 -> 0, 1, 2, 3)."""
    d = delta & MASK
    signed = d - (1 << 64) if d >> 63 else d
    return ((signed << 1) ^ (signed >> 63)) & MASK


def sidecar(strings, frames, stacks, blocks, process=None):
    """Version 1, or 2 with an 'M' record of PROCESS (its fields, in order)."""
    b = bytearray(b"traceaf-stacks 2\n" if process else b"traceaf-stacks 1\n")
    for s in strings:
        b += b"S" + uvarint(len(s)) + s
    if process:
        body = b"".join(uvarint(v) for v in process)
        b += b"M" + uvarint(len(body)) + body
    for pc, func, file, line in frames:
        b += b"F" + uvarint(pc) + uvarint(func) + uvarint(file) + uvarint(line)
    for st in stacks:
        b += b"K" + uvarint(len(st)) + b"".join(uvarint(f) for f in st)
    nalloc = 0
    for gen, allocs in blocks:
        b += b"A" + uvarint(gen) + uvarint(len(allocs))
        prev_id = prev_ts = 0
        for obj_id, ts, stack in allocs:
            b += uvarint(zigzag(obj_id - prev_id))
            b += uvarint(zigzag(ts - prev_ts)) + uvarint(stack)
            prev_id, prev_ts = obj_id, ts
            nalloc += 1
    b += b"E" + uvarint(nalloc) + uvarint(len(stacks))
    return bytes(b)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "corpus", "stack_sidecar")
    os.makedirs(out, exist_ok=True)
    seeds = {
        "empty": sidecar([], [], [], []),
        "one": sidecar([b"main.leak", b"/src/app/main.go"],
                       [(0x4A1234, 1, 2, 42)], [[1]],
                       [(1, [(100, 5000, 1)])]),
        # Read back by test_independently_encoded_file_reads_back.
        "gens": sidecar([b"main.leak", b"/src/app/main.go", b"main.main"],
                        [(0x4A1234, 1, 2, 42), (0x4A1500, 3, 2, 90),
                         (0x401000, 0, 0, 0)],
                        [[1, 2], [3], [2, 3, 1]],
                        [(1, [(100, 5000, 1), (90, 5001, 2),
                              (0x10000, 6000, 3)]),
                         (2, [(100, 4000, 1), (50, 3999, 3)])]),
        # exe, Go and GNU build IDs (strings 3, 4, 0), text, clocks.
        "process": sidecar([b"main.leak", b"/src/app/main.go",
                            b"/srv/app", b"goid/x/y/z"],
                           [(0x4A1234, 1, 2, 42)], [[1]],
                           [(1, [(100, 5000, 1)])],
                           process=[3, 4, 0, 0x400000, 0x4B0000, 0,
                                    1764720000 * 10**9, 123456789]),
        "bigvals": sidecar([b"x" * 300], [(MASK, 1, 1, 2**32 - 1)],
                           [[1] * 256],
                           [(MASK, [(MASK, MASK, 1), (0, 0, 1)])]),
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
