#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# yarn-edit.py SRC DST FACTOR ORIG LOG_MUL — copy a `tprun --export-gguf`
# file of any architecture with YaRN RoPE scaling added to its metadata
# (ARCH.rope.scaling.type "yarn", .factor FACTOR, .original_context_length
# ORIG, .yarn_log_multiplier LOG_MUL as DeepSeek's files hold it: 0.1 x
# mscale_all_dim), for compare.sh's deepseek2 YaRN check.
import sys
import gguf_io
src, dst, factor, orig, log_mul = sys.argv[1:6]
magic, ver, kvs, tensors, data = gguf_io.read(src)
arch = [v for k, t, v in kvs if k == b'general.architecture'][0]
arch = arch.decode() if isinstance(arch, bytes) else arch
pre = arch + '.rope.scaling.'
kvs = [kv for kv in kvs if not kv[0].decode().startswith(pre)]
kvs += [((pre + 'type').encode(), 8, b'yarn'),
        ((pre + 'factor').encode(), 6, float(factor)),
        ((pre + 'original_context_length').encode(), 4, int(orig)),
        ((pre + 'yarn_log_multiplier').encode(), 6, float(log_mul))]
gguf_io.write(dst, magic, ver, kvs, tensors, data)
