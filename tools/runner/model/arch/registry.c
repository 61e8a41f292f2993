// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The table of architectures, by the name a GGUF file gives in
 * general.architecture, and the model's ways in, which pick one: a new
 * architecture is its file in this folder and a line in archs[].
 */
#include <stdio.h>
#include <string.h>

#include "model/arch/registry.h"
#include "model/export.h"
#include "model/load_gguf.h"
#include "model/synthetic.h"

/* In the order the refusal of another names them. */
static const struct tp_arch *const archs[] = {
	&tp_arch_llama,
	&tp_arch_qwen2,
	&tp_arch_qwen3,
	&tp_arch_qwen3moe,
	&tp_arch_glm4moe,
	&tp_arch_deepseek2,
	&tp_arch_gpt_oss,
};

#define NARCHS ((int)(sizeof(archs) / sizeof(archs[0])))

const struct tp_arch *tp_arch_find(const char *name)
{
	int i;

	if (!name)
		return &tp_arch_llama;
	for (i = 0; i < NARCHS; i++)
		if (!strcmp(archs[i]->name, name))
			return archs[i];
	return NULL;
}

int tp_weights_gguf(struct tp_weights *w, const char *path, int rank,
		    int nranks, int expert_split, char *err, size_t errlen)
{
	return tp_gguf_load_weights(w, path, rank, nranks, expert_split, archs,
				    NARCHS, err, errlen);
}

/* ARCH by NAME, with a synthetic model; its numerics put into *C. */
static const struct tp_arch *synth_arch(const char *name,
					struct tp_config *c, char *err,
					size_t errlen)
{
	const struct tp_arch *a = tp_arch_find(name);
	const char *why;

	if (!a || !a->synth_layer) {
		snprintf(err, errlen, "architecture '%s' has no synthetic models (%s)",
			 name, "llama, qwen3, qwen3moe, glm4moe, deepseek2 and gpt-oss have");
		return NULL;
	}
	if (a->moe != (c->moe.experts > 0)) {
		snprintf(err, errlen, a->moe ?
			 "architecture %s needs experts (--experts N)" :
			 "architecture %s has no experts (--experts is for qwen3moe and glm4moe)",
			 a->name);
		return NULL;
	}
	if (a->synth_config && (why = a->synth_config(c))) {
		snprintf(err, errlen, "%s", why);
		return NULL;
	}
	return a;
}

int tp_weights_synth(struct tp_weights *w, const char *arch,
		     const struct tp_config *c, uint64_t seed,
		     enum tp_type type, int rank, int nranks, char *err,
		     size_t errlen)
{
	struct tp_config cc = *c;
	const struct tp_arch *a = synth_arch(arch, &cc, err, errlen);

	return a ? tp_synth_weights(w, a, &cc, seed, type, rank, nranks, err,
				    errlen) : -1;
}

int tp_synth_check_arch(const char *arch, const struct tp_config *c,
			enum tp_type type, int nranks, char *err,
			size_t errlen)
{
	struct tp_config cc = *c;
	struct tp_shard sh;

	return synth_arch(arch, &cc, err, errlen) ?
	       tp_synth_check(&cc, type, 0, nranks, &sh, err, errlen) : -1;
}

int tp_export_gguf(const char *path, const char *arch,
		   const struct tp_config *c, uint64_t seed, enum tp_type type,
		   int tied, char *err, size_t errlen)
{
	struct tp_config cc = *c;
	const struct tp_arch *a = synth_arch(arch, &cc, err, errlen);

	return a ? tp_export_synthetic(path, a, &cc, seed, type, tied, err,
				       errlen) : -1;
}
