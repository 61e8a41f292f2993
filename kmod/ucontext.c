// SPDX-License-Identifier: GPL-2.0-only
/*
 * User contexts: one per process that opens the device.  The response
 * tells the provider which ABI and mode it is talking to.
 */
#include "tbrdma.h"

int tbr_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct tbr_dev *tdev = to_tdev(ibuc->device);
	struct tbrdma_alloc_ucontext_resp resp = {
		.abi_version = TBRDMA_UVERBS_ABI_VERSION,
		.mode = tdev->mode,
	};

	return ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
}

/* Required by uverbs to offer contexts at all; there is nothing to free yet. */
void tbr_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}
