/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Minimal TAP (Test Anything Protocol) producer for host unit tests.
 * Header only, no dependencies beyond libc.
 *
 *   plan(3);                          or plan(NO_PLAN) and done() prints it
 *   ok(x > 0, "x is positive");
 *   is_int(f(), 42, "f() answers");
 *   is_str(name, "tbrdma0", "name");
 *   skip(1, "no root");               counts as passed, marked # SKIP
 *   return done();                    exit status: 0 only if all passed
 *
 *   skip_all("reason");               whole file skipped ("1..0 # SKIP")
 *
 * Every assertion returns its result so a test can stop early.
 */
#ifndef TBRDMA_TAP_H
#define TBRDMA_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_PLAN (-1)

static int tap_planned = NO_PLAN;
static int tap_run;
static int tap_failed;

static inline __attribute__((unused)) void plan(int n)
{
	tap_planned = n;
	if (n >= 0)
		printf("1..%d\n", n);
	fflush(stdout);
}

static inline __attribute__((unused, format(printf, 1, 2))) void
diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static inline int tap_vreport(int pass, const char *directive,
			      const char *fmt, va_list ap)
{
	tap_run++;
	if (!pass)
		tap_failed++;
	printf("%sok %d - ", pass ? "" : "not ", tap_run);
	vprintf(fmt, ap);
	if (directive)
		printf(" # %s", directive);
	printf("\n");
	fflush(stdout);
	return pass;
}

static inline __attribute__((unused, format(printf, 2, 3))) int
ok(int pass, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = tap_vreport(pass, NULL, fmt, ap);
	va_end(ap);
	return r;
}

static inline __attribute__((unused, format(printf, 3, 4))) int
is_int(long long got, long long expected, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = tap_vreport(got == expected, NULL, fmt, ap);
	va_end(ap);
	if (!r)
		diag("  got %lld, expected %lld", got, expected);
	return r;
}

static inline __attribute__((unused, format(printf, 3, 4))) int
is_str(const char *got, const char *expected, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = tap_vreport(got && expected && !strcmp(got, expected), NULL, fmt,
			ap);
	va_end(ap);
	if (!r)
		diag("  got \"%s\", expected \"%s\"", got ? got : "(null)",
		     expected ? expected : "(null)");
	return r;
}

/* Record n skipped assertions (they count as passed). */
static inline __attribute__((unused, format(printf, 2, 3))) void
skip(int n, const char *fmt, ...)
{
	char reason[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	while (n-- > 0) {
		tap_run++;
		printf("ok %d # SKIP %s\n", tap_run, reason);
	}
	fflush(stdout);
}

/* Skip the whole test file; call before plan(). */
static inline __attribute__((unused, noreturn, format(printf, 1, 2))) void
skip_all(const char *fmt, ...)
{
	va_list ap;

	printf("1..0 # SKIP ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	exit(0);
}

/* Abort the test run (e.g. setup failed): TAP "Bail out!", non-zero exit. */
static inline __attribute__((unused, noreturn, format(printf, 1, 2))) void
bail_out(const char *fmt, ...)
{
	va_list ap;

	printf("Bail out! ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	exit(255);
}

/* Finish: print a late plan if none was given, check the count. */
static inline __attribute__((unused)) int done(void)
{
	if (tap_planned == NO_PLAN) {
		printf("1..%d\n", tap_run);
	} else if (tap_planned != tap_run) {
		diag("planned %d tests but ran %d", tap_planned, tap_run);
		return 1;
	}
	if (tap_failed)
		diag("failed %d of %d tests", tap_failed, tap_run);
	fflush(stdout);
	return tap_failed ? 1 : 0;
}

#endif /* TBRDMA_TAP_H */
