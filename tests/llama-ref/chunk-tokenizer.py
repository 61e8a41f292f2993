#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# chunk-tokenizer.py SRC DST PRE STRINGS — copy a `tprun --export-gguf`
# file with its tokenizer replaced by a byte-level BPE ("gpt2") one,
# pre-tokenizer PRE, in which every byte substring of each line of the
# file STRINGS (ASCII, with Python's escapes: \n, \u00e9, \U0001f600) is a token and every
# split of it a merge (shorter results first). BPE then merges each
# pre-tokenizer chunk of those lines into exactly one token, so the
# tokens of a line show where the pre-tokenizer cut it: compare.sh
# checks tprun's cuts against llama.cpp's. SRC's vocabulary must be at
# least the count printed by `chunk-tokenizer.py --count STRINGS`.
import sys
import gguf_io


def lines(path):
    with open(path, encoding="utf-8") as f:
        return [l.rstrip("\n").encode("ascii").decode("unicode_escape")
                for l in f if l.strip() and not l.startswith("#")]


bs = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
cs = bs[:]
n = 0
for x in range(256):
    if x not in bs:
        bs.append(x)
        cs.append(256 + n)
        n += 1
bmap = {x: chr(c) for x, c in zip(bs, cs)}


def vocab_of(strings):
    toks = [bmap[i] for i in range(256)]
    seen = set(toks)
    merges = {}
    for s in strings:
        b = "".join(bmap[x] for x in s.encode())
        for i in range(len(b)):
            for j in range(i + 2, len(b) + 1):
                t = b[i:j]
                if t not in seen:
                    seen.add(t)
                    toks.append(t)
                for k in range(1, len(t)):
                    merges.setdefault(t[:k] + " " + t[k:], len(t))
    order = sorted(merges, key=lambda m: (merges[m], m))
    return toks, order


if sys.argv[1] == "--count":
    print(len(vocab_of(lines(sys.argv[2]))[0]) + 3)
    sys.exit(0)
src, dst, pre, strings = sys.argv[1:5]
toks, merges = vocab_of(lines(strings))
magic, ver, kvs, tensors, data = gguf_io.read(src)
vocab = len([v for k, t, v in kvs if k == b'tokenizer.ggml.tokens'][0][1])
if vocab < len(toks) + 3:
    sys.exit("chunk-tokenizer.py: the model's vocabulary (%d) is under %d" % (vocab, len(toks) + 3))
kvs = [kv for kv in kvs if not kv[0].startswith(b'tokenizer.')]
while len(toks) < vocab - 3:
    toks.append("<unused%d>" % len(toks))
toks += ["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>"]
types = [1] * (vocab - 3) + [3, 3, 3]
kvs += [(b'tokenizer.ggml.model', 8, b'gpt2'), (b'tokenizer.ggml.pre', 8, pre.encode()),
        (b'tokenizer.ggml.tokens', 9, (8, toks)), (b'tokenizer.ggml.token_type', 9, (5, types)),
        (b'tokenizer.ggml.merges', 9, (8, merges)),
        (b'tokenizer.ggml.bos_token_id', 4, vocab - 3), (b'tokenizer.ggml.eos_token_id', 4, vocab - 2)]
gguf_io.write(dst, magic, ver, kvs, tensors, data)
