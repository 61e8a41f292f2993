/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Choosing the next token: greedy (temperature 0) or temperature with
 * nucleus (top-p) sampling driven by a counter-based generator keyed by
 * the seed and the step, so every rank draws the same token from the same
 * logits without talking to the others.
 */
#ifndef TPRUN_SAMPLE_H
#define TPRUN_SAMPLE_H

#include <stdint.h>

struct tp_sampler {
	float temperature;	/* <= 0: greedy */
	float top_p;		/* (0, 1] */
	uint64_t seed;
	uint64_t step;
	int vocab;
	float *prob;
	int *idx;
};

void tp_sampler_init(struct tp_sampler *s, int vocab, float temperature,
		     float top_p, uint64_t seed);
void tp_sampler_free(struct tp_sampler *s);
int tp_sample(struct tp_sampler *s, const float *logits);
/* Index of the largest element; the first one on ties; NaN never wins. */
int tp_argmax(const float *x, int n);

#endif /* TPRUN_SAMPLE_H */
