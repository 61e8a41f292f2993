// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tprun's default command, on one rank: load its shard, connect to the
 * others, generate, (optionally) run the baselines, say bye, report
 * (rank 0).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/rng.h"
#include "base/util.h"
#include "cmd/connect.h"
#include "cmd/run.h"
#include "comm/liveness.h"
#include "comm/rendezvous.h"
#include "comm/transport.h"
#include "gguf/gguf.h"
#include "model/arch/registry.h"
#include "text/chat_template.h"
#include "text/sampler.h"
#include "text/tokenizer.h"

static int load(const struct tp_opts *o, int rank, int nranks,
		struct tp_weights *w)
{
	uint64_t t0 = tp_now_ns();
	char err[600];
	int r;

	if (o->model)
		r = tp_weights_gguf(w, o->model, rank, nranks,
				    o->cfg.moe.split, err, sizeof(err));
	else
		r = tp_weights_synth(w, o->arch, &o->cfg, o->seed, o->wtype,
				     rank, nranks, err, sizeof(err));
	if (r)
		tp_err("%s", err);
	else
		w->load_s = (double)(tp_now_ns() - t0) / 1e9;
	return r;
}

/*
 * --prompt: the model's tokenizer (the file's, or the synthetic one) and
 * the prompt's ids in o->prompt. 0, or -1 (reported).
 */
static int text_prompt(struct tp_opts *o, const struct tp_weights *w,
		       struct tp_tok *tok)
{
	char err[600];
	struct gguf g;
	int r;

	if (o->model) {
		if (gguf_open(&g, o->model, err, sizeof(err))) {
			tp_err("%s", err);
			return -1;
		}
		r = tp_tok_load(tok, &g, w->cfg.vocab, err, sizeof(err));
		gguf_close(&g);
		if (r > 0)
			snprintf(err, sizeof(err),
				 "%s has no tokenizer (tokenizer.ggml.model): give the prompt as --prompt-ids",
				 o->model);
		if (r) {
			tp_err("%s%s%s", r < 0 ? o->model : "", r < 0 ? ": " : "",
			       err);
			return -1;
		}
	} else if (tp_tok_synth(tok, w->cfg.vocab, err, sizeof(err))) {
		tp_err("%s", err);
		return -1;
	}
	if (o->chat) {
		struct tp_chat_msg m[2] = {
			{ "system", o->system_text }, { "user", o->prompt_text },
		};
		int sys = !!o->system_text;

		o->prompt_len = tp_chat_encode_flags(tok, m + !sys, 1 + sys,
						     o->reasoning_budget ? 0 :
						     TP_CHAT_NO_THINK, NULL,
						     &o->prompt, err,
						     sizeof(err));
		if (o->prompt_len < 0) {
			tp_err("--chat: %s", err);
			tp_tok_free(tok);
			return -1;
		}
	} else {
		o->prompt_len = tp_tok_encode(tok, o->prompt_text,
					      strlen(o->prompt_text),
					      TP_ENC_BOS, &o->prompt);
	}
	if (!o->prompt_len) {
		tp_err("%s", "the prompt is empty (no tokens)");
		return -1;
	}
	return 0;
}

static int *make_prompt(const struct tp_opts *o, int vocab)
{
	int *p = tp_calloc((size_t)o->prompt_len, sizeof(int)), i;

	for (i = 0; i < o->prompt_len; i++) {
		p[i] = o->prompt ? o->prompt[i] :
		       (int)(tp_hash4(o->seed, 0x70726f6d7074ull, (uint64_t)i,
				      0) % (uint64_t)vocab);
		if (p[i] >= vocab) {
			tp_err("prompt token %d is outside the vocabulary (%d)",
			       p[i], vocab);
			free(p);
			return NULL;
		}
	}
	return p;
}

/* Text out: streamed to stdout by rank 0 (STREAM), kept for --json. */
struct text_out {
	const struct tp_tok *tok;
	int stream;
	struct tp_detok d;
	char *buf;
	size_t len, cap;
};

static void text_add(struct text_out *t, const char *s, size_t n)
{
	if (t->stream) {
		fwrite(s, 1, n, stdout);
		fflush(stdout);
	}
	if (t->len + n + 1 > t->cap) {
		t->cap = 2 * (t->len + n + 1);
		t->buf = realloc(t->buf, t->cap);
		if (!t->buf)
			tp_die("out of memory");
	}
	memcpy(t->buf + t->len, s, n);
	t->len += n;
	t->buf[t->len] = 0;
}

/* Token ID was generated: its text, and whether generation ends. */
static int text_token(struct text_out *t, int id)
{
	char piece[4200];
	size_t n;

	if (!t->tok)
		return 0;
	if (tp_tok_is_eog(t->tok, id))
		return 1;
	n = tp_detok_push(&t->d, t->tok, id, piece, sizeof(piece));
	text_add(t, piece, n);
	return 0;
}

static void text_end(struct text_out *t, struct tp_result *res)
{
	char rest[8];

	if (!t->tok)
		return;
	text_add(t, rest, tp_detok_flush(&t->d, rest));
	if (t->stream)
		fputc('\n', stdout);
	fflush(stdout);
	res->text = t->buf ? t->buf : tp_calloc(1, 1);
	res->text_len = t->len;
	t->buf = NULL;
}

static int generate(const struct tp_opts *o, const struct tp_weights *w,
		    struct tp_xport *x, const int *prompt,
		    const struct tp_tok *tk, int stream, struct tp_result *res)
{
	struct text_out txt = { .tok = tk, .stream = stream };
	int P = o->prompt_len, T = o->tokens, k, i, tok, ret = -1;
	int batch = o->batch < P ? o->batch : P;
	struct tp_model m;
	struct tp_ar ar, *arp = NULL;
	struct tp_sampler s;
	uint64_t t0, t1, t2;

	memset(res, 0, sizeof(*res));
	res->transport = x ? x->name : "none";
	res->nranks = w->sh.nranks;
	res->vocab = w->cfg.vocab;
	res->tokens = tp_calloc((size_t)T, sizeof(int));
	res->logits = tp_calloc((size_t)w->cfg.vocab, sizeof(float));
	if (tp_model_init_cache(&m, w, P + T, batch, 0, o->kv_type))
		return -1;
	tp_sampler_init(&s, w->cfg.vocab, o->temperature, o->top_p,
			o->sample_seed);
	if (x) {
		/* one tp_ar per transport: their message counters go together */
		tp_ar_init(&ar, x, o->algo, (size_t)o->ring_min,
			   (size_t)batch * w->cfg.dim);
		ar.same_clock = o->local > 1;
		arp = &ar;
	}
	tp_info("%s: prefill of %d tokens", res->transport, P);
	t0 = tp_now_ns();
	for (i = 0; i < P; i += batch)
		if (tp_forward(&m, prompt + i, P - i < batch ? P - i : batch, i,
			       arp))
			goto out;
	t1 = tp_now_ns();
	tok = tp_sample(&s, m.logits);
	res->tokens[0] = tok;
	if (arp)
		ar.phase = TP_PHASE_DECODE;
	tp_info("%s: decoding %d tokens", res->transport, T);
	/* every rank draws the same tokens, so all stop at the same EOS */
	for (k = 1; k < T && !text_token(&txt, tok); k++) {
		if (tp_forward(&m, &tok, 1, P + k - 1, arp))
			goto out;
		tok = tp_sample(&s, m.logits);
		res->tokens[k] = tok;
		if (o->slow_ms)
			usleep((useconds_t)o->slow_ms * 1000);
	}
	if (k == T)
		text_token(&txt, tok);
	t2 = tp_now_ns();
	tp_info("%s: done", res->transport);
	res->mem = tp_calloc((size_t)res->nranks, sizeof(*res->mem));
	if (tp_gather_memory(arp, w, m.kv_bytes, res->mem))
		goto out;
	memcpy(res->logits, m.logits, (size_t)w->cfg.vocab * sizeof(float));
	res->ntok = k;
	text_end(&txt, res);
	res->prefill_s = (double)(t1 - t0) / 1e9;
	res->decode_s = (double)(t2 - t1) / 1e9;
	if (arp) {
		/* the samples move to the result */
		res->st[0] = ar.st[0];
		res->st[1] = ar.st[1];
		memset(ar.st, 0, sizeof(ar.st));
	}
	ret = 0;
out:
	free(txt.buf);
	if (arp)
		tp_ar_free(arp);
	tp_sampler_free(&s);
	tp_model_free(&m);
	return ret;
}

static void result_free(struct tp_result *r)
{
	free(r->tokens);
	free(r->text);
	free(r->logits);
	free(r->mem);
	tp_ar_stats_free(&r->st[0]);
	tp_ar_stats_free(&r->st[1]);
	memset(r, 0, sizeof(*r));
}

static uint64_t token_hash(const struct tp_result *r)
{
	uint64_t h = 0x746f6b656e73ull;
	int i;

	for (i = 0; i < r->ntok; i++)
		h = tp_mix64(h ^ (uint64_t)(uint32_t)r->tokens[i]);
	return h;
}

/* The rank a transport's failure was about, or -1. */
static int lost_peer(const struct tp_xport *a, const struct tp_xport *b)
{
	if (a && a->lost_peer >= 0)
		return a->lost_peer;
	return b ? b->lost_peer : -1;
}

int tp_run_rank(struct tp_opts *o)
{
	struct tp_result res = { 0 }, tcp = { 0 }, one = { 0 };
	struct tp_xport *xr = NULL, *xt = NULL;
	struct tp_weights w, w1;
	struct tp_rdv rdv;
	int N = o->nranks, me = o->rank;
	int *prompt = NULL, ret = TP_EXIT_FAIL, multi = N > 1;
	int have_w1 = 0, batch, stream;
	struct tp_tok tok, *tokp = NULL;

	memset(&rdv, 0, sizeof(rdv));
	if (load(o, me, N, &w))
		return TP_EXIT_FAIL;
	tp_info("loaded %.1f MiB of weights in %.3f s", w.owned_bytes / 1048576.0,
		w.load_s);
	if (o->prompt_text) {
		if (text_prompt(o, &w, &tok)) {
			tp_weights_free(&w);
			return TP_EXIT_FAIL;
		}
		tokp = &tok;
	}
	batch = o->batch < o->prompt_len ? o->batch : o->prompt_len;
	stream = tokp && !o->json && me == 0;
	prompt = make_prompt(o, w.cfg.vocab);
	if (!prompt)
		goto out;
	tp_info("model %s: dim %d, %d layers, heads %d..%d, kv heads %d..%d, ffn %d..%d of %d",
		w.source, w.cfg.dim, w.cfg.layers, w.sh.q0, w.sh.q1 - 1,
		w.sh.kv0, w.sh.kv1 - 1, w.sh.f0, w.sh.f1 - 1, w.cfg.ffn);
	/* an all-reduce sums one batch of activations */
	if (multi && tp_connect_ranks(o, tp_opts_hash(o, &w),
				      (size_t)batch * w.cfg.dim, &rdv, &xr,
				      &xt))
		goto abort;
	if (generate(o, &w, multi ? (o->transport == TP_TR_RDMA ? xr : xt) :
		     NULL, prompt, tokp, stream, &res))
		goto abort;
	if (multi && o->compare && o->transport == TP_TR_RDMA &&
	    generate(o, &w, xt, prompt, tokp, 0, &tcp))
		goto abort;
	if (multi && tp_mon_finish(token_hash(&res),
				   o->timeout_ms + 10000))
		goto abort;
	if (multi && o->compare && me == 0) {
		if (load(o, 0, 1, &w1))
			goto out;
		have_w1 = 1;
		if (generate(o, &w1, NULL, prompt, tokp, 0, &one))
			goto out;
	}
	if (me == 0)
		tp_report(o, &w, prompt, xr ? tp_rdma_describe(xr) : NULL, &res,
			  tcp.tokens ? &tcp : NULL, one.tokens ? &one : NULL);
	ret = 0;
	goto out;
abort:
	/*
	 * Tell the peers (naming the rank the data path lost, if it did),
	 * and leave the rest to exit(): the monitor thread still watches
	 * the control connections, closing them under it would only add
	 * confusing messages.
	 */
	tp_mon_abort(lost_peer(xr, xt));
	return TP_EXIT_FAIL;
out:
	tp_disconnect_ranks(&rdv, xr, xt);
	result_free(&res);
	result_free(&tcp);
	result_free(&one);
	if (have_w1)
		tp_weights_free(&w1);
	tp_weights_free(&w);
	if (tokp)
		tp_tok_free(tokp);
	free(prompt);
	return ret;
}
