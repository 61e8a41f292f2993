// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `tbrdma stats [DEV] [-w SECONDS] [-c COUNT]`: rates from two samples of
 * the devices' counters -- bytes, operations (completed work requests),
 * packets, retransmissions and bad frames per second.  One report over one
 * second by default; -w repeats every SECONDS until Ctrl-C or COUNT reports.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "counters.h"
#include "json.h"
#include "report.h"
#include "session.h"

struct sampled_device {
	struct tbr_device dev;
	struct counter_set before, after;
};

static volatile sig_atomic_t stop_requested;

static void request_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sleep until @deadline (CLOCK_MONOTONIC seconds); false if interrupted. */
static bool sleep_until(double deadline)
{
	struct timespec ts;

	ts.tv_sec = (time_t)deadline;
	ts.tv_nsec = (long)((deadline - ts.tv_sec) * 1e9);
	while (!stop_requested) {
		int err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
					  NULL);

		if (err == 0)
			return true;
		if (err != EINTR)
			return false;
	}
	return false;
}

/* Read one device's counters into @set, with the error message. */
static int sample(struct rdma_nl *nl, struct sampled_device *s,
		  struct counter_set *set)
{
	struct rdma_nl_dev again;
	int err;

	err = rdma_nl_hw_counters(nl, s->dev.nl.index, TBR_PORT, set);
	if (!err)
		return TBR_EXIT_OK;
	/* A device deleted meanwhile also answers EINVAL: tell them apart. */
	if (rdma_nl_dev_by_name(nl, s->dev.nl.name, &again) ||
	    again.index != s->dev.nl.index)
		return tbr_error(TBR_EXIT_NO_DEVICE, "%s disappeared",
				 s->dev.nl.name);
	if (err == -EOPNOTSUPP)
		return tbr_error(TBR_EXIT_FAILURE,
				 "%s has no counters (a tbrdma module older than this tool?)",
				 s->dev.nl.name);
	return tbr_error(tbr_exit_for_errno(err), "%s: reading counters: %s",
			 s->dev.nl.name, strerror(-err));
}

static const char *const column_titles[RATE_KINDS] = {
	[RATE_TX_BYTES] = "TX", [RATE_RX_BYTES] = "RX",
	[RATE_TX_OPS] = "TX OPS", [RATE_RX_OPS] = "RX OPS",
	[RATE_TX_PACKETS] = "TX PKTS", [RATE_RX_PACKETS] = "RX PKTS",
	[RATE_RETRANSMITS] = "RETRANS", [RATE_ERRORS] = "RX ERRORS",
};

static void print_header(void)
{
	int k;

	printf("%-12s", "DEVICE");
	for (k = 0; k < RATE_KINDS; k++)
		printf(" %11s", column_titles[k]);
	printf("\n");
}

static void print_rates_text(const char *name, const struct link_rates *r)
{
	char text[32];
	int k;

	printf("%-12s", name);
	for (k = 0; k < RATE_KINDS; k++) {
		if (!r->known[k])
			snprintf(text, sizeof(text), "-");
		else
			format_si(text, sizeof(text), r->per_second[k],
				  k == RATE_TX_BYTES || k == RATE_RX_BYTES ?
					  "B/s" : "/s");
		printf(" %11s", text);
	}
	printf("\n");
}

static void print_rates_json(struct json_writer *w,
			     const struct sampled_device *s,
			     const struct link_rates *r)
{
	size_t i;
	int k;

	json_object_begin(w);
	json_kv_string(w, "name", s->dev.nl.name);
	json_key(w, "rates");
	json_object_begin(w);
	for (k = 0; k < RATE_KINDS; k++) {
		if (r->known[k])
			json_kv_double(w, rate_name(k), r->per_second[k], 1);
		else
			json_kv_null(w, rate_name(k));
	}
	json_object_end(w);
	json_key(w, "counters");
	json_object_begin(w);
	for (i = 0; i < s->after.n; i++)
		json_kv_uint(w, s->after.c[i].name, s->after.c[i].value);
	json_object_end(w);
	json_object_end(w);
}

static int parse_positive(const char *text, double *value)
{
	char *end;

	errno = 0;
	*value = strtod(text, &end);
	return errno || end == text || *end || !(*value > 0) ||
	       !isfinite(*value) || *value > 86400 ? -1 : 0;
}

/* The devices to watch: one by name, or every tbrdma device. */
static int select_devices(struct rdma_nl *nl, const char *name,
			  struct sampled_device **out, size_t *n)
{
	struct tbr_device *devs = NULL;
	size_t i;
	int err, rc;

	if (name) {
		*out = calloc(1, sizeof(**out));
		if (!*out)
			return tbr_error(TBR_EXIT_FAILURE, "out of memory");
		*n = 1;
		return session_device(nl, name, &(*out)->dev);
	}
	err = tbr_devices_list(nl, &devs, n);
	if (err)
		return tbr_error(tbr_exit_for_errno(err),
				 "cannot list RDMA devices: %s", strerror(-err));
	rc = *n ? TBR_EXIT_OK :
		  tbr_error(TBR_EXIT_NO_DEVICE,
			    "no tbrdma devices (tbrdma attach NETDEV)");
	*out = calloc(*n ? *n : 1, sizeof(**out));
	if (!*out)
		rc = tbr_error(TBR_EXIT_FAILURE, "out of memory");
	for (i = 0; *out && i < *n; i++)
		(*out)[i].dev = devs[i];
	free(devs);
	return rc;
}

static const struct option stats_options[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "watch", required_argument, NULL, 'w' },
	{ "count", required_argument, NULL, 'c' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int cmd_stats(int argc, char **argv, const struct global_opts *g)
{
	struct sampled_device *devs = NULL;
	struct sigaction sa = { .sa_handler = request_stop };
	struct json_writer w;
	struct link_rates rates;
	struct rdma_nl nl;
	double interval = 1, count_arg, started, finished;
	long count = 1, reports;
	bool json = g->json, watch = false, count_given = false;
	size_t n = 0, i;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "jw:c:h", stats_options,
				  NULL)) != -1) {
		switch (opt) {
		case 'j':
			json = true;
			break;
		case 'w':
			if (parse_positive(optarg, &interval))
				return tbr_error(TBR_EXIT_USAGE,
						 "-w wants seconds > 0 (up to 86400), not '%s'",
						 optarg);
			watch = true;
			break;
		case 'c':
			if (parse_positive(optarg, &count_arg) ||
			    count_arg != (long)count_arg)
				return tbr_error(TBR_EXIT_USAGE,
						 "-c wants a whole number > 0, not '%s'",
						 optarg);
			count = (long)count_arg;
			count_given = true;
			break;
		case 'h':
			print_usage("stats", false);
			return TBR_EXIT_OK;
		default:
			print_usage("stats", true);
			return TBR_EXIT_USAGE;
		}
	}
	if (argc - optind > 1) {
		print_usage("stats", true);
		return TBR_EXIT_USAGE;
	}
	/* -w alone watches until interrupted; -c bounds it. */
	if (watch && !count_given)
		count = -1;

	rc = session_open(&nl);
	if (rc)
		return rc;
	rc = select_devices(&nl, optind < argc ? argv[optind] : NULL, &devs, &n);
	for (i = 0; !rc && i < n; i++)
		rc = sample(&nl, &devs[i], &devs[i].before);
	if (rc)
		goto out;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!json)
		print_header();
	started = now_seconds();
	for (reports = 0; count < 0 || reports < count; reports++) {
		if (!sleep_until(started + interval))
			break;
		for (i = 0; !rc && i < n; i++)
			rc = sample(&nl, &devs[i], &devs[i].after);
		finished = now_seconds();
		if (rc)
			break;
		if (json) {
			json_init(&w, stdout);
			json_object_begin(&w);
			json_kv_double(&w, "interval_s", finished - started, 3);
			json_key(&w, "devices");
			json_array_begin(&w);
		}
		for (i = 0; i < n; i++) {
			link_rates_compute(&devs[i].before, &devs[i].after,
					   finished - started, &rates);
			if (json)
				print_rates_json(&w, &devs[i], &rates);
			else
				print_rates_text(devs[i].dev.nl.name, &rates);
			devs[i].before = devs[i].after;
		}
		if (json) {
			json_array_end(&w);
			json_object_end(&w);
			json_finish(&w);
		}
		fflush(stdout);
		started = finished;
	}
out:
	free(devs);
	rdma_nl_close(&nl);
	return rc;
}
