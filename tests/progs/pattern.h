/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Deterministic randomness and payload patterns for the integrity test.
 *
 * Every message's bytes are a function of (key, byte position in the
 * message), so the receiver can check a payload without being told what
 * was sent, and a byte landing at the wrong offset, in the wrong message or
 * from a stale buffer is caught.  Words are cheap to make (one multiply) so
 * the check runs at memory speed even under TCG.
 */
#ifndef TBR_PATTERN_H
#define TBR_PATTERN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define CANARY 0xC5	/* fill byte of every destination and guard area */

/* splitmix64: a good 64-bit mix, used to derive keys and seed streams. */
static inline uint64_t mix64(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

struct rng {
	uint64_t s;
};

static inline void rng_seed(struct rng *r, uint64_t a, uint64_t b, uint64_t c)
{
	r->s = mix64(mix64(mix64(a) ^ b) ^ c);
}

static inline uint64_t rnd(struct rng *r)
{
	r->s += 0x9E3779B97F4A7C15ull;
	return mix64(r->s);
}

/* Uniform in [0, n) (n > 0); the modulo bias is irrelevant here. */
static inline uint64_t rnd_below(struct rng *r, uint64_t n)
{
	return rnd(r) % n;
}

static inline uint64_t pat_word(uint64_t key, uint64_t w)
{
	uint64_t x = key + w * 0x9E3779B97F4A7C15ull;

	return x ^ (x >> 29);
}

static inline uint8_t pat_byte(uint64_t key, uint64_t pos)
{
	return (uint8_t)(pat_word(key, pos >> 3) >> (8 * (pos & 7)));
}

/* Write message bytes [pos, pos + len) of message KEY to DST. */
static inline void pat_fill(uint8_t *dst, size_t len, uint64_t key,
			    uint64_t pos)
{
	for (; len && (pos & 7); len--)
		*dst++ = pat_byte(key, pos++);
	for (; len >= 8; len -= 8, dst += 8, pos += 8) {
		uint64_t v = pat_word(key, pos >> 3);

		memcpy(dst, &v, 8);
	}
	for (; len; len--)
		*dst++ = pat_byte(key, pos++);
}

/* Check message bytes [pos, pos + len) at SRC: index of the first wrong
 * byte, or -1 if all are right. */
static inline long pat_check(const uint8_t *src, size_t len, uint64_t key,
			     uint64_t pos)
{
	size_t i = 0;

	for (; i < len && ((pos + i) & 7); i++)
		if (src[i] != pat_byte(key, pos + i))
			return i;
	for (; i + 8 <= len; i += 8) {
		uint64_t v;

		memcpy(&v, src + i, 8);
		if (v != pat_word(key, (pos + i) >> 3))
			break;	/* find the byte below */
	}
	for (; i < len; i++)
		if (src[i] != pat_byte(key, pos + i))
			return i;
	return -1;
}

/* Index of the first byte of [p, p + len) that is not CANARY, or -1. */
static inline long canary_check(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != CANARY)
			return i;
	return -1;
}

#endif /* TBR_PATTERN_H */
