// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A GGUF file's metadata as the loaders read it (load_gguf.h): integers
 * and floats with a default or required, keys under the architecture's
 * prefix, and the refusal that names the file. Below load_gguf.c and
 * rope_scaling.c, which both read through these.
 */
#include <stdarg.h>
#include <stdio.h>

#include "gguf/gguf.h"
#include "model/load_gguf.h"

int tp_gguf_bad(struct tp_gguf_load *L, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(L->err, L->errlen, "%s: %s", L->path, msg);
	return -1;
}

int tp_gguf_int(struct tp_gguf_load *L, const char *key, int64_t def,
		int *out)
{
	int64_t v = def;
	int r = gguf_get_int(&L->g, key, &v);

	if (r < 0)
		return tp_gguf_bad(L, "metadata %s is not an integer", key);
	if (r == 0 && def < 0)
		return tp_gguf_bad(L, "metadata %s is missing", key);
	if (v < 0 || v > (1 << 30))
		return tp_gguf_bad(L, "metadata %s = %lld is out of range",
				   key, (long long)v);
	*out = (int)v;
	return 0;
}

int tp_gguf_float(struct tp_gguf_load *L, const char *key, double def,
		  float *out)
{
	double v = def;

	if (gguf_get_float(&L->g, key, &v) < 0)
		return tp_gguf_bad(L, "metadata %s is not a number", key);
	*out = (float)v;
	return 0;
}

const char *tp_gguf_key(struct tp_gguf_load *L, const char *suffix)
{
	snprintf(L->key, sizeof(L->key), "%s.%s", L->arch, suffix);
	return L->key;
}
