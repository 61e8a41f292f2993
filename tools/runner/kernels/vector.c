// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The float vector operations of the forward pass, in plain C: the dot
 * product of a typed row and floats (the reference the kernels of
 * kernels.h are held to), RMSNorm, rotary position embedding, softmax and
 * SwiGLU. See vector.h.
 */
#include <math.h>

#include "kernels/float16.h"
#include "kernels/quant.h"
#include "kernels/types.h"
#include "kernels/vector.h"

/*
 * The dot products keep eight partial sums (element i goes to sum i % 8),
 * add them pairwise and then the tail: one fixed order of operations per
 * length, so a value never depends on how the caller batched its work,
 * and the F16/BF16 rows give exactly the bits of their F32 conversion.
 */
#define COMBINE8(a) (((a[0] + a[1]) + (a[2] + a[3])) + \
		     ((a[4] + a[5]) + (a[6] + a[7])))

float tp_dot_f32(const float *w, const float *x, int n)
{
	float a[8] = { 0 }, s;
	int i = 0, k;

	for (; i + 8 <= n; i += 8)
		for (k = 0; k < 8; k++)
			a[k] += w[i + k] * x[i + k];
	s = COMBINE8(a);
	for (; i < n; i++)
		s += w[i] * x[i];
	return s;
}

static float dot_f16(const uint16_t *w, const float *x, int n)
{
	float a[8] = { 0 }, s;
	int i = 0, k;

	for (; i + 8 <= n; i += 8)
		for (k = 0; k < 8; k++)
			a[k] += tp_f16_table[w[i + k]] * x[i + k];
	s = COMBINE8(a);
	for (; i < n; i++)
		s += tp_f16_table[w[i]] * x[i];
	return s;
}

static float dot_bf16(const uint16_t *w, const float *x, int n)
{
	float a[8] = { 0 }, s;
	int i = 0, k;

	for (; i + 8 <= n; i += 8)
		for (k = 0; k < 8; k++)
			a[k] += tp_bf16_to_f32(w[i + k]) * x[i + k];
	s = COMBINE8(a);
	for (; i < n; i++)
		s += tp_bf16_to_f32(w[i]) * x[i];
	return s;
}

/* Per block: sum q*x in eight partial sums, then scale once. */
static float dot_q8_0(const struct tp_block_q8_0 *w, const float *x, int n)
{
	float s = 0;
	int b, i, k;

	for (b = 0; b < n / TP_QK8_0; b++, x += TP_QK8_0) {
		float a[8] = { 0 }, q[TP_QK8_0];

		/* converted first: both loops vectorise, same bits */
		for (i = 0; i < TP_QK8_0; i++)
			q[i] = (float)w[b].qs[i];
		for (i = 0; i < TP_QK8_0; i += 8)
			for (k = 0; k < 8; k++)
				a[k] += q[i + k] * x[i + k];
		s += tp_f16_table[w[b].d] * COMBINE8(a);
	}
	return s;
}

float tp_dot(enum tp_type t, const void *row, const float *x, int n)
{
	switch (t) {
	case TP_F32: return tp_dot_f32(row, x, n);
	case TP_F16: return dot_f16(row, x, n);
	case TP_BF16: return dot_bf16(row, x, n);
	case TP_Q8_0: return dot_q8_0(row, x, n);
	default: {
		float tmp[TP_QK_K], s = 0;
		int b, bk = tp_type_block(t);

		/* unquantised activations: the blocks as floats */
		for (b = 0; b < n / bk; b++) {
			tp_dequant_row(t, (const char *)row + (size_t)b *
				       tp_quant_block_bytes(t), tmp,
				       (size_t)bk);
			s += tp_dot_f32(tmp, x + b * bk, bk);
		}
		return s;
	}
	}
}

void tp_rmsnorm(float *out, const float *x, const float *w, int n, float eps)
{
	double ss = 0;
	float scale;
	int i;

	for (i = 0; i < n; i++)
		ss += (double)x[i] * x[i];
	scale = (float)(1.0 / sqrt(ss / n + eps));
	for (i = 0; i < n; i++)
		out[i] = x[i] * scale * w[i];
}

void tp_rope_table(float *cs, int rot_dim, int pos, float base)
{
	tp_rope_table_ext(cs, rot_dim, pos, base, 0, NULL);
}

/* Pair I's angle at POS before scaling (llama.cpp's theta_extrap). */
static double rope_theta(int rot_dim, int pos, float base,
			 const float *freqs, int i)
{
	double theta = pos * pow(base, -2.0 * i / rot_dim);

	return freqs ? theta / freqs[i] : theta;
}

void tp_rope_table_ext(float *cs, int rot_dim, int pos, float base,
		       float scale, const float *freqs)
{
	int i;

	for (i = 0; i < rot_dim / 2; i++) {
		double theta = rope_theta(rot_dim, pos, base, freqs, i);

		if (scale != 0)
			theta *= scale;
		cs[2 * i] = (float)cos(theta);
		cs[2 * i + 1] = (float)sin(theta);
	}
}

/* The pair whose wavelength fits ROTATIONS times in ORIG_CTX (GGML's
 * ggml_rope_yarn_corr_dim, in its float operations). */
static float yarn_corr_dim(int rot_dim, int orig_ctx, float rotations,
			   float base)
{
	return (float)rot_dim *
	       logf((float)orig_ctx / (rotations * 2 * (float)M_PI)) /
	       (2 * logf(base));
}

void tp_rope_table_yarn(float *cs, int rot_dim, int pos, float base,
			float scale, int orig_ctx, float beta_fast,
			float beta_slow, const float *freqs)
{
	tp_rope_table_yarn_m(cs, rot_dim, pos, base, scale, orig_ctx,
			     beta_fast, beta_slow, freqs,
			     1.0f + 0.1f * logf(1.0f / scale));
}

void tp_rope_table_yarn_m(float *cs, int rot_dim, int pos, float base,
			  float scale, int orig_ctx, float beta_fast,
			  float beta_slow, const float *freqs, float mscale)
{
	float lo = floorf(yarn_corr_dim(rot_dim, orig_ctx, beta_fast, base));
	float hi = ceilf(yarn_corr_dim(rot_dim, orig_ctx, beta_slow, base));
	int i;

	lo = lo > 0 ? lo : 0;
	hi = hi < rot_dim - 1 ? hi : (float)(rot_dim - 1);
	for (i = 0; i < rot_dim / 2; i++) {
		float extrap = (float)rope_theta(rot_dim, pos, base, freqs, i);
		float y = (i - lo) / (hi - lo > 0.001f ? hi - lo : 0.001f);
		float ramp = 1 - (y < 0 ? 0 : y > 1 ? 1 : y);
		float theta = scale * extrap * (1 - ramp) + extrap * ramp;

		cs[2 * i] = cosf(theta) * mscale;
		cs[2 * i + 1] = sinf(theta) * mscale;
	}
}

void tp_rope_apply_neox(float *v, int nheads, int head_dim, int rot_dim,
			const float *cs)
{
	int h, i, half = rot_dim / 2;

	for (h = 0; h < nheads; h++, v += head_dim)
		for (i = 0; i < half; i++) {
			float c = cs[2 * i], s = cs[2 * i + 1];
			float v0 = v[i], v1 = v[i + half];

			v[i] = v0 * c - v1 * s;
			v[i + half] = v0 * s + v1 * c;
		}
}

void tp_rope_apply(float *v, int nheads, int head_dim, int rot_dim,
		   const float *cs)
{
	int h, i;

	for (h = 0; h < nheads; h++, v += head_dim)
		for (i = 0; i < rot_dim / 2; i++) {
			float c = cs[2 * i], s = cs[2 * i + 1];
			float v0 = v[2 * i], v1 = v[2 * i + 1];

			v[2 * i] = v0 * c - v1 * s;
			v[2 * i + 1] = v0 * s + v1 * c;
		}
}

void tp_softmax(float *x, int n)
{
	tp_softmax_sink(x, n, -INFINITY);
}

void tp_softmax_sink(float *x, int n, float sink)
{
	float max = sink, inv;
	double sum = 0;
	int i;

	for (i = 0; i < n; i++)
		if (x[i] > max)
			max = x[i];
	for (i = 0; i < n; i++) {
		x[i] = expf(x[i] - max);
		sum += x[i];
	}
	if (sink != -INFINITY)
		sum += expf(sink - max);
	inv = (float)(1.0 / sum);
	for (i = 0; i < n; i++)
		x[i] *= inv;
}

float tp_silu(float x)
{
	return x / (1.0f + expf(-x));
}

void tp_swiglu(float *g, const float *u, int n)
{
	int i;

	for (i = 0; i < n; i++)
		g[i] = tp_silu(g[i]) * u[i];
}

void tp_swiglu_oai(float *g, const float *u, int n)
{
	const float alpha = 1.702f, limit = 7.0f;
	int i;

	for (i = 0; i < n; i++) {
		float x = g[i] < limit ? g[i] : limit;
		float y = u[i] < -limit ? -limit : u[i] > limit ? limit : u[i];

		g[i] = x / (1.0f + expf(alpha * -x)) * (y + 1.0f);
	}
}
