// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What rank 0 prints: a table for people, or with --json one JSON object
 * (fields in runner.md). Throughput is rank 0's wall time: prefill tokens
 * over the prefill, generated tokens after the first over the decode
 * loop. All-reduce latency is the time spent inside each all-reduce call
 * (it includes waiting for the slowest rank); where the ranks share a
 * clock (--local), the p50 of each mesh call's two parts is shown too:
 * waiting for the last rank to enter the call, and the rest (transfer
 * and sum). Bytes are what this rank sent; every rank sends the same
 * amount.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "base/util.h"
#include "cmd/connect.h"
#include "cmd/run.h"
#include "kernels/kernels.h"
#include "text/utf8.h"

static double prefill_tps(const struct tp_opts *o, const struct tp_result *r)
{
	return r->prefill_s > 0 ? o->prompt_len / r->prefill_s : 0;
}

static double decode_tps(const struct tp_result *r)
{
	return r->decode_s > 0 && r->ntok > 1 ? (r->ntok - 1) / r->decode_s : 0;
}

/* Both phases together. */
static void all_stats(const struct tp_result *r, struct tp_ar_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->n = r->st[0].n + r->st[1].n;
	s->us = tp_calloc(s->n ? s->n : 1, sizeof(double));
	if (r->st[0].n)
		memcpy(s->us, r->st[0].us, r->st[0].n * sizeof(double));
	if (r->st[1].n)
		memcpy(s->us + r->st[0].n, r->st[1].us,
		       r->st[1].n * sizeof(double));
	s->calls = r->st[0].calls + r->st[1].calls;
	s->mesh = r->st[0].mesh + r->st[1].mesh;
	s->ring = r->st[0].ring + r->st[1].ring;
	s->bytes = r->st[0].bytes + r->st[1].bytes;
}

static double max_abs_diff(const struct tp_result *a, const struct tp_result *b)
{
	double m = 0;
	int i;

	for (i = 0; i < a->vocab; i++) {
		double d = fabs((double)a->logits[i] - b->logits[i]);

		if (!(d <= m))
			m = d;	/* NaN wins */
	}
	return m;
}

static int same_tokens(const struct tp_result *a, const struct tp_result *b)
{
	return a->ntok == b->ntok &&
	       !memcmp(a->tokens, b->tokens, (size_t)a->ntok * sizeof(int));
}

static uint64_t logits_checksum(const struct tp_result *r)
{
	uint64_t h = 0xcbf29ce484222325ull;
	int i;

	for (i = 0; i < r->vocab; i++) {
		uint32_t u;

		memcpy(&u, &r->logits[i], sizeof(u));
		h = (h ^ u) * 0x100000001b3ull;
	}
	return h;
}

static long long params(const struct tp_config *c)
{
	long long qd = (long long)c->heads * c->head_dim;
	long long kvd = (long long)c->kv_heads * c->head_dim;

	return 2LL * c->vocab * c->dim + c->dim +
	       (long long)c->layers * (2LL * c->dim + 2 * qd * c->dim +
				       2 * kvd * c->dim + 3LL * c->ffn * c->dim);
}

static void jnum(const char *key, double v, int last)
{
	if (isfinite(v))
		printf("  \"%s\": %.6g%s\n", key, v, last ? "" : ",");
	else
		printf("  \"%s\": null%s\n", key, last ? "" : ",");
}

static void jints(const char *key, const int *v, int n)
{
	int i;

	printf("  \"%s\": [", key);
	for (i = 0; i < n; i++)
		printf("%s%d", i ? ", " : "", v[i]);
	printf("],\n");
}

/* "KEY": S (N bytes) as a JSON string; bytes that are no UTF-8 become
 * U+FFFD */
static void jstr(const char *key, const char *s, size_t n)
{
	size_t i = 0;
	int l;

	printf("  \"%s\": \"", key);
	while (i < n) {
		uint32_t c = tp_utf8_get_strict(s + i, n - i, &l);

		if (c == '"' || c == '\\')
			printf("\\%c", (char)c);
		else if (c == '\n')
			printf("\\n");
		else if (c < 0x20 || c == 0x7f)
			printf("\\u%04x", c);
		else if (c == 0xfffd && l == 1)
			printf("\\ufffd");
		else
			fwrite(s + i, 1, (size_t)l, stdout);
		i += (size_t)l;
	}
	printf("\",\n");
}

/* "KEY": p50 of the samples, or null without any */
static void jp50(const char *key, const struct tp_samples *s)
{
	if (s->n)
		printf(", \"%s\": %.3f", key, tp_percentile(s->v, s->n, 50));
	else
		printf(", \"%s\": null", key);
}

static void jphase(const char *key, const struct tp_ar_stats *s)
{
	printf("  \"%s\": {\"allreduce_calls\": %llu, \"mesh\": %llu, \"ring\": %llu, "
	       "\"allreduce_p50_us\": %.3f, \"allreduce_p99_us\": %.3f, \"allreduce_bytes\": %llu",
	       key, (unsigned long long)s->calls, (unsigned long long)s->mesh,
	       (unsigned long long)s->ring, tp_percentile(s->us, s->n, 50),
	       tp_percentile(s->us, s->n, 99), (unsigned long long)s->bytes);
	jp50("peer_wait_p50_us", &s->late);
	jp50("transfer_p50_us", &s->xfer);
	printf("},\n");
}

static void jbaseline(const char *key, const struct tp_opts *o,
		      const struct tp_result *main, const struct tp_result *b)
{
	struct tp_ar_stats s;

	all_stats(b, &s);
	printf("  \"%s\": {\"ranks\": %d, \"transport\": \"%s\", "
	       "\"prefill_tokens_per_s\": %.6g, \"decode_tokens_per_s\": %.6g, "
	       "\"allreduce_p50_us\": %.3f, \"allreduce_p99_us\": %.3f, "
	       "\"decode_allreduce_p50_us\": %.3f",
	       key, b->nranks, b->transport, prefill_tps(o, b), decode_tps(b),
	       tp_percentile(s.us, s.n, 50), tp_percentile(s.us, s.n, 99),
	       tp_percentile(b->st[1].us, b->st[1].n, 50));
	jp50("decode_peer_wait_p50_us", &b->st[1].late);
	jp50("decode_transfer_p50_us", &b->st[1].xfer);
	printf(", \"tokens_match\": %s, \"logits_max_abs_diff\": %.6g},\n",
	       same_tokens(main, b) ? "true" : "false", max_abs_diff(main, b));
	free(s.us);
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : NAN;
}

/* What each rank holds: "rank_memory": [{...}, ...] and the largest. */
static void jmem(const struct tp_result *r)
{
	uint64_t wmax = 0, rmax = 0;
	double lmax = 0;
	int i;

	if (!r->mem)
		return;
	printf("  \"rank_memory\": [");
	for (i = 0; i < r->nranks; i++) {
		const struct tp_rank_mem *m = &r->mem[i];

		printf("%s{\"rank\": %d, \"weight_bytes\": %llu, \"peak_rss_bytes\": %llu, \"load_seconds\": %.6f, \"kv_cache_bytes\": %llu}",
		       i ? ",\n                  " : "", i,
		       (unsigned long long)m->weight_bytes,
		       (unsigned long long)m->peak_rss, m->load_s,
		       (unsigned long long)m->kv_bytes);
		wmax = m->weight_bytes > wmax ? m->weight_bytes : wmax;
		rmax = m->peak_rss > rmax ? m->peak_rss : rmax;
		lmax = m->load_s > lmax ? m->load_s : lmax;
	}
	printf("],\n");
	printf("  \"max_rank_weight_bytes\": %llu,\n", (unsigned long long)wmax);
	printf("  \"max_rank_peak_rss_bytes\": %llu,\n", (unsigned long long)rmax);
	printf("  \"load_seconds\": %.6f,\n", lmax);
}

/*
 * The links: which device carried each rank's messages to each peer, and
 * how many bytes ("device": null over TCP, or for a peer an RDMA run
 * reaches over IP only).
 */
static void jlinks(const struct tp_result *r)
{
	int i, p, n = 0;

	if (!r->mem || r->nranks < 2)
		return;
	printf("  \"links\": [");
	for (i = 0; i < r->nranks; i++)
		for (p = 0; p < r->nranks; p++) {
			const char *d = strcmp(r->transport, "rdma") ? NULL :
					tp_link_device(i, p);

			if (p == i)
				continue;
			printf("%s{\"rank\": %d, \"peer\": %d, \"device\": %s%s%s, \"bytes_sent\": %llu}",
			       n++ ? ",\n            " : "", i, p,
			       d && *d ? "\"" : "", d && *d ? d : "null",
			       d && *d ? "\"" : "",
			       (unsigned long long)r->mem[i].peer_bytes[p]);
		}
	printf("],\n");
}

static void json(const struct tp_opts *o, const struct tp_weights *w,
		 const int *prompt, const char *device,
		 const struct tp_result *r, const struct tp_result *tcp,
		 const struct tp_result *one)
{
	const struct tp_config *c = &w->cfg;
	struct tp_ar_stats all;
	int i;

	all_stats(r, &all);
	printf("{\n");
	printf("  \"ranks\": %d,\n", r->nranks);
	printf("  \"threads\": %d,\n", tp_pool_threads());
	printf("  \"kernels\": \"%s\",\n", tp_kernels()->name);
	printf("  \"transport\": \"%s\",\n", r->transport);
	printf("  \"device\": \"%s\",\n", device ? device : "");
	printf("  \"algorithm\": \"%s\",\n", tp_algo_name(o->algo));
	printf("  \"ring_min_bytes\": %ld,\n", o->ring_min);
	printf("  \"model\": {\"source\": \"");
	for (i = 0; w->source[i]; i++)
		printf(w->source[i] == '"' || w->source[i] == '\\' ? "\\%c" :
		       (unsigned char)w->source[i] < 32 ? "?" : "%c",
		       w->source[i]);
	printf("\", \"wtype\": \"%s\", \"dim\": %d, \"layers\": %d, \"heads\": %d, "
	       "\"kv_heads\": %d, \"head_dim\": %d, \"ffn\": %d, \"vocab\": %d, \"params\": %lld},\n",
	       tp_type_name(w->wtype), c->dim, c->layers, c->heads,
	       c->kv_heads, c->head_dim, c->ffn, c->vocab, params(c));
	printf("  \"temperature\": %g,\n", (double)o->temperature);
	printf("  \"kv_cache_type\": \"%s\",\n", tp_type_name(o->kv_type));
	jints("prompt_tokens", prompt, o->prompt_len);
	jints("tokens", r->tokens, r->ntok);
	if (r->text)
		jstr("text", r->text, r->text_len);
	jnum("prefill_tokens_per_s", prefill_tps(o, r), 0);
	jnum("decode_tokens_per_s", decode_tps(r), 0);
	jnum("prefill_seconds", r->prefill_s, 0);
	jnum("decode_seconds", r->decode_s, 0);
	printf("  \"allreduce_calls\": %llu,\n", (unsigned long long)all.calls);
	printf("  \"allreduce_mesh_calls\": %llu,\n", (unsigned long long)all.mesh);
	printf("  \"allreduce_ring_calls\": %llu,\n", (unsigned long long)all.ring);
	printf("  \"allreduce_p50_us\": %.3f,\n", tp_percentile(all.us, all.n, 50));
	printf("  \"allreduce_p99_us\": %.3f,\n", tp_percentile(all.us, all.n, 99));
	printf("  \"allreduce_bytes\": %llu,\n", (unsigned long long)all.bytes);
	printf("  \"allreduce_bytes_all_ranks\": %llu,\n",
	       (unsigned long long)all.bytes * (unsigned long long)r->nranks);
	jphase("prefill", &r->st[0]);
	jphase("decode", &r->st[1]);
	jmem(r);
	jlinks(r);
	if (one) {
		jbaseline("baseline_1rank", o, r, one);
		jnum("speedup_vs_1rank", ratio(decode_tps(r), decode_tps(one)), 0);
		jnum("prefill_speedup_vs_1rank",
		     ratio(prefill_tps(o, r), prefill_tps(o, one)), 0);
	}
	if (tcp) {
		jbaseline("baseline_tcp", o, r, tcp);
		jnum("speedup_vs_tcp", ratio(decode_tps(r), decode_tps(tcp)), 0);
		jnum("prefill_speedup_vs_tcp",
		     ratio(prefill_tps(o, r), prefill_tps(o, tcp)), 0);
	}
	printf("  \"logits_argmax\": %d,\n", r->tokens[r->ntok - 1]);
	printf("  \"logits_checksum\": \"%016llx\",\n",
	       (unsigned long long)logits_checksum(r));
	if (o->logits) {
		printf("  \"logits\": [");
		for (i = 0; i < r->vocab; i++)
			printf(isfinite(r->logits[i]) ? "%s%.9g" : "%snull",
			       i ? ", " : "", (double)r->logits[i]);
		printf("],\n");
	}
	printf("  \"ok\": true\n}\n");
	free(all.us);
}

static void fmt_bytes(char *b, size_t n, double v)
{
	const char *u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int i = 0;

	while (v >= 1024 && i < 4) {
		v /= 1024;
		i++;
	}
	snprintf(b, n, i ? "%.1f %s" : "%.0f %s", v, u[i]);
}

static void baseline_row(const char *name, const struct tp_opts *o,
			 const struct tp_result *r, const struct tp_result *b)
{
	printf("  %-14s %10.1f %9.2fx %10.1f %9.2fx   %-5s  %.3g\n", name,
	       decode_tps(b), ratio(decode_tps(r), decode_tps(b)),
	       prefill_tps(o, b), ratio(prefill_tps(o, r), prefill_tps(o, b)),
	       same_tokens(r, b) ? "yes" : "NO", max_abs_diff(r, b));
}

static void table(const struct tp_opts *o, const struct tp_weights *w,
		  const int *prompt, const char *device,
		  const struct tp_result *r, const struct tp_result *tcp,
		  const struct tp_result *one)
{
	const struct tp_config *c = &w->cfg;
	const struct tp_ar_stats *p = &r->st[0], *d = &r->st[1];
	char b1[32], b2[32], b3[32];
	int i;

	(void)prompt;
	if (r->nranks == 1)
		printf("tprun: 1 rank (no communication)\n");
	else
		printf("tprun: %d ranks, %s%s%s%s, all-reduce %s\n", r->nranks,
		       r->transport, device ? " (" : "", device ? device : "",
		       device ? ")" : "", tp_algo_name(o->algo));
	printf("model: %s, dim %d, %d layers, %d heads (%d kv, %d dims), ffn %d, vocab %d, %.2f M parameters\n",
	       w->source, c->dim, c->layers, c->heads, c->kv_heads,
	       c->head_dim, c->ffn, c->vocab, params(c) / 1e6);
	printf("compute: %d thread%s per rank, %s kernels\n", tp_pool_threads(),
	       tp_pool_threads() == 1 ? "" : "s", tp_kernels()->name);
	printf("prompt %d tokens, %d generated\n\n", o->prompt_len, r->ntok);
	printf("  %-22s %12s %12s\n", "", "prefill", "decode");
	printf("  %-22s %12.1f %12.1f\n", "tokens/s", prefill_tps(o, r),
	       decode_tps(r));
	printf("  %-22s %12.4f %12.4f\n", "seconds", r->prefill_s, r->decode_s);
	printf("  %-22s %12llu %12llu\n", "all-reduce calls",
	       (unsigned long long)p->calls, (unsigned long long)d->calls);
	printf("  %-22s %6llu/%-5llu %6llu/%-5llu\n", "  of them mesh/ring",
	       (unsigned long long)p->mesh, (unsigned long long)p->ring,
	       (unsigned long long)d->mesh, (unsigned long long)d->ring);
	printf("  %-22s %12.1f %12.1f\n", "all-reduce p50 (us)",
	       tp_percentile(p->us, p->n, 50), tp_percentile(d->us, d->n, 50));
	printf("  %-22s %12.1f %12.1f\n", "all-reduce p99 (us)",
	       tp_percentile(p->us, p->n, 99), tp_percentile(d->us, d->n, 99));
	if (d->late.n || p->late.n) {
		printf("  %-22s %12.1f %12.1f\n", "  waiting for peers",
		       tp_percentile(p->late.v, p->late.n, 50),
		       tp_percentile(d->late.v, d->late.n, 50));
		printf("  %-22s %12.1f %12.1f\n", "  transfer and sum",
		       tp_percentile(p->xfer.v, p->xfer.n, 50),
		       tp_percentile(d->xfer.v, d->xfer.n, 50));
	}
	fmt_bytes(b1, sizeof(b1), (double)p->bytes);
	fmt_bytes(b2, sizeof(b2), (double)d->bytes);
	printf("  %-22s %12s %12s\n", "bytes sent per rank", b1, b2);
	for (i = 0; r->mem && i < r->nranks; i++) {
		fmt_bytes(b1, sizeof(b1), (double)r->mem[i].weight_bytes);
		fmt_bytes(b2, sizeof(b2), (double)r->mem[i].peak_rss);
		fmt_bytes(b3, sizeof(b3), (double)r->mem[i].kv_bytes);
		printf("%s  rank %-3d weights %10s  peak RSS %10s  load %.3f s  KV cache %s %s\n",
		       i ? "" : "\n", i, b1, b2, r->mem[i].load_s, b3,
		       tp_type_name(o->kv_type));
	}
	for (i = 0; r->mem && r->nranks > 1 && i < r->nranks; i++) {
		int p;

		for (p = 0; p < r->nranks; p++) {
			const char *dv = strcmp(r->transport, "rdma") ? NULL :
					 tp_link_device(i, p);

			if (p == i)
				continue;
			fmt_bytes(b1, sizeof(b1),
				  (double)r->mem[i].peer_bytes[p]);
			printf("%s  rank %-3d -> rank %-3d %-16s %10s sent\n",
			       i || p > 1 ? "" : "\n", i, p,
			       !dv ? r->transport : *dv ? dv : "(IP only)", b1);
		}
	}
	if (one || tcp) {
		printf("\n  %-14s %10s %10s %10s %10s   %-5s  %s\n", "baseline",
		       "decode t/s", "speedup", "prefill", "speedup",
		       "same", "max |logit diff|");
		if (one)
			baseline_row("1 rank", o, r, one);
		if (tcp)
			baseline_row("tcp", o, r, tcp);
	}
	printf("\ntokens:");
	for (i = 0; i < r->ntok; i++)
		printf(" %d", r->tokens[i]);
	printf("\n");
}

void tp_report(const struct tp_opts *o, const struct tp_weights *w,
	       const int *prompt, const char *device,
	       const struct tp_result *main, const struct tp_result *tcp,
	       const struct tp_result *one)
{
	if (o->json)
		json(o, w, prompt, device, main, tcp, one);
	else if (main->text)	/* the text went to stdout already */
		fprintf(stderr, "tprun: %d prompt tokens, %d generated, %.1f tokens/s prefill, %.1f decode, %d rank%s over %s\n",
			o->prompt_len, main->ntok, prefill_tps(o, main),
			decode_tps(main), main->nranks,
			main->nranks > 1 ? "s" : "", main->transport);
	else
		table(o, w, prompt, device, main, tcp, one);
	fflush(stdout);
}
