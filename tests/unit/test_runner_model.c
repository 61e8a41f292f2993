// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tprun's forward pass (tools/runner/model/forward.c):
 *  - against a naive reference written here in double precision, which
 *    recomputes the whole sequence at every step (no KV cache);
 *  - deterministic: the same bits twice, whatever the prefill batch;
 *  - split over N = 1..4 ranks (threads over the in-process transport,
 *    mesh and ring): the same tokens as one rank, logits within the
 *    tolerance, and the same bits on every rank; uneven head splits, K/V
 *    heads shared by ranks, multi-query attention, Q8_0 blocks holding
 *    two heads (some ranks then hold none);
 *  - shard plans: cuts on whole blocks, bytes balanced within 1/N + 10 %;
 *  - a GGUF export of the synthetic model computes the same bits.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm/allreduce.h"
#include "kernels/float16.h"
#include "kernels/quant.h"
#include "kernels/vector.h"
#include "model/arch/registry.h"
#include "model/model.h"
#include "model/moe.h"
#include "model/synthetic.h"
#include "tap.h"
#include "text/sampler.h"

#define TOL 1e-4	/* relative to the largest logit (Documentation/runner.md) */

static struct tp_config cfg(int dim, int layers, int heads, int kv, int ffn,
			    int vocab)
{
	struct tp_config c = {
		.dim = dim, .layers = layers, .heads = heads, .kv_heads = kv,
		.head_dim = dim / heads, .rot_dim = dim / heads, .ffn = ffn,
		.vocab = vocab, .eps = 1e-5f, .rope_base = 10000,
	};
	return c;
}

/* ---- the reference: plain loops in double, full weights ---- */

static double W(const struct tp_config *c, uint64_t s, int t, int l, long r,
		long k)
{
	return tp_synth_value(c, s, t, l, r, k);
}

static void ref_norm(const struct tp_config *c, uint64_t s, int t, int l,
		     const double *x, double *out)
{
	double ss = 0;
	int i;

	for (i = 0; i < c->dim; i++)
		ss += x[i] * x[i];
	for (i = 0; i < c->dim; i++)
		out[i] = x[i] / sqrt(ss / c->dim + c->eps) * W(c, s, t, l, 0, i);
}

/* Logits after the sequence TOK[0..N-1]. */
static void ref_logits(const struct tp_config *c, uint64_t s, const int *tok,
		       int n, double *logits)
{
	int D = c->dim, hd = c->head_dim, H = c->heads, K = c->kv_heads;
	int qd = H * hd, kvd = K * hd, F = c->ffn, l, t, i, j, h, p;
	double *x = calloc((size_t)n * D, sizeof(double));
	double *q = calloc((size_t)n * qd, sizeof(double));
	double *k = calloc((size_t)n * kvd, sizeof(double));
	double *v = calloc((size_t)n * kvd, sizeof(double));
	double *hb = calloc((size_t)(D > F ? D : F) * 2, sizeof(double));
	double *att = calloc((size_t)qd, sizeof(double));
	double *sc = calloc((size_t)n, sizeof(double));

	for (t = 0; t < n; t++)
		for (i = 0; i < D; i++)
			x[t * D + i] = W(c, s, TP_T_EMBD, 0, tok[t], i);
	for (l = 0; l < c->layers; l++) {
		for (t = 0; t < n; t++) {
			ref_norm(c, s, TP_T_ATTN_NORM, l, x + t * D, hb);
			for (j = 0; j < qd; j++) {
				double a = 0;

				for (i = 0; i < D; i++)
					a += W(c, s, TP_T_Q, l, j, i) * hb[i];
				q[t * qd + j] = a;
			}
			for (j = 0; j < kvd; j++) {
				double a = 0, b = 0;

				for (i = 0; i < D; i++) {
					a += W(c, s, TP_T_K, l, j, i) * hb[i];
					b += W(c, s, TP_T_V, l, j, i) * hb[i];
				}
				k[t * kvd + j] = a;
				v[t * kvd + j] = b;
			}
			/* rotary: adjacent pairs of each head */
			for (j = 0; j < qd + kvd; j += 2) {
				double *e = j < qd ? q + t * qd + j :
					    k + t * kvd + (j - qd);
				int pair = (j % hd) / 2;
				double th = t * pow(c->rope_base,
						    -2.0 * pair / c->rot_dim);
				double e0 = e[0], e1 = e[1];

				e[0] = e0 * cos(th) - e1 * sin(th);
				e[1] = e0 * sin(th) + e1 * cos(th);
			}
		}
		for (t = 0; t < n; t++) {
			double o[256];

			for (h = 0; h < H; h++) {
				int kh = h / (H / K);
				double max = -1e300, sum = 0;

				for (p = 0; p <= t; p++) {
					double a = 0;

					for (i = 0; i < hd; i++)
						a += q[t * qd + h * hd + i] *
						     k[p * kvd + kh * hd + i];
					sc[p] = a / sqrt(hd);
					if (sc[p] > max)
						max = sc[p];
				}
				for (p = 0; p <= t; p++)
					sum += sc[p] = exp(sc[p] - max);
				for (i = 0; i < hd; i++) {
					double a = 0;

					for (p = 0; p <= t; p++)
						a += sc[p] / sum *
						     v[p * kvd + kh * hd + i];
					att[h * hd + i] = a;
				}
			}
			for (j = 0; j < D; j++) {
				double a = 0;

				for (i = 0; i < qd; i++)
					a += W(c, s, TP_T_O, l, j, i) * att[i];
				o[j] = a;
			}
			for (j = 0; j < D; j++)
				x[t * D + j] += o[j];
			ref_norm(c, s, TP_T_FFN_NORM, l, x + t * D, hb);
			for (j = 0; j < F; j++) {
				double g = 0, u = 0;

				for (i = 0; i < D; i++) {
					g += W(c, s, TP_T_GATE, l, j, i) * hb[i];
					u += W(c, s, TP_T_UP, l, j, i) * hb[i];
				}
				hb[D + j] = g / (1 + exp(-g)) * u;
			}
			for (j = 0; j < D; j++) {
				double a = 0;

				for (i = 0; i < F; i++)
					a += W(c, s, TP_T_DOWN, l, j, i) *
					     hb[D + i];
				o[j] = a;
			}
			for (j = 0; j < D; j++)
				x[t * D + j] += o[j];
		}
	}
	ref_norm(c, s, TP_T_OUT_NORM, 0, x + (n - 1) * D, hb);
	for (j = 0; j < c->vocab; j++) {
		double a = 0;

		for (i = 0; i < D; i++)
			a += W(c, s, TP_T_OUTPUT, 0, j, i) * hb[i];
		logits[j] = a;
	}
	free(x);
	free(q);
	free(k);
	free(v);
	free(hb);
	free(att);
	free(sc);
}

/* ---- one rank, possibly one of N threads ---- */

struct job {
	struct tp_config c;
	const char *arch;	/* NULL: llama */
	uint64_t seed;
	enum tp_type type;
	const char *gguf;
	int rank, nranks, batch, P, T;
	int swa_full;		/* every layer's cache of all positions */
	enum tp_type kv_type;	/* the KV cache's values (0: F32) */
	int *kv_slots;		/* rank 0's slots of each layer, if set */
	enum tp_algo algo;
	size_t ring_min;
	struct tp_loop *loop;
	const int *prompt;
	int *tokens;
	float *logits;	/* vocab x T: the logits of every step */
	int failed;
};

static void *run_rank(void *arg)
{
	struct job *j = arg;
	struct tp_weights w;
	struct tp_model m;
	struct tp_ar ar;
	char err[300];
	int i, k, tok, r;

	r = j->gguf ? tp_weights_gguf(&w, j->gguf, j->rank, j->nranks,
				      j->c.moe.split, err, sizeof(err)) :
	    tp_weights_synth(&w, j->arch, &j->c, j->seed, j->type, j->rank,
			     j->nranks, err, sizeof(err));
	if (r) {
		diag("rank %d: %s", j->rank, err);
		j->failed = 1;
		return NULL;
	}
	if (tp_model_init_cache(&m, &w, j->P + j->T, j->batch, j->swa_full,
				j->kv_type)) {
		j->failed = 1;
		tp_weights_free(&w);
		return NULL;
	}
	if (j->kv_slots && !j->rank && m.kv_slots)
		memcpy(j->kv_slots, m.kv_slots, w.cfg.layers * sizeof(int));
	if (j->loop)
		tp_ar_init(&ar, tp_loop_xport(j->loop, j->rank), j->algo,
			   j->ring_min, (size_t)j->batch * w.cfg.dim);
	for (i = 0; i < j->P; i += j->batch)
		if (tp_forward(&m, j->prompt + i,
			       j->P - i < j->batch ? j->P - i : j->batch, i,
			       j->loop ? &ar : NULL))
			j->failed = 1;
	for (k = 0; k < j->T && !j->failed; k++) {
		memcpy(j->logits + (size_t)k * w.cfg.vocab, m.logits,
		       (size_t)w.cfg.vocab * sizeof(float));
		tok = tp_argmax(m.logits, w.cfg.vocab);
		j->tokens[k] = tok;
		if (k + 1 < j->T &&
		    tp_forward(&m, &tok, 1, j->P + k, j->loop ? &ar : NULL))
			j->failed = 1;
	}
	if (j->loop)
		tp_ar_free(&ar);
	tp_model_free(&m);
	tp_weights_free(&w);
	return NULL;
}

/* N ranks; rank 0's tokens/logits into OUT (T and vocab x T). */
static int run_n(struct job proto, int N, int *tokens, float *logits,
		 int *ranks_agree)
{
	struct job j[8];
	pthread_t th[8];
	size_t sb, rb, nl = (size_t)proto.c.vocab * proto.T;
	int i, failed = 0;

	tp_ar_sizes(N, proto.algo, (size_t)proto.batch * proto.c.dim, &sb, &rb);
	proto.nranks = N;
	proto.loop = N > 1 ? tp_loop_new(N, sb, rb) : NULL;
	*ranks_agree = 1;
	for (i = 0; i < N; i++) {
		j[i] = proto;
		j[i].rank = i;
		j[i].tokens = calloc((size_t)proto.T, sizeof(int));
		j[i].logits = calloc(nl, sizeof(float));
		pthread_create(&th[i], NULL, run_rank, &j[i]);
	}
	for (i = 0; i < N; i++) {
		pthread_join(th[i], NULL);
		failed |= j[i].failed;
		if (memcmp(j[i].logits, j[0].logits, nl * sizeof(float)) ||
		    memcmp(j[i].tokens, j[0].tokens,
			   (size_t)proto.T * sizeof(int)))
			*ranks_agree = 0;
	}
	memcpy(tokens, j[0].tokens, (size_t)proto.T * sizeof(int));
	memcpy(logits, j[0].logits, nl * sizeof(float));
	for (i = 0; i < N; i++) {
		free(j[i].tokens);
		free(j[i].logits);
	}
	if (proto.loop)
		tp_loop_free(proto.loop);
	return failed ? -1 : 0;
}

/* max |a-b| over the max |a| (at least 1) */
static double rel_diff(const float *a, const float *b, size_t n)
{
	double m = 0, s = 1;
	size_t i;

	for (i = 0; i < n; i++) {
		if (fabs((double)a[i] - b[i]) > m)
			m = fabs((double)a[i] - b[i]);
		if (fabs(a[i]) > s)
			s = fabs(a[i]);
	}
	return m / s;
}

/* every vocabulary of the tests has more than 29 tokens */
static const int prompt[] = { 3, 17, 21, 5, 29, 8, 13 };

static void test_reference(void)
{
	struct tp_config c = cfg(32, 2, 4, 2, 64, 50);
	struct job j = {
		.c = c, .seed = 5, .type = TP_F32, .batch = 4, .P = 5, .T = 4,
		.prompt = prompt,
	};
	int tok[4], agree, seq[16], k, i;
	float lg[50 * 4];
	double ref[50], worst = 0;

	if (!ok(!run_n(j, 1, tok, lg, &agree), "one rank runs"))
		return;
	memcpy(seq, prompt, sizeof(int) * 5);
	for (k = 0; k < 4; k++) {
		ref_logits(&c, 5, seq, 5 + k, ref);
		for (i = 0; i < 50; i++)
			if (fabs(ref[i] - lg[k * 50 + i]) > worst)
				worst = fabs(ref[i] - lg[k * 50 + i]);
		seq[5 + k] = tok[k];
	}
	ok(worst < 1e-4, "logits of 4 steps (prefill + decode with the KV cache) match the double reference (worst %.2g)",
	   worst);
}

static void test_determinism(void)
{
	struct tp_config c = cfg(32, 2, 4, 2, 64, 50);
	struct job j = {
		.c = c, .seed = 9, .type = TP_F32, .batch = 7, .P = 7, .T = 5,
		.prompt = prompt,
	};
	int t1[5], t2[5], t3[5], agree;
	float l1[250], l2[250], l3[250];

	run_n(j, 1, t1, l1, &agree);
	run_n(j, 1, t2, l2, &agree);
	j.batch = 1;
	run_n(j, 1, t3, l3, &agree);
	ok(!memcmp(l1, l2, sizeof(l1)) && !memcmp(t1, t2, sizeof(t1)),
	   "the same run twice: the same bits");
	ok(!memcmp(l1, l3, sizeof(l1)) && !memcmp(t1, t3, sizeof(t1)),
	   "prefill in one batch of 7 or 7 batches of 1: the same bits");
	{
		static const int bad[] = { 3, 50 };

		j.prompt = bad;
		j.P = 2;
		j.batch = 2;
		ok(run_n(j, 1, t3, l3, &agree) == -1,
		   "a token outside the vocabulary is refused, not looked up");
	}
}

/* N = 2..4, mesh and ring, against one rank. */
static void matrix(const char *name, struct job j, double tol)
{
	int base_t[8], t[8], agree, N, a;
	size_t nl = (size_t)j.c.vocab * j.T;
	float *base = calloc(nl, sizeof(float)), *l = calloc(nl, sizeof(float));

	if (!ok(!run_n(j, 1, base_t, base, &agree), "%s: one rank", name))
		goto out;
	for (N = 2; N <= 4; N++)
		for (a = 0; a < 2; a++) {
			double d;
			int r;

			j.algo = a ? TP_ALGO_RING : TP_ALGO_MESH;
			r = run_n(j, N, t, l, &agree);
			d = rel_diff(base, l, nl);
			ok(!r && agree && !memcmp(t, base_t, j.T * sizeof(int)) &&
			   d <= tol,
			   "%s: %d ranks, %s: same tokens, logits within %.0e (%.1e), every rank the same bits",
			   name, N, tp_algo_name(j.algo), tol, d);
		}
out:
	free(base);
	free(l);
}

static void test_matrix(void)
{
	struct job j = {
		.seed = 1, .type = TP_F32, .batch = 3, .P = 7, .T = 6,
		.prompt = prompt,
	};

	j.c = cfg(32, 2, 4, 2, 64, 50);
	matrix("4 heads / 2 kv", j, TOL);
	j.c = cfg(48, 2, 6, 3, 96, 40);	/* 4 ranks: 1,2,1,2 heads */
	matrix("6 heads / 3 kv", j, TOL);
	j.c = cfg(32, 1, 4, 1, 40, 30);	/* multi-query, ffn not /32 */
	matrix("4 heads / 1 kv", j, TOL);
	j.c = cfg(64, 2, 4, 2, 128, 64);	/* head dim 16: 2 heads a block */
	j.type = TP_Q8_0;
	matrix("q8_0, 2 heads a block", j, TOL);
	j.c = cfg(128, 2, 4, 2, 128, 64);	/* head dim 32: whole blocks */
	matrix("q8_0, whole blocks", j, TOL);
	j.type = TP_Q4_1;	/* activations in Q8_1 */
	matrix("q4_1, whole blocks", j, TOL);
	j.type = TP_Q5_0;
	matrix("q5_0, whole blocks", j, TOL);
}

/* The GGUF export computes the bits of the synthetic weights. */
static void test_gguf_equal(void)
{
	static const enum tp_type types[] = { TP_F32, TP_F16, TP_Q8_0 };
	struct job j = {
		.seed = 3, .batch = 4, .P = 7, .T = 4, .prompt = prompt,
		.algo = TP_ALGO_MESH,
	};
	char path[64], err[300];
	unsigned i;
	int N;

	j.c = cfg(64, 2, 4, 2, 128, 64);
	snprintf(path, sizeof(path), "/tmp/tprun-model-%d.gguf", (int)getpid());
	for (i = 0; i < 3; i++)
		for (N = 1; N <= 3; N += 2) {
			int ts[4], tg[4], agree;
			float ls[256], lg[256];

			j.type = types[i];
			j.gguf = NULL;
			if (tp_export_gguf(path, j.arch, &j.c, j.seed, j.type, 0,
					   err, sizeof(err))) {
				ok(0, "export: %s", err);
				continue;
			}
			run_n(j, N, ts, ls, &agree);
			j.gguf = path;
			run_n(j, N, tg, lg, &agree);
			ok(!memcmp(ls, lg, sizeof(ls)) && !memcmp(ts, tg, sizeof(ts)),
			   "%s, %d rank%s: GGUF export and synthetic weights give the same bits",
			   tp_type_name(j.type), N, N > 1 ? "s" : "");
		}
	/* the K-quants: in super-blocks (256 wide), and each tensor in its
	 * fallback type (64 wide: Q5_0, Q5_1, Q8_0) */
	for (i = 0; i < 6; i++)
		for (N = 1; N <= 3; N += 2) {
			static const enum tp_type kt[] = { TP_Q4_K, TP_Q5_K,
							   TP_Q6_K };
			int ts[4], tg[4], agree;
			float ls[256], lg[256];

			j.type = kt[i % 3];
			j.c = i < 3 ? cfg(256, 1, 4, 2, 512, 64) :
				      cfg(64, 1, 4, 2, 128, 64);
			j.gguf = NULL;
			if (tp_export_gguf(path, j.arch, &j.c, j.seed, j.type, 0,
					   err, sizeof(err))) {
				ok(0, "export: %s", err);
				continue;
			}
			run_n(j, N, ts, ls, &agree);
			j.gguf = path;
			run_n(j, N, tg, lg, &agree);
			ok(!memcmp(ls, lg, sizeof(ls)) && !memcmp(ts, tg, sizeof(ts)),
			   "%s, dim %d, %d rank%s: GGUF export and synthetic weights give the same bits",
			   tp_type_name(j.type), j.c.dim, N, N > 1 ? "s" : "");
		}
	/* the types of issues 41 and 42: super-blocks (256 wide), and the
	 * 32-element IQ4_NL and MXFP4; 3 ranks cut some inside a block */
	for (i = 0; i < 6; i++)
		for (N = 1; N <= 3; N += 2) {
			static const enum tp_type nt[] = { TP_Q2_K, TP_Q3_K,
				TP_IQ2_XXS, TP_IQ1_M, TP_IQ4_NL, TP_MXFP4 };
			int ts[4], tg[4], agree;
			float ls[256], lg[256];

			j.type = nt[i];
			j.c = i < 4 ? cfg(256, 1, 4, 2, 512, 64) :
				      cfg(64, 1, 4, 2, 128, 64);
			j.gguf = NULL;
			if (tp_export_gguf(path, j.arch, &j.c, j.seed, j.type, 0, err,
					   sizeof(err))) {
				ok(0, "export: %s", err);
				continue;
			}
			run_n(j, N, ts, ls, &agree);
			j.gguf = path;
			run_n(j, N, tg, lg, &agree);
			ok(!memcmp(ls, lg, sizeof(ls)) && !memcmp(ts, tg, sizeof(ts)) &&
			   agree,
			   "%s, dim %d, %d rank%s: GGUF export and synthetic weights give the same bits",
			   tp_type_name(j.type), j.c.dim, N, N > 1 ? "s" : "");
		}
	unlink(path);
}

/* --- mixture of experts and the architectures of issue 41 --- */

static struct tp_config moe_cfg(int experts, int used, int eff, int shared,
				int dense)
{
	struct tp_config c = cfg(64, 3, 4, 2, 128, 64);

	c.moe.experts = experts;
	c.moe.used = used;
	c.moe.ffn = eff;
	c.moe.shared = shared;
	c.moe.dense_layers = dense;
	return c;
}

/* Routing against a plain reference: softmax, sigmoid with bias, norm,
 * scale, groups; the choice best first, never twice. */
static void test_route(void)
{
	struct tp_moe_config c = { .experts = 16, .used = 4,
				   .gating = TP_GATE_SOFTMAX };
	float lg[16], p[16], bias[16], wt[4];
	int sel[4], i, j, bad = 0;
	double sum = 0;

	for (i = 0; i < 16; i++) {
		lg[i] = (float)((i * 7) % 16) / 4 - 2;	/* distinct */
		bias[i] = i == 3 ? 10 : 0;
	}
	memcpy(p, lg, sizeof(p));
	tp_moe_route(&c, p, NULL, sel, wt);
	/* the largest logits are at i*7 % 16 = 15, 14, 13, 12 */
	for (j = 0; j < 4; j++) {
		double e = 0;

		for (i = 0; i < 16; i++)
			e += exp(lg[i] - lg[sel[0]]);
		bad += (sel[j] * 7) % 16 != 15 - j;
		bad += fabs(wt[j] - exp(lg[sel[j]] - lg[sel[0]]) / e) > 1e-6;
	}
	ok(!bad, "softmax routing: the 4 best experts, best first, their probabilities (%d %d %d %d)",
	   sel[0], sel[1], sel[2], sel[3]);
	c.norm = 1;
	c.scale = 2.5f;
	memcpy(p, lg, sizeof(p));
	tp_moe_route(&c, p, NULL, sel, wt);
	for (j = 0; j < 4; j++)
		sum += wt[j];
	ok(fabs(sum - 2.5) < 1e-5 && wt[0] > wt[1] && wt[1] > wt[2],
	   "renormalised and scaled: the weights sum to the scale (%g)", sum);
	c.gating = TP_GATE_SIGMOID;
	c.scale = 0;
	memcpy(p, lg, sizeof(p));
	tp_moe_route(&c, p, bias, sel, wt);
	sum = 0;
	for (j = 0; j < 4; j++)
		sum += 1 / (1 + exp(-lg[sel[j]]));
	ok(sel[0] == 3 && fabs(wt[0] - 1 / (1 + exp(-lg[3])) / sum) < 1e-6,
	   "sigmoid routing: the bias chooses (expert 3 first), the unbiased scores weigh (%g)",
	   wt[0]);
	/* groups of 4: the two best groups by their two best scores */
	c.gating = TP_GATE_SOFTMAX;
	c.groups = 4;
	c.groups_used = 1;
	memcpy(p, lg, sizeof(p));
	tp_moe_route(&c, p, NULL, sel, wt);
	for (j = 0, bad = 0; j < 4; j++)
		bad += sel[j] / 4 != sel[0] / 4;
	for (i = 0; i < 4; i++)
		for (j = 0; j < i; j++)
			bad += sel[i] == sel[j];
	ok(!bad, "group-limited routing: all 4 from the one best group (%d %d %d %d)",
	   sel[0], sel[1], sel[2], sel[3]);
	/* gpt-oss: the best 4 logits, a softmax over those 4 only */
	c = (struct tp_moe_config){ .experts = 16, .used = 4,
				    .gating = TP_GATE_SOFTMAX_WEIGHT };
	memcpy(p, lg, sizeof(p));
	tp_moe_route(&c, p, NULL, sel, wt);
	for (j = 0, bad = 0, sum = 0; j < 4; j++)
		sum += exp(lg[sel[j]] - lg[sel[0]]);
	for (j = 0; j < 4; j++) {
		bad += (sel[j] * 7) % 16 != 15 - j;
		bad += fabs(wt[j] - exp(lg[sel[j]] - lg[sel[0]]) / sum) > 1e-6;
	}
	ok(!bad, "softmax over the chosen (gpt-oss): the 4 best logits, weights a softmax of those 4 (%g %g %g %g)",
	   wt[0], wt[1], wt[2], wt[3]);
}

/* gpt-oss's clamped SwiGLU, against its formula, on each side of the
 * clamps (gate above 7, up outside [-7, 7]). */
static void test_swiglu_oai(void)
{
	float g[6] = { -3, 0.5f, 6.9f, 7.5f, 12, 2 };
	float u[6] = { 1, -9, 0.25f, 3, 8, -7.5f };
	float want[6];
	int i, bad = 0;

	for (i = 0; i < 6; i++) {
		double x = g[i] < 7 ? g[i] : 7;
		double y = u[i] < -7 ? -7 : u[i] > 7 ? 7 : u[i];

		want[i] = (float)(x / (1 + exp(-1.702 * x)) * (y + 1));
	}
	tp_swiglu_oai(g, u, 6);
	for (i = 0; i < 6; i++)
		bad += fabs(g[i] - want[i]) > 1e-5 * (1 + fabs(want[i]));
	ok(!bad, "clamped SwiGLU (gpt-oss): min(g, 7) sigmoid(1.702 x) (clamp(u, -7, 7) + 1) (%g %g)",
	   g[3], g[4]);
}

/* An attention sink takes its share of the softmax and nothing else. */
static void test_sink(void)
{
	float x[3] = { 1, 2, 3 }, y[3] = { 1, 2, 3 };
	double e = exp(1.0) + exp(2.0) + exp(3.0) + exp(2.5);
	int i, bad = 0;

	tp_softmax_sink(x, 3, 2.5f);
	tp_softmax_sink(y, 3, -INFINITY);
	for (i = 0; i < 3; i++)
		bad += fabs(x[i] - exp(i + 1.0) / e) > 1e-6;
	ok(!bad && fabs(y[0] + y[1] + y[2] - 1) < 1e-6,
	   "softmax with a sink: exp(s) / (sum + exp(sink)); no sink sums to 1 (%g)",
	   x[2]);
}

/* ARCH's synthetic model on N = 1..4 ranks (mesh), and its GGUF export
 * on 1 and 3: the same tokens, logits within TOL, the same bits on
 * every rank; the export the synthetic bits. */
static void arch_matrix(const char *name, const char *arch,
			struct tp_config c, enum tp_type type, int split,
			double tol)
{
	struct job j = {
		.c = c, .arch = arch, .seed = 11, .type = type, .batch = 3,
		.P = 7, .T = 5, .prompt = prompt, .algo = TP_ALGO_MESH,
	};
	char path[64], err[300];
	int N;

	j.c.moe.split = split;
	matrix(name, j, tol);
	snprintf(path, sizeof(path), "/tmp/tprun-moe-%d.gguf", (int)getpid());
	if (tp_export_gguf(path, arch, &j.c, j.seed, type, 0, err,
			   sizeof(err))) {
		ok(0, "%s: export: %s", name, err);
		return;
	}
	for (N = 1; N <= 3; N += 2) {
		int ts[5], tg[5], agree;
		float ls[64 * 5], lg[64 * 5];

		j.gguf = NULL;
		run_n(j, N, ts, ls, &agree);
		j.gguf = path;
		run_n(j, N, tg, lg, &agree);
		ok(!memcmp(ls, lg, sizeof(ls)) && !memcmp(ts, tg, sizeof(ts)),
		   "%s, %d rank%s: GGUF export and synthetic weights give the same bits",
		   name, N, N > 1 ? "s" : "");
		j.gguf = NULL;
	}
	unlink(path);
}

static void test_archs(void)
{
	struct tp_config c = cfg(64, 2, 4, 2, 128, 64);

	test_route();
	arch_matrix("qwen3", "qwen3", c, TP_F32, 0, TOL);
	c = moe_cfg(16, 4, 64, 0, 0);
	c.ffn = 256;
	arch_matrix("qwen3moe, experts by width", "qwen3moe", c, TP_F32,
		    TP_SPLIT_WIDTH, TOL);
	arch_matrix("qwen3moe, whole experts", "qwen3moe", c, TP_F32,
		    TP_SPLIT_EXPERTS, TOL);
	/* Q8_0: 64 columns are 2 blocks: by width over 2, else whole
	 * experts; heads of 32 (whole blocks) */
	c.dim = 128;
	c.head_dim = c.rot_dim = 32;
	arch_matrix("qwen3moe q8_0, auto", "qwen3moe", c, TP_Q8_0,
		    TP_SPLIT_AUTO, TOL);
	c = moe_cfg(8, 2, 64, 1, 1);
	c.rot_dim = c.head_dim / 2;
	c.nextn_layers = 1;
	arch_matrix("glm4moe", "glm4moe", c, TP_F32, TP_SPLIT_AUTO, TOL);
	arch_matrix("glm4moe, whole experts", "glm4moe", c, TP_F32,
		    TP_SPLIT_EXPERTS, TOL);
	c.dim = 128;
	c.head_dim = 32;
	c.rot_dim = 16;
	arch_matrix("glm4moe q8_0", "glm4moe", c, TP_Q8_0, TP_SPLIT_AUTO, TOL);
	/* deepseek2: 4 heads of 48 (32 + RoPE 16), values of 32, a
	 * latent of 64, q through a rank of 32, 8 experts in 4 groups */
	c = moe_cfg(8, 2, 64, 1, 1);
	c.head_dim = 48;
	c.rot_dim = 16;
	c.mla.kv_lora = 64;
	c.mla.q_lora = 32;
	c.mla.v_dim = 32;
	c.moe.groups = 4;
	c.moe.groups_used = 2;
	arch_matrix("deepseek2", "deepseek2", c, TP_F32, TP_SPLIT_AUTO, TOL);
	c.mla.q_lora = 0;
	arch_matrix("deepseek2 q8_0, plain q", "deepseek2", c, TP_Q8_0,
		    TP_SPLIT_AUTO, TOL);
	/* gpt-oss: a window of 3 positions on layers 0 and 2 (the 7-token
	 * prompt passes it), sinks, biases, YaRN; MXFP4 on heads of 32 */
	test_swiglu_oai();
	test_sink();
	c = moe_cfg(8, 2, 64, 0, 0);
	c.swa_window = 3;
	arch_matrix("gpt-oss", "gpt-oss", c, TP_F32, TP_SPLIT_AUTO, TOL);
	arch_matrix("gpt-oss, whole experts", "gpt-oss", c, TP_F32,
		    TP_SPLIT_EXPERTS, TOL);
	c.dim = 128;
	c.head_dim = c.rot_dim = 32;
	arch_matrix("gpt-oss mxfp4", "gpt-oss", c, TP_MXFP4, TP_SPLIT_AUTO,
		    TOL);
}

/*
 * gpt-oss's window layers (0 and 2 of 3) keep a ring of the window plus
 * a batch: generating far past the window (and around the ring several
 * times) gives the bits of a full-length cache, on 1 and 2 ranks; the
 * ring's size does not grow with the context.
 */
static void test_swa_ring(void)
{
	struct tp_config c = moe_cfg(8, 2, 64, 0, 0);
	struct job j = {
		.arch = "gpt-oss", .seed = 11, .type = TP_F32, .P = 7,
		.T = 24, .prompt = prompt, .algo = TP_ALGO_MESH,
	};
	size_t nl = (size_t)c.vocab * j.T;
	float *lr = calloc(nl, sizeof(float)), *lf = calloc(nl, sizeof(float));
	int tr[24], tf[24], slots[3], full[3], agree, N, b, ctx;
	struct tp_weights w;
	struct tp_model m;
	char err[300];

	c.swa_window = 4;
	j.c = c;
	for (b = 1; b <= 3; b += 2)
		for (N = 1; N <= 2; N++) {
			int r;

			j.batch = b;
			j.kv_slots = slots;
			j.swa_full = 0;
			r = run_n(j, N, tr, lr, &agree);
			j.kv_slots = full;
			j.swa_full = 1;
			r |= run_n(j, N, tf, lf, &agree);
			ok(!r && slots[0] == 4 + b - 1 && slots[2] == slots[0] &&
			   slots[1] == j.P + j.T && full[0] == j.P + j.T &&
			   !memcmp(tr, tf, sizeof(tr)) &&
			   !memcmp(lr, lf, nl * sizeof(float)),
			   "gpt-oss window 4, batch %d, %d rank%s: ring of %d (full layer %d) decodes 24 tokens past a 7-token prompt to the bits of a full cache",
			   b, N, N > 1 ? "s" : "", slots[0], slots[1]);
		}
	if (tp_weights_synth(&w, "gpt-oss", &c, 11, TP_F32, 0, 1, err,
			     sizeof(err))) {
		ok(0, "gpt-oss synthetic: %s", err);
		goto out;
	}
	for (ctx = 64; ctx <= 65536; ctx *= 32) {
		size_t rows = 0;
		int l;

		tp_model_init(&m, &w, ctx, 8);
		for (l = 0; l < c.layers; l++)
			rows += (size_t)m.kv_slots[l];
		ok(m.kv_slots[0] == 11 && m.kv_slots[2] == 11 &&
		   m.kv_slots[1] == ctx && rows == (size_t)ctx + 22 &&
		   m.kv_row[2] == (size_t)11 + ctx,
		   "gpt-oss context %d, batches of 8: window layers keep 11 positions each, the full layer %d (%zu rows in all)",
		   ctx, m.kv_slots[1], rows);
		tp_model_free(&m);
	}
	tp_model_init(&m, &w, 5, 8);
	ok(m.kv_slots[0] == 5 && m.kv_slots[1] == 5,
	   "gpt-oss context 5 below window + batch: every layer keeps the context (%d)",
	   m.kv_slots[0]);
	tp_model_free(&m);
	tp_weights_free(&w);
out:
	free(lr);
	free(lf);
}

/*
 * The KV cache in F16 (--cache-type f16) against F32, on 1 and 2 ranks:
 * the same tokens, logits within TOL_F16 but not the same bits (the
 * cache's values, q and the softmax weights are rounded to F16: 2^-11
 * relative each; 4-6e-4 measured), the ranks the same bits; half the
 * cache's bytes. F32 weights only: quantised activations (Q8_0's) turn such
 * roundings into flips of whole steps, and a model this small and random
 * then parts from F32 within a few tokens (llama-ref compares them with
 * llama.cpp's F16 cache instead).
 */
#define TOL_F16 5e-3	/* relative to the largest logit */

static void kv_f16(const char *name, struct job j)
{
	size_t nl = (size_t)j.c.vocab * j.T;
	float *l32 = calloc(nl, sizeof(float)), *l16 = calloc(nl, sizeof(float));
	int t32[24], t16[24], agree, N;

	for (N = 1; N <= 2; N++) {
		double d;
		int r;

		j.kv_type = TP_F32;
		r = run_n(j, N, t32, l32, &agree);
		j.kv_type = TP_F16;
		r |= run_n(j, N, t16, l16, &agree);
		d = rel_diff(l32, l16, nl);
		ok(!r && agree && !memcmp(t32, t16, j.T * sizeof(int)) &&
		   d <= TOL_F16 && d > 0,
		   "%s, %d rank%s: F16 cache: the F32 cache's %d tokens, logits within %.0e of its (%.1e, not its bits), every rank the same bits",
		   name, N, N > 1 ? "s" : "", j.T, TOL_F16, d);
	}
	free(l32);
	free(l16);
}

static void test_kv_f16(void)
{
	struct job j = {
		.seed = 1, .type = TP_F32, .batch = 3, .P = 7, .T = 6,
		.prompt = prompt, .algo = TP_ALGO_MESH,
	};
	size_t nl, b32, b16;
	float *lr, *lf;
	int tr[24], tf[24], agree;
	struct tp_weights w;
	struct tp_model m;
	char err[300];

	j.c = cfg(32, 2, 4, 2, 64, 50);
	kv_f16("llama", j);
	/* deepseek2's latent cache (as test_archs) */
	j.c = moe_cfg(8, 2, 64, 1, 1);
	j.c.head_dim = 48;
	j.c.rot_dim = 16;
	j.c.mla.kv_lora = 64;
	j.c.mla.q_lora = 32;
	j.c.mla.v_dim = 32;
	j.c.moe.groups = 4;
	j.c.moe.groups_used = 2;
	j.arch = "deepseek2";
	kv_f16("deepseek2", j);
	if (tp_weights_synth(&w, "deepseek2", &j.c, 1, TP_F32, 0, 1, err,
			     sizeof(err))) {
		ok(0, "deepseek2 synthetic: %s", err);
		return;
	}
	tp_model_init_cache(&m, &w, 100, 4, 0, TP_F32);
	b32 = m.kv_bytes;
	tp_model_free(&m);
	tp_model_init_cache(&m, &w, 100, 4, 0, TP_F16);
	b16 = m.kv_bytes;
	tp_model_free(&m);
	ok(b32 == 100 * 3 * (64 + 16) * 4 && b16 == b32 / 2 &&
	   tp_model_init_cache(&m, &w, 100, 4, 0, TP_Q8_0) == -1,
	   "deepseek2 cache of 100 positions, 3 layers, 80 values: %zu bytes in F32, %zu in F16; a Q8_0 cache is refused",
	   b32, b16);
	tp_weights_free(&w);
	/* gpt-oss: sinks, and a ring of 4 + 3 positions in its window
	 * layers that 24 tokens pass around several times */
	j.c = moe_cfg(8, 2, 64, 0, 0);
	j.c.swa_window = 4;
	j.arch = "gpt-oss";
	j.type = TP_F32;
	j.T = 24;
	kv_f16("gpt-oss", j);
	nl = (size_t)j.c.vocab * j.T;
	lr = calloc(nl, sizeof(float));
	lf = calloc(nl, sizeof(float));
	j.kv_type = TP_F16;
	run_n(j, 2, tr, lr, &agree);
	j.swa_full = 1;
	run_n(j, 2, tf, lf, &agree);
	ok(!memcmp(tr, tf, sizeof(tr)) && !memcmp(lr, lf, nl * sizeof(float)),
	   "gpt-oss, F16 cache, 2 ranks: the window layers' rings give the bits of a full cache");
	free(lr);
	free(lf);
}

static void test_expert_shards(void)
{
	struct tp_config c = moe_cfg(10, 2, 768, 1, 0);
	struct tp_shard s;
	char err[200];
	int N, r, bad = 0, e, x;

	for (N = 1; N <= 4; N++) {
		for (r = 0, e = 0, x = 0; r < N; r++) {
			c.moe.split = TP_SPLIT_AUTO;
			if (tp_shard_experts(&c, r, N, 256, 32, &s, err,
					     sizeof(err))) {
				bad++;
				continue;
			}
			/* 3 blocks of 256: by width over 1 and 3 ranks */
			if (N == 1 || N == 3) {
				bad += s.e0 != 0 || s.e1 != 10 || s.x0 != x ||
				       s.x1 - s.x0 != 768 / N || s.x0 % 256;
				x = s.x1;
			} else {
				bad += s.e0 != e || s.e1 <= s.e0 || s.x0 != 0 ||
				       s.x1 != 768;
				e = s.e1;
			}
			bad += s.s0 % 32 || s.s1 <= s.s0;
		}
		bad += (N == 1 || N == 3) ? x != 768 : e != 10;
	}
	ok(!bad, "expert shards: by width on whole blocks when they divide evenly, else whole experts; both cover every expert and column once");
	c.moe.split = TP_SPLIT_WIDTH;
	ok(tp_shard_experts(&c, 0, 4, 256, 32, &s, err, sizeof(err)) &&
	   strstr(err, "3 blocks of 256"),
	   "a width split with fewer blocks than ranks is refused (%s)", err);
}

/* Every rank's shard of C over N ranks; 0 when they all plan. */
static int plans(const struct tp_config *c, enum tp_type type, int N,
		 struct tp_shard *s)
{
	struct tp_shard_cost k;
	char err[300];
	int r;

	tp_synth_cost(c, type, &k);
	for (r = 0; r < N; r++)
		if (tp_shard_plan(c, &k, r, N, &s[r], err, sizeof(err)))
			return -1;
	return 0;
}

/* The bytes of rank R's layers, as tp_synth_cost weighs them. */
static double shard_bytes(const struct tp_config *c, enum tp_type type,
			  const struct tp_shard *s)
{
	struct tp_shard_cost k;

	tp_synth_cost(c, type, &k);
	return (double)(k.q + k.o) * (s->q1 - s->q0) / c->heads +
	       (double)k.kv * (s->kv1 - s->kv0) / c->kv_heads +
	       (double)(k.gate_up + k.down) * (s->f1 - s->f0) / c->ffn;
}

static void test_shards(void)
{
	static const enum tp_type types[] = { TP_F32, TP_Q8_0, TP_Q4_K,
					      TP_Q6_K };
	struct tp_config c = cfg(64, 1, 6, 2, 96, 10);
	struct tp_shard s[8];
	int N, r, bad = 0, worst_n = 0;
	unsigned i;
	double worst = 0;
	char err[300];

	for (N = 1; N <= 6; N++) {
		int q = 0, f = 0;

		bad += plans(&c, TP_F32, N, s) != 0;
		for (r = 0; r < N; r++) {
			bad += s[r].q0 != q || s[r].q1 <= s[r].q0 ||
			       s[r].f0 != f || s[r].f1 <= s[r].f0 ||
			       s[r].kv0 != s[r].q0 / 3 ||
			       s[r].kv1 != (s[r].q1 - 1) / 3 + 1 ||
			       (N <= 3 && s[r].f0 % 32);
			q = s[r].q1;
			f = s[r].f1;
		}
		bad += q != 6 || f != 96;
	}
	ok(!bad, "F32 shard plans cover heads and MLP columns exactly, K/V heads follow, MLP cut on 32s when it can");

	/*
	 * The model (dim 2048, 16 heads of 128, ffn 5632) and the
	 * 0.48 B shape (32 heads of 64, 4 K/V heads): every cut of a
	 * row-parallel matrix on a block of its type, every rank within
	 * 1/N + 10 % of the layers' bytes, for N = 2..5.
	 */
	bad = 0;
	for (i = 0; i < 2 * sizeof(types) / sizeof(types[0]); i++) {
		enum tp_type t = types[i % 4];
		int blk_o, blk_d;

		c = i < 4 ? cfg(2048, 2, 16, 16, 5632, 64) :
			    cfg(2048, 2, 32, 4, 5632, 64);
		blk_o = tp_type_block(tp_type_for_cols(t, 2048));
		blk_d = tp_type_block(tp_type_for_cols(t, 5632));
		for (N = 2; N <= 5; N++) {
			double all = 0, most = 0;
			int q = 0, f = 0;

			if (plans(&c, t, N, s)) {
				bad++;
				continue;
			}
			for (r = 0; r < N; r++) {
				double b = shard_bytes(&c, t, &s[r]);

				bad += s[r].q0 != q || s[r].f0 != f ||
				       s[r].q0 * c.head_dim % blk_o ||
				       s[r].f0 % blk_d;
				q = s[r].q1;
				f = s[r].f1;
				all += (double)(s[r].q1 - s[r].q0) / c.heads;
				if (b > most)
					most = b;
			}
			bad += q != c.heads || f != c.ffn;
			{
				struct tp_shard one;

				plans(&c, t, 1, &one);
				most /= shard_bytes(&c, t, &one);
			}
			if (most * N > worst) {
				worst = most * N;
				worst_n = N;
			}
		}
	}
	ok(!bad && worst <= 1.10,
	   "Q8_0, Q4_K, Q6_K and F32 plans of 16 heads of 128 and 32 of 64 over 2..5 ranks: cuts on whole blocks, the heaviest rank %.3f x 1/N (N = %d)",
	   worst, worst_n);

	/* fewer whole-block groups of heads than ranks: some hold none */
	c = cfg(64, 1, 4, 2, 128, 10);	/* head dim 16: 2 heads a Q8_0 block */
	bad = plans(&c, TP_Q8_0, 4, s) != 0;
	for (r = 0, N = 0; !bad && r < 4; r++) {
		N += s[r].q1 == s[r].q0;
		bad += s[r].q0 % 2 || s[r].q1 % 2 || s[r].f0 % 32 ||
		       (s[r].q1 == s[r].q0 && (s[r].kv1 != s[r].kv0 ||
					       s[r].f1 == s[r].f0));
	}
	ok(!bad && N == 2,
	   "4 heads of 16 in Q8_0 over 4 ranks: 2 ranks hold a block of 2 heads, 2 none (nor K/V heads, but MLP blocks)");

	/* and what no whole-block plan can share: refused, saying why */
	{
		struct tp_shard_cost k;

		c = cfg(256, 1, 2, 2, 256, 10);	/* Q4_K: 1 head group, 1 MLP block */
		tp_synth_cost(&c, TP_Q4_K, &k);
		err[0] = 0;
		ok(tp_shard_plan(&c, &k, 0, 3, &s[0], err, sizeof(err)) == -1 &&
		   strstr(err, "at most 2 ranks"),
		   "2 heads of 128 and 256 MLP columns in Q4_K over 3 ranks: refused (%s)",
		   err);
	}
}

int main(void)
{
	plan(NO_PLAN);
	tp_math_init();
	test_reference();
	test_determinism();
	test_shards();
	test_matrix();
	test_gguf_equal();
	test_expert_shards();
	test_archs();
	test_swa_ring();
	test_kv_f16();
	return done();
}
