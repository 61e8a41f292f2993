// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* UTF-8 code points in and out of bytes, an invalid byte as U+FFFD. */
#include "text/utf8.h"

int tp_utf8_seq_len(unsigned char c)
{
	if (c < 0x80)
		return 1;
	if ((c & 0xe0) == 0xc0)
		return 2;
	if ((c & 0xf0) == 0xe0)
		return 3;
	if ((c & 0xf8) == 0xf0)
		return 4;
	return 1;
}

uint32_t tp_utf8_get(const char *s, size_t n, int *len)
{
	const unsigned char *u = (const unsigned char *)s;
	int l = tp_utf8_seq_len(u[0]), i;
	uint32_t cp;

	*len = 1;
	if (l == 1)
		return u[0] < 0x80 ? u[0] : 0xfffd;
	if ((size_t)l > n)
		return 0xfffd;
	cp = u[0] & (0x7f >> l);
	for (i = 1; i < l; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return 0xfffd;
		cp = cp << 6 | (u[i] & 0x3f);
	}
	*len = l;
	return cp;
}

size_t tp_utf8_put(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

uint32_t tp_utf8_get_strict(const char *s, size_t n, int *len)
{
	static const uint32_t least[5] = { 0, 0, 0x80, 0x800, 0x10000 };
	uint32_t cp = tp_utf8_get(s, n, len);

	if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff ||
	    cp < least[*len]) {
		*len = 1;
		return 0xfffd;
	}
	return cp;
}
