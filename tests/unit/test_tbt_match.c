// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kmod/tbt_match.h: which parent-driver names make a netdev a Thunderbolt
 * link for thunderbolt_attach.  Exactly "thunderbolt-net", nothing close.
 */
#include "tap.h"
#include "../../kmod/tbt_match.h"

int main(void)
{
	static const char *const no[] = {
		"", "thunderbolt", "thunderbolt-ne", "thunderbolt-net ",
		"thunderbolt-netx", "Thunderbolt-net", "thunderbolt_net",
		"xthunderbolt-net", "veth", "e1000e", "usb4-net",
	};
	char buf[32];
	unsigned int i;

	plan(3 + (int)(sizeof(no) / sizeof(no[0])));
	ok(tbr_tbt_driver_match("thunderbolt-net"), "thunderbolt-net matches");
	strcpy(buf, "thunderbolt-net");
	ok(tbr_tbt_driver_match(buf), "a copy in another buffer matches");
	ok(!tbr_tbt_driver_match(NULL), "no driver (NULL name) does not match");
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		ok(!tbr_tbt_driver_match(no[i]), "\"%s\" does not match", no[i]);
	return done();
}
