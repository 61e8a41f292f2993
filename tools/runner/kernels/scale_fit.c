// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The scale and minimum fit of the K-quants with minimums (ggml's
 * make_qkx2_quants), which quant.c's Q4_K/Q5_K and kquant23.c's Q2_K
 * quantisers share; see qtypes.h.
 */
#include <math.h>
#include <string.h>

#include "kernels/qtypes.h"

/* The K-quants' error is squared, Q2_K's absolute (MAD). */
float tp_fit_scale_min(int n, int nmax, const float *x, const float *w,
		       uint8_t *L, float *neg_min, float rmin, float rdelta,
		       int nstep, int mad)
{
	float mn = x[0], mx = x[0], sum_w = w[0], sum_x = sum_w * x[0];
	float iscale, scale, best = 0;
	uint8_t aux[32];
	int i, is;

	for (i = 1; i < n; i++) {
		if (x[i] < mn)
			mn = x[i];
		if (x[i] > mx)
			mx = x[i];
		sum_w += w[i];
		sum_x += w[i] * x[i];
	}
	if (mn > 0)
		mn = 0;
	if (mx == mn) {
		memset(L, 0, (size_t)n);
		*neg_min = -mn;
		return 0;
	}
	iscale = (float)nmax / (mx - mn);
	scale = 1 / iscale;
	for (i = 0; i < n; i++) {
		float diff;

		L[i] = (uint8_t)tp_clampi(tp_nearest(iscale * (x[i] - mn)), 0, nmax);
		diff = scale * L[i] + mn - x[i];
		best += w[i] * (mad ? fabsf(diff) : diff * diff);
	}
	for (is = 0; is <= nstep; is++) {
		float sl = 0, sl2 = 0, sxl = 0, D;

		iscale = (rmin + rdelta * (float)is + (float)nmax) / (mx - mn);
		for (i = 0; i < n; i++) {
			int l = tp_clampi(tp_nearest(iscale * (x[i] - mn)), 0, nmax);

			aux[i] = (uint8_t)l;
			sl += w[i] * (float)l;
			sl2 += w[i] * (float)l * (float)l;
			sxl += w[i] * (float)l * x[i];
		}
		D = sum_w * sl2 - sl * sl;
		if (D > 0) {
			float this_scale = (sum_w * sxl - sum_x * sl) / D;
			float this_min = (sl2 * sum_x - sl * sxl) / D;
			float err = 0;

			if (this_min > 0) {
				this_min = 0;
				this_scale = sxl / sl2;
			}
			for (i = 0; i < n; i++) {
				float diff = this_scale * aux[i] + this_min - x[i];

				err += w[i] * (mad ? fabsf(diff) : diff * diff);
			}
			if (err < best) {
				memcpy(L, aux, (size_t)n);
				best = err;
				scale = this_scale;
				mn = this_min;
			}
		}
	}
	*neg_min = -mn;
	return scale;
}
