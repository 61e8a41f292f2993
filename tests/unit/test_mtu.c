// SPDX-License-Identifier: GPL-2.0-only
/* The path MTU the kernel module derives from a netdev MTU (kmod/mtu.h). */
#include "tap.h"
#include "../../kmod/mtu.h"

int main(void)
{
	static const struct {
		unsigned int netdev_mtu, ib_mtu;
	} cases[] = {
		{ 0, 0 },
		{ 68, 0 },		/* the smallest MTU Linux allows */
		{ 256 + TBR_FRAME_OVERHEAD - 1, 0 },
		{ 256 + TBR_FRAME_OVERHEAD, 256 },
		{ 512 + TBR_FRAME_OVERHEAD, 512 },
		{ 1500, 1024 },	/* Ethernet default */
		{ 2048 + TBR_FRAME_OVERHEAD - 1, 1024 },
		{ 2048 + TBR_FRAME_OVERHEAD, 2048 },
		{ 4096 + TBR_FRAME_OVERHEAD - 1, 2048 },
		{ 4096 + TBR_FRAME_OVERHEAD, 4096 },
		{ 9000, 4096 },		/* jumbo frames */
		{ 65522, 4096 },	/* thunderbolt-net's maximum */
		{ 65536, 4096 },	/* lo */
		{ 0xffffffffu, 4096 },
	};
	unsigned int i;

	plan(sizeof(cases) / sizeof(cases[0]));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		is_int(tbr_ib_mtu_for_netdev_mtu(cases[i].netdev_mtu),
		       cases[i].ib_mtu, "netdev MTU %u -> IB MTU %u",
		       cases[i].netdev_mtu, cases[i].ib_mtu);
	return done();
}
