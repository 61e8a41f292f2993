// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * GPT-2's byte-to-unicode map, and the byte-level BPE pre-tokenizers,
 * written out by hand (no regex engine) from the regexes llama.cpp uses:
 *
 *  gpt2:   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|
 *          \s+(?!\S)|\s+
 *  llama3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|
 *          \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 *  qwen2:  as llama3, with \p{N} (one digit) for \p{N}{1,3}
 *  gpt-4o (o200k: gpt-oss), as llama.cpp rewrites it for its engine:
 *          [^\r\n\p{L}\p{N}]?U*L+C?|[^\r\n\p{L}\p{N}]?U+L*C?|\p{N}{1,3}|
 *          ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
 *          with U a letter but a-z, L a letter but A-Z (a letter beyond
 *          ASCII is both), C a contraction of either case
 *  deepseek-v3 (DeepSeek V3/R1): three regexes, each cutting further the
 *          pieces the one before left (matches and the gaps between them):
 *          \p{N}{1,3}  then  [一-龥぀-ゟ゠-ヿ]+  then
 *          [!-/:-@[-`{-~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+|
 *          ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 *  kimi-k2 (Kimi K2), as llama.cpp's own code for it runs Kimi's regex:
 *          \p{Han}+|[^\r\n\p{L}\p{N}]?W+C?|\p{N}{1,3}|
 *          ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 *          with W a letter but Han; unlike Kimi's tiktoken regex, llama.cpp
 *          does not cut words at case changes, and neither does tprun
 *
 * \p{L}, \p{N}, \p{P}, \p{S} and \s are exact for ASCII and Latin-1;
 * above, they are approximated by ranges (punctuation, symbol, mark and
 * emoji blocks are not letters; everything else is; \p{M} is the common
 * combining blocks).
 */
#include "text/tokenizer_internal.h"

/* Bytes that are printable stay; the others get 256, 257, ... in order. */
static int gpt2_keeps(int b)
{
	return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
}

uint32_t tp_gpt2_byte_cp(int byte)
{
	int b, k = 0;

	if (gpt2_keeps(byte))
		return (uint32_t)byte;
	for (b = 0; b < byte; b++)
		k += !gpt2_keeps(b);
	return 256u + (uint32_t)k;
}

int tp_gpt2_cp_byte(uint32_t cp)
{
	int b, k = 0;

	if (cp < 256)
		return gpt2_keeps((int)cp) ? (int)cp : -1;
	for (b = 0; b < 256; b++)
		if (!gpt2_keeps(b) && (uint32_t)(256 + k++) == cp)
			return b;
	return -1;
}

static int is_space(uint32_t c)
{
	return (c >= 9 && c <= 13) || c == ' ' || c == 0x85 || c == 0xa0 ||
	       c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 ||
	       c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

static int is_number(uint32_t c)
{
	return (c >= '0' && c <= '9') || c == 0xb2 || c == 0xb3 ||
	       c == 0xb9 || (c >= 0xbc && c <= 0xbe) ||
	       (c >= 0x660 && c <= 0x669) || (c >= 0x6f0 && c <= 0x6f9) ||
	       (c >= 0x966 && c <= 0x96f) || (c >= 0x2070 && c <= 0x2079) ||
	       (c >= 0x2080 && c <= 0x2089) || (c >= 0x2150 && c <= 0x2189) ||
	       (c >= 0x2460 && c <= 0x249b) || c == 0x3007 ||
	       (c >= 0x3021 && c <= 0x3029) || (c >= 0xff10 && c <= 0xff19);
}

/* Format and control characters (\p{C}: neither letters nor P/S). */
static int is_control(uint32_t c)
{
	return (c < 0x20 && !is_space(c)) || (c >= 0x7f && c <= 0x9f &&
	       c != 0x85) || c == 0xad || (c >= 0x600 && c <= 0x605) ||
	       c == 0x61c || c == 0x6dd || (c >= 0x200b && c <= 0x200f) ||
	       (c >= 0x202a && c <= 0x202e) || (c >= 0x2060 && c <= 0x206f) ||
	       c == 0xfeff || (c >= 0xd800 && c <= 0xf8ff);
}

/* \p{M}: the common combining blocks */
static int is_mark(uint32_t c)
{
	return (c >= 0x300 && c <= 0x36f) || (c >= 0x483 && c <= 0x489) ||
	       (c >= 0x591 && c <= 0x5bd) || (c >= 0x610 && c <= 0x61a) ||
	       (c >= 0x64b && c <= 0x65f) || (c >= 0x1ab0 && c <= 0x1aff) ||
	       (c >= 0x1dc0 && c <= 0x1dff) || (c >= 0x20d0 && c <= 0x20f0) ||
	       c == 0x3099 || c == 0x309a || (c >= 0xfe00 && c <= 0xfe0f) ||
	       (c >= 0xfe20 && c <= 0xfe2f);
}

static int is_letter(uint32_t c)
{
	if (c < 0x80)
		return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
	if (c < 0x100)
		return c == 0xaa || c == 0xb5 || c == 0xba ||
		       (c >= 0xc0 && c != 0xd7 && c != 0xf7);
	if (is_space(c) || is_number(c) || is_control(c) || is_mark(c))
		return 0;
	return !(c == 0x37e || c == 0x387 ||
		 (c >= 0x2010 && c <= 0x206f) ||	/* punctuation */
		 (c >= 0x20a0 && c <= 0x20ff) ||	/* currency, marks */
		 (c >= 0x2190 && c <= 0x23ff) ||	/* arrows, math */
		 (c >= 0x2500 && c <= 0x27bf) ||	/* box, dingbats */
		 (c >= 0x2e00 && c <= 0x2e7f) ||
		 (c >= 0x3000 && c <= 0x303f && c != 0x3005 && c != 0x3006) ||
		 c == 0x309b || c == 0x309c || c == 0x30a0 || c == 0x30fb ||
		 (c >= 0xff01 && c <= 0xff0f) || (c >= 0xff1a && c <= 0xff20) ||
		 (c >= 0xff3b && c <= 0xff40) || (c >= 0xff5b && c <= 0xff65) ||
		 (c >= 0x1f000 && c <= 0x1faff));
}

static int is_nl(uint32_t c)
{
	return c == '\r' || c == '\n';
}

static uint32_t lower(uint32_t c)
{
	return c >= 'A' && c <= 'Z' ? c | 0x20 : c;
}

/* 's 't 're 've 'm 'll 'd at I: the length, or 0. */
static int contraction(const uint32_t *c, int i, int n, int icase)
{
	uint32_t a, b;

	if (c[i] != '\'' || i + 1 >= n)
		return 0;
	a = icase ? lower(c[i + 1]) : c[i + 1];
	if (a == 's' || a == 't' || a == 'm' || a == 'd')
		return 2;
	if (i + 2 >= n)
		return 0;
	b = icase ? lower(c[i + 2]) : c[i + 2];
	if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') ||
	    (a == 'l' && b == 'l'))
		return 3;
	return 0;
}

static int other(uint32_t c)	/* [^\s\p{L}\p{N}] */
{
	return !is_space(c) && !is_letter(c) && !is_number(c);
}

/* \s+(?!\S)|\s+ at I (a space run): its match. */
static int spaces(const uint32_t *c, int i, int n)
{
	int k = i;

	while (k < n && is_space(c[k]))
		k++;
	if (k < n && k - i >= 2)
		return k - 1 - i;	/* leave one to the next word */
	return k - i;
}

static int match_gpt2(const uint32_t *c, int i, int n)
{
	int j = i + (c[i] == ' ' && i + 1 < n), k = contraction(c, i, n, 0);

	if (k)
		return k;
	for (k = j; k < n && is_letter(c[k]); k++)
		;
	if (k > j)
		return k - i;
	for (k = j; k < n && is_number(c[k]); k++)
		;
	if (k > j)
		return k - i;
	for (k = j; k < n && other(c[k]); k++)
		;
	if (k > j)
		return k - i;
	return spaces(c, i, n);
}

/* \s*[\r\n]+|\s+(?!\S)|\s+ at I */
static int newlines_or_spaces(const uint32_t *c, int i, int n)
{
	int k, last;

	/* \s*[\r\n]+: up to the last newline of the space run */
	for (k = i, last = -1; k < n && is_space(c[k]); k++)
		if (is_nl(c[k]))
			last = k;
	if (last >= 0)
		return last + 1 - i;
	return spaces(c, i, n);
}

/* \p{N}{1,MAX} at I: how many numbers (0 when C[I] is none). */
static int numbers(const uint32_t *c, int i, int n, int max)
{
	int k;

	for (k = i; k < n && k - i < max && is_number(c[k]); k++)
		;
	return k - i;
}

/*
 * The tail Llama 3's and o200k's regexes share, at I:
 * ?[^\s\p{L}\p{N}]+[\r\n]* (o200k, SLASH: [\r\n/]*)|\s*[\r\n]+|
 * \s+(?!\S)|\s+
 */
static int punct_or_spaces(const uint32_t *c, int i, int n, int slash)
{
	int j = i + (c[i] == ' ' && i + 1 < n), k;

	for (k = j; k < n && other(c[k]); k++)
		;
	if (k > j) {
		while (k < n && (is_nl(c[k]) || (slash && c[k] == '/')))
			k++;
		return k - i;
	}
	return newlines_or_spaces(c, i, n);
}

static int match_llama3(const uint32_t *c, int i, int n, int maxdig)
{
	int j, k = contraction(c, i, n, 1);

	if (k)
		return k;
	j = i + (!is_nl(c[i]) && !is_letter(c[i]) && !is_number(c[i]) &&
		 i + 1 < n && is_letter(c[i + 1]));
	for (k = j; k < n && is_letter(c[k]); k++)
		;
	if (k > j)
		return k - i;
	k = numbers(c, i, n, maxdig);
	if (k)
		return k;
	return punct_or_spaces(c, i, n, 0);
}

static int upper_ok(uint32_t c)	/* U above */
{
	return is_letter(c) && !(c >= 'a' && c <= 'z');
}

static int lower_ok(uint32_t c)	/* L above */
{
	return is_letter(c) && !(c >= 'A' && c <= 'Z');
}

/* U*L+ or else U+L* at J, as a backtracking engine finds it: its end, or
 * J when neither matches. */
static int cased_word(const uint32_t *c, int j, int n)
{
	int a = j, k, e;

	while (a < n && upper_ok(c[a]))
		a++;
	for (k = a; k >= j; k--)	/* U* gives back until L+ can start */
		if (k < n && lower_ok(c[k])) {
			for (e = k; e < n && lower_ok(c[e]); e++)
				;
			return e;
		}
	return a;	/* U+ (L* is empty: no L follows) */
}

static int match_gpt4o(const uint32_t *c, int i, int n)
{
	int j, k;

	j = i + (!is_nl(c[i]) && !is_letter(c[i]) && !is_number(c[i]) &&
		 i + 1 < n && is_letter(c[i + 1]));
	k = cased_word(c, j, n);
	if (k > j)
		return k + contraction(c, k, n, 1) - i;
	k = numbers(c, i, n, 3);
	if (k)
		return k;
	return punct_or_spaces(c, i, n, 1);
}

static int is_han(uint32_t c)	/* llama.cpp's \p{Han} */
{
	return (c >= 0x4e00 && c <= 0x9fff) || (c >= 0x3400 && c <= 0x4dbf) ||
	       (c >= 0x20000 && c <= 0x2a6df) || (c >= 0x2a700 && c <= 0x2ebef) ||
	       (c >= 0xf900 && c <= 0xfaff) || (c >= 0x2f800 && c <= 0x2fa1f);
}

static int kimi_letter(uint32_t c)
{
	return is_letter(c) && !is_han(c);
}

static int match_kimi(const uint32_t *c, int i, int n)
{
	int j, k;

	if (is_han(c[i])) {
		for (k = i; k < n && is_han(c[k]); k++)
			;
		return k - i;
	}
	j = i + (!is_nl(c[i]) && !is_letter(c[i]) && !is_number(c[i]) &&
		 i + 1 < n && kimi_letter(c[i + 1]));
	for (k = j; k < n && kimi_letter(c[k]); k++)
		;
	if (k > j)
		return k + contraction(c, k, n, 1) - i;
	k = numbers(c, i, n, 3);
	if (k)
		return k;
	return punct_or_spaces(c, i, n, 0);
}

static int ds_word(uint32_t c)	/* [\p{L}\p{M}] */
{
	return is_letter(c) || is_mark(c);
}

static int ds_punct(uint32_t c)	/* [\p{P}\p{S}] */
{
	return !is_space(c) && !is_number(c) && !is_control(c) && !ds_word(c);
}

static int ds_cjk(uint32_t c)	/* [一-龥぀-ゟ゠-ヿ] */
{
	return (c >= 0x4e00 && c <= 0x9fa5) || (c >= 0x3040 && c <= 0x30ff);
}

static int ascii_letter(uint32_t c)
{
	return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}

/* DeepSeek V3's third regex at I in a piece ending at N: the match, or 0. */
static int match_ds_last(const uint32_t *c, int i, int n)
{
	int j, k;

	if (c[i] > ' ' && c[i] < 0x7f && !ascii_letter(c[i]) &&
	    !(c[i] >= '0' && c[i] <= '9') && i + 1 < n &&
	    ascii_letter(c[i + 1])) {
		for (k = i + 1; k < n && ascii_letter(c[k]); k++)
			;
		return k - i;
	}
	j = i + (!is_nl(c[i]) && !ds_word(c[i]) && !ds_punct(c[i]) &&
		 i + 1 < n && ds_word(c[i + 1]));
	for (k = j; k < n && ds_word(c[k]); k++)
		;
	if (k > j)
		return k - i;
	j = i + (c[i] == ' ' && i + 1 < n && ds_punct(c[i + 1]));
	for (k = j; k < n && ds_punct(c[k]); k++)
		;
	if (k > j) {
		while (k < n && is_nl(c[k]))
			k++;
		return k - i;
	}
	return is_space(c[i]) ? newlines_or_spaces(c, i, n) : 0;
}

/* The third regex over [A, B): matches, and unmatched runs, as pieces. */
static int ds_last(const uint32_t *c, int a, int b, int *end, int nw)
{
	int i = a, gap = a, m;

	while (i < b) {
		m = match_ds_last(c + a, i - a, b - a);
		if (!m) {
			i++;
			continue;
		}
		if (gap < i)
			end[nw++] = i;
		i += m;
		end[nw++] = i;
		gap = i;
	}
	if (gap < b)
		end[nw++] = b;
	return nw;
}

/* The CJK regex over [A, B), then the third over each piece. */
static int ds_cjk_runs(const uint32_t *c, int a, int b, int *end, int nw)
{
	int i = a, k;

	while (i < b) {
		for (k = i; k < b && ds_cjk(c[k]) == ds_cjk(c[i]); k++)
			;
		nw = ds_last(c, i, k, end, nw);
		i = k;
	}
	return nw;
}

static int pretok_deepseek3(const uint32_t *c, int n, int *end)
{
	int i = 0, k, nw = 0;

	while (i < n) {
		if (is_number(c[i])) {	/* \p{N}{1,3}: no further cuts */
			k = i + numbers(c, i, n, 3);
			end[nw++] = k;
		} else {
			for (k = i; k < n && !is_number(c[k]); k++)
				;
			nw = ds_cjk_runs(c, i, k, end, nw);
		}
		i = k;
	}
	return nw;
}

int tp_pretok(enum tp_tok_pre pre, const uint32_t *cps, int n, int *end)
{
	int i = 0, nw = 0, m;

	if (pre == TP_PRE_DEEPSEEK3)
		return pretok_deepseek3(cps, n, end);
	while (i < n) {
		if (pre == TP_PRE_KIMI_K2)
			m = match_kimi(cps, i, n);
		else if (pre == TP_PRE_GPT2)
			m = match_gpt2(cps, i, n);
		else if (pre == TP_PRE_GPT4O)
			m = match_gpt4o(cps, i, n);
		else
			m = match_llama3(cps, i, n, pre == TP_PRE_LLAMA3 ? 3 : 1);
		if (m < 1)
			m = 1;
		i += m;
		end[nw++] = i;
	}
	return nw;
}
