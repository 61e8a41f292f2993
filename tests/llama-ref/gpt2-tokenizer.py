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
kvs = [kv for kv in kvs if not kv[0].startswith(b'tokenizer.')]
# gpt2 byte map
bs = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
cs = bs[:]; n = 0
for x in range(256):
    if x not in bs: bs.append(x); cs.append(256 + n); n += 1
bmap = {x: chr(c) for x, c in zip(bs, cs)}
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
while len(toks) < vocab - 3: toks.append("<unused%d>" % len(toks))
toks += ["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>"]
types = [1] * (vocab - 3) + [3, 3, 3]
kvs += [(b'tokenizer.ggml.model', 8, b'gpt2'), (b'tokenizer.ggml.pre', 8, pre.encode()),
        (b'tokenizer.ggml.tokens', 9, (8, toks)), (b'tokenizer.ggml.token_type', 9, (5, types)),
        (b'tokenizer.ggml.merges', 9, (8, merges)),
        (b'tokenizer.ggml.bos_token_id', 4, vocab - 3), (b'tokenizer.ggml.eos_token_id', 4, vocab - 2)]
gguf_io.write(dst, magic, ver, kvs, tensors, data)
