// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: the local memory of a work request, the one walk from SGEs to
 * MRs.  A work request's SGEs become segments, each holding its MR (UD:
 * while the datagram is copied; SRD: until the engine is done with the
 * message, so the pages stay pinned); copies to and from them go
 * through mr.c.
 */

#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "srd.h"
#include "message.h"

void srd_segs_put(struct srd_msg_seg *seg, u32 n)
{
	while (n--)
		srd_mr_put(seg[n].mr);
}

/*
 * Take the MRs of @num_sge SGEs for @access, dropping empty ones, up to
 * @limit bytes; @seg has room for @num_sge.  Returns a vendor error; on
 * error nothing is held.
 */
u32 srd_segs_get(struct srd_qp *qp, const struct srd_sge *sge,
		 u32 num_sge, int access, u32 limit,
		 struct srd_msg_seg *seg, u32 *nseg)
{
	u32 i, n = 0, total = 0, verr;

	for (i = 0; i < num_sge && total < limit; i++) {
		if (!sge[i].length)
			continue;
		seg[n].mr = srd_mr_get(qp->sdev, sge[i].lkey);
		if (!seg[n].mr) {
			verr = SRD_VERR_BAD_LKEY;
			goto err;
		}
		seg[n].addr = sge[i].addr;
		seg[n].len = min(sge[i].length, limit - total);
		verr = srd_mr_check(seg[n].mr, qp->ibqp.pd, seg[n].addr,
				    seg[n].len, access);
		n++;
		if (verr)
			goto err;
		total += seg[n - 1].len;
	}
	*nseg = n;
	return SRD_VERR_NONE;
err:
	srd_segs_put(seg, n);
	return verr;
}

/*
 * Copy between a message's segments and a buffer, at @offset.  0, or
 * -EACCES: an MR to be written was deregistered (what came before it was
 * written).  Reading a deregistered MR's pages, still pinned, is harmless.
 */
int srd_segs_copy(struct srd_msg_seg *seg, u32 nseg, u32 offset,
		  u8 *buf, u32 len, bool to_mr)
{
	u32 i, chunk;

	for (i = 0; i < nseg && len; i++) {
		if (offset >= seg[i].len) {
			offset -= seg[i].len;
			continue;
		}
		chunk = min(len, seg[i].len - offset);
		if (!to_mr)
			srd_mr_read(seg[i].mr, seg[i].addr + offset, buf, chunk);
		else if (srd_mr_write(seg[i].mr, seg[i].addr + offset, buf,
				      chunk))
			return -EACCES;
		buf += chunk;
		len -= chunk;
		offset = 0;
	}
	return 0;
}

/* The bytes the segments cover. */
u32 srd_segs_len(const struct srd_msg_seg *seg, u32 nseg)
{
	u32 i, len = 0;

	for (i = 0; i < nseg; i++)
		len += seg[i].len;
	return len;
}

/*
 * Copy @len bytes of @skb at @skb_off into the segments at @offset.  0,
 * -EACCES (an MR was deregistered) or the skb's error.
 */
int srd_segs_write_skb(struct srd_msg_seg *seg, u32 nseg, u32 offset,
		       const struct sk_buff *skb, int skb_off, u32 len)
{
	u32 i, chunk;
	int err;

	for (i = 0; i < nseg && len; i++) {
		if (offset >= seg[i].len) {
			offset -= seg[i].len;
			continue;
		}
		chunk = min(len, seg[i].len - offset);
		err = srd_mr_write_skb(seg[i].mr, seg[i].addr + offset, skb,
				       skb_off, chunk);
		if (err)
			return err;
		skb_off += chunk;
		len -= chunk;
		offset = 0;
	}
	return 0;
}
