// SPDX-License-Identifier: GPL-2.0-only
/* The port speed/width the kernel module reports for a link speed (kmod/speed.h). */
#include "tap.h"

/* The kernel's enum ib_port_speed / ib_port_width values. */
enum { IB_SPEED_SDR = 1, IB_SPEED_DDR = 2, IB_SPEED_QDR = 4,
       IB_SPEED_FDR10 = 8, IB_SPEED_FDR = 16, IB_SPEED_EDR = 32 };
enum { IB_WIDTH_1X = 1, IB_WIDTH_4X = 2 };

#include "../../kmod/speed.h"

int main(void)
{
	static const struct {
		unsigned int mbps;
		int speed, width;
	} cases[] = {
		{ 0, IB_SPEED_FDR10, IB_WIDTH_1X },	/* unknown: 10 Gb/s */
		{ 10, IB_SPEED_SDR, IB_WIDTH_1X },
		{ 1000, IB_SPEED_SDR, IB_WIDTH_1X },
		{ 1001, IB_SPEED_FDR10, IB_WIDTH_1X },
		{ 10000, IB_SPEED_FDR10, IB_WIDTH_1X },	/* veth reports this */
		{ 20000, IB_SPEED_DDR, IB_WIDTH_4X },
		{ 25000, IB_SPEED_EDR, IB_WIDTH_1X },
		{ 40000, IB_SPEED_FDR10, IB_WIDTH_4X },
		{ 40001, IB_SPEED_EDR, IB_WIDTH_4X },
		{ 80000, IB_SPEED_EDR, IB_WIDTH_4X },	/* Thunderbolt 5 */
		{ ~0U, IB_SPEED_EDR, IB_WIDTH_4X },	/* loopback */
	};
	unsigned int i;

	plan(2 * sizeof(cases) / sizeof(cases[0]));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tbr_ib_rate r = tbr_ib_rate_for_mbps(cases[i].mbps);

		is_int(r.speed, cases[i].speed, "%u Mb/s: speed", cases[i].mbps);
		is_int(r.width, cases[i].width, "%u Mb/s: width", cases[i].mbps);
	}
	return done();
}
