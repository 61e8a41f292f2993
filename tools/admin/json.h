/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A small streaming JSON writer for --json output.  It places the commas
 * and escapes every string, so callers only say what comes next.  Strings
 * from the kernel or the Thunderbolt peer (a remote host's name) are not
 * trusted to be UTF-8: invalid bytes become U+FFFD, so the output always
 * parses.
 */
#ifndef TBRDMA_ADMIN_JSON_H
#define TBRDMA_ADMIN_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

struct json_writer {
	FILE *out;
	int depth;
	bool has_items[JSON_MAX_DEPTH];	/* a value was written at this level */
	bool after_key;			/* a key waits for its value */
	bool misused;			/* unbalanced or too deep: a bug */
};

void json_init(struct json_writer *w, FILE *out);
/* End the document with a newline; 0 if every container was closed. */
int json_finish(struct json_writer *w);

void json_object_begin(struct json_writer *w);
void json_object_end(struct json_writer *w);
void json_array_begin(struct json_writer *w);
void json_array_end(struct json_writer *w);
void json_key(struct json_writer *w, const char *key);

void json_string(struct json_writer *w, const char *s);	/* NULL: null */
void json_uint(struct json_writer *w, uint64_t v);
void json_int(struct json_writer *w, int64_t v);
/* A fixed number of decimals; NaN and infinities (not JSON) become null. */
void json_double(struct json_writer *w, double v, int decimals);
void json_bool(struct json_writer *w, bool v);
void json_null(struct json_writer *w);

/* A key and its value. */
void json_kv_string(struct json_writer *w, const char *key, const char *s);
void json_kv_uint(struct json_writer *w, const char *key, uint64_t v);
void json_kv_int(struct json_writer *w, const char *key, int64_t v);
void json_kv_double(struct json_writer *w, const char *key, double v,
		    int decimals);
void json_kv_bool(struct json_writer *w, const char *key, bool v);
void json_kv_null(struct json_writer *w, const char *key);

/* Write @s as a quoted, escaped JSON string. */
void json_write_escaped(FILE *out, const char *s);

#endif /* TBRDMA_ADMIN_JSON_H */
