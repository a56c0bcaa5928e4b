// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: memory regions — pinning, keys, and the only code that touches
 * registered memory.
 */

#include <linux/highmem.h>
#include <linux/random.h>
#include <linux/skbuff.h>
#include <linux/slab.h>

#include "srd.h"

/* Unpins what dereg could not: the MRs whose last reference went later. */
static struct workqueue_struct *srd_mr_wq;

#define SRD_MR_ACCESS_SUPPORTED (IB_ACCESS_LOCAL_WRITE | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_OPTIONAL)

/*
 * Give @mr a random key in @xa.  Keys are drawn independently, so one key
 * says nothing about another; 0 is never used (it is local_dma_lkey).
 */
static int srd_mr_insert_key(struct xarray *xa, struct srd_mr *mr, u32 *key)
{
	int tries, err = -EBUSY;

	for (tries = 0; tries < 16 && err == -EBUSY; tries++) {
		*key = get_random_u32();
		if (!*key)
			continue;
		err = xa_insert_irq(xa, *key, mr, GFP_KERNEL);
	}
	return err;
}

static int srd_mr_pin_pages(struct srd_mr *mr)
{
	struct sg_page_iter iter;
	unsigned long i = 0;

	mr->npages = ib_umem_num_pages(mr->umem);
	mr->pages = kvmalloc_array(mr->npages, sizeof(*mr->pages),
				   GFP_KERNEL_ACCOUNT);
	if (!mr->pages)
		return -ENOMEM;
	for_each_sgtable_page(&mr->umem->sgt_append.sgt, &iter, 0) {
		if (WARN_ON_ONCE(i >= mr->npages))
			break;
		mr->pages[i++] = sg_page_iter_page(&iter);
	}
	if (WARN_ON_ONCE(i != mr->npages))
		return -EFAULT;
	return 0;
}

/* The last reference is gone: unpin and free.  Process context. */
static void srd_mr_release(struct srd_mr *mr)
{
	struct srd_dev *sdev = mr->sdev;

	kvfree(mr->pages);
	ib_umem_release(mr->umem);
	kfree(mr);
	atomic64_dec(&sdev->counters[SRD_CNT_MRS]);
}

static void srd_mr_release_work(struct work_struct *work)
{
	srd_mr_release(container_of(work, struct srd_mr, release_work));
}

static struct ib_mr *srd_reg_user_mr_do(struct ib_pd *ibpd, u64 start,
					u64 length, u64 iova, int access,
					struct ib_udata *udata)
{
	struct srd_dev *sdev = to_sdev(ibpd->device);
	struct srd_mr *mr;
	int err;

	if (access & ~SRD_MR_ACCESS_SUPPORTED) {
		ibdev_dbg(&sdev->ibdev, "reg_mr: access 0x%x not supported\n",
			  access);
		return ERR_PTR(-EOPNOTSUPP);
	}
	if (!length || length > SRD_MAX_MR_BYTES)
		return ERR_PTR(-EINVAL);
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return ERR_PTR(-EOPNOTSUPP);
	if (atomic64_inc_return(&sdev->counters[SRD_CNT_MRS]) > SRD_MAX_MR) {
		err = -ENOMEM;
		goto err_count;
	}

	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr) {
		err = -ENOMEM;
		goto err_count;
	}
	mr->sdev = sdev;
	refcount_set(&mr->ref, 1);
	mr->iova = iova;
	mr->length = length;
	mr->access = access;

	/* Pins the pages and charges them to RLIMIT_MEMLOCK. */
	mr->umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		goto err_free;
	}
	mr->page_offset = ib_umem_offset(mr->umem);
	err = srd_mr_pin_pages(mr);
	if (err)
		goto err_umem;

	err = srd_mr_insert_key(&sdev->mrs_by_lkey, mr, &mr->ibmr.lkey);
	if (err)
		goto err_pages;
	err = srd_mr_insert_key(&sdev->mrs_by_rkey, mr, &mr->ibmr.rkey);
	if (err) {
		/* Visible by lkey meanwhile: a lookup may hold it. */
		xa_erase_irq(&sdev->mrs_by_lkey, mr->ibmr.lkey);
		WRITE_ONCE(mr->dead, true);
		if (refcount_dec_and_test(&mr->ref))
			srd_mr_release(mr);
		return ERR_PTR(err == -EBUSY ? -ENOMEM : err);
	}
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	mr->ibmr.page_size = PAGE_SIZE;
	return &mr->ibmr;

err_pages:
	kvfree(mr->pages);
err_umem:
	ib_umem_release(mr->umem);
err_free:
	kfree(mr);
err_count:
	atomic64_dec(&sdev->counters[SRD_CNT_MRS]);
	return ERR_PTR(err == -EBUSY ? -ENOMEM : err);
}

struct ib_mr *srd_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			      u64 iova, int access, struct ib_udata *udata)
{
	struct ib_mr *mr = srd_reg_user_mr_do(ibpd, start, length, iova,
					      access, udata);

	if (IS_ERR(mr))
		srd_count_one(to_sdev(ibpd->device), SRD_CNT_REG_MR_ERR);
	return mr;
}

/*
 * Never waits for the messages that hold @ibmr: a remote peer decides
 * how long those live, and dereg and process exit must not wait on it.
 */
#ifdef HAVE_REG_USER_MR_DMAH
/*
 * 6.17+: the verb names a DMA handle (TPH steering hints for the device's
 * DMA); softsrd's memory is touched by the CPU only, so there is nothing
 * to steer: refused, as drivers without DMA handles refuse one.
 */
struct ib_mr *srd_reg_user_mr_op(struct ib_pd *ibpd, u64 start, u64 length,
				 u64 iova, int access, struct ib_dmah *dmah,
				 struct ib_udata *udata)
{
	if (dmah) {
		srd_count_one(to_sdev(ibpd->device), SRD_CNT_REG_MR_ERR);
		return ERR_PTR(-EOPNOTSUPP);
	}
	return srd_reg_user_mr(ibpd, start, length, iova, access, udata);
}
#endif

int srd_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct srd_mr *mr = to_smr(ibmr);
	struct srd_dev *sdev = mr->sdev;

	/* No new lookup finds it; those that hold it write no more. */
	xa_erase_irq(&sdev->mrs_by_lkey, ibmr->lkey);
	xa_erase_irq(&sdev->mrs_by_rkey, ibmr->rkey);
	WRITE_ONCE(mr->dead, true);
	if (refcount_dec_and_test(&mr->ref))
		srd_mr_release(mr);
	return 0;
}

/* The live MR under @key in @keys, with a reference.  Any context. */
static struct srd_mr *srd_mr_lookup(struct xarray *keys, u32 key)
{
	struct srd_mr *mr;
	unsigned long flags;

	xa_lock_irqsave(keys, flags);
	mr = xa_load(keys, key);
	if (mr && !refcount_inc_not_zero(&mr->ref))
		mr = NULL;
	xa_unlock_irqrestore(keys, flags);
	return mr;
}

/* Find an MR by lkey and take a reference.  Any context. */
struct srd_mr *srd_mr_get(struct srd_dev *sdev, u32 lkey)
{
	return srd_mr_lookup(&sdev->mrs_by_lkey, lkey);
}

/* Find an MR by rkey and take a reference.  Any context. */
struct srd_mr *srd_mr_get_rkey(struct srd_dev *sdev, u32 rkey)
{
	return srd_mr_lookup(&sdev->mrs_by_rkey, rkey);
}

/*
 * May a remote peer, through a QP in @pd, use [@iova, @iova + @len) of
 * @mr with @access (IB_ACCESS_REMOTE_READ or _WRITE)?  SRD_RKEY_OK, or
 * why not (docs/protocol.md, "RDMA read and write").
 */
enum srd_rkey_verdict srd_mr_check_remote(struct srd_mr *mr,
					  struct ib_pd *pd, u64 iova,
					  u64 len, int access)
{
	u64 end;

	if (mr->ibmr.pd != pd)
		return SRD_RKEY_PD;
	if ((mr->access & access) != access)
		return SRD_RKEY_ACCESS;
	if (check_add_overflow(iova, len, &end) || iova < mr->iova ||
	    end > mr->iova + mr->length)
		return SRD_RKEY_RANGE;
	return SRD_RKEY_OK;
}

/*
 * Count a refusal in the counter that names its reason.  A switch with
 * no default: a verdict added without its counter fails the build.
 */
void srd_mr_count_refusal(struct srd_dev *sdev, enum srd_rkey_verdict why)
{
	switch (why) {
	case SRD_RKEY_OK:
		break;
	case SRD_RKEY_INVALID:
		srd_count_one(sdev, SRD_CNT_RDMA_RKEY_INVALID);
		break;
	case SRD_RKEY_PD:
		srd_count_one(sdev, SRD_CNT_RDMA_RKEY_PD);
		break;
	case SRD_RKEY_ACCESS:
		srd_count_one(sdev, SRD_CNT_RDMA_RKEY_ACCESS);
		break;
	case SRD_RKEY_RANGE:
		srd_count_one(sdev, SRD_CNT_RDMA_RKEY_RANGE);
		break;
	}
}

/* Drop a reference taken by lookup.  Any context. */
void srd_mr_put(struct srd_mr *mr)
{
	/* The initial reference is dereg's: here the MR is dead already. */
	if (refcount_dec_and_test(&mr->ref)) {
		INIT_WORK(&mr->release_work, srd_mr_release_work);
		queue_work(srd_mr_wq, &mr->release_work);
	}
}

/* Every MR released so far is unpinned and freed.  Process context. */
void srd_mr_flush(void)
{
	flush_workqueue(srd_mr_wq);
}

int srd_mr_init(void)
{
	srd_mr_wq = alloc_workqueue("srd_mr", WQ_UNBOUND, 0);
	return srd_mr_wq ? 0 : -ENOMEM;
}

void srd_mr_exit(void)
{
	destroy_workqueue(srd_mr_wq);
}

/*
 * May a work request of a QP in @pd use [@iova, @iova + @len) of @mr with
 * @access?  Returns SRD_VERR_NONE or why not.
 */
u32 srd_mr_check(struct srd_mr *mr, struct ib_pd *pd, u64 iova, u32 len,
		 int access)
{
	u64 end;

	if (mr->ibmr.pd != pd)
		return SRD_VERR_LKEY_PD;
	if (check_add_overflow(iova, (u64)len, &end) || iova < mr->iova ||
	    end > mr->iova + mr->length)
		return SRD_VERR_LKEY_RANGE;
	if ((mr->access & access) != access)
		return SRD_VERR_LKEY_ACCESS;
	return SRD_VERR_NONE;
}

/*
 * The page-bounded chunk of [@iova, @iova + @len) of @mr, which
 * srd_mr_check() accepted, that starts @done bytes in: its page
 * (*@page), its offset in that page (*@poff) and, returned, its length.
 */
static u64 srd_mr_chunk(const struct srd_mr *mr, u64 iova, u32 len,
			u64 done, struct page **page, u64 *poff)
{
	u64 off = iova - mr->iova + mr->page_offset + done;

	*page = mr->pages[off >> PAGE_SHIFT];
	*poff = off & ~PAGE_MASK;
	return min_t(u64, len - done, PAGE_SIZE - *poff);
}

void srd_mr_read(struct srd_mr *mr, u64 iova, void *dst, u32 len)
{
	struct page *page;
	u64 poff, n, done;
	void *va;

	for (done = 0; done < len; done += n) {
		n = srd_mr_chunk(mr, iova, len, done, &page, &poff);
		va = kmap_local_page(page);
		memcpy(dst + done, va + poff, n);
		kunmap_local(va);
	}
}

/* 0, or -EACCES: @mr was deregistered, nothing was written. */
int srd_mr_write(struct srd_mr *mr, u64 iova, const void *src, u32 len)
{
	struct page *page;
	u64 poff, n, done;
	void *va;

	if (!srd_mr_live(mr))
		return -EACCES;
	for (done = 0; done < len; done += n) {
		n = srd_mr_chunk(mr, iova, len, done, &page, &poff);
		va = kmap_local_page(page);
		memcpy(va + poff, src + done, n);
		kunmap_local(va);
		flush_dcache_page(page);
	}
	return 0;
}

int srd_mr_write_skb(struct srd_mr *mr, u64 iova, const struct sk_buff *skb,
		     int offset, u32 len)
{
	struct page *page;
	u64 poff, n, done;
	void *va;
	int err = 0;

	if (!srd_mr_live(mr))
		return -EACCES;
	for (done = 0; done < len; done += n) {
		n = srd_mr_chunk(mr, iova, len, done, &page, &poff);
		va = kmap_local_page(page);
		err = skb_copy_bits(skb, offset + done, va + poff, n);
		kunmap_local(va);
		flush_dcache_page(page);
		if (err)
			break;
	}
	return err;
}
