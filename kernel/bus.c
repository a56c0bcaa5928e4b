// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: the parent device of every srd ib_device.
 *
 * Software written for hardware RDMA devices expects an ib_device to hang
 * from a bus device bound to a driver: libfabric's efa provider resolves
 * /sys/class/infiniband/DEV/device and .../device/driver, and parses the
 * first as a PCI address, before it offers a device at all.  rxe-style
 * devices have no parent, so each srd device gets one here:
 *
 *   /sys/devices/softsrd/fffe:BB:DD.F	the parent, on bus "softsrd",
 *					with the netdev's numa_node
 *   /sys/bus/softsrd/drivers/rdma_srd	the driver it is bound to
 *
 * The name has the shape of a PCI address in domain 0xfffe, which no PCI
 * host bridge here uses; bus, device and function encode a per-module
 * index.  The softsrd bus emits no modalias, so no rdma-core provider can
 * claim an srd device through it (libibverbs matches PCI providers by the
 * parent's modalias): libsrd still finds its devices by hca_type.
 *
 * Lifetime: a parent is created before its ib_device is registered and
 * unregistered by srd_dealloc_driver().  The ib_device's kobject holds a
 * reference to it until the ib_device is freed, which ib_core may do after
 * dealloc; srd_bus_exit() therefore waits for every parent to be released
 * before the module (which holds their release function) goes.
 */

#include <linux/device.h>
#include <linux/idr.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>

#include "srd.h"

#define SRD_BUS_PCI_DOMAIN	0xfffe
#define SRD_BUS_MAX_DEVICES	0x10000		/* bus 0..ff, dev 0..1f, fn 0..7 */

struct srd_bus_dev {
	struct device dev;
	int id;
};

/*
 * 6.1's bus_register() writes its private state into the bus_type; later
 * kernels keep it elsewhere and take the bus_type const.
 */
#ifdef HAVE_BUS_TYPE_CONST
#define SRD_BUS_CONST const
#else
#define SRD_BUS_CONST
#endif

/*
 * numa_node, as a PCI device has it: the node of the netdev's NIC (-1,
 * NUMA_NO_NODE, where it has none, as a veth), so that software that
 * places its work by its NIC's node (libfabric's and aws-ofi-nccl's NIC
 * selection) sees each srd device where its netdev is.
 */
static ssize_t numa_node_show(struct device *dev, struct device_attribute *attr,
			      char *buf)
{
	return sysfs_emit(buf, "%d\n", dev_to_node(dev));
}
static DEVICE_ATTR_RO(numa_node);

static struct attribute *srd_bus_dev_attrs[] = {
	&dev_attr_numa_node.attr,
	NULL,
};
ATTRIBUTE_GROUPS(srd_bus_dev);

static SRD_BUS_CONST struct bus_type srd_bus_type = {
	.name = "softsrd",
	.dev_groups = srd_bus_dev_groups,
};

/* No probe: the driver exists to be bound to, and named. */
static struct device_driver srd_bus_driver = {
	.name = "rdma_srd",
	.bus = &srd_bus_type,
	.suppress_bind_attrs = true,
};

static struct device *srd_bus_root;
static DEFINE_IDA(srd_bus_ida);
static atomic_t srd_bus_live = ATOMIC_INIT(0);

static void srd_bus_dev_release(struct device *dev)
{
	struct srd_bus_dev *bdev = container_of(dev, struct srd_bus_dev, dev);

	ida_free(&srd_bus_ida, bdev->id);
	kfree(bdev);
	if (atomic_dec_and_test(&srd_bus_live))
		wake_up_var(&srd_bus_live);
}

/*
 * A new parent device on NUMA node @node (or NUMA_NO_NODE), registered
 * and bound to the rdma_srd driver.  Returns it or an ERR_PTR.  Sleeps.
 */
struct device *srd_bus_dev_create(int node)
{
	struct srd_bus_dev *bdev;
	int id, err;

	id = ida_alloc_max(&srd_bus_ida, SRD_BUS_MAX_DEVICES - 1, GFP_KERNEL);
	if (id < 0)
		return ERR_PTR(id == -ENOSPC ? -ENFILE : id);
	bdev = kzalloc(sizeof(*bdev), GFP_KERNEL);
	if (!bdev) {
		ida_free(&srd_bus_ida, id);
		return ERR_PTR(-ENOMEM);
	}
	bdev->id = id;
	atomic_inc(&srd_bus_live);

	device_initialize(&bdev->dev);
	bdev->dev.bus = &srd_bus_type;
	bdev->dev.parent = srd_bus_root;
	bdev->dev.release = srd_bus_dev_release;
	set_dev_node(&bdev->dev, node);
	/* From here on, put_device() undoes everything above. */
	err = dev_set_name(&bdev->dev, "%04x:%02x:%02x.%x", SRD_BUS_PCI_DOMAIN,
			   id >> 8, (id >> 3) & 0x1f, id & 7);
	if (err)
		goto err_put;
	err = device_add(&bdev->dev);
	if (err)
		goto err_put;
	/* device_add() bound it: the bus matches every device to the driver. */
	if (!bdev->dev.driver) {
		device_del(&bdev->dev);
		err = -ENODEV;
		goto err_put;
	}
	return &bdev->dev;

err_put:
	put_device(&bdev->dev);
	return ERR_PTR(err);
}

void srd_bus_dev_destroy(struct device *dev)
{
	device_unregister(dev);
}

int srd_bus_init(void)
{
	int err;

	err = bus_register(&srd_bus_type);
	if (err)
		return err;
	err = driver_register(&srd_bus_driver);
	if (err)
		goto err_bus;
	srd_bus_root = root_device_register("softsrd");
	if (IS_ERR(srd_bus_root)) {
		err = PTR_ERR(srd_bus_root);
		goto err_driver;
	}
	return 0;

err_driver:
	driver_unregister(&srd_bus_driver);
err_bus:
	bus_unregister(&srd_bus_type);
	return err;
}

/* After every srd device is gone: wait for ib_core to drop the parents. */
void srd_bus_exit(void)
{
	wait_var_event(&srd_bus_live, !atomic_read(&srd_bus_live));
	root_device_unregister(srd_bus_root);
	driver_unregister(&srd_bus_driver);
	bus_unregister(&srd_bus_type);
	ida_destroy(&srd_bus_ida);
}
