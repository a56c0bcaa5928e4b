// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: the buffers of outgoing packets.
 *
 * A packet is one linear skb: the SRD header, then the payload, gathered
 * in place, with room in front for the link-layer, IP and UDP headers.
 * Its buffer is a whole page from a page pool of this CPU, of the order
 * the packet needs, and goes back to that pool when the skb is freed
 * after transmission (skb_mark_for_recycle()).  alloc_skb() would take,
 * for every packet of a 9000-byte link, an order-2 page with GFP_ATOMIC,
 * and a kernel that zeroes what it allocates (init_on_alloc=1, Debian's
 * default) would clear all 16 KiB of it each time for SRD to overwrite
 * 9 KiB; a pool's page is zeroed once, when the pool takes it from the
 * page allocator.  Nothing stale leaves: an skb carries only the bytes
 * put into it.  A packet too large for the pools, or one the pool has no
 * page for, gets an alloc_skb() buffer instead.
 *
 * A pool has one consumer at a time: pages are taken with bottom halves
 * off on its CPU.  They come back from any context.
 */

#include <linux/percpu.h>
#include <linux/skbuff.h>
#include <net/ipv6.h>
#include <net/udp.h>

#include "compat.h"
#ifdef HAVE_PAGE_POOL_HELPERS
#include <net/page_pool/helpers.h>
#else
#include <net/page_pool.h>
#endif
#include "srd.h"

/* Pages of 4, 8 and 16 KiB: up to a segment of a 9000-byte link. */
#define SRD_TXBUF_ORDERS	3
/*
 * Pages a pool keeps for reuse, besides its per-CPU cache: more than a
 * CPU's packets waiting in qdiscs and driver rings at once.
 */
#define SRD_TXBUF_POOL_SIZE	128

#define SRD_XMIT_HEADROOM	(LL_MAX_HEADER + sizeof(struct ipv6hdr) + \
				 sizeof(struct udphdr))

struct srd_txbuf_pools {
	struct page_pool *pool[SRD_TXBUF_ORDERS];
};

static DEFINE_PER_CPU(struct srd_txbuf_pools, srd_txbuf_pools);

/* An skb on a pool page for @len bytes after the headroom, or NULL. */
static struct sk_buff *srd_txbuf_pooled(u32 len)
{
	u32 size = SKB_DATA_ALIGN(SRD_XMIT_HEADROOM + len) +
		   SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	unsigned int order = get_order(size);
	struct page_pool *pool;
	struct sk_buff *skb;
	struct page *page;

	if (order >= SRD_TXBUF_ORDERS || in_hardirq() || irqs_disabled())
		return NULL;
	local_bh_disable();
	pool = this_cpu_ptr(&srd_txbuf_pools)->pool[order];
	page = page_pool_alloc_pages(pool, GFP_ATOMIC | __GFP_NOWARN);
	local_bh_enable();
	if (!page)
		return NULL;
	skb = build_skb(page_address(page), PAGE_SIZE << order);
	if (!skb) {
		page_pool_put_full_page(pool, page, false);
		return NULL;
	}
	skb_mark_for_recycle(skb);
	return skb;
}

/*
 * An skb for a datagram of @len bytes (softsrd header and payload) that
 * @sdev sends, with room in front for any link-layer, IP and UDP header;
 * NULL if memory is short.  Any context but hard interrupts.  A buffer
 * not from a pool counts in tx_buf_fallbacks.
 */
struct sk_buff *srd_xmit_alloc(struct srd_dev *sdev, u32 len, gfp_t gfp)
{
	struct sk_buff *skb;

	skb = srd_txbuf_pooled(len);
	if (!skb) {
		srd_count_one(sdev, SRD_CNT_TX_BUF_FALLBACKS);
		skb = alloc_skb(SRD_XMIT_HEADROOM + len, gfp);
	}
	if (skb)
		skb_reserve(skb, SRD_XMIT_HEADROOM);
	return skb;
}

void srd_txbuf_exit(void)
{
	struct srd_txbuf_pools *p;
	unsigned int cpu, order;

	for_each_possible_cpu(cpu) {
		p = per_cpu_ptr(&srd_txbuf_pools, cpu);
		for (order = 0; order < SRD_TXBUF_ORDERS; order++) {
			/* Pages still out come back to it before it goes. */
			if (p->pool[order])
				page_pool_destroy(p->pool[order]);
			p->pool[order] = NULL;
		}
	}
}

int srd_txbuf_init(void)
{
	struct page_pool_params pp = {
		.pool_size = SRD_TXBUF_POOL_SIZE,
		.nid = NUMA_NO_NODE,
	};
	struct page_pool *pool;
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		for (pp.order = 0; pp.order < SRD_TXBUF_ORDERS; pp.order++) {
			pool = page_pool_create(&pp);
			if (IS_ERR(pool)) {
				srd_txbuf_exit();
				return PTR_ERR(pool);
			}
			per_cpu_ptr(&srd_txbuf_pools, cpu)->pool[pp.order] = pool;
		}
	}
	return 0;
}
