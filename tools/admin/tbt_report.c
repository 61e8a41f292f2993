// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdio.h>

#include "tbt_report.h"

int tbt_link_examine(const char *netdev, struct tbt_link *link)
{
	int err = tbt_link_find(netdev, link);

	if (err)
		return err;
	tbt_link_judge(link, tbt_domain_fastest_lane(link->domain));
	return 0;
}

static void print_direction(FILE *out, const char *name,
			    const struct tbt_direction *d)
{
	if (!d->lanes || d->gbps_per_lane <= 0) {
		fprintf(out, "%s not reported", name);
		return;
	}
	fprintf(out, "%s %u x %.0f Gb/s", name, d->lanes, d->gbps_per_lane);
}

void tbt_link_print(FILE *out, const struct tbt_link *link, const char *indent)
{
	size_t i;

	fprintf(out, "%sthunderbolt  %s", indent, link->xdomain);
	if (link->remote_name[0])
		fprintf(out, " \"%s\"", link->remote_name);
	if (link->remote_vendor[0])
		fprintf(out, " (%s)", link->remote_vendor);
	fprintf(out, " via router %s", link->router);
	if (link->generation)
		fprintf(out, ", generation %u (%s)", link->generation,
			tbt_generation_name(link->generation));
	fprintf(out, "\n%s             ", indent);
	print_direction(out, "rx", &link->rx);
	fputs(", ", out);
	print_direction(out, "tx", &link->tx);
	if (link->expected_lanes)
		fprintf(out, "; expected %u x %.0f Gb/s", link->expected_lanes,
			link->expected_gbps_per_lane);
	fputc('\n', out);
	for (i = 0; i < link->n_warnings; i++)
		fprintf(out, "%sWARNING      %s\n", indent, link->warnings[i]);
}

static void direction_json(struct json_writer *w, const char *key,
			   const struct tbt_direction *d)
{
	json_key(w, key);
	json_object_begin(w);
	json_kv_uint(w, "lanes", d->lanes);
	json_kv_double(w, "gbps_per_lane", d->gbps_per_lane, 1);
	json_object_end(w);
}

void tbt_link_json(struct json_writer *w, const struct tbt_link *link)
{
	size_t i;

	json_object_begin(w);
	json_kv_string(w, "netdev", link->netdev);
	json_kv_string(w, "xdomain", link->xdomain);
	json_kv_string(w, "remote_name", link->remote_name);
	json_kv_string(w, "remote_vendor", link->remote_vendor);
	json_kv_string(w, "router", link->router);
	json_kv_string(w, "domain", link->domain);
	json_kv_uint(w, "generation", link->generation);
	direction_json(w, "rx", &link->rx);
	direction_json(w, "tx", &link->tx);
	json_kv_uint(w, "expected_lanes", link->expected_lanes);
	json_kv_double(w, "expected_gbps_per_lane",
		       link->expected_gbps_per_lane, 1);
	json_kv_bool(w, "below_capability", link->below_capability);
	json_key(w, "warnings");
	json_array_begin(w);
	for (i = 0; i < link->n_warnings; i++)
		json_string(w, link->warnings[i]);
	json_array_end(w);
	json_object_end(w);
}
