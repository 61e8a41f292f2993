// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The table of architectures, by the name a GGUF file gives in
 * general.architecture, and the model's ways in, which pick one: a new
 * architecture is its file in this folder and a line in archs[].
 */
#include "model/arch/registry.h"
#include "model/export.h"
#include "model/load_gguf.h"
#include "model/synthetic.h"

/* In the order the refusal of another names them. */
static const struct tp_arch *const archs[] = {
	&tp_arch_llama,
	&tp_arch_qwen2,
};

int tp_weights_gguf(struct tp_weights *w, const char *path, int rank,
		    int nranks, char *err, size_t errlen)
{
	return tp_gguf_load_weights(w, path, rank, nranks, archs,
				    (int)(sizeof(archs) / sizeof(archs[0])),
				    err, errlen);
}

int tp_weights_synth(struct tp_weights *w, const struct tp_config *c,
		     uint64_t seed, enum tp_type type, int rank, int nranks,
		     char *err, size_t errlen)
{
	return tp_synth_weights(w, &tp_arch_llama, c, seed, type, rank, nranks,
				err, errlen);
}

int tp_export_gguf(const char *path, const struct tp_config *c, uint64_t seed,
		   enum tp_type type, int tied, char *err, size_t errlen)
{
	return tp_export_synthetic(path, &tp_arch_llama, c, seed, type, tied,
				   err, errlen);
}
