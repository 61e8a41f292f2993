# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# gguf_io.py — read and write the GGUF v3 files `tprun --export-gguf`
# writes (alignment 32), for the scripts that derive test models from them
# (arch-edit.py, gpt2-tokenizer.py, chunk-tokenizer.py, yarn-edit.py,
# moe-mix.py).
#   read(path) -> (magic, version, kvs, tensors, data)
#       kvs: [(key bytes, type, value)], an array value is (type, [values]);
#       tensors: [(name bytes, dims, type, offset into data)]
#   write(path, magic, version, kvs, tensors, data)
#   gpt2_bytes() -> {byte: GPT-2's printable symbol for it}
#   with_bpe(kvs, pre, toks, merges) -> kvs with a byte-level BPE tokenizer
import struct

ALIGN = 32
SZ = {0: 'B', 1: 'b', 2: 'H', 3: 'h', 4: 'I', 5: 'i', 6: 'f', 7: '?',
      10: 'Q', 11: 'q', 12: 'd'}


def pad(n):
    return (n + ALIGN - 1) // ALIGN * ALIGN


def read(path):
    b = open(path, 'rb').read()
    pos = 0

    def rd(fmt):
        nonlocal pos
        v = struct.unpack_from(fmt, b, pos)
        pos += struct.calcsize(fmt)
        return v[0]

    def rstr():
        nonlocal pos
        n = rd('<Q')
        s = b[pos:pos + n]
        pos += n
        return s

    def rval(t):
        if t == 8:
            return rstr()
        if t == 9:
            at = rd('<I')
            n = rd('<Q')
            return (at, [rval(at) for _ in range(n)])
        return rd('<' + SZ[t])

    magic = rd('<I'); ver = rd('<I'); nt = rd('<Q'); nkv = rd('<Q')
    kvs = []
    for _ in range(nkv):
        k = rstr(); t = rd('<I'); kvs.append((k, t, rval(t)))
    tensors = []
    for _ in range(nt):
        name = rstr(); nd = rd('<I'); ne = [rd('<Q') for _ in range(nd)]
        tensors.append((name, ne, rd('<I'), rd('<Q')))
    return magic, ver, kvs, tensors, b[pad(pos):]


def wstr(s):
    s = s.encode() if isinstance(s, str) else s
    return struct.pack('<Q', len(s)) + s


def wval(t, v):
    if t == 8:
        return wstr(v)
    if t == 9:
        at, arr = v
        return struct.pack('<IQ', at, len(arr)) + b''.join(wval(at, x) for x in arr)
    return struct.pack('<' + SZ[t], v)


def write(path, magic, ver, kvs, tensors, data):
    out = struct.pack('<IIQQ', magic, ver, len(tensors), len(kvs))
    out += b''.join(wstr(k) + struct.pack('<I', t) + wval(t, v) for k, t, v in kvs)
    out += b''.join(wstr(n) + struct.pack('<I', len(ne)) +
                    b''.join(struct.pack('<Q', x) for x in ne) +
                    struct.pack('<IQ', ty, off) for n, ne, ty, off in tensors)
    out += b'\0' * (pad(len(out)) - len(out))
    open(path, 'wb').write(out + bytes(data))


def gpt2_bytes():
    bs = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    cs = bs[:]
    n = 0
    for x in range(256):
        if x not in bs:
            bs.append(x)
            cs.append(256 + n)
            n += 1
    return {x: chr(c) for x, c in zip(bs, cs)}


def with_bpe(kvs, pre, toks, merges):
    """KVS (an export's) with its tokenizer replaced by a byte-level BPE
    one of pre-tokenizer PRE: TOKS padded with <unusedN> to the file's
    vocabulary less three, then Llama 3's BOS, EOS and EOT (control)."""
    vocab = len([v for k, t, v in kvs if k == b'tokenizer.ggml.tokens'][0][1])
    if vocab < len(toks) + 3:
        raise SystemExit("the model's vocabulary (%d) is under %d" % (vocab, len(toks) + 3))
    kvs = [kv for kv in kvs if not kv[0].startswith(b'tokenizer.')]
    toks = toks + ["<unused%d>" % i for i in range(len(toks), vocab - 3)]
    toks += ["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>"]
    types = [1] * (vocab - 3) + [3, 3, 3]
    return kvs + [
        (b'tokenizer.ggml.model', 8, b'gpt2'), (b'tokenizer.ggml.pre', 8, pre.encode()),
        (b'tokenizer.ggml.tokens', 9, (8, toks)), (b'tokenizer.ggml.token_type', 9, (5, types)),
        (b'tokenizer.ggml.merges', 9, (8, merges)),
        (b'tokenizer.ggml.bos_token_id', 4, vocab - 3), (b'tokenizer.ggml.eos_token_id', 4, vocab - 2)]
