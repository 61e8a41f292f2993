#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# arch-edit.py SRC DST MODE — copy an F32 `tprun --export-gguf` file (GGUF
# v3, alignment 32, architecture llama) changed for compare.sh:
#   qwen2        the architecture "qwen2" (its keys renamed) with seeded
#                biases on Q, K and V (blk.N.attn_{q,k,v}.bias, F32)
#   linear:F     llama.rope.scaling.type "linear", .factor F
#   freqs        a rope_freqs.weight tensor (Llama 3.1's per-frequency
#                divisors: 1 for the fast half, rising to 8 for the slow)
import struct, sys
import gguf_io
src, dst, mode = sys.argv[1], sys.argv[2], sys.argv[3]
magic, ver, kvs, tensors, data = gguf_io.read(src)
data = bytearray(data)
kv = {k: v for k, t, v in kvs}
dim = kv[b'llama.embedding_length']; heads = kv[b'llama.attention.head_count']
kvh = kv[b'llama.attention.head_count_kv']; layers = kv[b'llama.block_count']
hd = kv.get(b'llama.attention.key_length', dim // heads)
rot = kv[b'llama.rope.dimension_count']
seed = 12345
def rand():	# [-1, 1)
    global seed
    seed = (seed * 6364136223846793005 + 1442695040888963407) % (1 << 64)
    return (seed >> 11) / float(1 << 52) - 1.0
def add_tensor(name, vals):
    global data
    data += b'\0' * (gguf_io.pad(len(data)) - len(data))
    tensors.append((name.encode(), [len(vals)], 0, len(data)))
    data += struct.pack('<%df' % len(vals), *vals)
if mode == 'qwen2':
    kvs = [(b'qwen2.' + k[6:] if k.startswith(b'llama.') else k, t,
            b'qwen2' if k == b'general.architecture' else v) for k, t, v in kvs]
    for l in range(layers):
        for n, rows in (('q', heads * hd), ('k', kvh * hd), ('v', kvh * hd)):
            add_tensor('blk.%d.attn_%s.bias' % (l, n), [0.5 * rand() for _ in range(rows)])
elif mode.startswith('linear:'):
    kvs += [(b'llama.rope.scaling.type', 8, b'linear'),
            (b'llama.rope.scaling.factor', 6, float(mode[7:]))]
elif mode == 'freqs':
    n = rot // 2
    add_tensor('rope_freqs.weight', [1.0 if i < n // 2 else 1.0 + 7.0 * (i - n // 2) / (n - n // 2) for i in range(n)])
else:
    sys.exit('unknown mode ' + mode)
gguf_io.write(dst, magic, ver, kvs, tensors, data)
