// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json.h"

void json_init(struct json_writer *w, FILE *out)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
}

int json_finish(struct json_writer *w)
{
	fputc('\n', w->out);
	return (w->misused || w->depth != 0 || w->after_key) ? -1 : 0;
}

/* Before any value or key: the comma that separates it from the last one. */
static void separate(struct json_writer *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->depth > 0 && w->has_items[w->depth - 1])
		fputc(',', w->out);
	if (w->depth > 0)
		w->has_items[w->depth - 1] = true;
}

static void open_container(struct json_writer *w, char c)
{
	separate(w);
	fputc(c, w->out);
	if (w->depth >= JSON_MAX_DEPTH) {
		w->misused = true;
		return;
	}
	w->has_items[w->depth++] = false;
}

static void close_container(struct json_writer *w, char c)
{
	if (w->depth == 0 || w->after_key)
		w->misused = true;
	else
		w->depth--;
	fputc(c, w->out);
}

void json_object_begin(struct json_writer *w)
{
	open_container(w, '{');
}

void json_object_end(struct json_writer *w)
{
	close_container(w, '}');
}

void json_array_begin(struct json_writer *w)
{
	open_container(w, '[');
}

void json_array_end(struct json_writer *w)
{
	close_container(w, ']');
}

void json_key(struct json_writer *w, const char *key)
{
	if (w->after_key)
		w->misused = true;
	separate(w);
	json_write_escaped(w->out, key);
	fputc(':', w->out);
	w->after_key = true;
}

/*
 * Length of the well-formed UTF-8 sequence at @s (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), 0 if it is not one.
 */
static size_t utf8_sequence_length(const unsigned char *s)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	/* The second byte's range excludes overlong and surrogate forms. */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

void json_write_escaped(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len;

	fputc('"', out);
	while (*s) {
		switch (*s) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\b':
			fputs("\\b", out);
			break;
		case '\f':
			fputs("\\f", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\r':
			fputs("\\r", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		default:
			if (*s < 0x20) {
				fprintf(out, "\\u%04x", *s);
				break;
			}
			len = utf8_sequence_length(s);
			if (len == 0) {
				fputs("\\ufffd", out);
				break;
			}
			fwrite(s, 1, len, out);
			s += len;
			continue;
		}
		s++;
	}
	fputc('"', out);
}

void json_string(struct json_writer *w, const char *s)
{
	if (!s) {
		json_null(w);
		return;
	}
	separate(w);
	json_write_escaped(w->out, s);
}

void json_uint(struct json_writer *w, uint64_t v)
{
	separate(w);
	fprintf(w->out, "%" PRIu64, v);
}

void json_int(struct json_writer *w, int64_t v)
{
	separate(w);
	fprintf(w->out, "%" PRId64, v);
}

void json_double(struct json_writer *w, double v, int decimals)
{
	if (!isfinite(v)) {
		json_null(w);
		return;
	}
	char buf[512];	/* DBL_MAX printed in full fits */
	const char *text = buf;

	separate(w);
	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	/* -0.000 would be valid JSON but reads like a bug. */
	if (buf[0] == '-' && strspn(buf + 1, "0.") == strlen(buf + 1))
		text++;
	fputs(text, w->out);
}

void json_bool(struct json_writer *w, bool v)
{
	separate(w);
	fputs(v ? "true" : "false", w->out);
}

void json_null(struct json_writer *w)
{
	separate(w);
	fputs("null", w->out);
}

void json_kv_string(struct json_writer *w, const char *key, const char *s)
{
	json_key(w, key);
	json_string(w, s);
}

void json_kv_uint(struct json_writer *w, const char *key, uint64_t v)
{
	json_key(w, key);
	json_uint(w, v);
}

void json_kv_int(struct json_writer *w, const char *key, int64_t v)
{
	json_key(w, key);
	json_int(w, v);
}

void json_kv_double(struct json_writer *w, const char *key, double v,
		    int decimals)
{
	json_key(w, key);
	json_double(w, v, decimals);
}

void json_kv_bool(struct json_writer *w, const char *key, bool v)
{
	json_key(w, key);
	json_bool(w, v);
}

void json_kv_null(struct json_writer *w, const char *key)
{
	json_key(w, key);
	json_null(w);
}
