/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * GGUF files (versions 2 and 3): a strict reader that checks every count,
 * length and offset against the file before using it, and a small writer.
 * The reader keeps pointers into the (memory-mapped) file: nothing is
 * copied, and pages are read only when a tensor is used.
 */
#ifndef TPRUN_GGUF_H
#define TPRUN_GGUF_H

#include <stddef.h>
#include <stdint.h>

#define GGUF_MAGIC 0x46554747u	/* "GGUF" little-endian */
#define GGUF_DEFAULT_ALIGNMENT 32

enum gguf_vtype {
	GGUF_U8, GGUF_I8, GGUF_U16, GGUF_I16, GGUF_U32, GGUF_I32, GGUF_F32,
	GGUF_BOOL, GGUF_STRING, GGUF_ARRAY, GGUF_U64, GGUF_I64, GGUF_F64,
	GGUF_NTYPES
};

/* A string inside the file: not NUL-terminated. */
struct gguf_str {
	const char *p;
	uint64_t len;
};

struct gguf_kv {
	struct gguf_str key;
	uint32_t type;
	union {
		uint64_t u;		/* unsigned integers, bool */
		int64_t i;		/* signed integers */
		double f;		/* F32, F64 */
		struct gguf_str s;	/* STRING */
	} v;
	/* ARRAY: element type, count, first element; string arrays also
	 * get each element's offset in the file */
	uint32_t arr_type;
	uint64_t arr_n;
	const unsigned char *arr_data;
	uint64_t *arr_str_off;
};

struct gguf_tensor {
	struct gguf_str name;
	uint32_t ndims;
	uint64_t ne[4];		/* ne[0] is the contiguous (row) dimension */
	uint32_t type;		/* GGML type; tprun accepts only its own */
	uint64_t offset;	/* in the data section */
	uint64_t nelem, bytes;
	const void *data;
};

struct gguf {
	const unsigned char *base;
	size_t size;
	void *map;		/* set when gguf_open() mapped a file */
	size_t map_len;
	uint32_t version;
	uint64_t n_kv, n_tensors, alignment;
	size_t data_off;
	struct gguf_kv *kv;
	struct gguf_tensor *t;
};

/* Parse SIZE bytes at BUF (kept, not copied). 0, or -1 and ERR. */
int gguf_parse(struct gguf *g, const void *buf, size_t size, char *err,
	       size_t errlen);
/* Map and parse a file; ERR starts with the path. */
int gguf_open(struct gguf *g, const char *path, char *err, size_t errlen);
void gguf_close(struct gguf *g);
/* Keep the mapping (the caller munmaps g->map later); free the rest. */
void gguf_release(struct gguf *g);

/*
 * What ranks compare to know they load the same file without reading it
 * all: its size and a hash (FNV-1a) of its header (metadata and tensor
 * table, up to the data). 0, or -1 and ERR.
 */
int gguf_fingerprint(const char *path, uint64_t *size, uint64_t *hash,
		     char *err, size_t errlen);

const char *gguf_ggml_type_name(uint32_t type);	/* "q4_K", or NULL */

const struct gguf_kv *gguf_find_kv(const struct gguf *g, const char *key);
/* 1 = found (converted), 0 = absent, -1 = present with another type */
int gguf_get_int(const struct gguf *g, const char *key, int64_t *v);
int gguf_get_float(const struct gguf *g, const char *key, double *v);
int gguf_get_str(const struct gguf *g, const char *key, struct gguf_str *s);
/* Element I of a string array (I < kv->arr_n). */
struct gguf_str gguf_arr_str(const struct gguf *g, const struct gguf_kv *kv,
			     uint64_t i);
int gguf_str_eq(struct gguf_str s, const char *c);

const struct gguf_tensor *gguf_find_tensor(const struct gguf *g,
					   const char *name);

/* Writer: build in memory, then save. Every function dies on ENOMEM. */
struct gguf_writer;
struct gguf_writer *gguf_writer_new(uint32_t alignment);
void gguf_writer_str(struct gguf_writer *w, const char *key, const char *v);
void gguf_writer_u32(struct gguf_writer *w, const char *key, uint32_t v);
void gguf_writer_f32(struct gguf_writer *w, const char *key, float v);
void gguf_writer_str_array(struct gguf_writer *w, const char *key,
			   const char *const *v, uint64_t n);
void gguf_writer_bool(struct gguf_writer *w, const char *key, int v);
void gguf_writer_f32_array(struct gguf_writer *w, const char *key,
			   const float *v, uint64_t n);
void gguf_writer_i32_array(struct gguf_writer *w, const char *key,
			   const int32_t *v, uint64_t n);
/* DATA (BYTES long, malloc'ed) becomes the writer's. */
void gguf_writer_tensor(struct gguf_writer *w, const char *name,
			uint32_t type, uint32_t ndims, const uint64_t *ne,
			void *data, size_t bytes);
/* The whole file in memory (for tests); free() it. */
unsigned char *gguf_writer_bytes(struct gguf_writer *w, size_t *len);
int gguf_writer_save(struct gguf_writer *w, const char *path, char *err,
		     size_t errlen);
void gguf_writer_free(struct gguf_writer *w);

#endif /* TPRUN_GGUF_H */
