// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `tbrdma thunderbolt enable|disable|status`: the opt-in for attaching a
 * tbrdma device to every Thunderbolt network link by itself (tb_optin.h),
 * saved for the next boot and applied to the running module at once.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "device.h"
#include "json.h"
#include "report.h"
#include "tb_optin.h"
#include "tbt_report.h"

#define TBT_LINKS_MAX 16

static int set_optin(bool enable)
{
	struct optin_persisted now;
	char conf[TBR_PATH_MAX];
	int err;

	tbr_etc_path(conf, sizeof(conf), OPTIN_CONF_FILE);
	err = optin_write_persisted(enable);
	if (err == -EACCES || err == -EPERM)
		return tbr_error(TBR_EXIT_PERMISSION,
				 "permission denied: writing %s needs root",
				 conf);
	if (err)
		return tbr_error(TBR_EXIT_FAILURE, "writing %s: %s", conf,
				 strerror(-err));
	printf("saved: options tbrdma " OPTIN_PARAM "=%d in %s\n", enable,
	       conf);

	/* Another file later in modprobe's order would win over ours. */
	if (!optin_read_persisted(&now) && now.value != enable)
		tbr_warn("%s sets " OPTIN_PARAM "=%d and wins over %s: edit it",
			 now.file, now.value, conf);

	err = optin_runtime_set(enable);
	switch (-err) {
	case 0:
		printf("running module: " OPTIN_PARAM "=%s%s\n",
		       enable ? "Y" : "N",
		       enable ? " (Thunderbolt links attach now)" : "");
		return TBR_EXIT_OK;
	case ENOENT:
		printf("the module is not loaded: this applies when it loads\n");
		return TBR_EXIT_OK;
	case EOPNOTSUPP:
		if (!enable)
			return TBR_EXIT_OK;	/* it cannot auto-attach anyway */
		return tbr_error(TBR_EXIT_FAILURE,
				 "the loaded tbrdma module has no " OPTIN_PARAM " parameter (older than this tool): saved, but it applies only to an updated module");
	case EACCES:
	case EPERM:
		return tbr_error(TBR_EXIT_PERMISSION,
				 "permission denied: setting the module parameter needs root");
	default:
		return tbr_error(TBR_EXIT_FAILURE,
				 "setting the module parameter: %s",
				 strerror(-err));
	}
}

struct optin_status {
	struct optin_persisted persisted;
	bool module_loaded;
	int runtime_err;
	bool running;
	size_t n_links;
	char links[TBT_LINKS_MAX][IF_NAMESIZE];
	char devices[TBT_LINKS_MAX][RDMA_DEV_NAME_MAX];	/* "" if none */
};

/* Which tbrdma device sits on each Thunderbolt link (module loaded only). */
static void map_devices(struct optin_status *st)
{
	struct tbr_device *devs = NULL;
	struct rdma_nl nl;
	size_t n = 0, i, j;

	if (!st->module_loaded || rdma_nl_open(&nl))
		return;
	if (!tbr_devices_list(&nl, &devs, &n))
		for (i = 0; i < st->n_links; i++)
			for (j = 0; j < n; j++)
				if (devs[j].port.has_netdev &&
				    !strcmp(devs[j].port.netdev, st->links[i]))
					snprintf(st->devices[i],
						 sizeof(st->devices[i]), "%s",
						 devs[j].nl.name);
	free(devs);
	rdma_nl_close(&nl);
}

/*
 * Whether Thunderbolt links get devices now: the running module's switch;
 * with the module not loaded, what it will load with; a module without the
 * parameter never attaches by itself.
 */
static bool effective_enabled(const struct optin_status *st)
{
	if (!st->runtime_err)
		return st->running;
	return st->runtime_err == -ENOENT && st->persisted.value == 1;
}

static const char *on_off(bool on)
{
	return on ? "enabled" : "disabled";
}

static void status_text(const struct optin_status *st)
{
	struct tbt_link link;
	size_t i;

	printf("Thunderbolt auto-attach: %s\n", on_off(effective_enabled(st)));
	if (st->persisted.value < 0)
		printf("  saved        disabled (no " OPTIN_PARAM " in /etc/modprobe.d)\n");
	else
		printf("  saved        %s (%s)\n",
		       on_off(st->persisted.value == 1), st->persisted.file);
	if (!st->runtime_err)
		printf("  running      %s\n", on_off(st->running));
	else if (st->runtime_err == -ENOENT)
		printf("  running      module not loaded\n");
	else if (st->runtime_err == -EOPNOTSUPP)
		printf("  running      the loaded module has no " OPTIN_PARAM " parameter\n");
	else
		printf("  running      unknown (%s)\n",
		       strerror(-st->runtime_err));
	if (st->n_links == 0)
		printf("  links        no Thunderbolt network links (is thunderbolt-net loaded and a cable in?)\n");
	for (i = 0; i < st->n_links; i++) {
		printf("%s%s -> %s\n", i ? "               " : "  links        ",
		       st->links[i],
		       st->devices[i][0] ? st->devices[i] : "no tbrdma device");
		if (!tbt_link_examine(st->links[i], &link))
			tbt_link_print(stdout, &link, "    ");
	}
}

static void status_json(const struct optin_status *st)
{
	struct json_writer w;
	struct tbt_link link;
	size_t i;

	json_init(&w, stdout);
	json_object_begin(&w);
	json_kv_bool(&w, "enabled", effective_enabled(st));
	json_key(&w, "persisted");
	if (st->persisted.value < 0)
		json_null(&w);
	else
		json_bool(&w, st->persisted.value == 1);
	json_kv_string(&w, "persisted_file",
		       st->persisted.file[0] ? st->persisted.file : NULL);
	json_kv_bool(&w, "module_loaded", st->module_loaded);
	json_key(&w, "running");
	if (st->runtime_err)
		json_null(&w);
	else
		json_bool(&w, st->running);
	json_key(&w, "links");
	json_array_begin(&w);
	for (i = 0; i < st->n_links; i++) {
		json_object_begin(&w);
		json_kv_string(&w, "netdev", st->links[i]);
		json_kv_string(&w, "device",
			       st->devices[i][0] ? st->devices[i] : NULL);
		json_key(&w, "link");
		if (!tbt_link_examine(st->links[i], &link))
			tbt_link_json(&w, &link);
		else
			json_null(&w);
		json_object_end(&w);
	}
	json_array_end(&w);
	json_object_end(&w);
	json_finish(&w);
}

static int show_status(bool json)
{
	struct optin_status st;
	int err;

	memset(&st, 0, sizeof(st));
	err = optin_read_persisted(&st.persisted);
	if (err)
		return tbr_error(tbr_exit_for_errno(err),
				 "reading /etc/modprobe.d: %s", strerror(-err));
	st.module_loaded = tbr_module_loaded();
	st.runtime_err = optin_runtime_get(&st.running);
	st.n_links = tbt_netdevs(st.links, TBT_LINKS_MAX);
	map_devices(&st);
	if (json)
		status_json(&st);
	else
		status_text(&st);
	return TBR_EXIT_OK;
}

static const struct option tb_options[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int cmd_thunderbolt(int argc, char **argv, const struct global_opts *g)
{
	bool json = g->json;
	const char *action;
	int opt;

	while ((opt = getopt_long(argc, argv, "jh", tb_options, NULL)) != -1) {
		switch (opt) {
		case 'j':
			json = true;
			break;
		case 'h':
			print_usage("thunderbolt", false);
			return TBR_EXIT_OK;
		default:
			print_usage("thunderbolt", true);
			return TBR_EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		print_usage("thunderbolt", true);
		return TBR_EXIT_USAGE;
	}
	action = argv[optind];
	if (!strcmp(action, "status"))
		return show_status(json);
	if (!strcmp(action, "enable"))
		return set_optin(true);
	if (!strcmp(action, "disable"))
		return set_optin(false);
	print_usage("thunderbolt", true);
	return TBR_EXIT_USAGE;
}
