// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tools/tbrdma's parsers on input built here: RDMA netlink answers laid
 * out the way the kernel's nldev.c lays them out (device, port, hw
 * counters), including malformed attributes; the tbrdma_peers attribute;
 * GIDs as sysfs prints them.
 */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <rdma/rdma_netlink.h>

#include "gids.h"
#include "peers.h"
#include "rdma_nl.h"
#include "tap.h"

static char buf[8192];

static struct nlmsghdr *new_msg(uint16_t cmd)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);

	nlh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd);
	return nlh;
}

static void put_counter(struct nlmsghdr *nlh, const char *name, uint64_t v)
{
	struct nlattr *entry;

	entry = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, name);
	mnl_attr_put_u64(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, v);
	mnl_attr_nest_end(nlh, entry);
}

static void test_dev(void)
{
	struct rdma_nl_dev dev;
	struct nlmsghdr *nlh;

	nlh = new_msg(RDMA_NLDEV_CMD_GET);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 7);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, "tbr0");
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_FW_VERSION, "0.2.0");
	mnl_attr_put_u64(nlh, RDMA_NLDEV_ATTR_NODE_GUID, 0x0200aabbccddeeffULL);
	/* An attribute from a newer kernel than our header. */
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_MAX + 3, 1);
	is_int(rdma_nl_parse_dev(nlh, &dev), 0, "device message parses");
	ok(dev.index == 7 && !strcmp(dev.name, "tbr0") && dev.num_ports == 1 &&
		   !strcmp(dev.fw_version, "0.2.0") &&
		   dev.node_guid == 0x0200aabbccddeeffULL,
	   "index, name, ports, firmware and GUID read");

	nlh = new_msg(RDMA_NLDEV_CMD_GET);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, "noindex");
	is_int(rdma_nl_parse_dev(nlh, &dev), -EPROTO,
	       "a device message without an index is refused");

	/* A u32 where the name should be: refused, not read as a string. */
	nlh = new_msg(RDMA_NLDEV_CMD_GET);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 1);
	mnl_attr_put(nlh, RDMA_NLDEV_ATTR_DEV_NAME, 4, "abcd");
	is_int(rdma_nl_parse_dev(nlh, &dev), -EPROTO,
	       "a name that is not NUL-terminated is not used");
}

static void test_port(void)
{
	struct rdma_nl_port port;
	struct nlmsghdr *nlh;

	nlh = new_msg(RDMA_NLDEV_CMD_PORT_GET);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 7);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_PORT_STATE, 4);
	mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_PORT_PHYS_STATE, 5);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_NDEV_INDEX, 12);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_NDEV_NAME, "thunderbolt0");
	is_int(rdma_nl_parse_port(nlh, &port), 0, "port message parses");
	ok(port.state == 4 && port.phys_state == 5 && port.has_netdev &&
		   port.netdev_index == 12 &&
		   !strcmp(port.netdev, "thunderbolt0"),
	   "state, physical state and netdev read");
	is_str(rdma_port_state_name(port.state), "ACTIVE", "state 4 is ACTIVE");
	is_str(rdma_port_phys_state_name(port.phys_state), "LINK_UP",
	       "physical state 5 is LINK_UP");
	is_str(rdma_port_state_name(99), "UNKNOWN", "unknown state named so");

	/* The netdev in another namespace: the kernel leaves it out. */
	nlh = new_msg(RDMA_NLDEV_CMD_PORT_GET);
	mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_PORT_STATE, 1);
	rdma_nl_parse_port(nlh, &port);
	ok(!port.has_netdev && port.state == 1, "port without a netdev");
}

static void test_counters(void)
{
	struct counter_set set;
	struct nlmsghdr *nlh;
	struct nlattr *table, *entry;
	uint64_t v;

	nlh = new_msg(RDMA_NLDEV_CMD_STAT_GET);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 7);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	/* The kernel nests with NLA_F_NESTED (nla_nest_start). */
	table = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
	table->nla_type |= NLA_F_NESTED;
	put_counter(nlh, "tx_packets", 12);
	put_counter(nlh, "tx_bytes", 1ULL << 40);
	put_counter(nlh, "rx_checksum_errors", 0);
	mnl_attr_nest_end(nlh, table);
	is_int(rdma_nl_parse_hw_counters(nlh, &set), 0,
	       "hw counter table parses");
	ok(set.n == 3 && counter_set_get(&set, "tx_bytes", &v) &&
		   v == 1ULL << 40 && counter_set_get(&set, "tx_packets", &v) &&
		   v == 12,
	   "every counter with its 64-bit value");

	nlh = new_msg(RDMA_NLDEV_CMD_STAT_GET);
	table = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
	put_counter(nlh, "tx_packets", 1);
	entry = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, "x");
	mnl_attr_nest_end(nlh, entry);
	mnl_attr_nest_end(nlh, table);
	is_int(rdma_nl_parse_hw_counters(nlh, &set), -EPROTO,
	       "an entry without a value is an error, not a zero");

	nlh = new_msg(RDMA_NLDEV_CMD_STAT_GET);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 7);
	is_int(rdma_nl_parse_hw_counters(nlh, &set), -EPROTO,
	       "an answer without a counter table is an error");
}

static void test_peers(void)
{
	struct peer_list list;

	peers_parse("02:00:00:00:00:02 1234 17\n"
		    "0a:1b:2c:3d:4e:5f 18446744073709551615 0\n",
		    &list);
	ok(list.n == 2 && list.malformed == 0, "two peers");
	ok(!strcmp(list.p[0].mac, "02:00:00:00:00:02") &&
		   list.p[0].rx_packets == 1234 && list.p[0].last_seen_ms == 17,
	   "MAC, frames and age of the first");
	ok(list.p[1].rx_packets == UINT64_MAX, "64-bit frame counts");

	peers_parse("", &list);
	ok(list.n == 0 && list.malformed == 0, "loopback mode: empty");

	peers_parse("02:00:00:00:00:02 1 2\n\n"
		    "02:00:00:00:00:0g 1 2\n"
		    "02:00:00:00:00:03 -1 2\n"
		    "02:00:00:00:00:04 1\n"
		    "02:00:00:00:00:05 1 2 3\n"
		    "02:00:00:00:00:06 7 8",
		    &list);
	ok(list.n == 2 && list.malformed == 4 &&
		   !strcmp(list.p[1].mac, "02:00:00:00:00:06") &&
		   list.p[1].last_seen_ms == 8,
	   "bad MAC, sign, too few or many fields skipped; no final newline ok");
}

static void check_gid(const char *in, int rc, const char *want)
{
	char out[INET6_ADDRSTRLEN] = "";
	int got = gid_format(in, out, sizeof(out));

	if (rc)
		is_int(got, rc, "GID '%s' -> error %d", in, rc);
	else
		ok(got == 0 && !strcmp(out, want), "GID '%s' -> %s (got %s)",
		   in, want, out);
}

int main(void)
{
	plan(25);
	test_dev();
	test_port();
	test_counters();
	test_peers();
	check_gid("fe80:0000:0000:0000:0200:00ff:fe00:0001", 0,
		  "fe80::200:ff:fe00:1");
	check_gid("0000:0000:0000:0000:0000:ffff:0a00:0001", 0,
		  "::ffff:10.0.0.1");
	check_gid("0000:0000:0000:0000:0000:0000:0000:0000", -ENODATA, NULL);
	check_gid("fe80:0000:0000:0000:0200:00ff:fe00", -EINVAL, NULL);
	check_gid("fe80:0000:0000:0000:0200:00ff:fe00:0001:", -EINVAL, NULL);
	check_gid("-e80:0000:0000:0000:0200:00ff:fe00:0001", -EINVAL, NULL);
	return done();
}
