// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Greedy and top-p sampling; see sampler.h. */
#include <math.h>
#include <stdlib.h>

#include "base/rng.h"
#include "base/util.h"
#include "text/sampler.h"

void tp_sampler_init(struct tp_sampler *s, int vocab, float temperature,
		     float top_p, uint64_t seed)
{
	s->temperature = temperature;
	s->top_p = top_p > 0 && top_p <= 1 ? top_p : 1;
	s->seed = seed;
	s->step = 0;
	s->vocab = vocab;
	s->prob = tp_calloc((size_t)vocab, sizeof(float));
	s->idx = tp_calloc((size_t)vocab, sizeof(int));
}

void tp_sampler_free(struct tp_sampler *s)
{
	free(s->prob);
	free(s->idx);
	s->prob = NULL;
	s->idx = NULL;
}

int tp_argmax(const float *x, int n)
{
	int i, best = 0;

	for (i = 1; i < n; i++)
		if (x[i] > x[best] || (x[best] != x[best] && x[i] == x[i]))
			best = i;
	return best;
}

/* qsort has no context argument: the probabilities sit in a static. */
static const float *cmp_prob;

static int by_prob(const void *a, const void *b)
{
	int i = *(const int *)a, j = *(const int *)b;

	if (cmp_prob[i] != cmp_prob[j])
		return cmp_prob[i] > cmp_prob[j] ? -1 : 1;
	return (i > j) - (i < j);	/* ties: lower index first */
}

int tp_sample(struct tp_sampler *s, const float *logits)
{
	double sum = 0, r, acc = 0;
	float max;
	int i, n, last;

	s->step++;
	if (s->temperature <= 0)
		return tp_argmax(logits, s->vocab);
	max = logits[tp_argmax(logits, s->vocab)];
	for (i = 0; i < s->vocab; i++) {
		s->prob[i] = expf((logits[i] - max) / s->temperature);
		sum += s->prob[i];
		s->idx[i] = i;
	}
	for (i = 0; i < s->vocab; i++)
		s->prob[i] = (float)(s->prob[i] / sum);
	cmp_prob = s->prob;
	qsort(s->idx, (size_t)s->vocab, sizeof(int), by_prob);
	/* the smallest prefix whose mass reaches top_p */
	for (n = 0, acc = 0; n < s->vocab; n++) {
		acc += s->prob[s->idx[n]];
		if (acc >= s->top_p)
			break;
	}
	last = n < s->vocab ? n : s->vocab - 1;
	r = tp_unit01(tp_hash4(s->seed, 0x73616d706c65ull, s->step, 0)) *
	    acc;
	for (i = 0; i < last; i++) {
		r -= s->prob[s->idx[i]];
		if (r < 0)
			break;
	}
	return s->idx[i];
}
