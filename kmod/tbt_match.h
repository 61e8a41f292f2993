/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which netdevs are Thunderbolt links: those whose parent device is bound to
 * the driver "thunderbolt-net" (drivers/net/thunderbolt.c registers its
 * netdev with the tb_service as parent, 6.1 through 6.12).  Pure C with no
 * kernel dependency, so the host unit tests compile this header as it is.
 */
#ifndef TBRDMA_TBT_MATCH_H
#define TBRDMA_TBT_MATCH_H

#define TBR_TBT_DRIVER_NAME	"thunderbolt-net"

/* Is @name (a parent device's driver name, maybe NULL) thunderbolt-net? */
static inline int tbr_tbt_driver_match(const char *name)
{
	const char *want = TBR_TBT_DRIVER_NAME;

	if (!name)
		return 0;
	while (*want && *name == *want) {
		name++;
		want++;
	}
	return !*want && !*name;
}

#endif /* TBRDMA_TBT_MATCH_H */
