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
 * The one walk over a message's segments: @fn on each piece of the
 * @len bytes at @offset, in order, with the piece's MR address and its
 * position within the @len bytes; the first error stops it.
 */
typedef int (*srd_segs_fn)(struct srd_msg_seg *s, u64 addr, u32 pos,
			   u32 chunk, void *arg);

static int srd_segs_walk(struct srd_msg_seg *seg, u32 nseg, u32 offset,
			 u32 len, srd_segs_fn fn, void *arg)
{
	u32 i, chunk, pos = 0;
	int err;

	for (i = 0; i < nseg && pos < len; i++) {
		if (offset >= seg[i].len) {
			offset -= seg[i].len;
			continue;
		}
		chunk = min(len - pos, seg[i].len - offset);
		err = fn(&seg[i], seg[i].addr + offset, pos, chunk, arg);
		if (err)
			return err;
		pos += chunk;
		offset = 0;
	}
	return 0;
}

static int srd_segs_read_fn(struct srd_msg_seg *s, u64 addr, u32 pos,
			    u32 chunk, void *buf)
{
	srd_mr_read(s->mr, addr, (u8 *)buf + pos, chunk);
	return 0;
}

static int srd_segs_write_fn(struct srd_msg_seg *s, u64 addr, u32 pos,
			     u32 chunk, void *buf)
{
	return srd_mr_write(s->mr, addr, (u8 *)buf + pos, chunk) ? -EACCES : 0;
}

/*
 * Copy between a message's segments and a buffer, at @offset.  0, or
 * -EACCES: an MR to be written was deregistered (what came before it was
 * written).  Reading a deregistered MR's pages, still pinned, is harmless.
 */
int srd_segs_copy(struct srd_msg_seg *seg, u32 nseg, u32 offset,
		  u8 *buf, u32 len, bool to_mr)
{
	return srd_segs_walk(seg, nseg, offset, len, to_mr ?
			     srd_segs_write_fn : srd_segs_read_fn, buf);
}

/* The bytes of @num_sge SGEs of a work request, U32_MAX if more. */
u32 srd_sge_len(const struct srd_sge *sge, u32 num_sge)
{
	u32 i, total = 0;

	for (i = 0; i < num_sge; i++)
		if (check_add_overflow(total, sge[i].length, &total))
			return U32_MAX;
	return total;
}

/* The bytes the segments cover. */
u32 srd_segs_len(const struct srd_msg_seg *seg, u32 nseg)
{
	u32 i, len = 0;

	for (i = 0; i < nseg; i++)
		len += seg[i].len;
	return len;
}

struct srd_segs_skb {
	const struct sk_buff *skb;
	int off;
};

static int srd_segs_skb_fn(struct srd_msg_seg *s, u64 addr, u32 pos,
			   u32 chunk, void *arg)
{
	const struct srd_segs_skb *from = arg;

	return srd_mr_write_skb(s->mr, addr, from->skb, from->off + pos, chunk);
}

/*
 * Copy @len bytes of @skb at @skb_off into the segments at @offset.  0,
 * -EACCES (an MR was deregistered) or the skb's error.
 */
int srd_segs_write_skb(struct srd_msg_seg *seg, u32 nseg, u32 offset,
		       const struct sk_buff *skb, int skb_off, u32 len)
{
	struct srd_segs_skb from = { .skb = skb, .off = skb_off };

	return srd_segs_walk(seg, nseg, offset, len, srd_segs_skb_fn, &from);
}
