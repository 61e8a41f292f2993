#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# gpt2-tokenizer.py SRC DST PRE — copy a `tprun --export-gguf` file (GGUF
# v3, alignment 32) with its tokenizer replaced by a small byte-level BPE
# ("gpt2") one, pre-tokenizer PRE (llama-bpe, qwen2, gpt-2, glm4, gpt-4o): the 256 GPT-2
# byte symbols, merged pieces of a few words (with and without "Ġ", digits
# included, so the pre-tokenizers split differently), <unusedN>, and
# three control tokens (BOS, EOS, EOT) at the end. For compare.sh.
import sys
import gguf_io
src, dst, pre = sys.argv[1], sys.argv[2], sys.argv[3]
magic, ver, kvs, tensors, data = gguf_io.read(src)
vocab = [v for k, t, v in kvs if k == b'tokenizer.ggml.tokens'][0][1].__len__()
bmap = gguf_io.gpt2_bytes()
toks = [bmap[i] for i in range(256)]
merges = []
words = ["the", "of", "and", "to", "in", "is", "that", "hello", "world", "model", "tensor", "parallel",
         "once", "upon", "time", "rank", "said", "ing", "er", "ed", "on", "an", "re",
         "123", "12345", "Hello", "times"]
def add(t):
    if t not in toks and len(toks) < vocab - 3: toks.append(t); return True
    return False
for w in words:
    for pfx in ("", "Ġ"):
        s = pfx + w
        # merges left to right
        cur = s[0] if pfx == "" else "Ġ"
        rest = s[1:] if pfx == "" else s[1:]
        for ch in rest:
            if add(cur + ch): merges.append(cur + " " + ch)
            cur = cur + ch
kvs = gguf_io.with_bpe(kvs, pre, toks, merges)
gguf_io.write(dst, magic, ver, kvs, tensors, data)
