// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* HAVE_BUS_TYPE_CONST: bus_register() and drivers take a const bus_type. */
#include <linux/device.h>

static const struct bus_type probe_bus = { .name = "probe" };
static struct device_driver probe_drv = { .name = "probe", .bus = &probe_bus };

int probe_register(void);
int probe_register(void)
{
	return bus_register(&probe_bus) ?: driver_register(&probe_drv);
}
