// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * deepseek2's latent attention (tools/runner/model/mla.c) with YaRN as
 * DeepSeek V3/R1 and Kimi K2 are published, against a reference written
 * here in double precision the way DeepSeek's own modelling code states
 * it, not the way tprun computes it:
 *  - keys and values decompressed from the latent per head (tprun
 *    absorbs the up-projections into the query and the output instead);
 *  - YaRN's angles from the interpolated and extrapolated frequencies
 *    blended over the correction range of beta_fast/beta_slow, cos and
 *    sin scaled by mscale(f, m) / mscale(f, m_all) (1: the files set
 *    both alike);
 *  - scores scaled by mscale(f, m_all)^2 / sqrt(head_dim), with
 *    mscale(f, m) = 0.1 m ln f + 1 and m_all the file's
 *    rope.scaling.yarn_log_multiplier / 0.1.
 * The whole sequence is recomputed at every step (no cache). Each case
 * also checks that the comparison can fail: the reference without the
 * log multiplier, or with YaRN's score scale but unscaled angles, is far
 * from tprun's logits.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/float16.h"
#include "kernels/vector.h"
#include "model/arch/registry.h"
#include "model/model.h"
#include "model/synthetic.h"
#include "tap.h"
#include "text/sampler.h"

#define TOL 1e-4	/* relative to the largest logit, as test_runner_model */

/* What the reference applies; tprun's config is set once for all. */
struct yarn {
	double factor;		/* 0: no YaRN, plain RoPE */
	int orig_ctx;
	double beta_fast, beta_slow;
	double log_mul;		/* rope.scaling.yarn_log_multiplier */
	int plain_angles;	/* the checks' own: scaled scores, plain RoPE */
};

static double W(const struct tp_config *c, int t, int l, long r, long k)
{
	return tp_synth_value(c, 3, t, l, r, k);
}

/* OUT = rmsnorm(X[0..N-1]) * weight T of layer L */
static void norm(const struct tp_config *c, int t, int l, const double *x,
		 double *out, int n)
{
	double ss = 0;
	int i;

	for (i = 0; i < n; i++)
		ss += x[i] * x[i];
	for (i = 0; i < n; i++)
		out[i] = x[i] / sqrt(ss / n + c->eps) * W(c, t, l, 0, i);
}

/* OUT[R] = sum_k W(T, L, R0 + R, K) IN[K], R < ROWS, K < COLS */
static void matvec(const struct tp_config *c, int t, int l, long r0,
		   int rows, int cols, const double *in, double *out)
{
	int r, k;

	for (r = 0; r < rows; r++) {
		double a = 0;

		for (k = 0; k < cols; k++)
			a += W(c, t, l, r0 + r, k) * in[k];
		out[r] = a;
	}
}

static double mscale(double f, double m)
{
	return f <= 1 ? 1 : 0.1 * m * log(f) + 1;
}

/* DeepSeek's yarn_find_correction_dim */
static double corr_dim(int dim, double rotations, int orig, double base)
{
	return dim * log(orig / (rotations * 2 * M_PI)) / (2 * log(base));
}

/* Rotate the ROT/2 adjacent pairs of E at POS. */
static void rope(const struct tp_config *c, const struct yarn *y, double *e,
		 int pos)
{
	int rot = c->rot_dim, i;
	double lo = 0, hi = 1, mag = 1;

	if (y->factor && !y->plain_angles) {
		lo = floor(corr_dim(rot, y->beta_fast, y->orig_ctx,
				    c->rope_base));
		hi = ceil(corr_dim(rot, y->beta_slow, y->orig_ctx,
				   c->rope_base));
		lo = lo > 0 ? lo : 0;
		hi = hi < rot - 1 ? hi : rot - 1;
		if (hi == lo)
			hi += 0.001;
		mag = mscale(y->factor, y->log_mul / 0.1) /
		      mscale(y->factor, y->log_mul / 0.1);
	}
	for (i = 0; i < rot / 2; i++) {
		double extra = pow(c->rope_base, -2.0 * i / rot), inv = extra;
		double th, e0 = e[2 * i], e1 = e[2 * i + 1];

		if (y->factor && !y->plain_angles) {
			double ramp = (i - lo) / (hi - lo);
			double keep = 1 - (ramp < 0 ? 0 : ramp > 1 ? 1 : ramp);

			inv = extra / y->factor * (1 - keep) + extra * keep;
		}
		th = pos * inv;
		e[2 * i] = (e0 * cos(th) - e1 * sin(th)) * mag;
		e[2 * i + 1] = (e0 * sin(th) + e1 * cos(th)) * mag;
	}
}

/* One layer's attention over tokens 0..N-1, added to X. */
static void ref_attention(const struct tp_config *c, const struct yarn *y,
			  int l, double *x, int n)
{
	int D = c->dim, H = c->heads, hd = c->head_dim, rot = c->rot_dim;
	int nope = hd - rot, lora = c->mla.kv_lora, r = c->mla.q_lora;
	int vd = c->mla.v_dim, t, p, h, i;
	double *q = calloc((size_t)n * H * hd, sizeof(double));
	double *lat = calloc((size_t)n * lora, sizeof(double));
	double *kpe = calloc((size_t)n * rot, sizeof(double));
	double *kn = calloc((size_t)n * nope, sizeof(double));
	double *v = calloc((size_t)n * vd, sizeof(double));
	double *hb = calloc((size_t)D + lora + rot + r, sizeof(double));
	double *att = calloc((size_t)n * H * vd, sizeof(double));
	double *sc = calloc((size_t)n, sizeof(double)), *o = calloc(D, 8);
	double scale = 1 / sqrt(hd);

	if (y->factor)
		scale *= pow(mscale(y->factor, y->log_mul / 0.1), 2);
	for (t = 0; t < n; t++) {
		double *qt = q + (size_t)t * H * hd, *ckv = hb + D;

		norm(c, TP_T_ATTN_NORM, l, x + (size_t)t * D, hb, D);
		if (r) {
			double *qa = ckv + lora + rot;

			matvec(c, TP_T_Q_A, l, 0, r, D, hb, qa);
			norm(c, TP_T_Q_A_NORM, l, qa, qa, r);
			matvec(c, TP_T_Q_B, l, 0, H * hd, r, qa, qt);
		} else {
			matvec(c, TP_T_Q, l, 0, H * hd, D, hb, qt);
		}
		matvec(c, TP_T_KV_A, l, 0, lora + rot, D, hb, ckv);
		norm(c, TP_T_KV_A_NORM, l, ckv, lat + (size_t)t * lora, lora);
		memcpy(kpe + (size_t)t * rot, ckv + lora, rot * sizeof(double));
		rope(c, y, kpe + (size_t)t * rot, t);
		for (h = 0; h < H; h++)
			rope(c, y, qt + (size_t)h * hd + nope, t);
	}
	for (h = 0; h < H; h++) {
		/* this head's keys and values, decompressed */
		for (p = 0; p < n; p++) {
			const double *cp = lat + (size_t)p * lora;

			for (i = 0; i < nope; i++) {
				double a = 0;
				int j;

				for (j = 0; j < lora; j++)
					a += W(c, TP_T_K_B, l,
					       (long)h * lora + j, i) * cp[j];
				kn[(size_t)p * nope + i] = a;
			}
			matvec(c, TP_T_V_B, l, (long)h * vd, vd, lora, cp,
			       v + (size_t)p * vd);
		}
		for (t = 0; t < n; t++) {
			const double *qh = q + ((size_t)t * H + h) * hd;
			double max = -1e300, sum = 0;

			for (p = 0; p <= t; p++) {
				double a = 0;

				for (i = 0; i < nope; i++)
					a += qh[i] * kn[(size_t)p * nope + i];
				for (i = 0; i < rot; i++)
					a += qh[nope + i] *
					     kpe[(size_t)p * rot + i];
				sc[p] = a * scale;
				max = sc[p] > max ? sc[p] : max;
			}
			for (p = 0; p <= t; p++)
				sum += sc[p] = exp(sc[p] - max);
			for (i = 0; i < vd; i++) {
				double a = 0;

				for (p = 0; p <= t; p++)
					a += sc[p] / sum * v[(size_t)p * vd + i];
				att[((size_t)t * H + h) * vd + i] = a;
			}
		}
	}
	for (t = 0; t < n; t++) {
		matvec(c, TP_T_O, l, 0, D, H * vd, att + (size_t)t * H * vd, o);
		for (i = 0; i < D; i++)
			x[(size_t)t * D + i] += o[i];
	}
	free(q);
	free(lat);
	free(kpe);
	free(kn);
	free(v);
	free(hb);
	free(att);
	free(sc);
	free(o);
}

/* The dense SwiGLU MLP of layer L on one token, added to X. */
static void ref_mlp(const struct tp_config *c, int l, double *x)
{
	int D = c->dim, F = c->ffn, j;
	double *hb = calloc((size_t)D, sizeof(double));
	double *g = calloc((size_t)F, sizeof(double));
	double *u = calloc((size_t)F, sizeof(double));
	double *o = calloc((size_t)D, sizeof(double));

	norm(c, TP_T_FFN_NORM, l, x, hb, D);
	matvec(c, TP_T_GATE, l, 0, F, D, hb, g);
	matvec(c, TP_T_UP, l, 0, F, D, hb, u);
	for (j = 0; j < F; j++)
		g[j] = g[j] / (1 + exp(-g[j])) * u[j];
	matvec(c, TP_T_DOWN, l, 0, D, F, g, o);
	for (j = 0; j < D; j++)
		x[j] += o[j];
	free(hb);
	free(g);
	free(u);
	free(o);
}

/* Logits after TOK[0..N-1]: every layer dense (leading_dense_block_count
 * = layers), so that the attention is all that differs from Llama. */
static void ref_logits(const struct tp_config *c, const struct yarn *y,
		       const int *tok, int n, double *logits)
{
	int D = c->dim, l, t, i;
	double *x = calloc((size_t)n * D, sizeof(double));
	double *hb = calloc((size_t)D, sizeof(double));

	for (t = 0; t < n; t++)
		for (i = 0; i < D; i++)
			x[(size_t)t * D + i] = W(c, TP_T_EMBD, 0, tok[t], i);
	for (l = 0; l < c->layers; l++) {
		ref_attention(c, y, l, x, n);
		for (t = 0; t < n; t++)
			ref_mlp(c, l, x + (size_t)t * D);
	}
	norm(c, TP_T_OUT_NORM, 0, x + (size_t)(n - 1) * D, hb, D);
	matvec(c, TP_T_OUTPUT, 0, 0, c->vocab, D, hb, logits);
	free(x);
	free(hb);
}

enum { P = 7, T = 4, VOCAB = 40 };

static const int prompt[P] = { 3, 17, 21, 5, 29, 8, 13 };

/* tprun on one rank, prefill in batches of 3: tokens and each step's
 * logits. */
static int run_tprun(const struct tp_config *c, int *tok, float *lg)
{
	struct tp_weights w;
	struct tp_model m;
	char err[300];
	int i, k, bad = 0;

	if (tp_weights_synth(&w, "deepseek2", c, 3, TP_F32, 0, 1, err,
			     sizeof(err))) {
		diag("deepseek2 synthetic: %s", err);
		return -1;
	}
	tp_model_init(&m, &w, P + T, 3);
	for (i = 0; i < P && !bad; i += 3)
		bad = tp_forward(&m, prompt + i, P - i < 3 ? P - i : 3, i,
				 NULL);
	for (k = 0; k < T && !bad; k++) {
		memcpy(lg + (size_t)k * VOCAB, m.logits, sizeof(float) * VOCAB);
		tok[k] = tp_argmax(m.logits, VOCAB);
		if (k + 1 < T)
			bad = tp_forward(&m, &tok[k], 1, P + k, NULL);
	}
	tp_model_free(&m);
	tp_weights_free(&w);
	return bad ? -1 : 0;
}

/* max |ref - tprun| over the steps, over the largest |logit| (>= 1) */
static double diff(const struct tp_config *c, const struct yarn *y,
		   const int *tok, const float *lg)
{
	double ref[VOCAB], worst = 0, big = 1;
	int seq[P + T], k, i;

	memcpy(seq, prompt, sizeof(prompt));
	for (k = 0; k < T; k++) {
		ref_logits(c, y, seq, P + k, ref);
		for (i = 0; i < VOCAB; i++) {
			double d = fabs(ref[i] - lg[k * VOCAB + i]);

			worst = d > worst ? d : worst;
			big = fabs(ref[i]) > big ? fabs(ref[i]) : big;
		}
		seq[P + k] = tok[k];
	}
	return worst / big;
}

/* 4 heads of 48 (32 without RoPE, 16 with: 8 pairs, so the correction
 * range of a 4096-token original context falls inside them), values of
 * 32, a latent of 64, 2 dense layers. Q through a rank of Q_LORA. */
static struct tp_config ds_cfg(int q_lora)
{
	struct tp_config c = {
		.dim = 64, .layers = 2, .heads = 4, .kv_heads = 1,
		.head_dim = 48, .rot_dim = 16, .ffn = 96, .vocab = VOCAB,
		.eps = 1e-6f, .rope_base = 10000,
	};

	c.mla.kv_lora = 64;
	c.mla.q_lora = q_lora;
	c.mla.v_dim = 32;
	c.moe.experts = 4;
	c.moe.used = 2;
	c.moe.ffn = 32;
	c.moe.shared = 1;
	c.moe.dense_layers = c.layers;
	return c;
}

static void check(const char *name, struct tp_config c, struct yarn y)
{
	struct yarn no_mul = y, plain = y;
	int tok[T];
	float lg[T * VOCAB];
	double d, d_mul, d_plain;

	if (y.factor) {
		c.rope_scale = (float)(1 / y.factor);
		c.yarn_orig_ctx = y.orig_ctx;
		c.yarn_beta_fast = (float)y.beta_fast;
		c.yarn_beta_slow = (float)y.beta_slow;
		c.yarn_log_mul = (float)y.log_mul;
	}
	if (!ok(!run_tprun(&c, tok, lg), "%s: tprun runs", name))
		return;
	d = diff(&c, &y, tok, lg);
	ok(d < TOL, "%s: %d steps (prefill in 3s, then decode) match the double reference (%.1e)",
	   name, T, d);
	if (!y.factor)
		return;
	no_mul.log_mul = 0;
	plain.plain_angles = 1;
	d_mul = diff(&c, &no_mul, tok, lg);
	d_plain = diff(&c, &plain, tok, lg);
	ok(d_mul > 100 * TOL && d_plain > 10 * TOL,
	   "%s: the comparison can fail: the reference without the log multiplier is %.1e away, with YaRN's scale but plain RoPE angles %.1e",
	   name, d_mul, d_plain);
}

int main(void)
{
	plan(NO_PLAN);
	tp_math_init();
	/* DeepSeek V3/R1: factor 40 over 4096, mscale_all_dim 1 */
	check("DeepSeek V3 YaRN, q through a low rank", ds_cfg(32),
	      (struct yarn){ 40, 4096, 32, 1, 0.1, 0 });
	/* DeepSeek V2-Lite's kind: mscale_all_dim 0.707, plain q */
	check("V2-Lite YaRN, plain q", ds_cfg(0),
	      (struct yarn){ 40, 4096, 32, 1, 0.0707, 0 });
	/* Kimi K2: factor 32 over 4096 */
	check("Kimi K2 YaRN", ds_cfg(32), (struct yarn){ 32, 4096, 32, 1, 0.1, 0 });
	check("no RoPE scaling", ds_cfg(32), (struct yarn){ 0 });
	return done();
}
