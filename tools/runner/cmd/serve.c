// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tprun serve: every rank loads its shard and connects as for one run;
 * rank 0 also serves HTTP (http.c), and then all ranks loop. Rank 0
 * takes the next job from the queue and sends it to the others over
 * the all-reduce itself (the followers add zeros, so the sum is rank 0's
 * message, bit for bit): a header (what to do, prompt length, max_tokens,
 * sampling parameters), the prompt's token ids, and before each decode
 * step a flag that says whether to go on (the client may have gone).
 * Every rank samples the same tokens, so all stop together at an end of
 * generation or at max_tokens. With no job, rank 0 sends an idle header
 * at least every second, within the followers' --timeout. One job at a
 * time; the rest wait in the queue.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "cmd/connect.h"
#include "cmd/http.h"
#include "cmd/job_queue.h"
#include "cmd/serve.h"
#include "comm/liveness.h"
#include "comm/rendezvous.h"
#include "comm/transport.h"
#include "gguf/gguf.h"
#include "model/arch/registry.h"
#include "text/sampler.h"
#include "text/tokenizer.h"

enum { H_CMD, H_LEN, H_MAX, H_TEMP, H_TOPP, H_SEED0, H_SEED1, H_SEED2, H_N };
enum { CMD_IDLE = 1, CMD_JOB };

struct srv {
	struct tp_opts *o;
	int me;
	struct tp_weights w;
	struct tp_tok tok;
	struct tp_ar ar, *arp;
	size_t chunk;		/* floats per message */
};

/* Rank 0's V (N floats) to every rank: the others add zeros. */
static int bcast(struct srv *S, float *v, size_t n)
{
	if (!S->arp)
		return 0;
	if (S->me)
		memset(v, 0, n * sizeof(float));
	return tp_allreduce(S->arp, v, n);
}

static int load_tok(struct srv *S)
{
	struct tp_opts *o = S->o;
	char err[600];
	struct gguf g;
	int r;

	if (!o->model) {
		r = tp_tok_synth(&S->tok, S->w.cfg.vocab, err, sizeof(err));
	} else if (gguf_open(&g, o->model, err, sizeof(err))) {
		r = -1;
	} else {
		r = tp_tok_load(&S->tok, &g, S->w.cfg.vocab, err, sizeof(err));
		gguf_close(&g);
		if (r > 0)
			snprintf(err, sizeof(err),
				 "%s has no tokenizer (tokenizer.ggml.model): tprun serve needs one",
				 o->model);
	}
	if (r)
		tp_err("%s", err);
	return r ? -1 : 0;
}

/*
 * One request on every rank (J: rank 0's job, NULL elsewhere). Returns
 * the finish reason ("stop", "length", NULL when cancelled) in *FINISH;
 * 0, or -1 when the transport failed.
 */
static int run(struct srv *S, struct tp_job *j, const int *prompt, int P,
	       int T, float temp, float top_p, uint64_t seed,
	       const char **finish)
{
	const struct tp_opts *o = S->o;
	int batch = o->batch < P ? o->batch : P, i, tok, n = 0, pos = P;
	struct tp_detok d = { 0 };
	struct tp_sampler s;
	struct tp_model m;
	char piece[4200];
	int ret = -1;
	float go;

	*finish = NULL;
	if (tp_model_init_cache(&m, &S->w, P + T, batch, 0, o->kv_type))
		return -1;
	tp_sampler_init(&s, S->w.cfg.vocab, temp, top_p, seed);
	if (S->arp)
		S->ar.phase = TP_PHASE_PREFILL;
	for (i = 0; i < P; i += batch)
		if (tp_forward(&m, prompt + i, P - i < batch ? P - i : batch, i,
			       S->arp))
			goto out;
	if (S->arp)
		S->ar.phase = TP_PHASE_DECODE;
	tok = tp_sample(&s, m.logits);
	for (;;) {
		if (tp_tok_is_eog(&S->tok, tok)) {
			*finish = "stop";
			break;
		}
		n++;
		if (j) {
			size_t k = tp_detok_push(&d, &S->tok, tok, piece,
						 sizeof(piece));

			tp_job_append(j, piece, k, n);
		}
		if (n == T) {
			*finish = "length";
			break;
		}
		go = j && !tp_job_cancelled(j);
		if (bcast(S, &go, 1))
			goto out;
		if (!go)
			break;
		if (o->slow_ms)
			usleep((useconds_t)o->slow_ms * 1000);
		if (tp_forward(&m, &tok, 1, pos++, S->arp))
			goto out;
		tok = tp_sample(&s, m.logits);
	}
	if (j)
		tp_job_append(j, piece, tp_detok_flush(&d, piece), n);
	ret = 0;
out:
	tp_sampler_free(&s);
	tp_model_free(&m);
	return ret;
}

/* A server runs for long: keep no per-call samples of the all-reduce. */
static void drop_stats(struct srv *S)
{
	if (!S->arp)
		return;
	tp_ar_stats_free(&S->ar.st[0]);
	tp_ar_stats_free(&S->ar.st[1]);
	memset(S->ar.st, 0, sizeof(S->ar.st));
}

/* The header and the prompt, to or from rank 0. */
static int xfer(struct srv *S, float *h, int **prompt)
{
	int P, i, k;
	size_t c;

	if (bcast(S, h, H_N))
		return -1;
	if (h[H_CMD] != CMD_JOB)
		return 0;
	P = (int)h[H_LEN];
	if (S->me)
		*prompt = tp_calloc((size_t)P, sizeof(int));
	for (i = 0; i < P; i += (int)c) {
		float *v;

		c = (size_t)(P - i) < S->chunk ? (size_t)(P - i) : S->chunk;
		v = tp_calloc(c, sizeof(float));
		for (k = 0; !S->me && k < (int)c; k++)
			v[k] = (float)(*prompt)[i + k];
		if (bcast(S, v, c)) {
			free(v);
			return -1;
		}
		for (k = 0; k < (int)c; k++)
			(*prompt)[i + k] = (int)v[k];
		free(v);
	}
	return 0;
}

static int loop(struct srv *S)
{
	int idle_ms = S->o->timeout_ms / 4 < 1000 ? S->o->timeout_ms / 4 : 1000;

	for (;;) {
		struct tp_job *j = NULL;
		float h[H_N] = { CMD_IDLE };
		const char *finish;
		int *prompt = NULL, r;
		uint64_t seed;

		if (!S->me) {
			j = tp_job_next(idle_ms);
			if (!j && !S->arp)
				continue;
		}
		if (j) {
			h[H_CMD] = CMD_JOB;
			h[H_LEN] = (float)j->nprompt;
			h[H_MAX] = (float)j->max_tokens;
			h[H_TEMP] = j->temperature;
			h[H_TOPP] = j->top_p;
			/* 21 bits each: exact in a float */
			h[H_SEED0] = (float)(j->seed & 0x1fffff);
			h[H_SEED1] = (float)(j->seed >> 21 & 0x1fffff);
			h[H_SEED2] = (float)(j->seed >> 42 & 0x1fffff);
			prompt = j->prompt;
		}
		if (xfer(S, h, &prompt))
			goto fail;
		drop_stats(S);
		if (h[H_CMD] != CMD_JOB)
			continue;
		seed = (uint64_t)h[H_SEED0] | (uint64_t)h[H_SEED1] << 21 |
		       (uint64_t)h[H_SEED2] << 42;
		r = run(S, j, prompt, (int)h[H_LEN], (int)h[H_MAX], h[H_TEMP],
			h[H_TOPP], seed, &finish);
		drop_stats(S);
		if (S->me)
			free(prompt);
		if (r) {
			if (j) {
				tp_job_end(j, NULL);
				tp_job_put(j);
			}
			goto fail;
		}
		if (j) {
			tp_info("job %llu: %d tokens, %s", j->id, j->ntok,
				finish ? finish : "cancelled");
			tp_job_end(j, finish);
			tp_job_put(j);
		}
	}
fail:
	return -1;
}

/* How long rank 0 answers 503 after it stopped, before it exits. */
#define STOP_GRACE_MS 5000

/*
 * Rank 0 stops serving: every request waiting or running, and every new
 * one, is answered 503 with WHY, for STOP_GRACE_MS (a client that
 * retries at once learns why, rather than finding the port closed);
 * then the process ends, and a supervisor restarts the job. The monitor
 * thread calls it when it finds a rank lost; the generation loop when
 * its all-reduce fails.
 */
static void stop_serving(const char *why)
{
	uint64_t end = tp_now_ns() + STOP_GRACE_MS * 1000000ull;
	char msg[700];

	snprintf(msg, sizeof(msg), "%s: tprun serve stops; restart the job",
		 why);
	tp_info("%s", msg);
	tp_job_fail_all(msg);
	tp_job_drain(STOP_GRACE_MS);
	while (tp_now_ns() < end)
		usleep(50000);
	tp_job_drain(500);	/* requests that came meanwhile */
}

int tp_serve_rank(struct tp_opts *o)
{
	struct tp_xport *xr = NULL, *xt = NULL;
	struct tp_http *http = NULL;
	struct tp_srv srv = { 0 };
	struct tp_rdv rdv;
	struct srv S = { .o = o, .me = o->rank };
	char err[400];
	const char *base;

	memset(&rdv, 0, sizeof(rdv));
	if ((o->model ? tp_weights_gguf(&S.w, o->model, o->rank, o->nranks,
					o->cfg.moe.split, err, sizeof(err)) :
	     tp_weights_synth(&S.w, o->arch, &o->cfg, o->seed, o->wtype,
			      o->rank, o->nranks, err, sizeof(err)))) {
		tp_err("%s", err);
		return TP_EXIT_FAIL;
	}
	if (load_tok(&S))
		return TP_EXIT_FAIL;
	S.chunk = (size_t)o->batch * (size_t)S.w.cfg.dim;
	if (S.chunk < H_N)
		S.chunk = H_N;
	if (o->nranks > 1) {
		if (tp_connect_ranks(o, tp_opts_hash(o, &S.w), S.chunk, &rdv,
				     &xr, &xt))
			goto abort;
		tp_ar_init(&S.ar, o->transport == TP_TR_RDMA ? xr : xt,
			   o->algo, (size_t)o->ring_min, S.chunk);
		S.ar.same_clock = o->local > 1;
		S.arp = &S.ar;
	}
	if (S.me == 0) {
		base = o->model ? strrchr(o->model, '/') : NULL;
		srv.tok = &S.tok;
		srv.model_name = o->model ? (base ? base + 1 : o->model) :
				 "synthetic";
		srv.ctx = o->ctx;
		srv.def_tokens = o->tokens;
		srv.def_temperature = o->temperature;
		srv.def_top_p = o->top_p;
		srv.def_seed = o->sample_seed;
		srv.def_think = o->reasoning_budget != 0;
		srv.def_split = o->reasoning_split;
		srv.created = (long)time(NULL);
		http = tp_http_start(o->http ? o->http : "127.0.0.1:8080", &srv,
				     err, sizeof(err));
		if (!http) {
			tp_err("%s", err);
			goto abort;
		}
	}
	if (S.me == 0)
		tp_mon_on_lost(stop_serving);
	loop(&S);
	if (S.me == 0) {
		struct tp_xport *x = o->transport == TP_TR_RDMA ? xr : xt;
		int p = x ? x->lost_peer : -1;
		char why[400];

		if (p >= 0)
			snprintf(why, sizeof(why),
				 "rank %d (%s) was lost: the all-reduce with it failed",
				 p, rdv.name[p]);
		else
			snprintf(why, sizeof(why), "the all-reduce failed");
		stop_serving(why);
	}
abort:
	tp_mon_abort(xr && xr->lost_peer >= 0 ? xr->lost_peer :
		     xt ? xt->lost_peer : -1);
	return TP_EXIT_FAIL;
}
