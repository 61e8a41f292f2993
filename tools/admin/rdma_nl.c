// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <libmnl/libmnl.h>
#include <rdma/rdma_netlink.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rdma_nl.h"

/* Big enough for one dump message of any device; the kernel's are ~1 KiB. */
#define RDMA_NL_BUFSIZE 32768

int rdma_nl_open(struct rdma_nl *nl)
{
	memset(nl, 0, sizeof(*nl));
	nl->sock = mnl_socket_open(NETLINK_RDMA);
	if (!nl->sock)
		return -errno;
	if (mnl_socket_bind(nl->sock, 0, MNL_SOCKET_AUTOPID) < 0) {
		int err = -errno;

		mnl_socket_close(nl->sock);
		nl->sock = NULL;
		return err;
	}
	nl->portid = mnl_socket_get_portid(nl->sock);
	nl->seq = (unsigned int)time(NULL);
	return 0;
}

void rdma_nl_close(struct rdma_nl *nl)
{
	if (nl->sock)
		mnl_socket_close(nl->sock);
	nl->sock = NULL;
}

static struct nlmsghdr *put_request(char *buf, struct rdma_nl *nl,
				    uint16_t cmd, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);

	nlh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd);
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = ++nl->seq;
	return nlh;
}

/*
 * Send @nlh and feed every answer to @cb until the kernel's ack, the end
 * of a dump, or an error.  Returns 0 or -errno (the kernel's error).
 */
static int transact(struct rdma_nl *nl, struct nlmsghdr *nlh, mnl_cb_t cb,
		    void *arg)
{
	unsigned int seq = nlh->nlmsg_seq;
	char *buf;
	ssize_t n;
	int ret;

	if (mnl_socket_sendto(nl->sock, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	buf = malloc(RDMA_NL_BUFSIZE);
	if (!buf)
		return -ENOMEM;
	do {
		n = mnl_socket_recvfrom(nl->sock, buf, RDMA_NL_BUFSIZE);
		if (n < 0) {
			ret = -errno;
			break;
		}
		errno = 0;
		ret = mnl_cb_run(buf, n, seq, nl->portid, cb, arg);
		if (ret < 0)
			ret = errno ? -errno : -EIO;
	} while (ret > MNL_CB_STOP);
	free(buf);
	return ret < 0 ? ret : 0;
}

/*
 * Parse a message's attributes into @tb (indexed by type), keeping only the
 * types this tool knows and whose payload has the documented type: an attr
 * that fails validation is treated as absent rather than read out of bounds.
 */
struct attr_table {
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX];
};

static enum mnl_attr_data_type attr_data_type(uint16_t type)
{
	switch (type) {
	case RDMA_NLDEV_ATTR_DEV_INDEX:
	case RDMA_NLDEV_ATTR_PORT_INDEX:
	case RDMA_NLDEV_ATTR_NDEV_INDEX:
		return MNL_TYPE_U32;
	case RDMA_NLDEV_ATTR_NODE_GUID:
	case RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE:
		return MNL_TYPE_U64;
	case RDMA_NLDEV_ATTR_PORT_STATE:
	case RDMA_NLDEV_ATTR_PORT_PHYS_STATE:
		return MNL_TYPE_U8;
	case RDMA_NLDEV_ATTR_DEV_NAME:
	case RDMA_NLDEV_ATTR_FW_VERSION:
	case RDMA_NLDEV_ATTR_NDEV_NAME:
	case RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME:
		return MNL_TYPE_NUL_STRING;
	case RDMA_NLDEV_ATTR_STAT_HWCOUNTERS:
	case RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY:
		return MNL_TYPE_NESTED;
	default:
		return MNL_TYPE_UNSPEC;
	}
}

static int collect_attr(const struct nlattr *attr, void *data)
{
	struct attr_table *t = data;
	uint16_t type = mnl_attr_get_type(attr);
	enum mnl_attr_data_type dt;

	if (type >= RDMA_NLDEV_ATTR_MAX)
		return MNL_CB_OK;
	dt = attr_data_type(type);
	if (dt == MNL_TYPE_UNSPEC || mnl_attr_validate(attr, dt) < 0)
		return MNL_CB_OK;
	t->tb[type] = attr;
	return MNL_CB_OK;
}

static void parse_message(const struct nlmsghdr *nlh, struct attr_table *t)
{
	memset(t, 0, sizeof(*t));
	mnl_attr_parse(nlh, 0, collect_attr, t);
}

static void copy_string(char *dst, size_t size, const struct nlattr *attr)
{
	snprintf(dst, size, "%s", attr ? mnl_attr_get_str(attr) : "");
}

int rdma_nl_parse_dev(const struct nlmsghdr *nlh, struct rdma_nl_dev *dev)
{
	struct attr_table t;

	parse_message(nlh, &t);
	if (!t.tb[RDMA_NLDEV_ATTR_DEV_INDEX] || !t.tb[RDMA_NLDEV_ATTR_DEV_NAME])
		return -EPROTO;
	memset(dev, 0, sizeof(*dev));
	dev->index = mnl_attr_get_u32(t.tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
	copy_string(dev->name, sizeof(dev->name),
		    t.tb[RDMA_NLDEV_ATTR_DEV_NAME]);
	copy_string(dev->fw_version, sizeof(dev->fw_version),
		    t.tb[RDMA_NLDEV_ATTR_FW_VERSION]);
	if (t.tb[RDMA_NLDEV_ATTR_NODE_GUID])
		dev->node_guid =
			mnl_attr_get_u64(t.tb[RDMA_NLDEV_ATTR_NODE_GUID]);
	/* In a device message, PORT_INDEX is the number of the last port. */
	if (t.tb[RDMA_NLDEV_ATTR_PORT_INDEX])
		dev->num_ports =
			mnl_attr_get_u32(t.tb[RDMA_NLDEV_ATTR_PORT_INDEX]);
	return 0;
}

int rdma_nl_parse_port(const struct nlmsghdr *nlh, struct rdma_nl_port *port)
{
	struct attr_table t;

	parse_message(nlh, &t);
	if (!t.tb[RDMA_NLDEV_ATTR_PORT_STATE])
		return -EPROTO;
	memset(port, 0, sizeof(*port));
	port->state = mnl_attr_get_u8(t.tb[RDMA_NLDEV_ATTR_PORT_STATE]);
	if (t.tb[RDMA_NLDEV_ATTR_PORT_PHYS_STATE])
		port->phys_state =
			mnl_attr_get_u8(t.tb[RDMA_NLDEV_ATTR_PORT_PHYS_STATE]);
	if (t.tb[RDMA_NLDEV_ATTR_NDEV_NAME]) {
		port->has_netdev = true;
		copy_string(port->netdev, sizeof(port->netdev),
			    t.tb[RDMA_NLDEV_ATTR_NDEV_NAME]);
		if (t.tb[RDMA_NLDEV_ATTR_NDEV_INDEX])
			port->netdev_index = mnl_attr_get_u32(
				t.tb[RDMA_NLDEV_ATTR_NDEV_INDEX]);
	}
	return 0;
}

/* One STAT_HWCOUNTER_ENTRY: a name and a value. */
static int parse_counter_entry(const struct nlattr *entry,
			       struct counter_set *set)
{
	struct attr_table t;

	memset(&t, 0, sizeof(t));
	mnl_attr_parse_nested(entry, collect_attr, &t);
	if (!t.tb[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME] ||
	    !t.tb[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE])
		return -EPROTO;
	return counter_set_put(
		set,
		mnl_attr_get_str(t.tb[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME]),
		mnl_attr_get_u64(t.tb[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE]));
}

int rdma_nl_parse_hw_counters(const struct nlmsghdr *nlh,
			      struct counter_set *set)
{
	const struct nlattr *entry;
	struct attr_table t;
	int err;

	parse_message(nlh, &t);
	counter_set_clear(set);
	if (!t.tb[RDMA_NLDEV_ATTR_STAT_HWCOUNTERS])
		return -EPROTO;
	mnl_attr_for_each_nested(entry, t.tb[RDMA_NLDEV_ATTR_STAT_HWCOUNTERS]) {
		if (mnl_attr_get_type(entry) !=
			    RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY ||
		    mnl_attr_validate(entry, MNL_TYPE_NESTED) < 0)
			continue;
		err = parse_counter_entry(entry, set);
		if (err)
			return err;
	}
	return 0;
}

struct dev_list_ctx {
	int (*cb)(const struct rdma_nl_dev *dev, void *arg);
	void *arg;
	int result;	/* the first non-zero return of cb */
};

static int dev_list_msg(const struct nlmsghdr *nlh, void *data)
{
	struct dev_list_ctx *ctx = data;
	struct rdma_nl_dev dev;

	/* After the callback said stop, drain the dump without calling it. */
	if (ctx->result || rdma_nl_parse_dev(nlh, &dev))
		return MNL_CB_OK;
	ctx->result = ctx->cb(&dev, ctx->arg);
	return MNL_CB_OK;
}

int rdma_nl_dev_list(struct rdma_nl *nl,
		     int (*cb)(const struct rdma_nl_dev *dev, void *arg),
		     void *arg)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct dev_list_ctx ctx = { .cb = cb, .arg = arg };
	struct nlmsghdr *nlh;
	int err;

	nlh = put_request(buf, nl, RDMA_NLDEV_CMD_GET, NLM_F_DUMP);
	err = transact(nl, nlh, dev_list_msg, &ctx);
	return err ? err : ctx.result;
}

struct dev_find_ctx {
	const char *name;
	struct rdma_nl_dev *dev;
};

static int dev_find_cb(const struct rdma_nl_dev *dev, void *arg)
{
	struct dev_find_ctx *ctx = arg;

	if (strcmp(dev->name, ctx->name))
		return 0;
	*ctx->dev = *dev;
	return 1;
}

int rdma_nl_dev_by_name(struct rdma_nl *nl, const char *name,
			struct rdma_nl_dev *dev)
{
	struct dev_find_ctx ctx = { .name = name, .dev = dev };
	int ret = rdma_nl_dev_list(nl, dev_find_cb, &ctx);

	if (ret < 0)
		return ret;
	return ret == 1 ? 0 : -ENODEV;
}

struct parse_ctx {
	int (*parse)(const struct nlmsghdr *nlh, void *out);
	void *out;
	int err;	/* -ENODATA until a message was parsed */
};

static int parse_one_msg(const struct nlmsghdr *nlh, void *data)
{
	struct parse_ctx *ctx = data;

	ctx->err = ctx->parse(nlh, ctx->out);
	return MNL_CB_OK;
}

static int parse_port_any(const struct nlmsghdr *nlh, void *out)
{
	return rdma_nl_parse_port(nlh, out);
}

static int parse_counters_any(const struct nlmsghdr *nlh, void *out)
{
	return rdma_nl_parse_hw_counters(nlh, out);
}

static void put_dev_port(struct nlmsghdr *nlh, uint32_t dev_index,
			 uint32_t port)
{
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, port);
}

int rdma_nl_port_get(struct rdma_nl *nl, uint32_t dev_index, uint32_t port,
		     struct rdma_nl_port *out)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct parse_ctx ctx = { parse_port_any, out, -ENODATA };
	struct nlmsghdr *nlh;
	int err;

	nlh = put_request(buf, nl, RDMA_NLDEV_CMD_PORT_GET, NLM_F_ACK);
	put_dev_port(nlh, dev_index, port);
	err = transact(nl, nlh, parse_one_msg, &ctx);
	return err ? err : ctx.err;
}

int rdma_nl_hw_counters(struct rdma_nl *nl, uint32_t dev_index,
			uint32_t port, struct counter_set *set)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct parse_ctx ctx = { parse_counters_any, set, -ENODATA };
	struct nlmsghdr *nlh;
	int err;

	nlh = put_request(buf, nl, RDMA_NLDEV_CMD_STAT_GET, NLM_F_ACK);
	put_dev_port(nlh, dev_index, port);
	err = transact(nl, nlh, parse_one_msg, &ctx);
	/*
	 * The core answers EINVAL both for a device without hw counters and
	 * for a bad port; the port was checked by the caller's lookup.
	 */
	if (err == -EINVAL)
		return -EOPNOTSUPP;
	return err ? err : ctx.err;
}

int rdma_nl_link_add(struct rdma_nl *nl, const char *name, const char *type,
		     const char *netdev)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;

	nlh = put_request(buf, nl, RDMA_NLDEV_CMD_NEWLINK, NLM_F_ACK);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, name);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_LINK_TYPE, type);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_NDEV_NAME, netdev);
	return transact(nl, nlh, NULL, NULL);
}

int rdma_nl_link_del(struct rdma_nl *nl, uint32_t dev_index)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;

	nlh = put_request(buf, nl, RDMA_NLDEV_CMD_DELLINK, NLM_F_ACK);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
	return transact(nl, nlh, NULL, NULL);
}

const char *rdma_port_state_name(uint8_t state)
{
	static const char *const names[] = {
		"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER",
	};

	return state < sizeof(names) / sizeof(names[0]) ? names[state] :
							  "UNKNOWN";
}

const char *rdma_port_phys_state_name(uint8_t phys_state)
{
	static const char *const names[] = {
		"NOP", "SLEEP", "POLLING", "DISABLED",
		"PORT_CONFIGURATION_TRAINING", "LINK_UP",
		"LINK_ERROR_RECOVERY", "PHY_TEST",
	};

	return phys_state < sizeof(names) / sizeof(names[0]) ?
		       names[phys_state] : "UNKNOWN";
}
