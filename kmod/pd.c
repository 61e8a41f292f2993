// SPDX-License-Identifier: GPL-2.0-only
/*
 * Protection domains.  A PD groups the objects (MRs, QPs, AHs) that may be
 * used together; the PD number is what the data path compares.
 */
#include "tbrdma.h"

int tbr_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct tbr_dev *tdev = to_tdev(ibpd->device);
	struct tbr_pd *pd = to_tpd(ibpd);
	struct tbrdma_alloc_pd_resp resp = {};
	int pdn;
	int err;

	/* The ID range is the PD limit query_device reports. */
	pdn = ida_alloc_range(&tdev->pd_ida, 1, TBR_MAX_PD, GFP_KERNEL);
	if (pdn < 0)
		return pdn == -ENOSPC ? -ENOMEM : pdn;
	pd->pdn = pdn;

	if (udata) {
		resp.pdn = pd->pdn;
		err = tbr_respond(udata, &resp, sizeof(resp));
		if (err) {
			ida_free(&tdev->pd_ida, pd->pdn);
			return err;
		}
	}
	return 0;
}

int tbr_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct tbr_dev *tdev = to_tdev(ibpd->device);

	ida_free(&tdev->pd_ida, to_tpd(ibpd)->pdn);
	return 0;
}
