// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * HAVE_HRTIMER_SETUP: hrtimer_setup() sets the callback with the clock and
 * mode (6.13+; hrtimer_init() is gone from 6.17).
 */
#include <linux/hrtimer.h>

static enum hrtimer_restart probe_fn(struct hrtimer *t)
{
	return HRTIMER_NORESTART;
}

void probe_hrtimer_setup(struct hrtimer *t);
void probe_hrtimer_setup(struct hrtimer *t)
{
	hrtimer_setup(t, probe_fn, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
}
