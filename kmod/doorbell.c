// SPDX-License-Identifier: GPL-2.0-only
/*
 * The doorbell file: a cheaper way for user space to say "my send queue
 * has new WQEs" than a POST_SEND with no work requests on the uverbs file.
 * That command goes through the uverbs write() parser (header checks, a
 * request copy, an allocation, the QP handle's object lookup and lock, a
 * response copy) which costs several times the system call itself in a
 * guest, on every message.  An ioctl on this file carries the QP number
 * in its argument and only looks the QP up.
 *
 * One file per user context, created on request with the context and
 * installed in the calling process (ucontext.c).  It refers to the context
 * until the context is deallocated (the process closed the device, or the
 * device was removed and the core disassociated it); from then on every
 * ioctl fails with EIO.  The file pins the module while it is open, as any
 * driver's open file does: rmmod is refused until the processes that use
 * a device have closed it.
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <rdma/ib.h>

#include "tbrdma.h"

struct tbr_doorbell {
	spinlock_t lock;		/* guards uctx */
	struct tbr_ucontext *uctx;	/* NULL once the context is gone */
	refcount_t refs;		/* the file's and the context's */
};

static void tbr_doorbell_put(struct tbr_doorbell *db)
{
	if (refcount_dec_and_test(&db->refs))
		kfree(db);
}

/* A QP of @db's context by number, held; NULL with the error in @err. */
static struct tbr_qp *tbr_doorbell_qp(struct tbr_doorbell *db, u32 qpn,
				      int *err)
{
	struct tbr_ucontext *uctx;
	struct tbr_qp *qp = NULL;

	spin_lock(&db->lock);
	uctx = db->uctx;
	if (uctx)
		qp = tbr_qp_get(to_tdev(uctx->ibuc.device), qpn);
	spin_unlock(&db->lock);
	if (!uctx) {
		*err = -EIO;
		return NULL;
	}
	/* Another process's QP, or a kernel QP: not ours to ring. */
	if (qp && tbr_qp_ucontext(qp) != &uctx->ibuc) {
		tbr_qp_put(qp);
		qp = NULL;
	}
	*err = -EINVAL;
	return qp;
}

static long tbr_doorbell_ioctl(struct file *file, unsigned int cmd,
			       unsigned long arg)
{
	struct tbr_doorbell *db = file->private_data;
	struct tbr_qp *qp;
	int err;

	if (cmd != TBRDMA_IOCTL_SQ_DOORBELL)
		return -ENOTTY;
	/* The same rule uverbs applies to its own file. */
	if (!ib_safe_file_access(file))
		return -EACCES;
	if (arg != (u32)arg)
		return -EINVAL;
	qp = tbr_doorbell_qp(db, arg, &err);
	if (!qp)
		return err;
	/*
	 * As tbr_post_send() does for a user QP: the held reference keeps
	 * destroy waiting until the engine is out of the QP.
	 */
	tbr_tx_kick(qp);
	tbr_qp_put(qp);
	return 0;
}

static int tbr_doorbell_release(struct inode *inode, struct file *file)
{
	tbr_doorbell_put(file->private_data);
	return 0;
}

static const struct file_operations tbr_doorbell_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = tbr_doorbell_ioctl,
	.compat_ioctl = tbr_doorbell_ioctl,	/* the argument is a number */
	.release = tbr_doorbell_release,
	.llseek = noop_llseek,
};

/*
 * A doorbell file for @uctx, not yet installed: the caller installs it
 * with fd_install() once nothing can fail any more, or drops it with
 * fput() (which also detaches it).  @uctx->doorbell refers to it.
 */
struct file *tbr_doorbell_create(struct tbr_ucontext *uctx)
{
	struct tbr_doorbell *db;
	struct file *file;

	db = kzalloc(sizeof(*db), GFP_KERNEL);
	if (!db)
		return ERR_PTR(-ENOMEM);
	spin_lock_init(&db->lock);
	db->uctx = uctx;
	refcount_set(&db->refs, 2);
	file = anon_inode_getfile("[tbrdma-doorbell]", &tbr_doorbell_fops, db,
				  O_RDWR);
	if (IS_ERR(file)) {
		kfree(db);
		return file;
	}
	uctx->doorbell = db;
	return file;
}

/* @uctx is going away: its doorbell file, if any, rings nothing any more. */
void tbr_doorbell_detach(struct tbr_ucontext *uctx)
{
	struct tbr_doorbell *db = uctx->doorbell;

	if (!db)
		return;
	spin_lock(&db->lock);
	db->uctx = NULL;
	spin_unlock(&db->lock);
	uctx->doorbell = NULL;
	tbr_doorbell_put(db);
}
