// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* HAVE_GET_RANDOM_U16: get_random_u16() (6.1+). */
#include <linux/random.h>

u16 probe_get_random_u16(void);
u16 probe_get_random_u16(void)
{
	return get_random_u16();
}
