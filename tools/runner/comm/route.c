// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Which RDMA device reaches a peer, found the way RDMA CM finds it: ask
 * the kernel for the route to the peer's address (in this process's
 * network namespace, over rtnetlink, as `ip route get` does), and take
 * the device whose port has the route's source address as a GID (RoCE:
 * ::ffff:a.b.c.d for IPv4, the address itself for IPv6), the one on
 * the route's netdev when several do. A route through a gateway is no
 * cable: that peer is reached over IP only (the control connections),
 * and has no RDMA link. See route.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <dirent.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/util.h"
#include "comm/route.h"

/* A numeric address: its family and bytes (4 or 16), or -1. */
static int parse_addr(const char *s, int *family, unsigned char *bytes)
{
	char buf[INET6_ADDRSTRLEN];
	size_t n = strlen(s);

	if (n >= 2 && s[0] == '[' && s[n - 1] == ']' && n - 2 < sizeof(buf)) {
		memcpy(buf, s + 1, n - 2);
		buf[n - 2] = 0;
		s = buf;
	}
	if (inet_pton(AF_INET, s, bytes) == 1) {
		*family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, bytes) == 1) {
		*family = AF_INET6;
		return 0;
	}
	return -1;
}

/* The route to FAMILY/DST over rtnetlink. */
static int ask_kernel(int family, const unsigned char *dst,
		      struct tp_route *r)
{
	struct {
		struct nlmsghdr nh;
		struct rtmsg rt;
		char attrs[64];
	} req;
	union {
		struct nlmsghdr nh;
		char b[8192];
	} ans;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	int alen = family == AF_INET ? 4 : 16, fd, len;
	struct rtattr *a;
	struct nlmsghdr *nh;
	struct timeval tv = { .tv_sec = 2 };

	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_type = RTM_GETROUTE;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	req.nh.nlmsg_seq = 1;
	req.rt.rtm_family = (unsigned char)family;
	req.rt.rtm_dst_len = (unsigned char)(alen * 8);
	a = (struct rtattr *)((char *)&req + NLMSG_ALIGN(NLMSG_LENGTH(sizeof(req.rt))));
	a->rta_type = RTA_DST;
	a->rta_len = (unsigned short)RTA_LENGTH(alen);
	memcpy(RTA_DATA(a), dst, (size_t)alen);
	req.nh.nlmsg_len = NLMSG_ALIGN(NLMSG_LENGTH(sizeof(req.rt))) +
			   RTA_ALIGN(a->rta_len);

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0) {
		close(fd);
		return -1;
	}
	len = (int)recv(fd, &ans, sizeof(ans), 0);
	close(fd);
	if (len < (int)sizeof(struct nlmsghdr))
		return -1;
	nh = &ans.nh;
	if (!NLMSG_OK(nh, (unsigned)len) || nh->nlmsg_type != RTM_NEWROUTE)
		return -1;	/* NLMSG_ERROR: no route (unreachable) */
	{
		struct rtmsg *rt = NLMSG_DATA(nh);
		int rlen = (int)RTM_PAYLOAD(nh);

		r->local = rt->rtm_type == RTN_LOCAL;
		if (rt->rtm_type != RTN_UNICAST && rt->rtm_type != RTN_LOCAL)
			return -1;	/* blackhole, prohibit, ... */
		r->onlink = 1;
		for (a = RTM_RTA(rt); RTA_OK(a, rlen); a = RTA_NEXT(a, rlen)) {
			switch (a->rta_type) {
			case RTA_OIF:
				if (RTA_PAYLOAD(a) >= sizeof(int))
					memcpy(&r->ifindex, RTA_DATA(a),
					       sizeof(int));
				break;
			case RTA_GATEWAY:
				r->onlink = 0;
				break;
			case RTA_PREFSRC:
				if (RTA_PAYLOAD(a) >= (unsigned)alen)
					inet_ntop(family, RTA_DATA(a), r->src,
						  sizeof(r->src));
				break;
			}
		}
	}
	if (!r->ifindex || !if_indextoname((unsigned)r->ifindex, r->ifname))
		snprintf(r->ifname, sizeof(r->ifname), "?");
	return 0;
}

int tp_route_get(const char *addr, struct tp_route *r)
{
	unsigned char dst[16];
	int family;

	memset(r, 0, sizeof(*r));
	if (parse_addr(addr, &family, dst))
		return -1;
	if (ask_kernel(family, dst, r))
		return -1;
	if (!r->src[0]) {
		/* no preferred source in the answer: the one connect() picks */
		struct sockaddr_storage ss = { 0 };
		socklen_t sl;
		int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		if (family == AF_INET) {
			struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

			s4->sin_family = AF_INET;
			s4->sin_port = htons(9);
			memcpy(&s4->sin_addr, dst, 4);
			sl = sizeof(*s4);
		} else {
			struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

			s6->sin6_family = AF_INET6;
			s6->sin6_port = htons(9);
			memcpy(&s6->sin6_addr, dst, 16);
			sl = sizeof(*s6);
		}
		if (fd >= 0 && !connect(fd, (struct sockaddr *)&ss, sl) &&
		    !getsockname(fd, (struct sockaddr *)&ss, &sl))
			inet_ntop(family, family == AF_INET ?
				  (void *)&((struct sockaddr_in *)&ss)->sin_addr :
				  (void *)&((struct sockaddr_in6 *)&ss)->sin6_addr,
				  r->src, sizeof(r->src));
		if (fd >= 0)
			close(fd);
	}
	return r->src[0] ? 0 : -1;
}

/* The first line of a sysfs file, without its newline; -1 if none. */
static int read_line(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (!fgets(out, (int)len, f))
		out[0] = 0;
	fclose(f);
	out[strcspn(out, "\n")] = 0;
	return 0;
}

int tp_route_device(const struct tp_route *r, int ib_port, char *dev,
		    size_t devlen, int *gid_index)
{
	unsigned char want[16], g[16];
	int family, best = 0;
	struct dirent *de;
	DIR *d;

	dev[0] = 0;
	if (parse_addr(r->src, &family, want))
		return -1;
	if (family == AF_INET) {	/* the IPv4-mapped GID */
		memmove(want + 12, want, 4);
		memset(want, 0, 10);
		want[10] = want[11] = 0xff;
	}
	d = opendir("/sys/class/infiniband");
	if (!d)
		return -1;
	/* devices in name order would need a sort: take the best match,
	 * ties to the smaller name, so every run picks the same */
	while ((de = readdir(d))) {
		char path[512], line[64];
		int i;

		if (de->d_name[0] == '.')
			continue;
		for (i = 0; i < 256; i++) {
			int score;

			snprintf(path, sizeof(path),
				 "/sys/class/infiniband/%s/ports/%d/gids/%d",
				 de->d_name, ib_port, i);
			if (read_line(path, line, sizeof(line)))
				break;
			if (inet_pton(AF_INET6, line, g) != 1 ||
			    memcmp(g, want, 16))
				continue;
			/* the GID's netdev: the route's scores higher */
			snprintf(path, sizeof(path),
				 "/sys/class/infiniband/%s/ports/%d/gid_attrs/ndevs/%d",
				 de->d_name, ib_port, i);
			score = 1;
			if (!read_line(path, line, sizeof(line)) &&
			    !strcmp(line, r->ifname))
				score = 2;
			if (score > best ||
			    (score == best && strcmp(de->d_name, dev) < 0)) {
				best = score;
				snprintf(dev, devlen, "%s", de->d_name);
				*gid_index = i;
			}
			break;
		}
	}
	closedir(d);
	return best ? 0 : -1;
}

int tp_local_addrs(char *out, size_t len)
{
	struct ifaddrs *ifa, *i;
	size_t pos = 0;
	int n = 0;

	out[0] = 0;
	if (getifaddrs(&ifa))
		return 0;
	for (i = ifa; i; i = i->ifa_next) {
		char a[INET6_ADDRSTRLEN];
		const void *p;

		if (!i->ifa_addr || !(i->ifa_flags & IFF_UP) ||
		    (i->ifa_flags & IFF_LOOPBACK))
			continue;
		if (i->ifa_addr->sa_family == AF_INET) {
			p = &((struct sockaddr_in *)i->ifa_addr)->sin_addr;
		} else if (i->ifa_addr->sa_family == AF_INET6) {
			const struct in6_addr *a6 =
				&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;

			/* a link-local address needs its interface: not a
			 * name another host can use */
			if (IN6_IS_ADDR_LINKLOCAL(a6))
				continue;
			p = a6;
		} else {
			continue;
		}
		inet_ntop(i->ifa_addr->sa_family, p, a, sizeof(a));
		if (pos + strlen(a) + 4 >= len || n == TP_MAX_ADDRS - 1)
			break;
		tp_appendf(out, len, &pos, i->ifa_addr->sa_family == AF_INET6 ?
			   "%s[%s]" : "%s%s", n ? "|" : "", a);
		n++;
	}
	freeifaddrs(ifa);
	return n;
}
