// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tprun's GGUF reader (tools/runner/gguf/reader.c) on files built byte by byte
 * here, independently of its writer: a good file, every truncation of
 * it, each kind of malformation, and random corruption. The reader must
 * answer with a clear error and never crash. Then the writer's round
 * trip, and the llama loader's checks (weights_gguf.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gguf/gguf.h"
#include "kernels/float16.h"
#include "model/arch/registry.h"
#include "model/model.h"
#include "tap.h"

struct buf {
	unsigned char *p;
	size_t n, cap;
};

static void b_bytes(struct buf *b, const void *p, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void b_le(struct buf *b, uint64_t v, int n)
{
	unsigned char t[8];
	int i;

	for (i = 0; i < n; i++)
		t[i] = (unsigned char)(v >> (8 * i));
	b_bytes(b, t, (size_t)n);
}

static void b_str(struct buf *b, const char *s)
{
	b_le(b, strlen(s), 8);
	b_bytes(b, s, strlen(s));
}

static void b_pad(struct buf *b, size_t a)
{
	while (b->n % a)
		b_le(b, 0, 1);
}

/* Knobs for the malformations; zero = the good file. */
struct spec {
	uint32_t magic, version, ndims0, type0, kvtype1;
	uint64_t ntensors, nkv, dim0, off1, arrn, keylen;
	int nested, dup, no_tail;
};

/*
 * 3 keys: general.architecture = "llama", test.u32 = 7,
 * test.arr = ["a", "bc"]; 2 tensors: "t0" F32 4 x 2 at 0, "t1" Q8_0 32
 * at 32. No padding after the last tensor: every shorter prefix is bad.
 */
static struct buf build(const struct spec *s)
{
	struct buf b = { 0 };
	float f[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	unsigned char q[34] = { 0x00, 0x3c };	/* d = 1.0 */
	int i;

	for (i = 0; i < 32; i++)
		q[2 + i] = (unsigned char)(i - 16);
	b_le(&b, s->magic ? s->magic : GGUF_MAGIC, 4);
	b_le(&b, s->version ? s->version : 3, 4);
	b_le(&b, s->ntensors ? s->ntensors : 2, 8);
	b_le(&b, s->nkv ? s->nkv : 3, 8);
	if (s->keylen) {
		b_le(&b, s->keylen, 8);
		b_bytes(&b, "general.architecture", 20);
	} else {
		b_str(&b, "general.architecture");
	}
	b_le(&b, GGUF_STRING, 4);
	b_str(&b, "llama");
	b_str(&b, "test.u32");
	b_le(&b, s->kvtype1 ? s->kvtype1 : GGUF_U32, 4);
	b_le(&b, 7, 4);
	b_str(&b, "test.arr");
	b_le(&b, GGUF_ARRAY, 4);
	b_le(&b, s->nested ? GGUF_ARRAY : GGUF_STRING, 4);
	b_le(&b, s->arrn ? s->arrn : 2, 8);
	b_str(&b, "a");
	b_str(&b, "bc");
	/* tensor infos */
	b_str(&b, "t0");
	b_le(&b, s->ndims0 ? s->ndims0 : 2, 4);
	b_le(&b, s->dim0 ? s->dim0 : 4, 8);
	b_le(&b, 2, 8);
	b_le(&b, s->type0 ? s->type0 : TP_F32, 4);
	b_le(&b, 0, 8);
	b_str(&b, s->dup ? "t0" : "t1");
	b_le(&b, 1, 4);
	b_le(&b, 32, 8);
	b_le(&b, TP_Q8_0, 4);
	b_le(&b, s->off1 ? s->off1 : 32, 8);
	b_pad(&b, 32);
	b_bytes(&b, f, sizeof(f));
	b_bytes(&b, q, sizeof(q));
	return b;
}

static int parse_fails(const struct spec *s, const char *want,
		       const char *what)
{
	struct buf b = build(s);
	struct gguf g;
	char err[512] = "";
	int r = gguf_parse(&g, b.p, b.n, err, sizeof(err));

	if (!r)
		gguf_release(&g);
	free(b.p);
	if (!ok(r == -1 && strstr(err, want), "%s: error mentions '%s'", what,
		want))
		diag("  result %d, message: %s", r, err);
	else
		diag("  %s", err);
	return r;
}

static void test_good(void)
{
	struct spec s = { 0 };
	struct buf b = build(&s);
	const struct gguf_tensor *t0, *t1;
	const struct gguf_kv *arr;
	struct gguf_str str;
	struct gguf g;
	char err[256];
	int64_t v;

	if (!ok(!gguf_parse(&g, b.p, b.n, err, sizeof(err)),
		"a good file parses"))
		diag("  %s", err);
	ok(g.version == 3 && g.n_kv == 3 && g.n_tensors == 2 &&
	   g.alignment == 32 && g.data_off % 32 == 0, "header fields");
	ok(gguf_get_str(&g, "general.architecture", &str) == 1 &&
	   gguf_str_eq(str, "llama"), "string value");
	ok(gguf_get_int(&g, "test.u32", &v) == 1 && v == 7 &&
	   gguf_get_int(&g, "general.architecture", &v) == -1 &&
	   gguf_get_int(&g, "missing", &v) == 0,
	   "integer value; wrong type and missing keys are told apart");
	arr = gguf_find_kv(&g, "test.arr");
	ok(arr && arr->arr_n == 2 && gguf_str_eq(gguf_arr_str(&g, arr, 0), "a") &&
	   gguf_str_eq(gguf_arr_str(&g, arr, 1), "bc"), "string array");
	t0 = gguf_find_tensor(&g, "t0");
	t1 = gguf_find_tensor(&g, "t1");
	ok(t0 && t1 && t0->ne[0] == 4 && t0->ne[1] == 2 && t0->nelem == 8 &&
	   t0->bytes == 32 && t1->bytes == 34 && t1->type == TP_Q8_0 &&
	   ((const float *)t0->data)[5] == 6.0f &&
	   ((const signed char *)t1->data)[2] == -16 &&
	   (const unsigned char *)t1->data + 34 == b.p + b.n,
	   "tensor shapes, sizes and data");
	ok(!gguf_find_tensor(&g, "t2") && !gguf_find_tensor(&g, "t"),
	   "absent tensor names are not found");
	gguf_release(&g);
	free(b.p);
}

static void test_truncated(void)
{
	struct spec s = { 0 };
	struct buf b = build(&s);
	size_t n, failed = 0, clear = 0;

	for (n = 0; n < b.n; n++) {
		unsigned char *copy = malloc(n ? n : 1);	/* exact size */
		struct gguf g;
		char err[512] = "";

		memcpy(copy, b.p, n);
		if (gguf_parse(&g, copy, n, err, sizeof(err)) == -1)
			failed++;
		else
			gguf_release(&g);
		if (strstr(err, "truncated") || strstr(err, "beyond the end") ||
		    strstr(err, "claims") || strstr(err, "room for"))
			clear++;
		free(copy);
	}
	ok(failed == b.n, "every one of the %zu truncations is rejected (%zu)",
	   b.n, failed);
	ok(clear == b.n, "each says the file is too short (%zu of %zu)", clear,
	   b.n);
	free(b.p);
}

static void test_malformed(void)
{
	parse_fails(&(struct spec){ .magic = 0x46554746 }, "not a GGUF file",
		    "bad magic");
	parse_fails(&(struct spec){ .version = 1 }, "version 1", "version 1");
	parse_fails(&(struct spec){ .version = 99 }, "version 99", "version 99");
	parse_fails(&(struct spec){ .ntensors = 1ull << 60 }, "tensors",
		    "2^60 tensors");
	parse_fails(&(struct spec){ .nkv = ~0ull }, "metadata entries",
		    "2^64-1 metadata entries");
	parse_fails(&(struct spec){ .keylen = 1ull << 62 }, "truncated",
		    "key of 2^62 bytes");
	parse_fails(&(struct spec){ .arrn = 1ull << 61 }, "strings",
		    "string array of 2^61 elements");
	parse_fails(&(struct spec){ .kvtype1 = 99 }, "unknown value type 99",
		    "value type 99");
	parse_fails(&(struct spec){ .nested = 1 }, "arrays of arrays",
		    "nested array");
	parse_fails(&(struct spec){ .ndims0 = 5 }, "5 dimensions",
		    "5 dimensions");
	parse_fails(&(struct spec){ .ndims0 = 7777 }, "7777 dimensions",
		    "7777 dimensions");
	parse_fails(&(struct spec){ .dim0 = 1ull << 45 }, "too large",
		    "dimension of 2^45");
	parse_fails(&(struct spec){ .type0 = 34 }, "tq1_0, which tprun does not support",
		    "tq1_0 tensor");
	parse_fails(&(struct spec){ .type0 = 200 }, "unknown type 200",
		    "tensor type 200");
	parse_fails(&(struct spec){ .off1 = 64 }, "beyond the end",
		    "tensor data past the end");
	parse_fails(&(struct spec){ .off1 = ~0ull - 31 }, "beyond the end",
		    "tensor offset overflowing");
	parse_fails(&(struct spec){ .off1 = 36 }, "alignment",
		    "misaligned tensor offset");
	parse_fails(&(struct spec){ .dup = 1 }, "appears twice",
		    "duplicate tensor name");
}

/* Random bytes in random places: errors are fine, crashes are not. */
static void test_fuzz(void)
{
	struct spec s = { 0 };
	struct buf b = build(&s);
	uint64_t rs = 99;
	int i, j, parsed = 0, bad_ptr = 0;

	for (i = 0; i < 20000; i++) {
		unsigned char *c = malloc(b.n);
		struct gguf g;
		char err[512];
		uint64_t k;

		memcpy(c, b.p, b.n);
		for (j = 0; j < 1 + i % 4; j++) {
			rs = rs * 6364136223846793005ull + 1442695040888963407ull;
			c[(rs >> 33) % b.n] = (unsigned char)(rs >> 13);
		}
		if (!gguf_parse(&g, c, b.n, err, sizeof(err))) {
			parsed++;
			for (k = 0; k < g.n_tensors; k++)
				if ((const unsigned char *)g.t[k].data < c ||
				    (const unsigned char *)g.t[k].data +
				    g.t[k].bytes > c + b.n)
					bad_ptr++;
			gguf_release(&g);
		}
		free(c);
	}
	ok(!bad_ptr, "20000 corrupted files: no crash, every tensor of the %d that parse lies inside the file",
	   parsed);
	free(b.p);
}

static void test_writer(void)
{
	struct gguf_writer *w = gguf_writer_new(64);
	const char *toks[] = { "<s>", "hello", "" };
	uint64_t ne[2] = { 3, 2 };
	float *data = malloc(6 * sizeof(float)), *f;
	const struct gguf_tensor *t;
	unsigned char *bytes;
	struct gguf_str s;
	struct gguf g;
	double d;
	int64_t v;
	size_t len;
	char err[256];
	int i;

	for (i = 0; i < 6; i++)
		data[i] = (float)i / 2;
	gguf_writer_str(w, "general.name", "x");
	gguf_writer_u32(w, "a.u32", 123456);
	gguf_writer_f32(w, "a.f32", 0.25f);
	gguf_writer_str_array(w, "a.toks", toks, 3);
	gguf_writer_tensor(w, "w", TP_F32, 2, ne, data, 6 * sizeof(float));
	bytes = gguf_writer_bytes(w, &len);
	if (!ok(!gguf_parse(&g, bytes, len, err, sizeof(err)),
		"the writer's file parses"))
		diag("  %s", err);
	t = gguf_find_tensor(&g, "w");
	f = t ? (float *)t->data : NULL;
	ok(g.alignment == 64 && g.data_off % 64 == 0 &&
	   gguf_get_int(&g, "a.u32", &v) == 1 && v == 123456 &&
	   gguf_get_float(&g, "a.f32", &d) == 1 && d == 0.25 &&
	   gguf_get_str(&g, "general.name", &s) == 1 && gguf_str_eq(s, "x") &&
	   gguf_find_kv(&g, "a.toks")->arr_n == 3 &&
	   gguf_arr_str(&g, gguf_find_kv(&g, "a.toks"), 2).len == 0 &&
	   t && t->ne[0] == 3 && t->ne[1] == 2 && f && f[5] == 2.5f,
	   "writer round trip: alignment, keys, string array, tensor");
	gguf_release(&g);
	free(bytes);
	gguf_writer_free(w);
}

static void test_open(void)
{
	struct gguf g;
	char err[512], dir[] = "/tmp/tprun-gguf-XXXXXX", path[600];
	FILE *f;

	ok(gguf_open(&g, "/nonexistent/x.gguf", err, sizeof(err)) == -1 &&
	   strstr(err, "/nonexistent/x.gguf") && strstr(err, "No such file"),
	   "a missing file: the path and the reason");
	if (!mkdtemp(dir))
		bail_out("mkdtemp");
	ok(gguf_open(&g, dir, err, sizeof(err)) == -1 &&
	   strstr(err, "not a regular file"), "a directory");
	snprintf(path, sizeof(path), "%s/empty.gguf", dir);
	f = fopen(path, "w");
	fclose(f);
	ok(gguf_open(&g, path, err, sizeof(err)) == -1 &&
	   strstr(err, "empty file"), "an empty file");
	f = fopen(path, "w");
	fputs("GGUF\x03", f);
	fclose(f);
	ok(gguf_open(&g, path, err, sizeof(err)) == -1 &&
	   strstr(err, path) && strstr(err, "truncated"),
	   "a 5-byte file: the path and 'truncated' (%s)", err);
	unlink(path);
	rmdir(dir);
}

/* What llama_fails() adds to the file. */
enum extra {
	X_NONE, X_FREQS, X_FREQS_SHORT, X_YARN, X_LINEAR, X_BIAS,
};

/* A llama (or ARCH) file of the tiny shape with one thing changed. */
static const char *llama_fails(const char *skip, const char *arch,
			       int bad_shape, enum extra extra, char *err,
			       size_t errlen)
{
	static char path[64];
	struct tp_config c = {
		.dim = 32, .layers = 1, .heads = 2, .kv_heads = 1,
		.head_dim = 16, .rot_dim = 16, .ffn = 64, .vocab = 40,
		.eps = 1e-5f, .rope_base = 10000,
	};
	struct gguf_writer *w = gguf_writer_new(32);
	const char *names[] = {
		"token_embd.weight", "output_norm.weight", "output.weight",
		"blk.0.attn_norm.weight", "blk.0.attn_q.weight",
		"blk.0.attn_k.weight", "blk.0.attn_v.weight",
		"blk.0.attn_output.weight", "blk.0.ffn_norm.weight",
		"blk.0.ffn_gate.weight", "blk.0.ffn_up.weight",
		"blk.0.ffn_down.weight",
	};
	const uint64_t shapes[][2] = {
		{ 32, 40 }, { 32, 1 }, { 32, 40 }, { 32, 1 }, { 32, 32 },
		{ 32, 16 }, { 32, 16 }, { 32, 32 }, { 32, 1 }, { 32, 64 },
		{ 32, 64 }, { 64, 32 },
	};
	struct tp_weights wt;
	char key[96];
	unsigned i;
	int r;

	snprintf(path, sizeof(path), "/tmp/tprun-llama-%d.gguf", (int)getpid());
#define KEY(s) (snprintf(key, sizeof(key), "%s.%s", arch, s), key)
	gguf_writer_str(w, "general.architecture", arch);
	gguf_writer_u32(w, KEY("embedding_length"), (uint32_t)c.dim);
	gguf_writer_u32(w, KEY("block_count"), (uint32_t)c.layers);
	gguf_writer_u32(w, KEY("feed_forward_length"), (uint32_t)c.ffn);
	gguf_writer_u32(w, KEY("attention.head_count"), (uint32_t)c.heads);
	gguf_writer_u32(w, KEY("attention.head_count_kv"), (uint32_t)c.kv_heads);
	if (extra == X_YARN)
		gguf_writer_str(w, KEY("rope.scaling.type"), "yarn");
	if (extra == X_LINEAR) {
		gguf_writer_str(w, KEY("rope.scaling.type"), "linear");
		gguf_writer_f32(w, KEY("rope.scaling.factor"), 4);
	}
#undef KEY
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		uint64_t ne[2] = { shapes[i][0], shapes[i][1] };
		size_t n = ne[0] * ne[1];

		if (skip && !strcmp(names[i], skip))
			continue;
		if (bad_shape && i == 6)
			ne[1] = 8;
		gguf_writer_tensor(w, names[i], TP_F32, ne[1] == 1 ? 1 : 2, ne,
				   calloc(n, sizeof(float)), n * sizeof(float));
	}
	if (extra == X_FREQS || extra == X_FREQS_SHORT) {
		uint64_t ne[1] = { extra == X_FREQS ? 8 : 6 };

		gguf_writer_tensor(w, "rope_freqs.weight", TP_F32, 1, ne,
				   calloc(8, sizeof(float)), ne[0] * sizeof(float));
	}
	if (extra == X_BIAS) {	/* Qwen2's: q 32 rows, k and v 16 */
		static const char *const b[] = { "blk.0.attn_q.bias",
			"blk.0.attn_k.bias", "blk.0.attn_v.bias" };

		for (i = 0; i < 3; i++) {
			uint64_t ne[1] = { i ? 16 : 32 };

			gguf_writer_tensor(w, b[i], TP_F32, 1, ne,
					   calloc(32, sizeof(float)),
					   ne[0] * sizeof(float));
		}
	}
	gguf_writer_save(w, path, err, errlen);
	gguf_writer_free(w);
	r = tp_weights_gguf(&wt, path, 0, 2, TP_SPLIT_AUTO, err, errlen);
	if (!r)
		tp_weights_free(&wt);
	unlink(path);
	return r ? err : NULL;
}

static void test_llama(void)
{
	char err[600];
	const char *e;

	e = llama_fails(NULL, "llama", 0, X_NONE, err, sizeof(err));
	ok(!e, "a complete tiny llama file loads as 2 ranks%s%s", e ? ": " : "",
	   e ? e : "");
	e = llama_fails("blk.0.ffn_up.weight", "llama", 0, X_NONE, err, sizeof(err));
	ok(e && strstr(e, "blk.0.ffn_up.weight is missing"),
	   "a missing tensor is named (%s)", e ? e : "loaded");
	e = llama_fails("token_embd.weight", "llama", 0, X_NONE, err, sizeof(err));
	ok(e && strstr(e, "token_embd.weight"), "a missing embedding (%s)",
	   e ? e : "loaded");
	e = llama_fails(NULL, "gpt2", 0, X_NONE, err, sizeof(err));
	ok(e && strstr(e, "'gpt2' is not supported"),
	   "another architecture is refused (%s)", e ? e : "loaded");
	e = llama_fails(NULL, "llama", 1, X_NONE, err, sizeof(err));
	ok(e && strstr(e, "blk.0.attn_v.weight is 32 x 8, expected 32 x 16"),
	   "a tensor of the wrong shape is named (%s)", e ? e : "loaded");
	e = llama_fails(NULL, "llama", 0, X_FREQS, err, sizeof(err));
	ok(!e, "RoPE frequency factors (rope_freqs.weight) load%s%s",
	   e ? ": " : "", e ? e : "");
	e = llama_fails(NULL, "llama", 0, X_FREQS_SHORT, err, sizeof(err));
	ok(e && strstr(e, "rope_freqs.weight is 6 x 1, expected 8 x 1"),
	   "RoPE frequency factors of the wrong length are named (%s)",
	   e ? e : "loaded");
	e = llama_fails(NULL, "llama", 0, X_YARN, err, sizeof(err));
	ok(e && strstr(e, "YaRN without llama.rope.scaling.factor"),
	   "YaRN RoPE scaling without its factor is refused by name, not ignored (%s)",
	   e ? e : "loaded");
	e = llama_fails(NULL, "llama", 0, X_LINEAR, err, sizeof(err));
	ok(!e, "linear RoPE scaling loads%s%s", e ? ": " : "", e ? e : "");
	e = llama_fails(NULL, "qwen2", 0, X_BIAS, err, sizeof(err));
	ok(!e, "a qwen2 file with its Q, K, V biases loads as 2 ranks%s%s",
	   e ? ": " : "", e ? e : "");
	e = llama_fails(NULL, "qwen2", 0, X_NONE, err, sizeof(err));
	ok(e && strstr(e, "blk.0.attn_q.bias is missing"),
	   "a qwen2 file without its biases is refused, naming one (%s)",
	   e ? e : "loaded");
	e = llama_fails(NULL, "mamba", 0, X_NONE, err, sizeof(err));
	ok(e && strstr(e, "architecture 'mamba' is not supported (llama, qwen2, qwen3, qwen3moe, glm4moe, deepseek2 and gpt-oss are)"),
	   "an unsupported architecture is named (%s)", e ? e : "loaded");
}

/*
 * Mixture-of-experts files: a real export of ARCH (tiny, 8 experts),
 * rewritten with one thing wrong: the tensor SKIP left out; the tensor
 * RESHAPE with one expert fewer (or, when 2-D, one row fewer); the
 * integer key KEY set to VAL. Loaded as 2 ranks: NULL, or the error.
 */
/*
 * A small ARCH file exported, then written again to DST without tensor
 * SKIP, with tensor RESHAPE an expert (or row) short, and metadata KEY
 * (added when missing) set to VAL as u32. 0, or -1 and ERR.
 */
static int moe_write(const char *arch, const char *skip, const char *reshape,
		     const char *key, uint32_t val, const char *dst, char *err,
		     size_t errlen)
{
	struct tp_config c = {
		.dim = 64, .layers = 2, .heads = 4, .kv_heads = 2,
		.head_dim = 16, .rot_dim = 16, .ffn = 64, .vocab = 64,
		.eps = 1e-5f, .rope_base = 10000,
		.moe = { .experts = 8, .used = 2, .ffn = 32 },
	};
	char src[64];
	struct gguf g;
	struct gguf_writer *w;
	uint64_t i;
	int r, found = 0;

	if (!strcmp(arch, "glm4moe")) {
		c.moe.shared = 1;
		c.moe.dense_layers = 1;
		c.nextn_layers = 1;
		c.rot_dim = 8;
	} else if (!strcmp(arch, "deepseek2")) {
		/* heads of 24 (16 + RoPE 8), a latent of 32, q_lora 16 */
		c.head_dim = 24;
		c.rot_dim = 8;
		c.mla.kv_lora = 32;
		c.mla.q_lora = 16;
		c.mla.v_dim = 16;
		c.moe.shared = 1;
		c.moe.dense_layers = 1;
		c.moe.groups = 4;
		c.moe.groups_used = 2;
	} else {
		c.ffn = 64;
	}
	snprintf(src, sizeof(src), "/tmp/tprun-moe-src-%d.gguf", (int)getpid());
	if (tp_export_gguf(src, arch, &c, 1, TP_F32, 0, err, errlen) ||
	    gguf_open(&g, src, err, errlen))
		return -1;
	w = gguf_writer_new(GGUF_DEFAULT_ALIGNMENT);
	for (i = 0; i < g.n_kv; i++) {
		const struct gguf_kv *kv = &g.kv[i];
		char name[128];

		snprintf(name, sizeof(name), "%.*s", (int)kv->key.len,
			 kv->key.p);
		if (key && !strcmp(name, key)) {
			gguf_writer_u32(w, name, val);
			found = 1;
			continue;
		}
		if (kv->type == GGUF_U32)
			gguf_writer_u32(w, name, (uint32_t)kv->v.u);
		else if (kv->type == GGUF_F32)
			gguf_writer_f32(w, name, (float)kv->v.f);
		else if (kv->type == GGUF_BOOL)
			gguf_writer_bool(w, name, (int)kv->v.u);
		else if (kv->type == GGUF_STRING) {
			char v[256];

			snprintf(v, sizeof(v), "%.*s", (int)kv->v.s.len,
				 kv->v.s.p);
			gguf_writer_str(w, name, v);
		}
	}
	if (key && !found)
		gguf_writer_u32(w, key, val);
	for (i = 0; i < g.n_tensors; i++) {
		const struct gguf_tensor *t = &g.t[i];
		uint64_t ne[4] = { t->ne[0], t->ne[1], t->ne[2], t->ne[3] };
		size_t bytes = t->bytes;
		char name[128];
		void *data;

		snprintf(name, sizeof(name), "%.*s", (int)t->name.len,
			 t->name.p);
		if (skip && !strcmp(name, skip))
			continue;
		if (reshape && !strcmp(name, reshape)) {
			bytes = bytes / ne[t->ndims - 1] * (ne[t->ndims - 1] - 1);
			ne[t->ndims - 1]--;
		}
		data = malloc(bytes);
		memcpy(data, t->data, bytes);
		gguf_writer_tensor(w, name, t->type, t->ndims, ne, data, bytes);
	}
	gguf_close(&g);
	r = gguf_writer_save(w, dst, err, errlen);
	gguf_writer_free(w);
	unlink(src);
	return r;
}

/* moe_write's file loaded as rank 0 of 2: NULL, or the error. */
static const char *moe_fails(const char *arch, const char *skip,
			     const char *reshape, const char *key, int val,
			     char *err, size_t errlen)
{
	struct tp_weights wt;
	char dst[64];
	int r;

	snprintf(dst, sizeof(dst), "/tmp/tprun-moe-%d.gguf", (int)getpid());
	r = moe_write(arch, skip, reshape, key, (uint32_t)val, dst, err,
		      errlen);
	if (!r) {
		r = tp_weights_gguf(&wt, dst, 0, 2, TP_SPLIT_AUTO, err, errlen);
		if (!r)
			tp_weights_free(&wt);
	}
	unlink(dst);
	return r ? err : NULL;
}

/*
 * Hostile numbers in every key a MoE loader reads: each file is loaded
 * as the first and the last rank of 1 to 4, and what loads on one rank
 * runs a forward pass. Errors are fine, a crash is not; an error must
 * say something.
 */
static void test_moe_numbers(void)
{
	static const char *const archs[] = { "qwen3moe", "glm4moe",
					     "deepseek2", "gpt-oss" };
	static const char *const keys[] = {
		"attention.kv_lora_rank", "attention.q_lora_rank",
		"attention.key_length_mla", "attention.value_length_mla",
		"attention.value_length",
		"expert_count", "expert_used_count",
		"expert_feed_forward_length", "expert_shared_count",
		"leading_dense_block_count", "expert_gating_func",
		"expert_group_count", "expert_group_used_count",
		"expert_weights_norm", "expert_weights_scale",
		"nextn_predict_layers", "block_count", "embedding_length",
		"feed_forward_length", "attention.head_count",
		"attention.head_count_kv", "attention.key_length",
		"rope.dimension_count", "context_length",
		"attention.sliding_window", "attention.sliding_window_pattern",
		"rope.scaling.original_context_length",
	};
	static const uint32_t vals[] = {
		0, 1, 2, 3, 4, 7, 8, 9, 16, 31, 32, 33, 64, 1024, 1025,
		65536, 0x7fffffff, 0x80000000u, 0xffffffffu,
	};
	char dst[64], err[600], key[96];
	int a, k, v, N, files = 0, loads = 0, runs = 0, mute = 0;

	snprintf(dst, sizeof(dst), "/tmp/tprun-moe-n-%d.gguf", (int)getpid());
	for (a = 0; a < 4; a++)
		for (k = 0; k < (int)(sizeof(keys) / sizeof(keys[0])); k++)
			for (v = 0; v < (int)(sizeof(vals) / sizeof(vals[0]));
			     v++) {
				snprintf(key, sizeof(key), "%s.%s", archs[a],
					 keys[k]);
				if (moe_write(archs[a], NULL, NULL, key, vals[v],
					      dst, err, sizeof(err)))
					continue;
				files++;
				for (N = 1; N <= 4; N++) {
					int ends[2] = { 0, N - 1 }, r;

					for (r = 0; r < 2; r++) {
						struct tp_weights wt;
						struct tp_model m;
						static const int tok[3] = { 1, 5, 9 };

						err[0] = 0;
						if (tp_weights_gguf(&wt, dst, ends[r],
								    N, TP_SPLIT_AUTO,
								    err,
								    sizeof(err))) {
							mute += !err[0];
							continue;
						}
						loads++;
						if (N == 1 &&
						    !tp_model_init(&m, &wt, 8, 4)) {
							tp_forward(&m, tok, 3, 0,
								   NULL);
							tp_model_free(&m);
							runs++;
						}
						tp_weights_free(&wt);
					}
				}
			}
	unlink(dst);
	ok(files > 2000 && !mute,
	   "%d MoE files with hostile numbers in %d keys: no crash, every refusal says why; %d loads, %d forward passes",
	   files, (int)(sizeof(keys) / sizeof(keys[0])), loads, runs);
}

/* deepseek2's latent attention: what a file must hold, refused by name. */
static void test_deepseek2(void)
{
	char err[600];
	const char *e;

	e = moe_fails("deepseek2", NULL, NULL, NULL, 0, err, sizeof(err));
	ok(!e, "deepseek2: an export loads as 2 ranks%s%s", e ? ": " : "",
	   e ? e : "");
	e = moe_fails("deepseek2", "blk.0.attn_k_b.weight", NULL, NULL, 0, err,
		      sizeof(err));
	ok(e && strstr(e, "blk.0.attn_k_b.weight is missing"),
	   "deepseek2: a missing attn_k_b is named (%s)", e ? e : "loaded");
	e = moe_fails("deepseek2", NULL, "blk.1.attn_v_b.weight", NULL, 0, err,
		      sizeof(err));
	ok(e && strstr(e, "blk.1.attn_v_b.weight is 32 x 16 x 3") &&
	   strstr(e, "expected 32 x 16 x 4"),
	   "deepseek2: attn_v_b with a head fewer is refused, naming it (%s)",
	   e ? e : "loaded");
	e = moe_fails("deepseek2", NULL, NULL, "deepseek2.attention.kv_lora_rank",
		      48, err, sizeof(err));
	ok(e && strstr(e, "key_length 40 and value_length 32"),
	   "deepseek2: kv_lora_rank other than the cache's widths is refused (%s)",
	   e ? e : "loaded");
	e = moe_fails("deepseek2", NULL, NULL,
		      "deepseek2.attention.head_count_kv", 2, err, sizeof(err));
	ok(e && strstr(e, "head_count_kv is 2"),
	   "deepseek2: more than one K/V head is refused (%s)",
	   e ? e : "loaded");
	e = moe_fails("deepseek2", NULL, NULL,
		      "deepseek2.attention.key_length_mla", 0, err,
		      sizeof(err));
	ok(e && strstr(e, "older conversion (attn_kv_b"),
	   "deepseek2: a file of the older conversion is refused, saying so (%s)",
	   e ? e : "loaded");
	e = moe_fails("deepseek2", NULL, NULL,
		      "deepseek2.attention.q_lora_rank", 24, err, sizeof(err));
	ok(e && strstr(e, "attn_q_a.weight"),
	   "deepseek2: q_lora_rank other than attn_q_a's is refused, naming it (%s)",
	   e ? e : "loaded");
	e = moe_fails("deepseek2", "blk.1.attn_q_a_norm.weight", NULL, NULL, 0,
		      err, sizeof(err));
	ok(e && strstr(e, "attn_q_a_norm.weight"),
	   "deepseek2: a missing attn_q_a_norm is named (%s)", e ? e : "loaded");
	e = moe_fails("deepseek2", NULL, NULL,
		      "deepseek2.attention.temperature_scale", 1, err,
		      sizeof(err));
	ok(e && strstr(e, "temperature_scale"),
	   "deepseek2: attention temperature tuning is refused by name (%s)",
	   e ? e : "loaded");
}

/* gpt-oss: what a file must hold, refused by name. */
static void test_gpt_oss(void)
{
	char err[600];
	const char *e;

	e = moe_fails("gpt-oss", NULL, NULL, NULL, 0, err, sizeof(err));
	ok(!e, "gpt-oss: an export loads as 2 ranks%s%s", e ? ": " : "",
	   e ? e : "");
	e = moe_fails("gpt-oss", "blk.1.attn_sinks.weight", NULL, NULL, 0,
		      err, sizeof(err));
	ok(e && strstr(e, "blk.1.attn_sinks.weight is missing"),
	   "gpt-oss: missing attention sinks are named (%s)", e ? e : "loaded");
	e = moe_fails("gpt-oss", NULL, "blk.0.ffn_up_exps.bias", NULL, 0, err,
		      sizeof(err));
	ok(e && strstr(e, "blk.0.ffn_up_exps.bias"),
	   "gpt-oss: expert biases an expert short are refused, naming them (%s)",
	   e ? e : "loaded");
	e = moe_fails("gpt-oss", "blk.0.attn_output.bias", NULL, NULL, 0, err,
		      sizeof(err));
	ok(e && strstr(e, "blk.0.attn_output.bias is missing"),
	   "gpt-oss: a missing output bias is named (%s)", e ? e : "loaded");
	e = moe_fails("gpt-oss", NULL, NULL, "gpt-oss.attention.sliding_window",
		      0, err, sizeof(err));
	ok(e && strstr(e, "gpt-oss.attention.sliding_window is 0"),
	   "gpt-oss: a window of 0 is refused (%s)", e ? e : "loaded");
	e = moe_fails("gpt-oss", NULL, NULL, "gpt-oss.rope.dimension_count", 8,
		      err, sizeof(err));
	ok(e && strstr(e, "rotates the whole head"),
	   "gpt-oss: RoPE on part of the head is refused (%s)",
	   e ? e : "loaded");
	e = moe_fails("gpt-oss", NULL, NULL,
		      "gpt-oss.rope.scaling.yarn_log_multiplier", 1, err,
		      sizeof(err));
	ok(e && strstr(e, "yarn_log_multiplier is 1: only 0"),
	   "gpt-oss: YaRN's log multiplier (DeepSeek's) is refused by name (%s)",
	   e ? e : "loaded");
	e = moe_fails("gpt-oss", NULL, NULL, "gpt-oss.rope.freq_base_swa", 5000,
		      err, sizeof(err));
	ok(e && strstr(e, "rope.freq_base_swa 5000 differs"),
	   "gpt-oss: another RoPE base for the window's layers is refused (%s)",
	   e ? e : "loaded");
}

static void test_moe(void)
{
	static const char *const archs[] = { "qwen3moe", "glm4moe" };
	char err[600];
	const char *e;
	int i;

	for (i = 0; i < 2; i++) {
		const char *a = archs[i];
		char k[64];

		e = moe_fails(a, NULL, NULL, NULL, 0, err, sizeof(err));
		ok(!e, "%s: an export loads as 2 ranks%s%s", a, e ? ": " : "",
		   e ? e : "");
		e = moe_fails(a, NULL, "blk.1.ffn_up_exps.weight", NULL, 0,
			      err, sizeof(err));
		ok(e && strstr(e, "blk.1.ffn_up_exps.weight is 64 x 32 x 7") &&
		   strstr(e, "expert_count is 8"),
		   "%s: an expert tensor with an expert fewer than expert_count is refused, naming it (%s)",
		   a, e ? e : "loaded");
		snprintf(k, sizeof(k), "%s.expert_count", a);
		e = moe_fails(a, NULL, NULL, k, 16, err, sizeof(err));
		ok(e && strstr(e, "ffn_gate_inp.weight is 64 x 8, expected 64 x 16"),
		   "%s: expert_count above the tensors' is refused, naming the router (%s)",
		   a, e ? e : "loaded");
		snprintf(k, sizeof(k), "%s.expert_feed_forward_length", a);
		e = moe_fails(a, NULL, NULL, k, 48, err, sizeof(err));
		ok(e && strstr(e, "_exps.weight is") && strstr(e, "expected"),
		   "%s: expert_feed_forward_length other than the tensors' is refused (%s)",
		   a, e ? e : "loaded");
		snprintf(k, sizeof(k), "%s.expert_used_count", a);
		e = moe_fails(a, NULL, NULL, k, 9, err, sizeof(err));
		ok(e && strstr(e, "expert_used_count is 9"),
		   "%s: more experts used than there are is refused (%s)", a,
		   e ? e : "loaded");
		e = moe_fails(a, "blk.1.ffn_gate_inp.weight", NULL, NULL, 0, err,
			      sizeof(err));
		ok(e && strstr(e, "blk.1.ffn_gate_inp.weight is missing"),
		   "%s: a missing router is named (%s)", a, e ? e : "loaded");
	}
	e = moe_fails("qwen3moe", "blk.0.attn_k_norm.weight", NULL, NULL, 0, err,
		      sizeof(err));
	ok(e && strstr(e, "blk.0.attn_k_norm.weight is missing"),
	   "qwen3moe: a missing k norm is named (%s)", e ? e : "loaded");
	e = moe_fails("glm4moe", "blk.1.exp_probs_b.bias", NULL, NULL, 0, err,
		      sizeof(err));
	ok(e && strstr(e, "blk.1.exp_probs_b.bias is missing"),
	   "glm4moe: a missing expert-score bias is named (%s)", e ? e : "loaded");
	e = moe_fails("glm4moe", "blk.2.nextn.eh_proj.weight", NULL, NULL, 0,
		      err, sizeof(err));
	ok(e && strstr(e, "blk.2.nextn.eh_proj.weight is missing"),
	   "glm4moe: the NextN layer's tensors are checked as llama.cpp does (%s)",
	   e ? e : "loaded");
	e = moe_fails("glm4moe", NULL, NULL, "glm4moe.expert_gating_func", 3,
		      err, sizeof(err));
	ok(e && strstr(e, "expert_gating_func = 3"),
	   "glm4moe: a gating function tprun has not is refused by name (%s)",
	   e ? e : "loaded");
	e = moe_fails("glm4moe", NULL, NULL, "glm4moe.nextn_predict_layers", 3,
		      err, sizeof(err));
	ok(e && strstr(e, "nextn_predict_layers is 3"),
	   "glm4moe: more NextN layers than blocks is refused (%s)",
	   e ? e : "loaded");
	e = moe_fails("glm4moe", NULL, NULL, "glm4moe.leading_dense_block_count",
		      0, err, sizeof(err));
	ok(e && strstr(e, "blk.0.ffn_gate_inp.weight is missing"),
	   "glm4moe: a dense layer where the metadata says MoE is refused, naming the router (%s)",
	   e ? e : "loaded");
	e = moe_fails("glm4moe", NULL, NULL, "glm4moe.expert_shared_count", 0,
		      err, sizeof(err));
	ok(e && strstr(e, "expert_shared_count is 0"),
	   "glm4moe: no shared experts is refused (llama.cpp adds silu(x) in their place) (%s)",
	   e ? e : "loaded");
	e = moe_fails("glm4moe", "blk.1.attn_v.bias", NULL, NULL, 0, err,
		      sizeof(err));
	ok(e && strstr(e, "2 of the biases"),
	   "glm4moe: biases on Q and K without V are refused (%s)",
	   e ? e : "loaded");
}

int main(void)
{
	plan(NO_PLAN);
	tp_math_init();
	test_good();
	test_truncated();
	test_malformed();
	test_fuzz();
	test_writer();
	test_open();
	test_llama();
	test_moe();
	test_deepseek2();
	test_gpt_oss();
	test_moe_numbers();
	return done();
}
