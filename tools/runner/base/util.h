/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tprun: logging, fatal errors, allocation and clocks. */
#ifndef TPRUN_UTIL_H
#define TPRUN_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Exit codes of tprun and of each rank. */
#define TP_EXIT_FAIL	1	/* an error of this rank */
#define TP_EXIT_USAGE	2	/* bad command line */
#define TP_EXIT_PEER	3	/* another rank died, aborted or went silent */

/* The rank messages are tagged with ("tprun[rank 2]: ..."); -1 = none. */
extern int tp_log_rank;
extern int tp_verbose;

void tp_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tp_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void tp_die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

void *tp_calloc(size_t n, size_t size);		/* dies on failure */
void *tp_alloc_pages(size_t bytes);		/* zeroed, page aligned */
char *tp_strdup(const char *s);

uint64_t tp_now_ns(void);

/* Bounded formatted append: *pos advances, never past len. */
void tp_appendf(char *buf, size_t len, size_t *pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* N-byte big-endian integers in the TCP messages between ranks. */
static inline void be_put(unsigned char *p, uint64_t v, int n)
{
	int i;

	for (i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
}

static inline uint64_t be_get(const unsigned char *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

#endif /* TPRUN_UTIL_H */
