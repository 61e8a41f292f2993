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

/* A QP of @db's context by number, held; ERR_PTR(-EIO) once it is gone. */
static struct tbr_qp *tbr_doorbell_qp(struct tbr_doorbell *db, u32 qpn)
{
	struct tbr_ucontext *uctx;
	struct tbr_qp *qp = NULL;

	spin_lock(&db->lock);
	uctx = db->uctx;
	if (uctx)
		qp = tbr_qp_get(to_tdev(uctx->ibuc.device), qpn);
	spin_unlock(&db->lock);
	if (!uctx)
		return ERR_PTR(-EIO);
	if (!qp)
		return ERR_PTR(-EINVAL);
	/* Another process's QP, or a kernel QP: not ours to ring. */
	if (tbr_qp_ucontext(qp) != &uctx->ibuc) {
		tbr_qp_put(qp);
		return ERR_PTR(-EINVAL);
	}
	return qp;
}

static long tbr_doorbell_ioctl(struct file *file, unsigned int cmd,
			       unsigned long arg)
{
	struct tbr_qp *qp;

	if (cmd != TBRDMA_IOCTL_SQ_DOORBELL)
		return -ENOTTY;
	/* The same rule uverbs applies to its own file. */
	if (!ib_safe_file_access(file))
		return -EACCES;
	if (arg != (u32)arg)
		return -EINVAL;
	qp = tbr_doorbell_qp(file->private_data, arg);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
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
 * A doorbell file for @uctx and a descriptor number reserved for it in
 * the calling process (in @fd), not yet installed: the caller installs it
 * with tbr_doorbell_install() once nothing can fail any more, or drops it
 * with tbr_doorbell_discard().  NULL, with @fd -1, when there is no
 * descriptor or memory left.  @uctx->doorbell refers to it.
 */
struct file *tbr_doorbell_create(struct tbr_ucontext *uctx, int *fd)
{
	struct tbr_doorbell *db;
	struct file *file;

	*fd = get_unused_fd_flags(O_CLOEXEC);
	if (*fd < 0)
		goto err;
	db = kzalloc(sizeof(*db), GFP_KERNEL);
	if (!db)
		goto err_fd;
	spin_lock_init(&db->lock);
	db->uctx = uctx;
	refcount_set(&db->refs, 2);
	file = anon_inode_getfile("[tbrdma-doorbell]", &tbr_doorbell_fops, db,
				  O_RDWR);
	if (IS_ERR(file)) {
		kfree(db);
		goto err_fd;
	}
	uctx->doorbell = db;
	return file;

err_fd:
	put_unused_fd(*fd);
err:
	*fd = -1;
	return NULL;
}

void tbr_doorbell_install(struct file *file, int fd)
{
	fd_install(fd, file);
}

/* Undo tbr_doorbell_create(): the process never saw the descriptor. */
void tbr_doorbell_discard(struct tbr_ucontext *uctx, struct file *file,
			  int fd)
{
	tbr_doorbell_detach(uctx);
	fput(file);
	put_unused_fd(fd);
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
