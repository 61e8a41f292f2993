// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: the administration tool of tbrdma, RDMA over Thunderbolt/USB4.
 * It talks to the kernel directly -- RDMA netlink through libmnl, rtnetlink
 * through libnl-route-3, sysfs -- and never parses another program's output.
 * See tbrdma(8).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "exit_codes.h"

#ifndef TBRDMA_VERSION
#error "TBRDMA_VERSION: the package version, from the Makefile"
#endif

static const struct {
	const char *name;
	int (*run)(int argc, char **argv, const struct global_opts *g);
	const char *usage;
} commands[] = {
	{ "status", cmd_status,
	  "status [DEV] [--json]\n"
	  "    Each tbrdma device (or DEV): mode, netdev and driver, port state,\n"
	  "    MTU, GIDs, peers, counters, the Thunderbolt link under it, and\n"
	  "    warnings with their likely fix.\n" },
	{ "stats", cmd_stats,
	  "stats [DEV] [-w SECONDS] [-c COUNT] [--json]\n"
	  "    Rates: bytes, operations, packets, retransmissions and bad frames\n"
	  "    per second.  One report over 1 s; -w measures over SECONDS and\n"
	  "    repeats until Ctrl-C (or COUNT reports with -c).  --json prints\n"
	  "    one JSON object per report and line.\n" },
	{ "attach", cmd_attach,
	  "attach NETDEV [NAME]\n"
	  "    Create a tbrdma device on NETDEV (lo: loopback mode), named NAME\n"
	  "    or tbr<N> / tbrlo<N>.  Same as `rdma link add NAME type tbrdma\n"
	  "    netdev NETDEV`.\n" },
	{ "detach", cmd_detach,
	  "detach NAME\n"
	  "    Remove tbrdma device NAME (`rdma link delete NAME`).\n" },
	{ "thunderbolt", cmd_thunderbolt,
	  "thunderbolt enable|disable|status [--json]\n"
	  "    Whether tbrdma attaches to Thunderbolt network links by itself:\n"
	  "    saved in /etc/modprobe.d/tbrdma.conf and applied to the running\n"
	  "    module at once.\n" },
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

void print_usage(const char *command, bool to_stderr)
{
	FILE *out = to_stderr ? stderr : stdout;
	size_t i;

	if (!command)
		fprintf(out, "usage: tbrdma [--json] COMMAND [ARGS]\n\n");
	for (i = 0; i < N_COMMANDS; i++)
		if (!command || !strcmp(command, commands[i].name))
			fprintf(out, "%stbrdma %s", command ? "usage: " : "  ",
				commands[i].usage);
	if (command)
		return;
	fprintf(out,
		"\nOptions: --json (read commands), --help, --version.\n"
		"Exit codes: 0 ok, 1 usage, 2 no such device, 3 module not loaded,\n"
		"4 permission denied (not root), 5 other failure.\n"
		"Environment: TBRDMA_SYSFS_ROOT, TBRDMA_ETC_ROOT (test roots).\n"
		"See tbrdma(8).\n");
}

static const struct option global_options[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

int main(int argc, char **argv)
{
	struct global_opts g = { .json = false };
	size_t i;
	int opt;

	/* "+": options before the command only; the command parses its own. */
	while ((opt = getopt_long(argc, argv, "+jhV", global_options, NULL)) !=
	       -1) {
		switch (opt) {
		case 'j':
			g.json = true;
			break;
		case 'h':
			print_usage(NULL, false);
			return TBR_EXIT_OK;
		case 'V':
			printf("tbrdma %s\n", TBRDMA_VERSION);
			return TBR_EXIT_OK;
		default:
			print_usage(NULL, true);
			return TBR_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		print_usage(NULL, true);
		return TBR_EXIT_USAGE;
	}
	if (!strcmp(argv[optind], "help")) {
		print_usage(optind + 1 < argc ? argv[optind + 1] : NULL, false);
		return TBR_EXIT_OK;
	}
	for (i = 0; i < N_COMMANDS; i++) {
		if (strcmp(argv[optind], commands[i].name))
			continue;
		argc -= optind;
		argv += optind;
		/*
		 * 0, not 1: glibc then forgets the "+" ordering of the scan
		 * above and permutes, so options may follow arguments.
		 */
		optind = 0;
		return commands[i].run(argc, argv, &g);
	}
	fprintf(stderr, "tbrdma: unknown command '%s'\n", argv[optind]);
	print_usage(NULL, true);
	return TBR_EXIT_USAGE;
}
