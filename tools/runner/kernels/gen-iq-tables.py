#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Write kernels/iq_tables.c: the lookup tables GGML's IQ and MXFP4 types
decode through (the grids of IQ1_S/IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS
and IQ3_S, the sign patterns of the 2- and 3-bit types, the 16 values of
IQ4_NL/IQ4_XS and of MXFP4).

The tables are the format's definition, so they must be GGML's values,
not something like them. They are derived here from GGML's behaviour, not
from its source: this script loads the libggml-base.so that
tests/llama-ref installs (node-llama-cpp's build of llama.cpp, the
reference tprun is compared with) and asks its dequantize_row_* functions
for blocks whose scales make each grid point come out as itself (unit
scale, zero sign bits), one grid index after another. The sign table is
computed from its rule (seven sign bits and an eighth that makes the count
of minus signs even) and checked against GGML the same way.

    tools/runner/kernels/gen-iq-tables.py [GGML_DIR] > tools/runner/kernels/iq_tables.c

tests/unit/test_runner_iquant checks the result: every entry by its
structure (levels, distinctness, parity) always, and every grid entry
against GGML's dequantisation when it is installed.
"""
import ctypes
import os
import struct
import sys

here = os.path.dirname(os.path.abspath(__file__))
ggml_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    here, "../../../tests/llama-ref/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64")
lib = ctypes.CDLL(os.path.join(ggml_dir, "libggml-base.so"))

F16_ONE = 0x3C00


def dequant(name, raw, n):
    """GGML's dequantize_row_NAME of the bytes RAW (N values)."""
    fn = getattr(lib, "dequantize_row_" + name)
    fn.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_float), ctypes.c_int64]
    fn.restype = None
    out = (ctypes.c_float * n)()
    fn(bytes(raw), out, n)
    return list(out)


def exact(v, scale):
    """V / SCALE, which must be an integer."""
    q = v / scale
    if q != round(q):
        sys.exit("gen-iq-tables: %r / %r is no integer: not the expected format" % (v, scale))
    return int(round(q))


def grid_iq2xxs():
    # block: d, 8 x (4 index bytes, a word of signs and scale 0): 0.125 x grid
    grid = []
    for first in range(0, 256, 32):
        raw = struct.pack("<H", F16_ONE)
        for ib in range(8):
            raw += bytes(first + 4 * ib + l for l in range(4)) + struct.pack("<I", 0)
        y = dequant("iq2_xxs", raw, 256)
        grid += [[exact(v, 0.125) for v in y[8 * g:8 * g + 8]] for g in range(32)]
    return grid


def grid_iq2xs():
    # block: d, 32 words (9-bit index, 7 sign bits 0), 8 scales 0: 0.125 x grid
    grid = []
    for first in range(0, 512, 32):
        raw = struct.pack("<H", F16_ONE)
        raw += b"".join(struct.pack("<H", first + g) for g in range(32))
        raw += bytes(8)
        y = dequant("iq2_xs", raw, 256)
        grid += [[exact(v, 0.125) for v in y[8 * g:8 * g + 8]] for g in range(32)]
    return grid


def grid_iq2s():
    # block: d, qs[32] low index bytes, signs[32] 0, qh[8] (2 bits per
    # group of 8), scales[8] 0: 0.125 x grid
    grid = []
    for first in range(0, 1024, 32):
        idx = [first + g for g in range(32)]
        qs = bytes(i & 255 for i in idx)
        qh = bytes(sum((idx[4 * ib + l] >> 8) << (2 * l) for l in range(4))
                   for ib in range(8))
        raw = struct.pack("<H", F16_ONE) + qs + bytes(32) + qh + bytes(8)
        y = dequant("iq2_s", raw, 256)
        grid += [[exact(v, 0.125) for v in y[8 * g:8 * g + 8]] for g in range(32)]
    return grid


def grid_iq3xxs():
    # block: d, 64 index bytes (4 values each), 8 words of signs and scale
    # 0: 0.25 x grid
    grid = []
    for first in range(0, 256, 64):
        raw = struct.pack("<H", F16_ONE) + bytes(range(first, first + 64)) + bytes(32)
        y = dequant("iq3_xxs", raw, 256)
        grid += [[exact(v, 0.25) for v in y[4 * g:4 * g + 4]] for g in range(64)]
    return grid


def grid_iq3s():
    # block: d, qs[64] low index bytes, qh[8] (a ninth bit per index),
    # signs[32] 0, scales[4] 0: 1 x grid
    grid = []
    for first in range(0, 512, 64):
        idx = [first + g for g in range(64)]
        qs = bytes(i & 255 for i in idx)
        qh = bytes(sum((idx[8 * k + b] >> 8) << b for b in range(8)) for k in range(8))
        raw = struct.pack("<H", F16_ONE) + qs + qh + bytes(32) + bytes(4)
        y = dequant("iq3_s", raw, 256)
        grid += [[exact(v, 1.0) for v in y[4 * g:4 * g + 4]] for g in range(64)]
    return grid


def grid_iq1s():
    # block: d, qs[32] low index bytes, qh[8] words (3 high bits per group,
    # scale 0, delta +): grid + 1/8
    grid = []
    for first in range(0, 2048, 32):
        idx = [first + g for g in range(32)]
        qs = bytes(i & 255 for i in idx)
        qh = b"".join(struct.pack("<H", sum((idx[4 * ib + l] >> 8) << (3 * l)
                                            for l in range(4))) for ib in range(8))
        raw = struct.pack("<H", F16_ONE) + qs + qh
        y = dequant("iq1_s", raw, 256)
        grid += [[exact(v - 0.125, 1.0) for v in y[8 * g:8 * g + 8]] for g in range(32)]
    return grid


def ksigns():
    """Seven sign bits and the eighth that makes the minus signs even."""
    return [i | (bin(i).count("1") & 1) << 7 for i in range(128)]


def check_ksigns(signs, g0):
    # iq2_xxs with grid index 0 everywhere: the signs of each group of 8
    for first in range(0, 128, 32):
        raw = struct.pack("<H", F16_ONE)
        for ib in range(8):
            w = sum((first + 4 * ib + l) << (7 * l) for l in range(4))
            raw += bytes(4) + struct.pack("<I", w)
        y = dequant("iq2_xxs", raw, 256)
        for g in range(32):
            got = sum(1 << j for j in range(8) if y[8 * g + j] < 0)
            if got != signs[first + g] or any(abs(exact(y[8 * g + j], 0.125)) != g0[j]
                                               for j in range(8)):
                sys.exit("gen-iq-tables: sign pattern %d differs from GGML's" % (first + g))


def kvalues(name, raw, n):
    return [exact(v, 1.0) for v in dequant(name, raw, n)[:16]]


def main():
    iq4nl = kvalues("iq4_nl", struct.pack("<H", F16_ONE) + bytes(j | j << 4 for j in range(16)), 32)
    # MXFP4: the E8M0 scale 128 is 2^0 x 1/2 in GGML's doubled values
    mxfp4 = kvalues("mxfp4", bytes([128]) + bytes(j | j << 4 for j in range(16)), 32)
    g2xxs, g2xs, g2s = grid_iq2xxs(), grid_iq2xs(), grid_iq2s()
    g3xxs, g3s, g1s = grid_iq3xxs(), grid_iq3s(), grid_iq1s()
    signs = ksigns()
    check_ksigns(signs, g2xxs[0])

    def u64(p):  # 8 signed or unsigned bytes, little-endian
        return struct.unpack("<Q", struct.pack("<8b" if min(p) < 0 else "<8B", *p))[0]

    def u32(p):
        return struct.unpack("<I", struct.pack("<4B", *p))[0]

    out = [
        "// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause",
        "/*",
        " * GENERATED by kernels/gen-iq-tables.py from GGML's dequantisation",
        " * (node-llama-cpp's libggml-base.so); do not edit. The lookup tables of",
        " * GGML's IQ and MXFP4 types: see iq_tables.h. Checked entry by entry",
        " * by tests/unit/test_runner_iquant.",
        " */",
        '#include "kernels/iq_tables.h"',
        "",
    ]

    def table(decl, vals, fmt, per):
        out.append("%s = {" % decl)
        for i in range(0, len(vals), per):
            out.append("\t" + " ".join(fmt % v + "," for v in vals[i:i + per]))
        out.append("};")
        out.append("")

    table("const int8_t tp_kvalues_iq4nl[16]", iq4nl, "%d", 16)
    table("const int8_t tp_kvalues_mxfp4[16]", mxfp4, "%d", 16)
    table("const uint8_t tp_ksigns_iq2xs[128]", signs, "0x%02x", 8)
    table("const uint64_t tp_ksigns64_iq2xs[128]",
          [u64([-1 if s >> j & 1 else 1 for j in range(8)]) for s in signs], "0x%016x", 4)
    table("const uint64_t tp_iq2xxs_grid[256]", [u64(p) for p in g2xxs], "0x%016x", 4)
    table("const uint64_t tp_iq2xs_grid[512]", [u64(p) for p in g2xs], "0x%016x", 4)
    table("const uint64_t tp_iq2s_grid[1024]", [u64(p) for p in g2s], "0x%016x", 4)
    table("const uint32_t tp_iq3xxs_grid[256]", [u32(p) for p in g3xxs], "0x%08x", 6)
    table("const uint32_t tp_iq3s_grid[512]", [u32(p) for p in g3s], "0x%08x", 6)
    table("const uint64_t tp_iq1s_grid[2048]", [u64(p) for p in g1s], "0x%016x", 4)
    print("\n".join(out).rstrip("\n"))


main()
