// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* HAVE_PAGE_POOL_HELPERS: the page pool API is in <net/page_pool/helpers.h>. */
#include <net/page_pool/helpers.h>

struct page *probe_alloc(struct page_pool *pool);
struct page *probe_alloc(struct page_pool *pool)
{
	return page_pool_dev_alloc_pages(pool);
}
