// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Which file implements which of the newer block types (qtypes.h). */
#include "kernels/qtypes.h"

const struct tp_qtype *tp_qtype(enum tp_type t)
{
	switch (t) {
	case TP_Q2_K: return &tp_qtype_q2_k;
	case TP_Q3_K: return &tp_qtype_q3_k;
	case TP_IQ4_NL: return &tp_qtype_iq4_nl;
	case TP_IQ4_XS: return &tp_qtype_iq4_xs;
	case TP_MXFP4: return &tp_qtype_mxfp4;
	case TP_IQ2_XXS: return &tp_qtype_iq2_xxs;
	case TP_IQ2_XS: return &tp_qtype_iq2_xs;
	case TP_IQ2_S: return &tp_qtype_iq2_s;
	case TP_IQ3_XXS: return &tp_qtype_iq3_xxs;
	case TP_IQ3_S: return &tp_qtype_iq3_s;
	case TP_IQ1_S: return &tp_qtype_iq1_s;
	case TP_IQ1_M: return &tp_qtype_iq1_m;
	default: return NULL;
	}
}
