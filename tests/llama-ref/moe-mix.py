#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# moe-mix.py EXPERTS REST DST FILE_TYPE — the file llama.cpp's quantizer
# writes for a mixed file type such as MXFP4_MOE (file type 38: the
# experts, every 3-D tensor, in MXFP4, every other matrix in Q8_0), from
# two `tprun --export-gguf` files of the same model and seed: the 3-D
# tensors from EXPERTS, all others and the metadata from REST,
# general.file_type set to FILE_TYPE. The synthetic weights depend on the
# seed and the shape only, so each tensor is what the quantizer would
# have made of the same weights. For compare.sh's gpt-oss mxfp4_moe.
import sys
import gguf_io


def blobs(data, tensors):
    """{name: (dims, type, bytes)} of a file's tensors, in file order"""
    offs = sorted(off for _, _, _, off in tensors) + [len(data)]
    end = {o: offs[i + 1] for i, o in enumerate(offs[:-1])}
    return {n: (ne, ty, data[off:end[off]]) for n, ne, ty, off in tensors}


exp_src, rest_src, dst, ftype = sys.argv[1:5]
_, _, _, exp_tensors, exp_data = gguf_io.read(exp_src)
magic, ver, kvs, tensors, data = gguf_io.read(rest_src)
experts = blobs(exp_data, exp_tensors)
rest = blobs(data, tensors)
out_tensors, out = [], bytearray()
for name, ne, _, _ in tensors:
    if len(ne) == 3 and ne[2] > 1:
        if experts[name][0] != ne:
            raise SystemExit("%s: %s has dims %s, %s %s" % (
                name.decode(), exp_src, experts[name][0], rest_src, ne))
        ne, ty, blob = experts[name]
    else:
        ne, ty, blob = rest[name]
    out_tensors.append((name, ne, ty, len(out)))
    out += blob
    out += b'\0' * (gguf_io.pad(len(out)) - len(out))
kvs = [(k, t, int(ftype) if k == b'general.file_type' else v)
       for k, t, v in kvs]
gguf_io.write(dst, magic, ver, kvs, out_tensors, out)
