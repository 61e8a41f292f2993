// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `tbrdma status [DEV]`: what each tbrdma device is attached to, whether it
 * can carry traffic, its addresses, peers and counters, the Thunderbolt link
 * under it -- and a warning with the likely fix for each thing that is off.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmod/mtu.h"
#include "uapi/tbrdma-abi.h"

#include "commands.h"
#include "counters.h"
#include "gids.h"
#include "json.h"
#include "peers.h"
#include "provider_check.h"
#include "report.h"
#include "rtnl.h"
#include "session.h"
#include "tbt_report.h"

#define IB_PORT_ACTIVE 4
#define DEVICE_WARNINGS_MAX 4

/* Everything status reports about one device. */
struct device_report {
	struct tbr_device dev;
	bool has_netdev;	/* rtnl found the netdev */
	struct netdev_info nd;
	char driver[64];
	unsigned int ib_mtu;	/* the path MTU the port offers, 0: none */
	struct gid_table gids;
	int peers_err;
	struct peer_list peers;
	int counters_err;
	struct counter_set counters;
	bool has_tbt;
	struct tbt_link tbt;
	size_t n_warnings;
	char warnings[DEVICE_WARNINGS_MAX][256];
};

static void add_warning(struct device_report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add_warning(struct device_report *r, const char *fmt, ...)
{
	va_list ap;

	if (r->n_warnings == DEVICE_WARNINGS_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(r->warnings[r->n_warnings++], sizeof(r->warnings[0]), fmt,
		  ap);
	va_end(ap);
}

/* The likely reasons, worst first, for what is off. */
static void judge(struct device_report *r)
{
	const char *nd = r->dev.port.netdev;

	if (r->dev.abi_version != TBRDMA_UVERBS_ABI_VERSION)
		add_warning(r,
			    "the module speaks ABI %u, this tool was built for %u: install the module and provider from one build",
			    r->dev.abi_version, TBRDMA_UVERBS_ABI_VERSION);
	if (r->dev.port.state != IB_PORT_ACTIVE) {
		if (!r->has_netdev)
			add_warning(r, "port %s: its netdev is gone or in another network namespace",
				    rdma_port_state_name(r->dev.port.state));
		else if (!r->nd.admin_up)
			add_warning(r, "port %s: %s is down (ip link set %s up)",
				    rdma_port_state_name(r->dev.port.state),
				    nd, nd);
		else if (!r->nd.carrier)
			add_warning(r, "port %s: %s has no carrier (cable unplugged, or the other end down)",
				    rdma_port_state_name(r->dev.port.state),
				    nd);
		else if (!r->ib_mtu)
			add_warning(r, "port %s: %s's MTU %u is too small for RDMA (at least %u)",
				    rdma_port_state_name(r->dev.port.state),
				    nd, r->nd.mtu,
				    TBR_IB_MTU_MIN + TBR_FRAME_OVERHEAD);
		else
			add_warning(r, "port %s", rdma_port_state_name(
							 r->dev.port.state));
	}
	if (r->gids.n == 0 && r->has_netdev)
		add_warning(r, "no GIDs: give %s an IP address (ip addr add ADDR/PREFIX dev %s)",
			    nd, nd);
}

static void collect(struct rdma_nl *nl, struct device_report *r)
{
	const char *name = r->dev.nl.name;

	r->has_netdev = r->dev.port.has_netdev &&
			!netdev_lookup(r->dev.port.netdev, &r->nd);
	if (r->has_netdev) {
		netdev_driver(&r->nd, r->driver, sizeof(r->driver));
		r->ib_mtu = tbr_ib_mtu_for_netdev_mtu(r->nd.mtu);
		r->has_tbt = !tbt_link_examine(r->nd.name, &r->tbt);
	}
	gids_read(name, TBR_PORT, &r->gids);
	r->peers_err = peers_read(name, &r->peers);
	r->counters_err = rdma_nl_hw_counters(nl, r->dev.nl.index, TBR_PORT,
					      &r->counters);
	judge(r);
}

static void format_guid(uint64_t guid, char *buf, size_t size)
{
	snprintf(buf, size, "%04x:%04x:%04x:%04x", (unsigned int)(guid >> 48),
		 (unsigned int)(guid >> 32) & 0xffff,
		 (unsigned int)(guid >> 16) & 0xffff, (unsigned int)guid & 0xffff);
}

/* The counters split into the tx/rx summary and all the others. */
static bool is_summary_counter(const char *name)
{
	static const char *const summary[] = {
		"tx_packets", "tx_bytes", "tx_ops",
		"rx_packets", "rx_bytes", "rx_ops",
	};
	size_t i;

	for (i = 0; i < sizeof(summary) / sizeof(summary[0]); i++)
		if (!strcmp(name, summary[i]))
			return true;
	return false;
}

static void print_direction_counters(const struct counter_set *set,
				     const char *dir, const char *indent)
{
	char name[32], bytes_text[32];
	uint64_t packets = 0, bytes = 0, ops = 0;
	bool has_ops;

	snprintf(name, sizeof(name), "%s_packets", dir);
	counter_set_get(set, name, &packets);
	snprintf(name, sizeof(name), "%s_bytes", dir);
	counter_set_get(set, name, &bytes);
	snprintf(name, sizeof(name), "%s_ops", dir);
	has_ops = counter_set_get(set, name, &ops);
	format_si(bytes_text, sizeof(bytes_text), bytes, "B");
	printf("%s%s %" PRIu64 " packets, %s", indent, dir, packets,
	       bytes_text);
	if (has_ops)
		printf(", %" PRIu64 " ops", ops);
	printf("\n");
}

static void print_counters(const struct device_report *r)
{
	const char *indent = "               ";
	size_t i, on_line = 0;

	if (r->counters_err) {
		printf("  counters     not available (%s)\n",
		       r->counters_err == -EOPNOTSUPP ?
			       "this module has no counters" :
			       strerror(-r->counters_err));
		return;
	}
	print_direction_counters(&r->counters, "tx", "  counters     ");
	print_direction_counters(&r->counters, "rx", indent);
	for (i = 0; i < r->counters.n; i++) {
		const struct counter *c = &r->counters.c[i];

		if (is_summary_counter(c->name))
			continue;
		printf("%s%s %" PRIu64, on_line ? ", " : indent, c->name,
		       c->value);
		if (++on_line == 4) {
			printf("\n");
			on_line = 0;
		}
	}
	if (on_line)
		printf("\n");
}

static void print_text(const struct device_report *r)
{
	const char *indent = "               ";
	char guid[32];
	size_t i;

	printf("%s\n", r->dev.nl.name);
	printf("  mode         %s\n", r->dev.mode);
	if (!r->dev.port.has_netdev)
		printf("  netdev       none in this network namespace\n");
	else if (!r->has_netdev)
		printf("  netdev       %s (gone)\n", r->dev.port.netdev);
	else
		printf("  netdev       %s (%s), %s, carrier %s, mtu %u%s%s\n",
		       r->nd.name, r->driver[0] ? r->driver : "no driver",
		       r->nd.admin_up ? "up" : "down",
		       r->nd.carrier ? "on" : "off", r->nd.mtu,
		       r->nd.address[0] && !r->nd.loopback ? ", " : "",
		       r->nd.loopback ? "" : r->nd.address);
	printf("  port         %s (%s)\n",
	       rdma_port_state_name(r->dev.port.state),
	       rdma_port_phys_state_name(r->dev.port.phys_state));
	if (!r->has_netdev)
		printf("  mtu          unknown (netdev not visible here)\n");
	else if (r->ib_mtu)
		printf("  mtu          %u\n", r->ib_mtu);
	else
		printf("  mtu          none (netdev MTU too small)\n");
	format_guid(r->dev.nl.node_guid, guid, sizeof(guid));
	printf("  device       abi %u, firmware %s, node GUID %s\n",
	       r->dev.abi_version, r->dev.nl.fw_version, guid);
	for (i = 0; i < r->gids.n; i++) {
		const struct gid_entry *g = &r->gids.g[i];

		printf("%s[%u] %s%s%s%s\n", i ? indent : "  gids         ",
		       g->index, g->address, g->type[0] ? " (" : "", g->type,
		       g->type[0] ? ")" : "");
	}
	if (r->gids.n == 0)
		printf("  gids         none\n");
	if (r->peers_err)
		printf("  peers        not reported (%s)\n",
		       r->peers_err == -ENOENT ? "module too old" :
						 strerror(-r->peers_err));
	else if (r->peers.n == 0)
		printf("  peers        none seen%s\n",
		       strcmp(r->dev.mode, TBRDMA_MODE_LOOPBACK_NAME) ?
			       "" : " (loopback mode)");
	for (i = 0; !r->peers_err && i < r->peers.n; i++)
		printf("%s%s  %" PRIu64 " frames, last %" PRIu64 " ms ago\n",
		       i ? indent : "  peers        ", r->peers.p[i].mac,
		       r->peers.p[i].rx_packets, r->peers.p[i].last_seen_ms);
	print_counters(r);
	if (r->has_tbt)
		tbt_link_print(stdout, &r->tbt, "  ");
	for (i = 0; i < r->n_warnings; i++)
		printf("  WARNING      %s\n", r->warnings[i]);
}

static void print_json(struct json_writer *w, const struct device_report *r)
{
	char guid[32];
	size_t i;

	json_object_begin(w);
	json_kv_string(w, "name", r->dev.nl.name);
	json_kv_uint(w, "index", r->dev.nl.index);
	json_kv_string(w, "mode", r->dev.mode);
	json_kv_string(w, "netdev",
		       r->dev.port.has_netdev ? r->dev.port.netdev : NULL);
	json_kv_string(w, "netdev_driver", r->has_netdev ? r->driver : NULL);
	json_kv_string(w, "state", rdma_port_state_name(r->dev.port.state));
	json_kv_string(w, "phys_state",
		       rdma_port_phys_state_name(r->dev.port.phys_state));
	/* 0: no MTU fits the netdev's; null: the netdev is not visible. */
	if (r->has_netdev)
		json_kv_uint(w, "mtu", r->ib_mtu);
	else
		json_kv_null(w, "mtu");
	if (r->has_netdev) {
		json_kv_uint(w, "netdev_mtu", r->nd.mtu);
		json_kv_bool(w, "netdev_up", r->nd.admin_up);
		json_kv_bool(w, "netdev_carrier", r->nd.carrier);
		json_kv_string(w, "netdev_address", r->nd.address);
	} else {
		json_kv_null(w, "netdev_mtu");
		json_kv_null(w, "netdev_up");
		json_kv_null(w, "netdev_carrier");
		json_kv_null(w, "netdev_address");
	}
	json_kv_uint(w, "abi_version", r->dev.abi_version);
	json_kv_string(w, "fw_version", r->dev.nl.fw_version);
	format_guid(r->dev.nl.node_guid, guid, sizeof(guid));
	json_kv_string(w, "node_guid", guid);

	json_key(w, "gids");
	json_array_begin(w);
	for (i = 0; i < r->gids.n; i++) {
		json_object_begin(w);
		json_kv_uint(w, "index", r->gids.g[i].index);
		json_kv_string(w, "gid", r->gids.g[i].address);
		json_kv_string(w, "type", r->gids.g[i].type);
		json_kv_string(w, "netdev", r->gids.g[i].netdev);
		json_object_end(w);
	}
	json_array_end(w);

	json_key(w, "peers");
	if (r->peers_err) {
		json_null(w);
	} else {
		json_array_begin(w);
		for (i = 0; i < r->peers.n; i++) {
			json_object_begin(w);
			json_kv_string(w, "mac", r->peers.p[i].mac);
			json_kv_uint(w, "rx_packets", r->peers.p[i].rx_packets);
			json_kv_uint(w, "last_seen_ms",
				     r->peers.p[i].last_seen_ms);
			json_object_end(w);
		}
		json_array_end(w);
	}

	json_key(w, "counters");
	if (r->counters_err) {
		json_null(w);
	} else {
		json_object_begin(w);
		for (i = 0; i < r->counters.n; i++)
			json_kv_uint(w, r->counters.c[i].name,
				     r->counters.c[i].value);
		json_object_end(w);
	}

	json_key(w, "thunderbolt");
	if (r->has_tbt)
		tbt_link_json(w, &r->tbt);
	else
		json_null(w);

	json_key(w, "warnings");
	json_array_begin(w);
	for (i = 0; i < r->n_warnings; i++)
		json_string(w, r->warnings[i]);
	if (r->has_tbt)
		for (i = 0; i < r->tbt.n_warnings; i++)
			json_string(w, r->tbt.warnings[i]);
	json_array_end(w);
	json_object_end(w);
}

/* Thunderbolt links no device is attached to: the likely next step. */
static size_t unattached_tbt_netdevs(const struct tbr_device *devs, size_t n,
				     char (*names)[IF_NAMESIZE], size_t max)
{
	size_t count = tbt_netdevs(names, max), kept = 0, i, j;

	for (i = 0; i < count; i++) {
		for (j = 0; j < n; j++)
			if (devs[j].port.has_netdev &&
			    !strcmp(devs[j].port.netdev, names[i]))
				break;
		if (j == n)
			memmove(names[kept++], names[i], IF_NAMESIZE);
	}
	return kept;
}

static void provider_json(struct json_writer *w,
			  const struct provider_check *pc)
{
	json_key(w, "provider");
	json_object_begin(w);
	json_kv_bool(w, "found", provider_found(pc));
	json_kv_string(w, "driver_file",
		       pc->driver_file[0] ? pc->driver_file : NULL);
	json_kv_string(w, "library", pc->library[0] ? pc->library : NULL);
	json_kv_bool(w, "library_exists", pc->library_exists);
	json_kv_string(w, "rdmav_drivers",
		       pc->rdmav_drivers[0] ? pc->rdmav_drivers : NULL);
	json_object_end(w);
}

static void provider_text(const struct provider_check *pc)
{
	if (pc->rdmav_drivers[0])
		printf("provider: RDMAV_DRIVERS=%s\n", pc->rdmav_drivers);
	else if (provider_found(pc))
		printf("provider: %s (%s)\n", pc->library, pc->driver_file);
	else if (pc->driver_file[0])
		printf("WARNING: %s names %s, which does not exist: reinstall the provider (make install)\n",
		       pc->driver_file, pc->library);
	else
		printf("WARNING: no /etc/libibverbs.d/*.driver names tbrdma: libibverbs will not see these devices (make install, or RDMAV_DRIVERS=<repo>/provider/libtbrdma)\n");
}

static const struct option status_options[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int cmd_status(int argc, char **argv, const struct global_opts *g)
{
	char tbt_names[16][IF_NAMESIZE];
	struct device_report *r;
	struct tbr_device *devs = NULL;
	struct provider_check pc;
	struct json_writer w;
	struct rdma_nl nl;
	bool json = g->json;
	size_t n = 0, i, n_tbt = 0;
	int opt, rc, err;

	while ((opt = getopt_long(argc, argv, "jh", status_options, NULL)) != -1) {
		switch (opt) {
		case 'j':
			json = true;
			break;
		case 'h':
			print_usage("status", false);
			return TBR_EXIT_OK;
		default:
			print_usage("status", true);
			return TBR_EXIT_USAGE;
		}
	}
	if (argc - optind > 1) {
		print_usage("status", true);
		return TBR_EXIT_USAGE;
	}

	rc = session_open(&nl);
	if (rc)
		return rc;
	if (optind < argc) {
		devs = calloc(1, sizeof(*devs));
		if (!devs) {
			rdma_nl_close(&nl);
			return tbr_error(TBR_EXIT_FAILURE, "out of memory");
		}
		rc = session_device(&nl, argv[optind], devs);
		n = 1;
	} else {
		err = tbr_devices_list(&nl, &devs, &n);
		if (err)
			rc = tbr_error(tbr_exit_for_errno(err),
				       "cannot list RDMA devices: %s",
				       strerror(-err));
		else
			n_tbt = unattached_tbt_netdevs(devs, n, tbt_names, 16);
	}
	r = calloc(1, sizeof(*r));
	if (!rc && !r)
		rc = tbr_error(TBR_EXIT_FAILURE, "out of memory");
	if (rc) {
		free(r);
		free(devs);
		rdma_nl_close(&nl);
		return rc;
	}
	provider_check(&pc);

	if (json) {
		json_init(&w, stdout);
		json_object_begin(&w);
		json_key(&w, "devices");
		json_array_begin(&w);
	}
	for (i = 0; i < n; i++) {
		memset(r, 0, sizeof(*r));
		r->dev = devs[i];
		collect(&nl, r);
		if (json) {
			print_json(&w, r);
		} else {
			if (i)
				printf("\n");
			print_text(r);
		}
	}
	if (json) {
		json_array_end(&w);
		json_key(&w, "unattached_thunderbolt_netdevs");
		json_array_begin(&w);
		for (i = 0; i < n_tbt; i++)
			json_string(&w, tbt_names[i]);
		json_array_end(&w);
		provider_json(&w, &pc);
		json_object_end(&w);
		json_finish(&w);
	} else {
		if (n == 0)
			printf("no tbrdma devices (tbrdma attach NETDEV)\n");
		if (n)
			printf("\n");
		for (i = 0; i < n_tbt; i++)
			printf("%s: Thunderbolt network link without a tbrdma device (tbrdma attach %s, or tbrdma thunderbolt enable)\n",
			       tbt_names[i], tbt_names[i]);
		provider_text(&pc);
	}
	free(r);
	free(devs);
	rdma_nl_close(&nl);
	return TBR_EXIT_OK;
}
