// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* GGUF writer (version 3): what --export-gguf and the tests use. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "gguf/gguf.h"

struct wtensor {
	char *name;
	uint32_t type, ndims;
	uint64_t ne[4];
	void *data;
	size_t bytes;
};

struct gguf_writer {
	uint32_t alignment;
	unsigned char *kv;	/* serialised metadata */
	size_t kv_len, kv_cap;
	uint64_t n_kv;
	struct wtensor *t;
	uint64_t n_t, cap_t;
};

struct gguf_writer *gguf_writer_new(uint32_t alignment)
{
	struct gguf_writer *w = tp_calloc(1, sizeof(*w));

	w->alignment = alignment ? alignment : GGUF_DEFAULT_ALIGNMENT;
	if (alignment && alignment != GGUF_DEFAULT_ALIGNMENT)
		gguf_writer_u32(w, "general.alignment", alignment);
	return w;
}

static void put(struct gguf_writer *w, const void *p, size_t n)
{
	if (w->kv_len + n > w->kv_cap) {
		w->kv_cap = (w->kv_len + n) * 2;
		w->kv = realloc(w->kv, w->kv_cap);
		if (!w->kv)
			tp_die("out of memory");
	}
	memcpy(w->kv + w->kv_len, p, n);
	w->kv_len += n;
}

static void put_le(struct gguf_writer *w, uint64_t v, int n)
{
	unsigned char b[8];
	int i;

	for (i = 0; i < n; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	put(w, b, (size_t)n);
}

static void put_str(struct gguf_writer *w, const char *s)
{
	put_le(w, strlen(s), 8);
	put(w, s, strlen(s));
}

static void put_key(struct gguf_writer *w, const char *key, uint32_t type)
{
	put_str(w, key);
	put_le(w, type, 4);
	w->n_kv++;
}

void gguf_writer_str(struct gguf_writer *w, const char *key, const char *v)
{
	put_key(w, key, GGUF_STRING);
	put_str(w, v);
}

void gguf_writer_u32(struct gguf_writer *w, const char *key, uint32_t v)
{
	put_key(w, key, GGUF_U32);
	put_le(w, v, 4);
}

void gguf_writer_f32(struct gguf_writer *w, const char *key, float v)
{
	uint32_t u;

	memcpy(&u, &v, sizeof(u));
	put_key(w, key, GGUF_F32);
	put_le(w, u, 4);
}

void gguf_writer_str_array(struct gguf_writer *w, const char *key,
			   const char *const *v, uint64_t n)
{
	uint64_t i;

	put_key(w, key, GGUF_ARRAY);
	put_le(w, GGUF_STRING, 4);
	put_le(w, n, 8);
	for (i = 0; i < n; i++)
		put_str(w, v[i]);
}

void gguf_writer_bool(struct gguf_writer *w, const char *key, int v)
{
	put_key(w, key, GGUF_BOOL);
	put_le(w, v ? 1 : 0, 1);
}

void gguf_writer_f32_array(struct gguf_writer *w, const char *key,
			   const float *v, uint64_t n)
{
	uint64_t i;
	uint32_t u;

	put_key(w, key, GGUF_ARRAY);
	put_le(w, GGUF_F32, 4);
	put_le(w, n, 8);
	for (i = 0; i < n; i++) {
		memcpy(&u, &v[i], sizeof(u));
		put_le(w, u, 4);
	}
}

void gguf_writer_i32_array(struct gguf_writer *w, const char *key,
			   const int32_t *v, uint64_t n)
{
	uint64_t i;

	put_key(w, key, GGUF_ARRAY);
	put_le(w, GGUF_I32, 4);
	put_le(w, n, 8);
	for (i = 0; i < n; i++)
		put_le(w, (uint32_t)v[i], 4);
}

void gguf_writer_tensor(struct gguf_writer *w, const char *name,
			uint32_t type, uint32_t ndims, const uint64_t *ne,
			void *data, size_t bytes)
{
	struct wtensor *t;
	uint32_t i;

	if (w->n_t == w->cap_t) {
		w->cap_t = w->cap_t ? 2 * w->cap_t : 32;
		w->t = realloc(w->t, w->cap_t * sizeof(*w->t));
		if (!w->t)
			tp_die("out of memory");
	}
	t = &w->t[w->n_t++];
	memset(t, 0, sizeof(*t));
	t->name = tp_strdup(name);
	t->type = type;
	t->ndims = ndims;
	for (i = 0; i < ndims && i < 4; i++)
		t->ne[i] = ne[i];
	t->data = data;
	t->bytes = bytes;
}

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

unsigned char *gguf_writer_bytes(struct gguf_writer *w, size_t *len)
{
	struct gguf_writer h = { 0 };	/* header bytes are built here */
	size_t data_off, off = 0, total;
	unsigned char *buf;
	uint64_t i;
	uint32_t d;

	put_le(&h, GGUF_MAGIC, 4);
	put_le(&h, 3, 4);
	put_le(&h, w->n_t, 8);
	put_le(&h, w->n_kv, 8);
	put(&h, w->kv, w->kv_len);
	for (i = 0; i < w->n_t; i++) {
		put_str(&h, w->t[i].name);
		put_le(&h, w->t[i].ndims, 4);
		for (d = 0; d < w->t[i].ndims; d++)
			put_le(&h, w->t[i].ne[d], 8);
		put_le(&h, w->t[i].type, 4);
		put_le(&h, off, 8);
		off = align_up(off + w->t[i].bytes, w->alignment);
	}
	data_off = align_up(h.kv_len, w->alignment);
	total = data_off + off;
	buf = tp_calloc(total, 1);
	memcpy(buf, h.kv, h.kv_len);
	free(h.kv);
	off = 0;
	for (i = 0; i < w->n_t; i++) {
		memcpy(buf + data_off + off, w->t[i].data, w->t[i].bytes);
		off = align_up(off + w->t[i].bytes, w->alignment);
	}
	*len = total;
	return buf;
}

int gguf_writer_save(struct gguf_writer *w, const char *path, char *err,
		     size_t errlen)
{
	size_t len;
	unsigned char *buf = gguf_writer_bytes(w, &len);
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		free(buf);
		return -1;
	}
	ok = fwrite(buf, 1, len, f) == len;
	ok = !fclose(f) && ok;
	free(buf);
	if (!ok) {
		snprintf(err, errlen, "%s: write failed: %s", path,
			 strerror(errno));
		return -1;
	}
	return 0;
}

void gguf_writer_free(struct gguf_writer *w)
{
	uint64_t i;

	if (!w)
		return;
	for (i = 0; i < w->n_t; i++) {
		free(w->t[i].name);
		free(w->t[i].data);
	}
	free(w->t);
	free(w->kv);
	free(w);
}
