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


bmap = gguf_io.gpt2_bytes()


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
kvs = gguf_io.with_bpe(kvs, pre, toks, merges)
gguf_io.write(dst, magic, ver, kvs, tensors, data)
