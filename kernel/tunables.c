// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: the transport's tunables, one table.  Each is a module
 * parameter (/sys/module/rdma_srd/parameters/NAME, mode 0644) that sets a
 * field of the struct srd_config a device's engine is created with, or,
 * for peer_idle_s and peers_per_prefix, a value the kernel reads itself.
 * A write is checked when it is made, at insmod as later through sysfs:
 * outside the entry's range, or making the engine's configuration
 * inconsistent (srd_config_validate() of the engine's defaults with every
 * tunable and the new value), it fails with EINVAL, leaves the old value
 * and logs why.  So a device never meets a bad tunable.
 *
 * The table is the SRD_TUNABLE() lines below: a tunable's name, type,
 * description, range, the srd_config field it sets and the value that
 * keeps the engine's default are its line and nowhere else in the code.
 * Adding one: a line, and its entry in man/rdma_srd.7.md ("MODULE
 * PARAMETERS") and docs/protocol.md ("In the kernel module"); one that
 * sets no srd_config field also needs a reader, as peer_idle_s has.
 *
 * Locking: the kernel calls .set and .get under the module's parameter
 * lock (kernel_param_lock()), at insmod and for sysfs alike, so writes
 * are serialised and each .set sees the others' values settled.
 * srd_tunables_config() takes that lock too: a combination is valid as a
 * whole, and reading the values one by one while they change could mix
 * two valid combinations into an invalid one.  peer_idle_s and
 * peers_per_prefix, read under a spinlock (at each eviction, at each new
 * remote), are single values: READ_ONCE against the WRITE_ONCE here.
 */

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/stddef.h>
#include <linux/sysfs.h>

#include "srd.h"

struct srd_tunable {
	bool is_signed;		/* an int, else an unsigned int */
	bool in_cfg;		/* sets the u32 at cfg_off in struct srd_config */
	bool has_unset;		/* the value unset leaves the engine's default */
	size_t cfg_off;
	s64 min, max;		/* what a write may set */
	s64 unset;
	union {
		unsigned int u;
		int s;
	} v;			/* the value; written under the param lock */
};

/* The struct srd_config field a tunable sets (each is a uint32_t). */
#define SRD_CFG(field)	.in_cfg = true, .cfg_off = offsetof(struct srd_config, field)
/* The value that keeps the engine's default for the field. */
#define SRD_UNSET(val)	.has_unset = true, .unset = (val)

#define SRD_SIGNED_uint	false
#define SRD_SIGNED_int	true

static const struct kernel_param_ops srd_tunable_ops;

/*
 * SRD_TUNABLE(name, type, description, fields of struct srd_tunable): the
 * parameter @name, of the module_param() type @type (uint or int: how
 * the value is parsed, and what modinfo shows), mode 0644.  .v is the
 * value at load (0 unless given); the field SRD_CFG() names is set
 * unless the value is that of SRD_UNSET().  The kernel keeps the
 * parameters in this module's table (THIS_MODULE->kp), where
 * srd_tunables_fill() finds them by their ops, so no list of them is
 * kept besides.  modinfo shows the type and the description, as for
 * module_param().
 */
#define SRD_TUNABLE(name, type, desc, ...)				\
	static struct srd_tunable srd_tunable_##name = {		\
		.is_signed = SRD_SIGNED_##type, __VA_ARGS__		\
	};								\
	module_param_cb(name, &srd_tunable_ops, &srd_tunable_##name, 0644); \
	__MODULE_PARM_TYPE(name, #type);				\
	MODULE_PARM_DESC(name, desc)

SRD_TUNABLE(n_paths, uint,
	    "SRD paths (UDP source ports) per peer, 1..128, for devices created from now on (default 16)",
	    SRD_CFG(n_paths), .min = 1, .max = SRD_MAX_PATHS, .v.u = 16);
SRD_TUNABLE(rto_min_us, uint,
	    "SRD: least retransmit timeout, microseconds (0: engine default)",
	    SRD_CFG(rto_min_us), SRD_UNSET(0), .max = U32_MAX);
SRD_TUNABLE(ack_delay_us, uint,
	    "SRD: longest ACK delay, microseconds (0: engine default)",
	    SRD_CFG(ack_delay_us), SRD_UNSET(0), .max = U32_MAX);
SRD_TUNABLE(ack_reply_wait_us, int,
	    "SRD: how long the ACK of a peer's message waits for our answer to carry it, microseconds, or three RTTs up to 4 times this; 0: ACK at once (-1: engine default, 500)",
	    SRD_CFG(ack_reply_wait_us), SRD_UNSET(-1), .min = -1, .max = INT_MAX,
	    .v.s = -1);
SRD_TUNABLE(cc_target_queue_us, uint,
	    "SRD: queueing delay the congestion window aims at, microseconds (0: engine default)",
	    SRD_CFG(cc_target_queue_us), SRD_UNSET(0), .max = U32_MAX);
SRD_TUNABLE(cc_target_us, uint,
	    "SRD: one delay target for every peer, microseconds, 0..1000000; 0: each peer's minimum RTT plus the target queue (default)",
	    SRD_CFG(cc_target_us), .max = SRD_CC_TARGET_MAX_US, .v.u = 0);
SRD_TUNABLE(cc_fs_range_us, int,
	    "SRD: delay a small window may add to its target, microseconds, the whole of it at one packet, none from 64 (flow scaling); 0: none (-1: engine default, 2000)",
	    SRD_CFG(cc_fs_range_us), SRD_UNSET(-1), .min = -1,
	    .max = SRD_CC_TARGET_MAX_US, .v.s = -1);
SRD_TUNABLE(cc_drain_interval_us, int,
	    "SRD: how often a receiver has its senders drain the queue into it together, so each learns its base RTT, microseconds; 0: never, and ignore a peer's asking (-1: engine default, 1000000)",
	    SRD_CFG(cc_drain_interval_us), SRD_UNSET(-1), .min = -1,
	    .max = SRD_CC_DRAIN_INTERVAL_MAX_US, .v.s = -1);
SRD_TUNABLE(peer_timeout_us, uint,
	    "SRD: how long a silent peer is waited for before its work fails, microseconds, up to 600000000 (0: engine default, 10000000)",
	    SRD_CFG(peer_timeout_us), SRD_UNSET(0), .max = SRD_PEER_TIMEOUT_MAX_US);
SRD_TUNABLE(peer_idle_s, uint,
	    "SRD: a full peer table evicts a peer idle for this many seconds, 5..86400, never less than the retry budget (default 30)",
	    .min = 5, .max = 86400, .v.u = 30);
SRD_TUNABLE(peers_per_prefix, uint,
	    "SRD: peers the remotes of one address prefix (IPv6 /64, IPv4 /24) may make, 1..1024 (default 512, half the peer table)",
	    .min = 1, .max = SRD_MAX_PEERS, .v.u = SRD_MAX_PEERS / 2);
SRD_TUNABLE(pacing_gain_pct, int,
	    "SRD: pace at cwnd/srtt times this percentage; 0: no pacing (-1: engine default)",
	    SRD_CFG(pacing_gain_pct), SRD_UNSET(-1), .min = -1, .max = INT_MAX,
	    .v.s = -1);

static s64 srd_tunable_value(const struct srd_tunable *t)
{
	/* Not one ?: expression, which would make the int unsigned. */
	if (t->is_signed)
		return READ_ONCE(t->v.s);
	return READ_ONCE(t->v.u);
}

/* Put @val of @t into @cfg, unless it is the value that leaves the default. */
static void srd_tunable_apply(struct srd_config *cfg,
			      const struct srd_tunable *t, s64 val)
{
	if (!t->in_cfg || (t->has_unset && val == t->unset))
		return;
	*(u32 *)((u8 *)cfg + t->cfg_off) = val;
}

/* The engine's defaults and every tunable.  Under the param lock. */
static void srd_tunables_fill(struct srd_config *cfg)
{
	const struct kernel_param *kp = THIS_MODULE->kp;
	unsigned int i;

	srd_config_default(cfg);
	for (i = 0; i < THIS_MODULE->num_kp; i++)
		if (kp[i].ops == &srd_tunable_ops)
			srd_tunable_apply(cfg, kp[i].arg,
					  srd_tunable_value(kp[i].arg));
}

static int srd_tunable_set(const char *val, const struct kernel_param *kp)
{
	struct srd_tunable *t = kp->arg;
	struct srd_config cfg;
	const char *rule;
	unsigned int u;
	int s, err;
	s64 v;

	if (t->is_signed) {
		err = kstrtoint(val, 0, &s);
		v = s;
	} else {
		err = kstrtouint(val, 0, &u);
		v = u;
	}
	if (err)
		return err;
	if (v < t->min || v > t->max) {
		pr_warn("rdma_srd: %s=%lld is outside %lld..%lld\n",
			kp->name, v, t->min, t->max);
		return -EINVAL;
	}
	if (t->in_cfg) {
		srd_tunables_fill(&cfg);
		srd_tunable_apply(&cfg, t, v);
		rule = srd_config_check(&cfg);
		if (rule) {
			pr_warn("rdma_srd: %s=%lld would make the SRD tunables inconsistent (%s)\n",
				kp->name, v, rule);
			return -EINVAL;
		}
	}
	if (t->is_signed)
		WRITE_ONCE(t->v.s, v);
	else
		WRITE_ONCE(t->v.u, v);
	return 0;
}

static int srd_tunable_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%lld\n", srd_tunable_value(kp->arg));
}

static const struct kernel_param_ops srd_tunable_ops = {
	.set = srd_tunable_set,
	.get = srd_tunable_get,
};

/*
 * The configuration of a device created now, but for what only the device
 * knows (seg_bytes, max_msg_bytes): the engine's defaults, with every
 * tunable that is set.
 */
void srd_tunables_config(struct srd_config *cfg)
{
	kernel_param_lock(THIS_MODULE);
	srd_tunables_fill(cfg);
	kernel_param_unlock(THIS_MODULE);
}

unsigned int srd_tunables_peer_idle_s(void)
{
	return READ_ONCE(srd_tunable_peer_idle_s.v.u);
}

unsigned int srd_tunables_peers_per_prefix(void)
{
	return READ_ONCE(srd_tunable_peers_per_prefix.v.u);
}
