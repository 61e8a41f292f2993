// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tprun's sampler (tools/runner/text/sampler.c): greedy, temperature, top-p. */
#include <math.h>

#include "tap.h"
#include "text/sampler.h"

int main(void)
{
	float l[4] = { 1, 3, 3, 2 }, n[3] = { NAN, 1, NAN };
	float p[3] = { logf(0.5f), logf(0.3f), logf(0.2f) };
	struct tp_sampler s, t;
	int i, cnt[3] = { 0 }, same = 1, differ = 0, only01 = 1;

	plan(NO_PLAN);
	ok(tp_argmax(l, 4) == 1, "greedy: the first of equal maxima");
	ok(tp_argmax(n, 3) == 1, "greedy: NaN never wins");
	tp_sampler_init(&s, 4, 0, 0.9f, 1);
	ok(tp_sample(&s, l) == 1, "temperature 0 is greedy");
	tp_sampler_free(&s);

	tp_sampler_init(&s, 3, 1, 1, 42);
	for (i = 0; i < 30000; i++)
		cnt[tp_sample(&s, p)]++;
	ok(fabs(cnt[0] / 30000.0 - 0.5) < 0.015 &&
	   fabs(cnt[1] / 30000.0 - 0.3) < 0.015 &&
	   fabs(cnt[2] / 30000.0 - 0.2) < 0.015,
	   "temperature 1: frequencies follow softmax (%d %d %d of 30000)",
	   cnt[0], cnt[1], cnt[2]);
	tp_sampler_free(&s);

	tp_sampler_init(&s, 3, 1, 0.6f, 7);
	for (i = 0; i < 2000; i++)
		only01 &= tp_sample(&s, p) != 2;
	ok(only01, "top-p 0.6: the 0.2 token is never drawn");
	tp_sampler_free(&s);

	tp_sampler_init(&s, 3, 0.7f, 0.95f, 9);
	tp_sampler_init(&t, 3, 0.7f, 0.95f, 9);
	for (i = 0; i < 500; i++)
		same &= tp_sample(&s, p) == tp_sample(&t, p);
	tp_sampler_free(&t);
	tp_sampler_init(&t, 3, 0.7f, 0.95f, 10);
	s.step = 0;
	for (i = 0; i < 500; i++)
		differ += tp_sample(&s, p) != tp_sample(&t, p);
	ok(same && differ > 50,
	   "the same seed draws the same tokens (every rank agrees), another seed others (%d of 500 differ)",
	   differ);
	tp_sampler_free(&s);
	tp_sampler_free(&t);
	return done();
}
