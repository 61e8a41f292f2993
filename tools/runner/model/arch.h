/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A model architecture, as a GGUF file's general.architecture names it:
 * one file in model/arch/ fills one of these tables, and
 * model/arch/registry.c lists them. An architecture owns
 *  - the hyperparameters it reads from the file's metadata, and checks;
 *  - the tensors of a layer, each rank reading its shard of them;
 *  - a layer's forward pass, made of the blocks of attention.h and ffn.h
 *    (or steps of them, with its own code between) or of its own;
 *  - optionally, synthetic weights and what --export-gguf writes.
 * What every architecture shares stays in model/: the token embedding,
 * the output norm and head, RoPE frequency factors (load_gguf.c,
 * vocab_ends.c), the plan of a rank's shard (shard.c), and the loop over
 * the layers (forward.c).
 */
#ifndef TPRUN_MODEL_ARCH_H
#define TPRUN_MODEL_ARCH_H

#include "model/model.h"

struct gguf_writer;
struct tp_export;
struct tp_gguf_load;
struct tp_synth;

struct tp_arch {
	const char *name;	/* general.architecture: "llama", "qwen2" */
	/*
	 * The configuration from the file's NAME.* metadata: 0, or -1 with
	 * the reason reported through L (tp_gguf_bad()).
	 */
	int (*read_config)(struct tp_gguf_load *L, struct tp_config *c);
	/* This rank's shard (L->w->sh) of layer I's tensors: 0, or -1. */
	int (*load_layer)(struct tp_gguf_load *L, struct tp_layer *y, int i);
	/*
	 * Layer I on N tokens at positions POS..POS+N-1 of the residual
	 * stream m->x: 0, or -1 (reported) when the all-reduce failed.
	 */
	int (*forward_layer)(struct tp_model *m, const struct tp_layer *y,
			     int i, int n, int pos, struct tp_ar *ar);
	/*
	 * Synthetic models, NULL where the architecture has none: this
	 * rank's shard of layer I; and for --export-gguf the NAME.* metadata
	 * and layer I's tensors, whole.
	 */
	void (*synth_layer)(struct tp_synth *s, struct tp_layer *y, int i);
	void (*export_config)(struct gguf_writer *gw,
			      const struct tp_config *c);
	void (*export_layer)(struct tp_export *e, int i);
};

#endif /* TPRUN_MODEL_ARCH_H */
