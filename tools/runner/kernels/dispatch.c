// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Which kernels run: the best instruction set the CPU reports (cpuid, via
 * __builtin_cpu_supports: a QEMU guest that emulates AVX2 but not AVX-512
 * gets AVX2), or a lower one forced by TPRUN_ISA=generic|avx2|avx512 for
 * tests and benchmarks. All ranks on one host pick the same.
 */
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "kernels/kernels.h"

static const char *const isa_names[TP_ISA_COUNT] = {
	[TP_ISA_GENERIC] = "generic",
	[TP_ISA_AVX2] = "avx2",
	[TP_ISA_AVX512] = "avx512",
};

const char *tp_isa_name(enum tp_isa isa)
{
	return isa < TP_ISA_COUNT ? isa_names[isa] : "?";
}

static int cpu_has(enum tp_isa isa)
{
#if defined(__x86_64__)
	__builtin_cpu_init();
	switch (isa) {
	case TP_ISA_GENERIC:
		return 1;
	case TP_ISA_AVX2:
		return __builtin_cpu_supports("avx2") &&
		       __builtin_cpu_supports("fma") &&
		       __builtin_cpu_supports("f16c");
	case TP_ISA_AVX512:
		return cpu_has(TP_ISA_AVX2) &&
		       __builtin_cpu_supports("avx512f") &&
		       __builtin_cpu_supports("avx512bw") &&
		       __builtin_cpu_supports("avx512vl") &&
		       __builtin_cpu_supports("avx512vnni") &&
		       __builtin_cpu_supports("bmi2");
	default:
		return 0;
	}
#else
	return isa == TP_ISA_GENERIC;
#endif
}

static struct tp_kernels tables[TP_ISA_COUNT];

const struct tp_kernels *tp_kernels_for(enum tp_isa isa)
{
	struct tp_kernels *k;

	if (isa >= TP_ISA_COUNT || !cpu_has(isa))
		return NULL;
	k = &tables[isa];
	if (!k->name) {
		/* each level on top of the one below */
		tp_kernels_fill_generic(k);
#if defined(__x86_64__)
		if (isa >= TP_ISA_AVX2)
			tp_kernels_fill_avx2(k);
		if (isa >= TP_ISA_AVX512)
			tp_kernels_fill_avx512(k);
#endif
		k->isa = isa;
		k->name = isa_names[isa];
	}
	return k;
}

const struct tp_kernels *tp_kernels(void)
{
	static const struct tp_kernels *chosen;
	const char *want = getenv("TPRUN_ISA");
	int i, top = TP_ISA_COUNT - 1;

	if (chosen)
		return chosen;
	for (i = 0; want && *want && i < TP_ISA_COUNT; i++)
		if (!strcmp(want, isa_names[i]))
			break;
	if (want && *want) {
		if (i == TP_ISA_COUNT)
			tp_die("TPRUN_ISA=%s: not one of generic, avx2, avx512",
			       want);
		top = i;
	}
	for (i = top; i >= 0 && !chosen; i--)
		chosen = tp_kernels_for((enum tp_isa)i);
	return chosen;
}
