// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tprun's command line; see the usage text below and runner.md. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "cmd/opts.h"

static const char usage[] =
"usage: tprun [options]\n"
"       tprun serve [options]   OpenAI-compatible HTTP server (rank 0)\n"
"Tensor-parallel inference of a Llama-family model over RDMA verbs.\n"
"\n"
"Launch (one of):\n"
"  --local N                run N ranks on this machine (one process each)\n"
"  --rank R --peers H:P,... be rank R of a run over several hosts; entry R\n"
"                           of --peers is this rank's own listening port\n"
"  --rendezvous HOST:PORT   meet the other ranks there (rank 0 listens on it);\n"
"                           rank and world size from mpirun or srun (or\n"
"                           MASTER_ADDR/MASTER_PORT for the address), or\n"
"    --rank R --world N     given by hand\n"
"  (none)                   one rank, no communication\n"
"  --listen ADDR            address to listen on (default: all)\n"
"  -d, --devices DEV[,DEV]  RDMA device(s); rank i (the local rank under a\n"
"                           launcher) uses the i-th, or the only one, for\n"
"                           every peer. Default: for each peer the device on\n"
"                           the route to it (a cable each), none (IP only)\n"
"                           when the route has a gateway\n"
"  -d [R:]P=DEV,...         per peer: rank P over DEV (\"none\": over IP\n"
"                           only); R: for rank R only; peers left out: default\n"
"  --ib-port N              device port (1)\n"
"  --gid-index N            GID index (default: the IPv4-mapped GID)\n"
"  --transport rdma|tcp     all-reduce transport (rdma)\n"
"\n"
"Model (one of):\n"
"  --synthetic              seeded random weights of the shape below (default)\n"
"    --seed S --dim D --layers L --heads H --kv-heads K --ffn F --vocab V\n"
"    --head-dim N --wtype T --rope-base B --eps E --rope-dim R\n"
"                           (T: f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 q4_k\n"
"                           q5_k q6_k q2_k q3_k iq4_nl iq4_xs mxfp4 iq1_s\n"
"                           iq1_m iq2_xxs iq2_xs iq2_s iq3_xxs iq3_s)\n"
"    --arch llama|qwen3|qwen3moe|glm4moe|deepseek2|gpt-oss  the architecture\n"
"    --experts N --experts-used K --expert-ffn F   MoE (qwen3moe, glm4moe:\n"
"                           64, 8, dim)\n"
"    --shared-experts S --dense-layers L --nextn-layers X   glm4moe (1, 1, 1)\n"
"    --expert-groups G --expert-groups-used H   group-limited routing\n"
"    --q-lora R --kv-lora R --v-head-dim N   deepseek2's latent attention\n"
"                           (0: plain attn_q; 4 x nope; nope = head-dim -\n"
"                           rope-dim, rope-dim head-dim / 2)\n"
"    --sliding-window W     gpt-oss: the window of alternate layers (128)\n"
"  --model FILE.gguf        GGUF file: llama, qwen2, qwen3, qwen3moe, glm4moe,\n"
"                           deepseek2, gpt-oss,\n"
"                           tensors in those types\n"
"  --expert-split auto|width|experts  how the ranks share the experts (auto)\n"
"  --export-gguf FILE       write the synthetic model as GGUF and exit\n"
"    --tied                 ... without output.weight (tied embeddings)\n"
"\n"
"Generation:\n"
"  --tokens T               tokens to generate (16)\n"
"  --prompt-len P           random prompt of P tokens from the seed (8)\n"
"  --prompt-ids A,B,...     the prompt as token ids\n"
"  --prompt TEXT            the prompt as text (the model's tokenizer; BOS as\n"
"                           the file asks); the answer is printed as text and\n"
"                           generation stops at EOS\n"
"  --chat                   put --prompt in the model's chat template\n"
"                           (llama2, llama3, chatml, zephyr, qwen3, glm4.5,\n"
"                           harmony, deepseek3, kimi-k2 families)\n"
"  --system TEXT            with --chat: the system message\n"
"  --reasoning-budget 0     models that think first (Qwen3, GLM-4.5): don't\n"
"                           (the templates' enable_thinking = false; -1 lets them)\n"
"  --temperature X          0 = greedy (default); else sample\n"
"  --top-p P                nucleus sampling mass (0.9)\n"
"  --sample-seed S          sampling seed (default: --seed)\n"
"  --batch B                prefill tokens per forward pass (64)\n"
"  --threads N              compute threads per rank (default: online CPUs\n"
"                           over the ranks started on this machine)\n"
"  --cache-type f32|f16     the KV cache's values (f32): f16 halves its bytes\n"
"                           (llama.cpp's default, its -ctk f16 -ctv f16)\n"
"\n"
"All-reduce:\n"
"  --algorithm auto|mesh|ring  (auto: mesh below --ring-min bytes or N <= 2)\n"
"  --ring-min BYTES         (32768)\n"
"  --spin-us N              RDMA: busy-poll before sleeping (auto)\n"
"  --tcp-spin-us N          TCP: spin on non-blocking sockets before poll() (0)\n"
"  --timeout SECS           longest wait for one message (60)\n"
"  --peer-timeout SECS      a silent rank counts as dead after (4)\n"
"  --connect-timeout SECS   rendezvous (60)\n"
"\n"
"All-reduce benchmark (no model; needs --local N >= 2 or --peers):\n"
"  --bench-allreduce        time barrier-separated all-reduces, every sum checked\n"
"  --sizes B,B,...          message sizes in bytes, multiples of 4\n"
"                           (256,4096,16384,65536,1048576)\n"
"  --iters K                timed iterations per size (200)\n"
"  --warmup W               untimed iterations first (K/10, at least 2)\n"
"\n"
"Server (tprun serve; --tokens is the default max_tokens):\n"
"  --http ADDR:PORT         where rank 0 listens (127.0.0.1:8080)\n"
"  --ctx N                  prompt + answer tokens per request (2048)\n"
"  --reasoning-format auto|none  a thinking model's <think> block: to\n"
"                           reasoning_content (auto), or left in the content\n"
"\n"
"Output:\n"
"  --json                   one JSON object instead of the table\n"
"  --logits                 include the final logits in the JSON\n"
"  --compare                also run the 1-rank and TCP baselines: speedups\n"
"  -v, --verbose            progress on stderr\n";

static _Noreturn void bad(const char *fmt, const char *arg)
{
	fprintf(stderr, "tprun: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n(tprun --help for usage)\n");
	exit(TP_EXIT_USAGE);
}

static long num(const char *s, long lo, long hi, const char *what)
{
	char *end;
	long v = strtol(s, &end, 0);
	char msg[160];

	if (!*s || *end || v < lo || v > hi) {
		snprintf(msg, sizeof(msg), "%%s: %s must be an integer in %ld..%ld",
			 what, lo, hi);
		bad(msg, s);
	}
	return v;
}

static double fnum(const char *s, double lo, double hi, const char *what)
{
	char *end;
	double v = strtod(s, &end);
	char msg[160];

	if (!*s || *end || !(v >= lo && v <= hi)) {
		snprintf(msg, sizeof(msg), "%%s: %s must be a number in %g..%g",
			 what, lo, hi);
		bad(msg, s);
	}
	return v;
}

static size_t *parse_sizes(const char *s, int *n)
{
	size_t *v = tp_calloc(strlen(s) / 2 + 1, sizeof(size_t));
	const char *p = s;

	*n = 0;
	while (*p) {
		char *end;
		long long b = strtoll(p, &end, 10);

		if (end == p || b <= 0 || b % 4 || b > (1ll << 30) ||
		    (*end && *end != ','))
			bad("bad --sizes '%s' (comma-separated byte counts, multiples of 4, at most 1 GiB)",
			    s);
		v[(*n)++] = (size_t)b;
		p = *end ? end + 1 : end;
	}
	if (!*n)
		bad("empty --sizes '%s'", s);
	return v;
}

static enum tp_type parse_type(const char *s)
{
	static const enum tp_type all[] = {
		TP_F32, TP_F16, TP_BF16, TP_Q8_0, TP_Q4_0, TP_Q4_1, TP_Q5_0,
		TP_Q5_1, TP_Q4_K, TP_Q5_K, TP_Q6_K, TP_Q2_K, TP_Q3_K,
		TP_IQ4_NL, TP_IQ4_XS, TP_MXFP4, TP_IQ1_S, TP_IQ1_M, TP_IQ2_XXS,
		TP_IQ2_XS, TP_IQ2_S, TP_IQ3_XXS, TP_IQ3_S,
	};
	size_t i;

	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcmp(s, tp_type_name(all[i])))
			return all[i];
	bad("unknown weight type '%s' (" TP_TYPE_NAMES ")", s);
}

static int *parse_ids(const char *s, int *n)
{
	int cap = 16, *v = tp_calloc((size_t)cap, sizeof(int));
	const char *p = s;

	*n = 0;
	while (*p) {
		char *end;
		long t = strtol(p, &end, 10);

		if (end == p || t < 0 || t > INT_MAX || (*end && *end != ','))
			bad("bad --prompt-ids '%s' (comma-separated token ids)", s);
		if (*n == cap) {
			cap *= 2;
			v = realloc(v, (size_t)cap * sizeof(int));
			if (!v)
				tp_die("out of memory");
		}
		v[(*n)++] = (int)t;
		p = *end ? end + 1 : end;
	}
	if (!*n)
		bad("empty --prompt-ids '%s'", s);
	return v;
}

enum {
	O_LOCAL = 256, O_RANK, O_PEERS, O_LISTEN, O_IBPORT, O_GID, O_TRANSPORT,
	O_SYNTH, O_MODEL, O_SEED, O_DIM, O_LAYERS, O_HEADS, O_KVHEADS, O_FFN,
	O_VOCAB, O_HEADDIM, O_WTYPE, O_ROPE, O_EPS, O_EXPORT, O_TIED, O_TOKENS,
	O_PLEN, O_PIDS, O_TEMP, O_TOPP, O_SSEED, O_BATCH, O_THREADS, O_ALGO, O_RINGMIN,
	O_SPIN, O_TIMEOUT, O_PTIMEOUT, O_CTIMEOUT, O_JSON, O_LOGITS, O_COMPARE,
	O_SLOW, O_TCPSPIN, O_BENCH, O_SIZES, O_ITERS, O_WARMUP, O_PTEXT,
	O_CHAT, O_SYSTEM, O_HTTP, O_CTX, O_RENDEZVOUS, O_WORLD, O_ARCH,
	O_EXPERTS, O_EXPUSED, O_EXPFFN, O_SHARED, O_DENSE, O_NEXTN, O_ROTDIM,
	O_EXPSPLIT, O_RBUDGET, O_RFORMAT, O_QLORA, O_KVLORA, O_VDIM,
	O_GROUPS, O_GROUPSUSED, O_SWA, O_CACHETYPE,
};

static const struct option longopts[] = {
	{ "local", 1, NULL, O_LOCAL }, { "rank", 1, NULL, O_RANK },
	{ "peers", 1, NULL, O_PEERS }, { "listen", 1, NULL, O_LISTEN },
	{ "rendezvous", 1, NULL, O_RENDEZVOUS }, { "world", 1, NULL, O_WORLD },
	{ "devices", 1, NULL, 'd' }, { "device", 1, NULL, 'd' },
	{ "ib-port", 1, NULL, O_IBPORT }, { "gid-index", 1, NULL, O_GID },
	{ "transport", 1, NULL, O_TRANSPORT },
	{ "synthetic", 0, NULL, O_SYNTH }, { "model", 1, NULL, O_MODEL },
	{ "seed", 1, NULL, O_SEED }, { "dim", 1, NULL, O_DIM },
	{ "layers", 1, NULL, O_LAYERS }, { "heads", 1, NULL, O_HEADS },
	{ "kv-heads", 1, NULL, O_KVHEADS }, { "ffn", 1, NULL, O_FFN },
	{ "vocab", 1, NULL, O_VOCAB }, { "head-dim", 1, NULL, O_HEADDIM },
	{ "wtype", 1, NULL, O_WTYPE }, { "rope-base", 1, NULL, O_ROPE },
	{ "eps", 1, NULL, O_EPS }, { "export-gguf", 1, NULL, O_EXPORT },
	{ "tied", 0, NULL, O_TIED }, { "tokens", 1, NULL, O_TOKENS },
	{ "prompt-len", 1, NULL, O_PLEN }, { "prompt-ids", 1, NULL, O_PIDS },
	{ "prompt", 1, NULL, O_PTEXT }, { "chat", 0, NULL, O_CHAT },
	{ "system", 1, NULL, O_SYSTEM }, { "http", 1, NULL, O_HTTP },
	{ "ctx", 1, NULL, O_CTX },
	{ "temperature", 1, NULL, O_TEMP }, { "top-p", 1, NULL, O_TOPP },
	{ "sample-seed", 1, NULL, O_SSEED }, { "batch", 1, NULL, O_BATCH },
	{ "threads", 1, NULL, O_THREADS },
	{ "cache-type", 1, NULL, O_CACHETYPE },
	{ "algorithm", 1, NULL, O_ALGO }, { "ring-min", 1, NULL, O_RINGMIN },
	{ "spin-us", 1, NULL, O_SPIN }, { "timeout", 1, NULL, O_TIMEOUT },
	{ "peer-timeout", 1, NULL, O_PTIMEOUT },
	{ "connect-timeout", 1, NULL, O_CTIMEOUT },
	{ "json", 0, NULL, O_JSON }, { "logits", 0, NULL, O_LOGITS },
	{ "compare", 0, NULL, O_COMPARE }, { "slow-ms", 1, NULL, O_SLOW },
	{ "tcp-spin-us", 1, NULL, O_TCPSPIN },
	{ "bench-allreduce", 0, NULL, O_BENCH }, { "sizes", 1, NULL, O_SIZES },
	{ "iters", 1, NULL, O_ITERS }, { "warmup", 1, NULL, O_WARMUP },
	{ "arch", 1, NULL, O_ARCH }, { "experts", 1, NULL, O_EXPERTS },
	{ "experts-used", 1, NULL, O_EXPUSED },
	{ "expert-ffn", 1, NULL, O_EXPFFN },
	{ "shared-experts", 1, NULL, O_SHARED },
	{ "dense-layers", 1, NULL, O_DENSE },
	{ "nextn-layers", 1, NULL, O_NEXTN }, { "rope-dim", 1, NULL, O_ROTDIM },
	{ "expert-split", 1, NULL, O_EXPSPLIT },
	{ "q-lora", 1, NULL, O_QLORA }, { "kv-lora", 1, NULL, O_KVLORA },
	{ "v-head-dim", 1, NULL, O_VDIM },
	{ "expert-groups", 1, NULL, O_GROUPS },
	{ "expert-groups-used", 1, NULL, O_GROUPSUSED },
	{ "sliding-window", 1, NULL, O_SWA },
	{ "reasoning-budget", 1, NULL, O_RBUDGET },
	{ "reasoning-format", 1, NULL, O_RFORMAT },
	{ "verbose", 0, NULL, 'v' }, { "help", 0, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/*
 * --rendezvous (or MASTER_ADDR and MASTER_PORT, as torchrun sets them):
 * the rank and world size come from --rank/--world or the launcher.
 */
static void launcher_opts(struct tp_opts *o)
{
	const char *ma = getenv("MASTER_ADDR"), *mp = getenv("MASTER_PORT");
	int from_env = 0;

	if (!o->rendezvous && !o->local && !o->peers && o->rank < 0 && ma &&
	    *ma && mp && *mp) {
		size_t len = strlen(ma) + strlen(mp) + 4;

		o->rendezvous = tp_calloc(len, 1);
		snprintf(o->rendezvous, len, strchr(ma, ':') ? "[%s]:%s" :
			 "%s:%s", ma, mp);
		from_env = 1;
	}
	if (tp_opts_launcher_env(o))
		exit(TP_EXIT_USAGE);
	if (!o->rendezvous)
		return;
	if (o->rank < 0) {
		if (from_env) {	/* MASTER_ADDR alone does not make a job */
			o->rendezvous = NULL;
			return;
		}
		bad("--rendezvous %s: which rank is this? Start it under mpirun or srun, or give --rank R --world N",
		    o->rendezvous);
	}
	if (!o->world)
		bad("%s", "--rank with --rendezvous needs --world N (the number of ranks)");
	if (o->rank >= o->world) {
		char r[40];

		snprintf(r, sizeof(r), "%d of --world %d", o->rank, o->world);
		bad("--rank %s: ranks count from 0", r);
	}
	o->nranks = o->world;
}

/*
 * The synthetic model's shape of architecture ARCH: the flags given
 * (their value, or -1) over the architecture's defaults, small but real
 * in structure (qwen3moe: 64 experts, 8 used; glm4moe: one dense layer,
 * one shared expert, half of each head rotated, a NextN layer).
 */
static void arch_shape(struct tp_opts *o, const int *given)
{
	struct tp_moe_config *e = &o->cfg.moe;
	int ds = o->arch && !strcmp(o->arch, "deepseek2");
	int moe = o->arch && (!strcmp(o->arch, "qwen3moe") ||
			      !strcmp(o->arch, "glm4moe") ||
			      !strcmp(o->arch, "gpt-oss") || ds);
	int glm = (o->arch && !strcmp(o->arch, "glm4moe")) || ds;

	e->experts = given[0] >= 0 ? given[0] : moe ? 64 : 0;
	e->used = given[1] >= 0 ? given[1] : e->experts ?
		  (e->experts < 8 ? e->experts : 8) : 0;
	e->ffn = given[2] >= 0 ? given[2] : e->experts ? o->cfg.dim : 0;
	e->shared = given[3] >= 0 ? given[3] : glm ? 1 : 0;
	e->dense_layers = given[4] >= 0 ? given[4] : glm ? 1 : 0;
	o->cfg.nextn_layers = given[5] >= 0 ? given[5] : glm && !ds ? 1 : 0;
	o->cfg.rot_dim = given[6] >= 0 ? given[6] : glm ?
			 o->cfg.head_dim / 2 : o->cfg.head_dim;
	/* deepseek2: --head-dim is a query's and key's, --rope-dim of it
	 * rotated, the rest (nope) as wide as a value; a latent 4x that */
	if (ds) {
		int nope = o->cfg.head_dim - o->cfg.rot_dim;

		o->cfg.mla.v_dim = given[10] >= 0 ? given[10] : nope;
		o->cfg.mla.kv_lora = given[9] >= 0 ? given[9] : 4 * nope;
		o->cfg.mla.q_lora = given[8] >= 0 ? given[8] : 0;
	} else if (given[8] >= 0 || given[9] >= 0 || given[10] >= 0) {
		bad("%s", "--q-lora, --kv-lora and --v-head-dim are deepseek2's");
	}
	if (o->cfg.swa_window && strcmp(o->arch ? o->arch : "", "gpt-oss"))
		bad("%s", "--sliding-window is gpt-oss's");
	/* qwen3moe's files say feed_forward_length = ffn x used; its
	 * dense MLP has no layer to be in */
	if (!strcmp(o->arch ? o->arch : "", "qwen3moe") && !given[7])
		o->cfg.ffn = e->ffn * e->used;
}

void tp_opts_parse(struct tp_opts *o, int argc, char **argv)
{
	int c, head_dim = 0, sseed = 0, shape = 0, ffn_given = 0;
	int given[11] = { -1, -1, -1, -1, -1, -1, -1, 0, -1, -1, -1 };

	memset(o, 0, sizeof(*o));
	if (argc > 1 && !strcmp(argv[1], "serve")) {
		o->serve = 1;
		argv[1] = argv[0];
		argc--;
		argv++;
	}
	o->rank = -1;
	o->ctx = 2048;
	o->reasoning_budget = -1;
	o->reasoning_split = 1;
	o->nranks = 1;
	o->listen_fd = -1;
	o->local_rank = -1;
	o->ib_port = 1;
	o->gid_index = -1;
	o->seed = 1;
	o->cfg = (struct tp_config){
		.dim = 64, .layers = 2, .heads = 4, .kv_heads = 2, .ffn = 128,
		.vocab = 256, .eps = 1e-5f, .rope_base = 10000.0f,
	};
	o->wtype = TP_F32;
	o->kv_type = TP_F32;
	o->tokens = 16;
	o->prompt_len = 8;
	o->batch = 64;
	o->top_p = 0.9f;
	o->algo = TP_ALGO_AUTO;
	o->ring_min = 32768;
	o->spin_us = -1;
	o->bench_iters = 200;
	o->bench_warmup = -1;
	o->timeout_ms = 60000;
	o->peer_timeout_ms = 4000;
	o->connect_timeout_ms = 60000;

	while ((c = getopt_long(argc, argv, "d:vh", longopts, NULL)) != -1) {
		switch (c) {
		case O_LOCAL: o->local = (int)num(optarg, 1, TP_MAX_RANKS, "--local"); break;
		case O_RANK: o->rank = (int)num(optarg, 0, TP_MAX_RANKS - 1, "--rank"); break;
		case O_PEERS: o->peers = optarg; break;
		case O_RENDEZVOUS: o->rendezvous = optarg; break;
		case O_WORLD: o->world = (int)num(optarg, 1, TP_MAX_RANKS, "--world"); break;
		case O_LISTEN: o->listen_host = optarg; break;
		case 'd': o->devices = optarg; break;
		case O_IBPORT: o->ib_port = (int)num(optarg, 1, 255, "--ib-port"); break;
		case O_GID: o->gid_index = (int)num(optarg, 0, 255, "--gid-index"); break;
		case O_TRANSPORT:
			if (!strcmp(optarg, "rdma"))
				o->transport = TP_TR_RDMA;
			else if (!strcmp(optarg, "tcp"))
				o->transport = TP_TR_TCP;
			else
				bad("unknown transport '%s' (rdma, tcp)", optarg);
			break;
		case O_SYNTH: o->synthetic = 1; break;
		case O_MODEL: o->model = optarg; break;
		case O_SEED: o->seed = (uint64_t)num(optarg, 0, LONG_MAX, "--seed"); break;
		case O_DIM: o->cfg.dim = (int)num(optarg, 1, 1 << 20, "--dim"); shape = 1; break;
		case O_LAYERS: o->cfg.layers = (int)num(optarg, 1, 4096, "--layers"); shape = 1; break;
		case O_HEADS: o->cfg.heads = (int)num(optarg, 1, 4096, "--heads"); shape = 1; break;
		case O_KVHEADS: o->cfg.kv_heads = (int)num(optarg, 1, 4096, "--kv-heads"); shape = 1; break;
		case O_FFN: o->cfg.ffn = (int)num(optarg, 1, 1 << 22, "--ffn"); shape = 1; ffn_given = 1; break;
		case O_ARCH: o->arch = optarg; shape = 1; break;
		case O_EXPERTS: given[0] = (int)num(optarg, 1, 1024, "--experts"); shape = 1; break;
		case O_EXPUSED: given[1] = (int)num(optarg, 1, 1024, "--experts-used"); shape = 1; break;
		case O_EXPFFN: given[2] = (int)num(optarg, 1, 1 << 20, "--expert-ffn"); shape = 1; break;
		case O_SHARED: given[3] = (int)num(optarg, 0, 64, "--shared-experts"); shape = 1; break;
		case O_DENSE: given[4] = (int)num(optarg, 0, 4096, "--dense-layers"); shape = 1; break;
		case O_NEXTN: given[5] = (int)num(optarg, 0, 16, "--nextn-layers"); shape = 1; break;
		case O_ROTDIM: given[6] = (int)num(optarg, 2, 4096, "--rope-dim"); shape = 1; break;
		case O_QLORA: given[8] = (int)num(optarg, 0, 1 << 16, "--q-lora"); shape = 1; break;
		case O_KVLORA: given[9] = (int)num(optarg, 1, 1 << 16, "--kv-lora"); shape = 1; break;
		case O_VDIM: given[10] = (int)num(optarg, 1, 4096, "--v-head-dim"); shape = 1; break;
		case O_GROUPS: o->cfg.moe.groups = (int)num(optarg, 0, 1024, "--expert-groups"); shape = 1; break;
		case O_GROUPSUSED: o->cfg.moe.groups_used = (int)num(optarg, 0, 1024, "--expert-groups-used"); shape = 1; break;
		case O_SWA: o->cfg.swa_window = (int)num(optarg, 1, 1 << 24, "--sliding-window"); shape = 1; break;
		case O_RBUDGET: o->reasoning_budget = (int)num(optarg, -1, 0, "--reasoning-budget"); break;
		case O_RFORMAT:
			if (!strcmp(optarg, "none"))
				o->reasoning_split = 0;
			else if (!strcmp(optarg, "auto") || !strcmp(optarg, "deepseek"))
				o->reasoning_split = 1;
			else
				bad("unknown --reasoning-format '%s' (none, auto, deepseek)", optarg);
			break;
		case O_EXPSPLIT:
			if (!strcmp(optarg, "auto"))
				o->cfg.moe.split = TP_SPLIT_AUTO;
			else if (!strcmp(optarg, "width"))
				o->cfg.moe.split = TP_SPLIT_WIDTH;
			else if (!strcmp(optarg, "experts"))
				o->cfg.moe.split = TP_SPLIT_EXPERTS;
			else
				bad("unknown --expert-split '%s' (auto, width, experts)", optarg);
			break;
		case O_VOCAB: o->cfg.vocab = (int)num(optarg, 1, 1 << 24, "--vocab"); shape = 1; break;
		case O_HEADDIM: head_dim = (int)num(optarg, 2, 4096, "--head-dim"); shape = 1; break;
		case O_WTYPE: o->wtype = parse_type(optarg); shape = 1; break;
		case O_ROPE: o->cfg.rope_base = (float)fnum(optarg, 1, 1e9, "--rope-base"); shape = 1; break;
		case O_EPS: o->cfg.eps = (float)fnum(optarg, 1e-12, 1, "--eps"); shape = 1; break;
		case O_EXPORT: o->export_path = optarg; break;
		case O_TIED: o->export_tied = 1; break;
		case O_TOKENS: o->tokens = (int)num(optarg, 1, 1 << 24, "--tokens"); break;
		case O_PLEN: o->prompt_len = (int)num(optarg, 1, 1 << 20, "--prompt-len"); break;
		case O_PIDS: o->prompt = parse_ids(optarg, &o->prompt_len); break;
		case O_PTEXT: o->prompt_text = optarg; break;
		case O_CHAT: o->chat = 1; break;
		case O_SYSTEM: o->system_text = optarg; break;
		case O_HTTP: o->http = optarg; break;
		case O_CTX: o->ctx = (int)num(optarg, 2, 1 << 20, "--ctx"); break;
		case O_TEMP: o->temperature = (float)fnum(optarg, 0, 100, "--temperature"); break;
		case O_TOPP: o->top_p = (float)fnum(optarg, 1e-6, 1, "--top-p"); break;
		case O_SSEED: o->sample_seed = (uint64_t)num(optarg, 0, LONG_MAX, "--sample-seed"); sseed = 1; break;
		case O_BATCH: o->batch = (int)num(optarg, 1, 1 << 16, "--batch"); break;
		case O_THREADS: o->threads = (int)num(optarg, 1, 256, "--threads"); break;
		case O_CACHETYPE:
			if (!strcmp(optarg, "f32"))
				o->kv_type = TP_F32;
			else if (!strcmp(optarg, "f16"))
				o->kv_type = TP_F16;
			else
				bad("unknown --cache-type '%s' (f32, f16)", optarg);
			break;
		case O_ALGO:
			if (!strcmp(optarg, "auto"))
				o->algo = TP_ALGO_AUTO;
			else if (!strcmp(optarg, "mesh"))
				o->algo = TP_ALGO_MESH;
			else if (!strcmp(optarg, "ring"))
				o->algo = TP_ALGO_RING;
			else
				bad("unknown algorithm '%s' (auto, mesh, ring)", optarg);
			break;
		case O_RINGMIN: o->ring_min = num(optarg, 0, LONG_MAX, "--ring-min"); break;
		case O_SPIN: o->spin_us = (int)num(optarg, 0, 10000000, "--spin-us"); break;
		case O_TIMEOUT: o->timeout_ms = (int)(1000 * fnum(optarg, 0.1, 86400, "--timeout")); break;
		case O_PTIMEOUT: o->peer_timeout_ms = (int)(1000 * fnum(optarg, 0.5, 86400, "--peer-timeout")); break;
		case O_CTIMEOUT: o->connect_timeout_ms = (int)(1000 * fnum(optarg, 0.1, 86400, "--connect-timeout")); break;
		case O_JSON: o->json = 1; break;
		case O_LOGITS: o->logits = 1; break;
		case O_COMPARE: o->compare = 1; break;
		case O_TCPSPIN: o->tcp_spin_us = (int)num(optarg, 0, 10000000, "--tcp-spin-us"); break;
		case O_BENCH: o->bench_ar = 1; break;
		case O_SIZES:
			free(o->bench_sizes);
			o->bench_sizes = parse_sizes(optarg, &o->bench_nsizes);
			break;
		case O_ITERS: o->bench_iters = (int)num(optarg, 1, 100000, "--iters"); break;
		case O_WARMUP: o->bench_warmup = (int)num(optarg, 0, 100000, "--warmup"); break;
		case O_SLOW: o->slow_ms = (int)num(optarg, 0, 100000, "--slow-ms"); break;
		case 'v': tp_verbose = 1; break;
		case 'h':
			fputs(usage, stdout);
			exit(0);
		default:	/* getopt said what */
			fputs("(tprun --help for usage)\n", stderr);
			exit(TP_EXIT_USAGE);
		}
	}
	if (optind < argc)
		bad("unexpected argument '%s'", argv[optind]);
	if (o->model && (o->synthetic || shape || o->export_path))
		bad("%s: --model replaces --synthetic, the shape flags and --export-gguf",
		    o->model);
	if (o->bench_ar && (o->model || o->export_path || o->compare))
		bad("%s", "--bench-allreduce runs no model: leave out --model, --export-gguf and --compare");
	if (o->prompt_text && o->prompt)
		bad("%s", "--prompt and --prompt-ids exclude each other");
	if ((o->chat || o->system_text) && !o->prompt_text)
		bad("%s", "--chat and --system go with --prompt");
	if (o->system_text && !o->chat)
		bad("%s", "--system needs --chat");
	if (o->serve && (o->prompt_text || o->prompt || o->bench_ar ||
			 o->compare || o->export_path || o->json))
		bad("%s", "tprun serve takes its prompts from HTTP: leave out --prompt, --prompt-ids, --json, --compare, --export-gguf and --bench-allreduce");
	if (o->http && !o->serve)
		bad("%s", "--http is an option of tprun serve");
	if (o->prompt_text && o->bench_ar)
		bad("%s", "--bench-allreduce runs no model: leave out --prompt");
	if (o->bench_ar && !o->bench_sizes) {
		static const char def[] = "256,4096,16384,65536,1048576";

		o->bench_sizes = parse_sizes(def, &o->bench_nsizes);
	}
	if (o->bench_warmup < 0)
		o->bench_warmup = o->bench_iters / 10 > 2 ? o->bench_iters / 10 : 2;
	if (!o->model)
		o->synthetic = 1;
	o->cfg.head_dim = head_dim ? head_dim :
			  o->cfg.heads ? o->cfg.dim / o->cfg.heads : 0;
	given[7] = ffn_given;
	arch_shape(o, given);
	if (!sseed)
		o->sample_seed = o->seed;
	if (o->local && (o->rank >= 0 || o->peers || o->rendezvous))
		bad("%s", "--local runs every rank itself: leave --rank, --peers and --rendezvous out");
	if (o->peers && o->rendezvous)
		bad("%s", "--peers and --rendezvous exclude each other (the rendezvous hands out the peers)");
	if (o->peers && o->rank < 0)
		bad("%s", "--peers needs --rank");
	if (o->world && !o->rendezvous)
		bad("%s", "--world goes with --rendezvous (--peers and --local count the ranks)");
	launcher_opts(o);
	if (o->rank >= 0 && !o->peers && !o->rendezvous)
		bad("%s", "--rank goes with --peers or --rendezvous");
	if (o->local)
		o->nranks = o->local;
	if (o->peers) {
		const char *c;

		for (c = o->peers, o->nranks = 1; *c; c++)
			o->nranks += *c == ',';
		if (o->nranks > TP_MAX_RANKS)
			bad("%s: more than 64 ranks", o->peers);
		if (o->rank >= o->nranks) {
			char r[16];

			snprintf(r, sizeof(r), "%d", o->rank);
			bad("--rank %s is not an entry of --peers", r);
		}
	}
	if (o->devices && strchr(o->devices, '=') &&
	    tp_opts_peer_device(o, 0, 0, NULL, 0) < 0)
		bad("-d %s: a per-peer map is [RANK:]PEER=DEVICE,... (ranks 0..63)",
		    o->devices);
}

/*
 * Entry "[R:]P=DEV" at S (up to END): 1 and DEV into OUT when it is for
 * RANK's link to PEER, 0 when not, -1 when malformed.
 */
static int map_entry(const char *s, const char *end, int rank, int peer,
		     char *out, int len)
{
	const char *eq = memchr(s, '=', (size_t)(end - s));
	char *e;
	long r = -1, p;

	if (!eq || eq + 1 >= end || (size_t)(end - eq) > 64)
		return -1;
	if (*s < '0' || *s > '9')
		return -1;
	p = strtol(s, &e, 10);
	if (*e == ':') {
		const char *q = e + 1;

		if (*q < '0' || *q > '9')
			return -1;
		r = p;
		p = strtol(q, &e, 10);
	}
	if (e != eq || p < 0 || p >= TP_MAX_RANKS || r < -1 ||
	    r >= TP_MAX_RANKS)
		return -1;
	if (p != peer || (r >= 0 && r != rank))
		return 0;
	if (out)
		snprintf(out, (size_t)len, "%.*s", (int)(end - eq - 1), eq + 1);
	return 1;
}

int tp_opts_peer_device(const struct tp_opts *o, int rank, int peer,
			char *out, int len)
{
	const char *p = o->devices;
	int found = 0;

	if (!p)
		return 0;
	if (!strchr(p, '='))	/* one device for every peer */
		return tp_opts_device(o, o->local_rank >= 0 ? o->local_rank :
				      rank, out, len) ? -1 : 1;
	while (*p) {
		const char *e = strchr(p, ',');
		int r;

		if (!e)
			e = p + strlen(p);
		r = map_entry(p, e, rank, peer, found ? NULL : out, len);
		if (r < 0)
			return -1;
		found |= r;
		p = *e ? e + 1 : e;
	}
	return found;
}

int tp_opts_device(const struct tp_opts *o, int i, char *out, int len)
{
	const char *p = o->devices, *e;
	int n = 0, k;

	out[0] = 0;
	if (!p || strchr(p, '='))	/* none, or a per-peer map */
		return 0;
	for (e = p; *e; e++)
		n += *e == ',';
	n++;
	if (n > 1 && i >= n)
		return -1;
	for (k = 0; n > 1 && k < i; k++)
		p = strchr(p, ',') + 1;
	e = strchr(p, ',');
	snprintf(out, (size_t)len, "%.*s", (int)(e ? e - p : (long)strlen(p)), p);
	return 0;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}

uint64_t tp_opts_hash(const struct tp_opts *o, const struct tp_weights *w)
{
	static const struct tp_weights none;
	char s[1024];
	uint64_t h = 0xcbf29ce484222325ull;
	int i;

	if (!w)
		w = &none;

	snprintf(s, sizeof(s),
		 "n%d tr%d synth%d seed%llu wt%d file%zu dim%d l%d h%d kv%d hd%d rot%d ffn%d v%d eps%a rope%a "
		 "tok%d plen%d batch%d temp%a topp%a ss%llu algo%d rmin%ld cmp%d "
		 "bench%d iters%d warm%d chat%d serve%d ctx%d arch%s e%d/%d/%d/%d/%d split%d rb%d kv%d",
		 o->nranks, o->transport, o->synthetic,
		 (unsigned long long)o->seed, w->wtype, w->file_size,
		 w->cfg.dim, w->cfg.layers, w->cfg.heads, w->cfg.kv_heads,
		 w->cfg.head_dim, w->cfg.rot_dim, w->cfg.ffn, w->cfg.vocab,
		 (double)w->cfg.eps, (double)w->cfg.rope_base, o->tokens,
		 o->prompt_len, o->batch, (double)o->temperature,
		 (double)o->top_p, (unsigned long long)o->sample_seed, o->algo,
		 o->ring_min, o->compare, o->bench_ar, o->bench_iters,
		 o->bench_warmup, o->chat, o->serve, o->ctx,
		 o->arch ? o->arch : "llama", w->cfg.moe.experts, w->cfg.moe.used,
		 w->cfg.moe.ffn, w->cfg.moe.shared, w->cfg.moe.dense_layers,
		 o->cfg.moe.split, o->reasoning_budget, o->kv_type);
	h = fnv(h, s, strlen(s));
	if (o->prompt_text)
		h = fnv(h, o->prompt_text, strlen(o->prompt_text) + 1);
	if (o->system_text)
		h = fnv(h, o->system_text, strlen(o->system_text) + 1);
	for (i = 0; i < o->bench_nsizes; i++)
		h = fnv(h, &o->bench_sizes[i], sizeof(size_t));
	for (i = 0; o->prompt && i < o->prompt_len; i++)
		h = fnv(h, &o->prompt[i], sizeof(int));
	return h;
}
