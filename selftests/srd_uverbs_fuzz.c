// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srd_uverbs_fuzz: a uverbs fuzzer for srd devices, in the manner of
 * syzkaller's, meant to run as an unprivileged user.
 *
 * It speaks to /dev/infiniband/uverbsN directly, with no libibverbs, so
 * that every field is its own to choose: the write() commands (plain and
 * extended) and the ioctl() methods that libibverbs and libsrd use, with
 * the core fields and the driver's private data (uapi/rdma/srd-abi.h)
 * mostly well formed and often hostile; the SQ, RQ and CQ rings mapped
 * and written with hostile counters and work requests, then the doorbell
 * rung; several threads on the same objects; a fork, a close of the
 * device, an exit at random points; and, where the kernel has fault
 * injection (/proc/thread-self/fail-nth: failslab and fail_page_alloc),
 * the Nth allocation of a random call failed, as syzkaller does.
 *
 * Each iteration is a process of its own (its own process group), killed
 * after a time the seed chose if it has not exited by then.  Everything
 * random comes from the seed: `--seed S` replays a run, `--seed S --iter I`
 * iteration I alone (with --threads 1 the calls are the same, call for
 * call; with more threads their interleaving is the scheduler's).
 *
 *   srd_uverbs_fuzz [--seed S] [--seconds N | --iters N] [--iter I]
 *                   [--threads T] [--ops N] DEV [PEER_DEV]
 *
 * Prints the seed first, then a summary: iterations, calls made, calls per
 * kind that succeeded, faults injected.  Exits 0 when the run ended as
 * planned, 1 when an iteration died of a signal it did not send itself
 * (with the seed and iteration that reproduce it), 2 on a usage or setup
 * error.  The kernel's side (no KASAN, lockdep, UBSAN, kmemleak report, the
 * objects all released) is checked by srd_uverbs_fuzz.sh.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <rdma/srd-abi.h>

#define MAX_DEVS	2
#define MAX_OBJS	96
#define MAX_GIDS	8
#define POOL_BYTES	(1 << 20)
#define IB_QPT_UD_V	4	/* IB_UVERBS_QPT_UD */
#define IB_QPT_DRIVER_V	0xff	/* IB_UVERBS_QPT_DRIVER */
/* modify_qp's attr_mask bits (enum ib_qp_attr_mask, enum ibv_qp_attr_mask) */
#define QPA_STATE	(1 << 0)
#define QPA_PKEY_INDEX	(1 << 4)
#define QPA_PORT	(1 << 5)
#define QPA_QKEY	(1 << 6)
#define QPA_RNR_RETRY	(1 << 11)
#define QPA_SQ_PSN	(1 << 16)

/* ---- the random source: splitmix64, one state per thread ---- */

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static __thread uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state += 0x9e3779b97f4a7c15ULL;
	return mix64(rng_state);
}

/* A number below n (n > 0). */
static uint32_t below(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

/* True one time in n. */
static int one_in(uint32_t n)
{
	return below(n) == 0;
}

/* A value for a size or count field: mostly small, sometimes at an edge. */
static uint32_t hostile_u32(uint32_t sane_max)
{
	static const uint32_t edges[] = {
		0, 1, 2, 3, 7, 8, 15, 16, 63, 64, 255, 256, 4095, 4096, 65535,
		65536, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff,
	};

	switch (below(8)) {
	case 0:
		return edges[below(sizeof(edges) / sizeof(edges[0]))];
	case 1:
		return (uint32_t)rnd();
	default:
		return below(sane_max + 1);
	}
}

/* ---- what the run counts, in memory shared by every iteration ---- */

#define OPS(X)								\
	X(get_context) X(query_device) X(query_port) X(alloc_pd)	\
	X(dealloc_pd) X(reg_mr) X(rereg_mr) X(dereg_mr) X(create_ah)	\
	X(destroy_ah) X(comp_channel) X(create_cq) X(create_cq_ex)	\
	X(resize_cq) X(poll_cq) X(req_notify) X(destroy_cq)		\
	X(create_qp) X(create_qp_ex) X(modify_qp) X(modify_qp_ex)	\
	X(query_qp) X(destroy_qp) X(post_send) X(post_recv)		\
	X(ex_query_device) X(unsupported_cmd) X(random_cmd)		\
	X(ioctl_cq_create) X(ioctl_qp_create) X(ioctl_query_port)	\
	X(ioctl_gid_table) X(ioctl_gid_entry) X(ioctl_info_handles)	\
	X(ioctl_destroy) X(ioctl_random) X(mmap_ring) X(mmap_hostile)	\
	X(munmap_ring) X(sq_write) X(rq_write) X(cq_write) X(fork)	\
	X(close_dev) X(exit)

#define OP_ENUM(n) OP_##n,
enum op { OPS(OP_ENUM) NUM_OPS };
#define OP_NAME(n) #n,
static const char *const op_names[] = { OPS(OP_NAME) };

struct stats {
	atomic_ullong calls;		/* every syscall the fuzzer aimed at a device */
	atomic_ullong ok[NUM_OPS];	/* those that succeeded, per kind */
	atomic_ullong tried[NUM_OPS];
	atomic_ullong faults_armed;	/* calls made with fail-nth set */
	atomic_ullong faults_injected;	/* of those, the ones a fault hit */
};
static struct stats *st;

/* ---- the run's parameters ---- */

static struct {
	uint64_t seed;
	long iter;		/* only this iteration, or -1 */
	long iters;
	long seconds;
	int threads;
	int ops;
	int ndevs;
	char dev_name[MAX_DEVS][64];
	char uverbs[MAX_DEVS][64];	/* /dev/infiniband/uverbsN */
	uint8_t gid[MAX_DEVS][MAX_GIDS][16];
	int ngids[MAX_DEVS];
} cfg = { .iter = -1, .threads = 3, .ops = 300 };

/* ---- one iteration's state, shared by its threads ---- */

enum kind { K_FREE, K_PD, K_MR, K_AH, K_CQ, K_QP, K_CHAN, NUM_KINDS };

struct ring {
	uint8_t *map;
	size_t len;
	struct srd_ring_info info;
};

struct obj {
	enum kind kind;
	int dev;
	uint32_t handle;
	uint32_t qpn;		/* QPs */
	uint32_t lkey, rkey;	/* MRs */
	uint64_t addr, len;	/* MRs */
	uint32_t ahn;		/* AHs */
	int srd;		/* an SRD QP */
	int fd;			/* completion channels */
	struct srd_ring_info sq_info, rq_info, cq_info;	/* from the response */
	struct ring sq, rq, cq;	/* mapped */
};

static struct obj objs[MAX_OBJS];
static pthread_mutex_t objs_lock = PTHREAD_MUTEX_INITIALIZER;
/* Ring writers hold it to read, munmap holds it to write. */
static pthread_rwlock_t maps_lock = PTHREAD_RWLOCK_INITIALIZER;
static int dev_fd[MAX_DEVS];
static uint8_t *pool;

/* A snapshot of a random live object of kind k, or 0 if none. */
static int pick(enum kind k, struct obj *out)
{
	int i, start = below(MAX_OBJS), found = 0;

	pthread_mutex_lock(&objs_lock);
	for (i = 0; i < MAX_OBJS; i++) {
		struct obj *o = &objs[(start + i) % MAX_OBJS];

		if (o->kind == k) {
			*out = *o;
			found = 1;
			break;
		}
	}
	pthread_mutex_unlock(&objs_lock);
	return found;
}

/* A handle for a field that takes one of kind k: usually live, or not. */
static uint32_t handle_of(enum kind k, int dev)
{
	struct obj o;

	if (!one_in(10) && pick(k, &o) && (o.dev == dev || one_in(4)))
		return o.handle;
	return one_in(2) ? below(64) : (uint32_t)rnd();
}

static void unmap_ring(struct ring *r)
{
	if (r->map)
		munmap(r->map, r->len);
	r->map = NULL;
}

/*
 * Unmaps rings taken out of their slot (under objs_lock, then released):
 * once no ring writer holds maps_lock.  The lock order is objs_lock, then
 * maps_lock to read; maps_lock is never taken to write under objs_lock.
 */
static void unmap_detached(struct ring *r, int n)
{
	pthread_rwlock_wrlock(&maps_lock);
	while (n-- > 0)
		unmap_ring(&r[n]);
	pthread_rwlock_unlock(&maps_lock);
}

/* Records a new object; an old one in the slot taken is forgotten. */
static void remember(const struct obj *o)
{
	int i = below(MAX_OBJS), n;
	struct ring old[3];

	pthread_mutex_lock(&objs_lock);
	for (n = 0; n < MAX_OBJS && objs[i].kind != K_FREE; n++)
		i = (i + 1) % MAX_OBJS;
	old[0] = objs[i].sq;
	old[1] = objs[i].rq;
	old[2] = objs[i].cq;
	objs[i] = *o;
	pthread_mutex_unlock(&objs_lock);
	unmap_detached(old, 3);
}

/* Forgets the object of kind k with this handle (its rings stay mapped). */
static void forget(enum kind k, int dev, uint32_t handle)
{
	int i;

	pthread_mutex_lock(&objs_lock);
	for (i = 0; i < MAX_OBJS; i++)
		if (objs[i].kind == k && objs[i].dev == dev &&
		    objs[i].handle == handle)
			objs[i].kind = K_FREE;
	pthread_mutex_unlock(&objs_lock);
}

/* ---- fault injection: /proc/thread-self/fail-nth ---- */

static __thread int fail_nth_fd = -1;

static void fault_arm(void)
{
	char b[16];
	int n;

	if (fail_nth_fd < 0 || !one_in(5))
		return;
	n = snprintf(b, sizeof(b), "%u", 1 + below(one_in(4) ? 100 : 12));
	if (pwrite(fail_nth_fd, b, n, 0) == n)
		atomic_fetch_add(&st->faults_armed, 1);
}

static void fault_disarm(void)
{
	char b[16] = "";

	if (fail_nth_fd < 0)
		return;
	/* What is left of the count: 0 if the fault was injected. */
	if (pread(fail_nth_fd, b, sizeof(b) - 1, 0) > 0 && atoi(b) == 0 &&
	    b[0] == '0')
		atomic_fetch_add(&st->faults_injected, 1);
	if (pwrite(fail_nth_fd, "0", 1, 0) < 0)
		return;
}

/* ---- the write() ABI ---- */

/* Where responses of hostile lengths land. */
static __thread uint8_t scratch[4096] __attribute__((aligned(8)));

/* Driver data: usually the right struct, often something else. */
static size_t driver_in(void *buf, size_t room, const void *good, size_t len)
{
	size_t n = len;

	if (len)
		memcpy(buf, good, len);
	switch (below(10)) {
	case 0:	/* shorter */
		n = below(len + 1);
		break;
	case 1:	/* longer, the tail not zero */
		n = len + 8 * (1 + below(4));
		memset((uint8_t *)buf + len, 0, n - len);
		((uint8_t *)buf)[len + below(n - len)] = 1 + below(255);
		break;
	case 2:	/* one bit flipped */
		if (len)
			((uint8_t *)buf)[below(len)] ^= 1 << below(8);
		break;
	case 3:	/* garbage */
		n = 8 * below(8);
		for (size_t i = 0; i < n; i++)
			((uint8_t *)buf)[i] = rnd();
		break;
	case 4:	/* longer, zeroed */
		n = len + 8 * (1 + below(4));
		memset((uint8_t *)buf + len, 0, n - len);
		break;
	default:
		break;
	}
	return n < room ? n : room;
}

/*
 * A plain write() command: header, core struct (its first field the
 * response pointer when it has one), driver data.  The response lands in
 * resp, core_out then driver_out bytes, or somewhere hostile.
 */
static int cmd_write(int dev, uint32_t cmd, void *core, size_t core_len,
		     const void *drv, size_t drv_len, void *resp,
		     size_t resp_len)
{
	uint8_t buf[1024] __attribute__((aligned(8)));
	struct ib_uverbs_cmd_hdr *hdr = (void *)buf;
	size_t total = sizeof(*hdr) + core_len + drv_len;
	ssize_t r;

	if (total + 4 > sizeof(buf))
		return -E2BIG;
	hdr->command = cmd;
	hdr->in_words = (total + 3) / 4;
	hdr->out_words = resp_len / 4;
	if (one_in(50))
		hdr->in_words = below(64);
	if (one_in(50)) {
		/* Room for whatever the kernel writes: not the caller's resp. */
		hdr->out_words = below(64);
		resp = scratch;
	}
	if (resp_len && core_len >= 8) {
		uint64_t p = (uint64_t)(uintptr_t)resp;

		if (one_in(40))
			p = one_in(2) ? 0 : 0xffff800000000000ULL;
		memcpy(core, &p, 8);
	}
	memcpy(buf + sizeof(*hdr), core, core_len);
	if (drv_len)
		memcpy(buf + sizeof(*hdr) + core_len, drv, drv_len);
	memset(buf + total, 0, 4);
	atomic_fetch_add(&st->calls, 1);
	fault_arm();
	r = write(dev_fd[dev], buf, hdr->in_words * 4 > total ?
		  (size_t)hdr->in_words * 4 : total);
	fault_disarm();
	return r < 0 ? -errno : 0;
}

/* An extended write() command: header, ex header, core, driver data. */
static int cmd_write_ex(int dev, uint32_t cmd, const void *core,
			size_t core_len, const void *drv, size_t drv_len,
			void *resp, size_t core_out, size_t drv_out)
{
	uint8_t buf[1024] __attribute__((aligned(8)));
	struct ib_uverbs_cmd_hdr *hdr = (void *)buf;
	struct ib_uverbs_ex_cmd_hdr *ex = (void *)(hdr + 1);
	size_t off = sizeof(*hdr) + sizeof(*ex);
	ssize_t r;

	if (off + core_len + drv_len > sizeof(buf))
		return -E2BIG;
	memset(buf, 0, off);
	hdr->command = cmd | IB_USER_VERBS_CMD_FLAG_EXTENDED;
	hdr->in_words = core_len / 8;
	hdr->out_words = core_out / 8;
	ex->response = (uintptr_t)resp;
	ex->provider_in_words = drv_len / 8;
	ex->provider_out_words = drv_out / 8;
	if (one_in(50))
		ex->cmd_hdr_reserved = 1;
	memcpy(buf + off, core, core_len);
	if (drv_len)
		memcpy(buf + off + core_len, drv, drv_len);
	atomic_fetch_add(&st->calls, 1);
	fault_arm();
	r = write(dev_fd[dev], buf, off + core_len + drv_len);
	fault_disarm();
	return r < 0 ? -errno : 0;
}

/* ---- the ioctl() ABI ---- */

struct icmd {
	struct ib_uverbs_ioctl_hdr hdr;
	struct ib_uverbs_attr attrs[16];
};

static void icmd_init(struct icmd *c, uint16_t object, uint16_t method)
{
	memset(c, 0, sizeof(*c));
	c->hdr.object_id = object;
	c->hdr.method_id = method;
}

static struct ib_uverbs_attr *attr_add(struct icmd *c, uint16_t id,
				       uint16_t len, uint64_t data,
				       uint16_t flags)
{
	struct ib_uverbs_attr *a = &c->attrs[c->hdr.num_attrs++];

	a->attr_id = id;
	a->len = len;
	a->flags = flags;
	a->data = data;
	return a;
}

static int icmd_run(int dev, struct icmd *c)
{
	int r;

	/* Now and then, an attribute dropped or a length or flag damaged. */
	if (c->hdr.num_attrs && one_in(12)) {
		unsigned int i = below(c->hdr.num_attrs);

		switch (below(3)) {
		case 0:
			c->attrs[i] = c->attrs[--c->hdr.num_attrs];
			break;
		case 1:
			c->attrs[i].len = below(64);
			break;
		default:
			c->attrs[i].flags ^= 1 << below(3);
			break;
		}
	}
	c->hdr.length = sizeof(c->hdr) + c->hdr.num_attrs * sizeof(c->attrs[0]);
	atomic_fetch_add(&st->calls, 1);
	fault_arm();
	r = ioctl(dev_fd[dev], RDMA_VERBS_IOCTL, c);
	fault_disarm();
	return r < 0 ? -errno : 0;
}

/* ---- memory for MRs and SGEs ---- */

static void mem_range(__u64 *addr, __u64 *len)
{
	uint64_t off = below(POOL_BYTES);

	switch (below(12)) {
	case 0:
		*addr = (uint64_t)rnd();
		*len = hostile_u32(1 << 20);
		return;
	case 1:	/* past the pool's end */
		*addr = (uintptr_t)pool + POOL_BYTES - below(4096);
		*len = 4096 + below(65536);
		return;
	case 2:
		*addr = (uintptr_t)pool + off;
		*len = 0;
		return;
	default:
		*addr = (uintptr_t)pool + off;
		*len = 1 + below(POOL_BYTES - off);
		return;
	}
}

/* ---- the ops ---- */

typedef void (*op_fn)(int dev);

static void done(enum op op, int r)
{
	atomic_fetch_add(&st->tried[op], 1);
	if (r == 0)
		atomic_fetch_add(&st->ok[op], 1);
}

static void op_get_context(int dev)
{
	struct ib_uverbs_get_context core = {};
	struct {
		struct ib_uverbs_get_context_resp core;
		struct srd_alloc_ucontext_resp drv;
	} resp = { .core.async_fd = ~0u };
	struct srd_alloc_ucontext_cmd good = {
		.abi_version = SRD_UVERBS_ABI_VERSION,
	};
	uint8_t drv[64];
	size_t n = driver_in(drv, sizeof(drv), &good, sizeof(good));
	int r;

	r = cmd_write(dev, IB_USER_VERBS_CMD_GET_CONTEXT, &core, sizeof(core),
		      drv, n, &resp, sizeof(resp) - 4 * below(3));
	if (!r && resp.core.async_fd != ~0u)
		close(resp.core.async_fd);
	done(OP_get_context, r);
}

static void op_query_device(int dev)
{
	struct ib_uverbs_query_device core = {};
	struct ib_uverbs_query_device_resp resp;
	uint8_t drv[16] = { 0 };

	done(OP_query_device,
	     cmd_write(dev, IB_USER_VERBS_CMD_QUERY_DEVICE, &core, sizeof(core),
		       drv, one_in(4) ? 8 : 0, &resp, sizeof(resp)));
}

static void op_query_port(int dev)
{
	struct ib_uverbs_query_port core = {
		.port_num = one_in(4) ? below(256) : 1,
	};
	struct ib_uverbs_query_port_resp resp;

	done(OP_query_port,
	     cmd_write(dev, IB_USER_VERBS_CMD_QUERY_PORT, &core, sizeof(core),
		       NULL, 0, &resp, sizeof(resp)));
}

static void op_alloc_pd(int dev)
{
	struct ib_uverbs_alloc_pd core = {};
	struct {
		struct ib_uverbs_alloc_pd_resp core;
		struct srd_alloc_pd_resp drv;
	} resp = {};
	uint8_t drv[64];
	size_t n = driver_in(drv, sizeof(drv), NULL, 0);
	struct obj o = { .kind = K_PD, .dev = dev };
	int r;

	r = cmd_write(dev, IB_USER_VERBS_CMD_ALLOC_PD, &core, sizeof(core),
		      drv, n, &resp, one_in(3) ? 4 : sizeof(resp));
	if (!r) {
		o.handle = resp.core.pd_handle;
		remember(&o);
	}
	done(OP_alloc_pd, r);
}

static void destroy_simple(int dev, enum kind k, uint32_t cmd, enum op op)
{
	struct obj o;
	uint32_t h = handle_of(k, dev);
	int r;

	/* dealloc_pd, destroy_ah, dereg_mr: { handle } and no response. */
	r = cmd_write(dev, cmd, &h, sizeof(h), NULL, 0, NULL, 0);
	if (!r && pick(k, &o))
		forget(k, dev, h);
	done(op, r);
}

static void op_dealloc_pd(int dev)
{
	destroy_simple(dev, K_PD, IB_USER_VERBS_CMD_DEALLOC_PD, OP_dealloc_pd);
}

static void op_reg_mr(int dev)
{
	struct ib_uverbs_reg_mr core = {};
	struct ib_uverbs_reg_mr_resp resp = {};
	uint8_t drv[64];
	size_t n = driver_in(drv, sizeof(drv), NULL, 0);
	struct obj o = { .kind = K_MR, .dev = dev };
	int r;

	mem_range(&core.start, &core.length);
	core.hca_va = one_in(3) ? (uint64_t)rnd() : core.start;
	core.pd_handle = handle_of(K_PD, dev);
	core.access_flags = one_in(4) ? (uint32_t)rnd() : below(16);
	r = cmd_write(dev, IB_USER_VERBS_CMD_REG_MR, &core, sizeof(core),
		      drv, n, &resp, sizeof(resp));
	if (!r) {
		o.handle = resp.mr_handle;
		o.lkey = resp.lkey;
		o.rkey = resp.rkey;
		o.addr = core.start;
		o.len = core.length;
		remember(&o);
	}
	done(OP_reg_mr, r);
}

static void op_rereg_mr(int dev)
{
	struct ib_uverbs_rereg_mr core = {};
	struct ib_uverbs_rereg_mr_resp resp;

	core.mr_handle = handle_of(K_MR, dev);
	core.flags = below(8);
	mem_range(&core.start, &core.length);
	core.hca_va = core.start;
	core.pd_handle = handle_of(K_PD, dev);
	core.access_flags = below(16);
	done(OP_rereg_mr,
	     cmd_write(dev, IB_USER_VERBS_CMD_REREG_MR, &core, sizeof(core),
		       NULL, 0, &resp, sizeof(resp)));
}

static void op_dereg_mr(int dev)
{
	destroy_simple(dev, K_MR, IB_USER_VERBS_CMD_DEREG_MR, OP_dereg_mr);
}

static void op_create_ah(int dev)
{
	struct ib_uverbs_create_ah core = {};
	struct {
		struct ib_uverbs_create_ah_resp core;
		struct srd_create_ah_resp drv;
	} resp = {};
	struct obj o = { .kind = K_AH, .dev = dev };
	int peer = below(cfg.ndevs), r;

	core.user_handle = rnd();
	core.pd_handle = handle_of(K_PD, dev);
	core.attr.is_global = !one_in(10);
	core.attr.port_num = one_in(10) ? below(4) : 1;
	core.attr.grh.sgid_index = one_in(4) ? below(256) : below(2);
	core.attr.grh.hop_limit = below(256);
	core.attr.dlid = one_in(8) ? below(65536) : 0;
	if (cfg.ngids[peer] && !one_in(8))
		memcpy(core.attr.grh.dgid,
		       cfg.gid[peer][below(cfg.ngids[peer])], 16);
	else
		for (int i = 0; i < 16; i++)
			core.attr.grh.dgid[i] = rnd();
	r = cmd_write(dev, IB_USER_VERBS_CMD_CREATE_AH, &core, sizeof(core),
		      NULL, 0, &resp, one_in(4) ? 4 : sizeof(resp));
	if (!r) {
		o.handle = resp.core.ah_handle;
		o.ahn = resp.drv.ahn;
		remember(&o);
	}
	done(OP_create_ah, r);
}

static void op_destroy_ah(int dev)
{
	destroy_simple(dev, K_AH, IB_USER_VERBS_CMD_DESTROY_AH, OP_destroy_ah);
}

static void op_comp_channel(int dev)
{
	struct ib_uverbs_create_comp_channel core = {};
	struct ib_uverbs_create_comp_channel_resp resp = { .fd = ~0u };
	struct obj o = { .kind = K_CHAN, .dev = dev };
	int r;

	r = cmd_write(dev, IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL, &core,
		      sizeof(core), NULL, 0, &resp, sizeof(resp));
	if (!r && resp.fd != ~0u) {
		o.fd = resp.fd;
		o.handle = resp.fd;
		remember(&o);
	}
	done(OP_comp_channel, r);
}

static int32_t chan_fd(void)
{
	struct obj o;

	if (one_in(2))
		return -1;
	if (pick(K_CHAN, &o) && !one_in(5))
		return o.fd;
	return (int32_t)below(40);
}

static uint32_t cq_entries(void)
{
	return one_in(6) ? hostile_u32(1 << 16) : 1 + below(64);
}

static void cq_driver(uint8_t *drv, size_t *n)
{
	struct srd_create_cq_cmd good = {};

	*n = driver_in(drv, 64, &good, sizeof(good));
}

static void new_cq(int dev, uint32_t handle, const struct srd_create_cq_resp *d)
{
	struct obj o = { .kind = K_CQ, .dev = dev, .handle = handle };

	o.cq_info = d->ring;
	remember(&o);
}

static void op_create_cq(int dev)
{
	struct ib_uverbs_create_cq core = {};
	struct {
		struct ib_uverbs_create_cq_resp core;
		struct srd_create_cq_resp drv;
	} resp = {};
	uint8_t drv[64];
	size_t n;
	int r;

	cq_driver(drv, &n);
	core.user_handle = rnd();
	core.cqe = cq_entries();
	core.comp_vector = one_in(5) ? below(8) : 0;
	core.comp_channel = chan_fd();
	r = cmd_write(dev, IB_USER_VERBS_CMD_CREATE_CQ, &core, sizeof(core),
		      drv, n, &resp, one_in(8) ? 8 + 4 * below(8) : sizeof(resp));
	if (!r)
		new_cq(dev, resp.core.cq_handle, &resp.drv);
	done(OP_create_cq, r);
}

static void op_create_cq_ex(int dev)
{
	struct ib_uverbs_ex_create_cq core = {};
	struct {
		struct ib_uverbs_ex_create_cq_resp core;
		struct srd_create_cq_resp drv;
	} resp = {};
	uint8_t drv[64];
	size_t n;
	int r;

	cq_driver(drv, &n);
	core.user_handle = rnd();
	core.cqe = cq_entries();
	core.comp_vector = one_in(5) ? below(8) : 0;
	core.comp_channel = chan_fd();
	core.comp_mask = one_in(8) ? below(4) : 0;
	core.flags = one_in(8) ? below(4) : 0;
	r = cmd_write_ex(dev, IB_USER_VERBS_EX_CMD_CREATE_CQ, &core,
			 sizeof(core), drv, n & ~7UL, &resp,
			 sizeof(resp.core), sizeof(resp.drv));
	if (!r)
		new_cq(dev, resp.core.base.cq_handle, &resp.drv);
	done(OP_create_cq_ex, r);
}

static void op_resize_cq(int dev)
{
	struct ib_uverbs_resize_cq core = {
		.cq_handle = handle_of(K_CQ, dev),
		.cqe = cq_entries(),
	};
	struct ib_uverbs_resize_cq_resp resp;

	done(OP_resize_cq,
	     cmd_write(dev, IB_USER_VERBS_CMD_RESIZE_CQ, &core, sizeof(core),
		       NULL, 0, &resp, sizeof(resp)));
}

static void op_poll_cq(int dev)
{
	struct ib_uverbs_poll_cq core = {
		.cq_handle = handle_of(K_CQ, dev),
		.ne = below(8),
	};
	uint8_t resp[8 + 8 * 48];

	done(OP_poll_cq,
	     cmd_write(dev, IB_USER_VERBS_CMD_POLL_CQ, &core, sizeof(core),
		       NULL, 0, resp, sizeof(resp)));
}

static void op_req_notify(int dev)
{
	struct ib_uverbs_req_notify_cq core = {
		.cq_handle = handle_of(K_CQ, dev),
		.solicited_only = one_in(4) ? (uint32_t)rnd() : below(2),
	};

	done(OP_req_notify,
	     cmd_write(dev, IB_USER_VERBS_CMD_REQ_NOTIFY_CQ, &core,
		       sizeof(core), NULL, 0, NULL, 0));
}

static void op_destroy_cq(int dev)
{
	struct ib_uverbs_destroy_cq core = { .cq_handle = handle_of(K_CQ, dev) };
	struct ib_uverbs_destroy_cq_resp resp;
	int r;

	r = cmd_write(dev, IB_USER_VERBS_CMD_DESTROY_CQ, &core, sizeof(core),
		      NULL, 0, &resp, sizeof(resp));
	if (!r)
		forget(K_CQ, dev, core.cq_handle);
	done(OP_destroy_cq, r);
}

/* A QP's type and its driver data, from the seed. */
static uint32_t qp_type(int *srd, uint8_t *drv, size_t *n)
{
	struct srd_create_qp_cmd good = {};
	uint32_t t;

	switch (below(8)) {
	case 0:
		t = one_in(2) ? (uint32_t)below(16) : (uint32_t)rnd();
		break;
	case 1:
	case 2:
	case 3:
		t = IB_QPT_UD_V;
		break;
	default:
		t = IB_QPT_DRIVER_V;
		good.driver_qp_type = SRD_QP_TYPE_SRD;
		break;
	}
	if (one_in(10))
		good.driver_qp_type = below(4);
	*srd = t == IB_QPT_DRIVER_V && good.driver_qp_type == SRD_QP_TYPE_SRD;
	*n = driver_in(drv, 64, &good, sizeof(good));
	return t;
}

static void qp_caps(uint32_t *send_wr, uint32_t *recv_wr, uint32_t *send_sge,
		    uint32_t *recv_sge, uint32_t *inl)
{
	*send_wr = one_in(6) ? hostile_u32(1 << 15) : 1 + below(32);
	*recv_wr = one_in(6) ? hostile_u32(1 << 15) : 1 + below(32);
	*send_sge = one_in(6) ? hostile_u32(64) : 1 + below(4);
	*recv_sge = one_in(6) ? hostile_u32(64) : 1 + below(4);
	*inl = one_in(3) ? hostile_u32(1024) : 0;
}

static void new_qp(int dev, uint32_t handle, uint32_t qpn, int srd,
		   const struct srd_create_qp_resp *d)
{
	struct obj o = { .kind = K_QP, .dev = dev, .handle = handle,
			 .qpn = qpn, .srd = srd };

	o.sq_info = d->sq;
	o.rq_info = d->rq;
	remember(&o);
}

static void op_create_qp(int dev)
{
	struct ib_uverbs_create_qp core = {};
	struct {
		struct ib_uverbs_create_qp_resp core;
		struct srd_create_qp_resp drv;
	} resp = {};
	uint8_t drv[64];
	size_t n;
	int srd, r;

	core.qp_type = qp_type(&srd, drv, &n);
	core.user_handle = rnd();
	core.pd_handle = handle_of(K_PD, dev);
	core.send_cq_handle = handle_of(K_CQ, dev);
	core.recv_cq_handle = one_in(3) ? core.send_cq_handle :
					  handle_of(K_CQ, dev);
	core.is_srq = one_in(20);
	core.srq_handle = core.is_srq ? below(8) : 0;
	core.sq_sig_all = below(2);
	qp_caps(&core.max_send_wr, &core.max_recv_wr, &core.max_send_sge,
		&core.max_recv_sge, &core.max_inline_data);
	r = cmd_write(dev, IB_USER_VERBS_CMD_CREATE_QP, &core, sizeof(core),
		      drv, n, &resp, one_in(8) ? 4 * below(16) : sizeof(resp));
	if (!r)
		new_qp(dev, resp.core.qp_handle, resp.core.qpn, srd, &resp.drv);
	done(OP_create_qp, r);
}

static void op_create_qp_ex(int dev)
{
	struct ib_uverbs_ex_create_qp core = {};
	struct {
		struct ib_uverbs_ex_create_qp_resp core;
		struct srd_create_qp_resp drv;
	} resp = {};
	uint8_t drv[64];
	size_t n;
	int srd, r;

	core.qp_type = qp_type(&srd, drv, &n);
	core.user_handle = rnd();
	core.pd_handle = handle_of(K_PD, dev);
	core.send_cq_handle = handle_of(K_CQ, dev);
	core.recv_cq_handle = handle_of(K_CQ, dev);
	core.sq_sig_all = below(2);
	core.comp_mask = one_in(8) ? below(8) : 0;
	core.create_flags = one_in(8) ? (uint32_t)rnd() : 0;
	core.source_qpn = one_in(10) ? below(1 << 24) : 0;
	qp_caps(&core.max_send_wr, &core.max_recv_wr, &core.max_send_sge,
		&core.max_recv_sge, &core.max_inline_data);
	r = cmd_write_ex(dev, IB_USER_VERBS_EX_CMD_CREATE_QP, &core,
			 sizeof(core), drv, n & ~7UL, &resp,
			 sizeof(resp.core), sizeof(resp.drv));
	if (!r)
		new_qp(dev, resp.core.base.qp_handle, resp.core.base.qpn, srd,
		       &resp.drv);
	done(OP_create_qp_ex, r);
}

/* A modify that walks RESET -> INIT -> RTR -> RTS, or to ERR, or anything. */
static void modify_fields(struct ib_uverbs_modify_qp *m)
{
	static const uint32_t masks[] = {
		/* INIT */
		QPA_STATE | QPA_PKEY_INDEX | QPA_PORT | QPA_QKEY,
		/* RTR */
		QPA_STATE,
		/* RTS */
		QPA_STATE | QPA_SQ_PSN,
	};
	uint32_t step = below(6);

	m->pkey_index = one_in(10) ? below(4) : 0;
	m->port_num = one_in(10) ? below(4) : 1;
	m->qkey = one_in(2) ? 0x11111111 : (uint32_t)rnd();
	m->sq_psn = rnd();
	m->rnr_retry = one_in(3) ? below(16) : 7;
	if (step < 3) {
		m->attr_mask = masks[step];
		m->qp_state = step + 1;	/* IBV_QPS_INIT, RTR, RTS */
		if (one_in(3))
			m->attr_mask |= QPA_RNR_RETRY;
	} else if (step == 3) {
		m->attr_mask = QPA_STATE;
		m->qp_state = one_in(2) ? 6 : 0;	/* ERR, RESET */
	} else {
		m->attr_mask = one_in(2) ? (uint32_t)rnd() : below(1 << 21);
		m->qp_state = below(10);
		m->cur_qp_state = below(10);
	}
}

/* A QP walked RESET -> INIT -> RTR -> RTS, as a program makes it ready. */
static void walk_to_rts(int dev, uint32_t handle)
{
	struct ib_uverbs_modify_qp core = {
		.qp_handle = handle,
		.port_num = 1,
		.qkey = 0x11111111,
		.sq_psn = rnd(),
	};
	uint32_t step;

	for (step = 0; step < 3; step++) {
		core.attr_mask = step == 0 ? QPA_STATE | QPA_PKEY_INDEX |
					     QPA_PORT | QPA_QKEY :
				 step == 1 ? QPA_STATE : QPA_STATE | QPA_SQ_PSN;
		core.qp_state = step + 1;
		done(OP_modify_qp,
		     cmd_write(dev, IB_USER_VERBS_CMD_MODIFY_QP, &core,
			       sizeof(core), NULL, 0, NULL, 0));
	}
}

static void op_modify_qp(int dev)
{
	struct ib_uverbs_modify_qp core = {};
	uint8_t drv[64];
	size_t n = driver_in(drv, sizeof(drv), NULL, 0);
	uint32_t step;

	modify_fields(&core);
	core.qp_handle = handle_of(K_QP, dev);
	if (one_in(2)) {
		/* A QP walked to RTS, as a program makes it ready. */
		for (step = 0; step < 3; step++) {
			core.attr_mask = step == 0 ? QPA_STATE | QPA_PKEY_INDEX |
						     QPA_PORT | QPA_QKEY :
					 step == 1 ? QPA_STATE :
						     QPA_STATE | QPA_SQ_PSN;
			core.qp_state = step + 1;
			done(OP_modify_qp,
			     cmd_write(dev, IB_USER_VERBS_CMD_MODIFY_QP, &core,
				       sizeof(core), NULL, 0, NULL, 0));
		}
		return;
	}
	done(OP_modify_qp,
	     cmd_write(dev, IB_USER_VERBS_CMD_MODIFY_QP, &core, sizeof(core),
		       drv, n, NULL, 0));
}

static void op_modify_qp_ex(int dev)
{
	struct ib_uverbs_ex_modify_qp core = {};
	struct ib_uverbs_ex_modify_qp_resp resp;
	uint8_t drv[64];
	size_t n = driver_in(drv, sizeof(drv), NULL, 0);

	modify_fields(&core.base);
	core.base.qp_handle = handle_of(K_QP, dev);
	core.rate_limit = one_in(10) ? (uint32_t)rnd() : 0;
	done(OP_modify_qp_ex,
	     cmd_write_ex(dev, IB_USER_VERBS_EX_CMD_MODIFY_QP, &core,
			  sizeof(core), drv, n & ~7UL, &resp, sizeof(resp), 0));
}

static void op_query_qp(int dev)
{
	struct ib_uverbs_query_qp core = {
		.qp_handle = handle_of(K_QP, dev),
		.attr_mask = (uint32_t)rnd(),
	};
	struct ib_uverbs_query_qp_resp resp;

	done(OP_query_qp,
	     cmd_write(dev, IB_USER_VERBS_CMD_QUERY_QP, &core, sizeof(core),
		       NULL, 0, &resp, sizeof(resp)));
}

static void op_destroy_qp(int dev)
{
	struct ib_uverbs_destroy_qp core = { .qp_handle = handle_of(K_QP, dev) };
	struct ib_uverbs_destroy_qp_resp resp;
	int r;

	r = cmd_write(dev, IB_USER_VERBS_CMD_DESTROY_QP, &core, sizeof(core),
		      NULL, 0, &resp, sizeof(resp));
	if (!r)
		forget(K_QP, dev, core.qp_handle);
	done(OP_destroy_qp, r);
}

/* post_send: the doorbell (no work request), or work requests. */
static void op_post_send(int dev)
{
	struct {
		struct ib_uverbs_post_send core;
		struct ib_uverbs_send_wr wr[2];
		struct ib_uverbs_sge sge[2];
	} c = {};
	struct ib_uverbs_post_send_resp resp;
	uint32_t nwr = one_in(4) ? below(3) : 0, nsge = nwr ? below(3) : 0;
	size_t len;

	c.core.qp_handle = handle_of(K_QP, dev);
	c.core.wr_count = nwr;
	c.core.sge_count = nsge;
	c.core.wqe_size = one_in(10) ? below(128) : sizeof(c.wr[0]);
	for (uint32_t i = 0; i < nwr; i++) {
		c.wr[i].opcode = below(12);
		c.wr[i].num_sge = below(2);
		c.wr[i].wr.ud.ah = handle_of(K_AH, dev);
		c.wr[i].wr.ud.remote_qpn = below(64);
	}
	/* The SGEs right after the work requests, and nothing beyond. */
	memmove((uint8_t *)c.wr + nwr * sizeof(c.wr[0]), c.sge,
		nsge * sizeof(c.sge[0]));
	len = sizeof(c.core) + nwr * sizeof(c.wr[0]) + nsge * sizeof(c.sge[0]);
	done(OP_post_send,
	     cmd_write(dev, IB_USER_VERBS_CMD_POST_SEND, &c, len, NULL, 0,
		       &resp, sizeof(resp)));
}

static void op_post_recv(int dev)
{
	struct {
		struct ib_uverbs_post_recv core;
		struct ib_uverbs_recv_wr wr;
		struct ib_uverbs_sge sge;
	} c = {};
	struct ib_uverbs_post_recv_resp resp;

	c.core.qp_handle = handle_of(K_QP, dev);
	c.core.wr_count = below(2);
	c.core.sge_count = c.core.wr_count ? below(2) : 0;
	c.core.wqe_size = sizeof(c.wr);
	c.wr.num_sge = c.core.sge_count;
	done(OP_post_recv,
	     cmd_write(dev, IB_USER_VERBS_CMD_POST_RECV, &c,
		       sizeof(c.core) + c.core.wr_count * sizeof(c.wr) +
		       c.core.sge_count * sizeof(c.sge), NULL, 0,
		       &resp, sizeof(resp)));
}

static void op_ex_query_device(int dev)
{
	struct ib_uverbs_ex_query_device core = {
		.comp_mask = one_in(8) ? 1 : 0,
	};
	uint8_t resp[512];

	done(OP_ex_query_device,
	     cmd_write_ex(dev, IB_USER_VERBS_EX_CMD_QUERY_DEVICE, &core,
			  sizeof(core), NULL, 0, resp, 8 * (1 + below(40)), 0));
}

/* Commands the device does not take: SRQs, MWs, XRC, flows, WQs. */
static void op_unsupported_cmd(int dev)
{
	static const uint32_t cmds[] = {
		IB_USER_VERBS_CMD_ALLOC_MW, IB_USER_VERBS_CMD_DEALLOC_MW,
		IB_USER_VERBS_CMD_CREATE_SRQ, IB_USER_VERBS_CMD_MODIFY_SRQ,
		IB_USER_VERBS_CMD_QUERY_SRQ, IB_USER_VERBS_CMD_DESTROY_SRQ,
		IB_USER_VERBS_CMD_POST_SRQ_RECV, IB_USER_VERBS_CMD_OPEN_XRCD,
		IB_USER_VERBS_CMD_CLOSE_XRCD, IB_USER_VERBS_CMD_CREATE_XSRQ,
		IB_USER_VERBS_CMD_OPEN_QP, IB_USER_VERBS_CMD_ATTACH_MCAST,
		IB_USER_VERBS_CMD_DETACH_MCAST,
	};
	uint64_t core[16];

	for (int i = 0; i < 16; i++)
		core[i] = one_in(2) ? below(64) : rnd();
	done(OP_unsupported_cmd,
	     cmd_write(dev, cmds[below(sizeof(cmds) / sizeof(cmds[0]))],
		       core, 8 * below(16), NULL, 0, core, 0));
}

static void op_random_cmd(int dev)
{
	uint64_t core[16], resp[32];

	for (int i = 0; i < 16; i++)
		core[i] = one_in(2) ? below(64) : rnd();
	if (one_in(2))
		done(OP_random_cmd,
		     cmd_write(dev, below(64), core, 8 * below(16), NULL, 0,
			       resp, 4 * below(64)));
	else
		done(OP_random_cmd,
		     cmd_write_ex(dev, below(64), core, 8 * below(16), core,
				  8 * below(2), resp, 8 * below(16),
				  8 * below(2)));
}

/* ---- the same through ioctl() ---- */

static void uhw(struct icmd *c, void *in, size_t in_len, void *out,
		size_t out_len)
{
	if (in_len)
		attr_add(c, UVERBS_ATTR_UHW_IN, in_len, (uintptr_t)in, 0);
	if (out_len)
		attr_add(c, UVERBS_ATTR_UHW_OUT, out_len, (uintptr_t)out, 0);
}

static void op_ioctl_cq_create(int dev)
{
	struct icmd c;
	uint8_t drv[64];
	struct srd_create_cq_resp dresp = {};
	uint32_t cqe = cq_entries(), resp_cqe;
	struct ib_uverbs_attr *h;
	size_t n;
	int32_t ch = chan_fd();
	int r;

	cq_driver(drv, &n);
	icmd_init(&c, UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_CREATE);
	/* IDR and FD attributes: len 0, the handle or fd in data. */
	h = attr_add(&c, UVERBS_ATTR_CREATE_CQ_HANDLE, 0, 0,
		     UVERBS_ATTR_F_MANDATORY);
	attr_add(&c, UVERBS_ATTR_CREATE_CQ_CQE, sizeof(cqe), cqe,
		 UVERBS_ATTR_F_MANDATORY);
	attr_add(&c, UVERBS_ATTR_CREATE_CQ_USER_HANDLE, 8, rnd(),
		 UVERBS_ATTR_F_MANDATORY);
	attr_add(&c, UVERBS_ATTR_CREATE_CQ_COMP_VECTOR, 4, below(2),
		 UVERBS_ATTR_F_MANDATORY);
	if (ch >= 0)
		attr_add(&c, UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL, 0, ch, 0);
	if (one_in(5))
		attr_add(&c, UVERBS_ATTR_CREATE_CQ_FLAGS, 4, below(4), 0);
	attr_add(&c, UVERBS_ATTR_CREATE_CQ_RESP_CQE, 4, (uintptr_t)&resp_cqe,
		 UVERBS_ATTR_F_MANDATORY);
	uhw(&c, drv, n, &dresp, one_in(6) ? below(sizeof(dresp)) :
					    sizeof(dresp));
	r = icmd_run(dev, &c);
	if (!r)
		new_cq(dev, h->data, &dresp);
	done(OP_ioctl_cq_create, r);
}

static void op_ioctl_qp_create(int dev)
{
	struct icmd c;
	uint8_t drv[64];
	struct srd_create_qp_resp dresp = {};
	struct ib_uverbs_qp_cap cap, rcap;
	struct ib_uverbs_attr *h;
	uint32_t qpn = 0, t;
	size_t n;
	int srd, r;

	t = qp_type(&srd, drv, &n);
	qp_caps(&cap.max_send_wr, &cap.max_recv_wr, &cap.max_send_sge,
		&cap.max_recv_sge, &cap.max_inline_data);
	icmd_init(&c, UVERBS_OBJECT_QP, UVERBS_METHOD_QP_CREATE);
	h = attr_add(&c, UVERBS_ATTR_CREATE_QP_HANDLE, 0, 0,
		     UVERBS_ATTR_F_MANDATORY);
	attr_add(&c, UVERBS_ATTR_CREATE_QP_PD_HANDLE, 0, handle_of(K_PD, dev),
		 UVERBS_ATTR_F_MANDATORY);
	attr_add(&c, UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE, 0,
		 handle_of(K_CQ, dev), UVERBS_ATTR_F_MANDATORY);
	attr_add(&c, UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE, 0,
		 handle_of(K_CQ, dev), UVERBS_ATTR_F_MANDATORY);
	attr_add(&c, UVERBS_ATTR_CREATE_QP_USER_HANDLE, 8, rnd(),
		 UVERBS_ATTR_F_MANDATORY);
	attr_add(&c, UVERBS_ATTR_CREATE_QP_CAP, sizeof(cap), (uintptr_t)&cap,
		 UVERBS_ATTR_F_MANDATORY);
	/* UVERBS_ATTR_CONST_IN: 8 bytes, inline. */
	attr_add(&c, UVERBS_ATTR_CREATE_QP_TYPE, 8, t, UVERBS_ATTR_F_MANDATORY);
	attr_add(&c, UVERBS_ATTR_CREATE_QP_FLAGS, 4,
		 one_in(6) ? (uint32_t)rnd() : 0, UVERBS_ATTR_F_MANDATORY);
	attr_add(&c, UVERBS_ATTR_CREATE_QP_RESP_CAP, sizeof(rcap),
		 (uintptr_t)&rcap, UVERBS_ATTR_F_MANDATORY);
	attr_add(&c, UVERBS_ATTR_CREATE_QP_RESP_QP_NUM, 4, (uintptr_t)&qpn,
		 UVERBS_ATTR_F_MANDATORY);
	uhw(&c, drv, n, &dresp, sizeof(dresp));
	r = icmd_run(dev, &c);
	if (!r)
		new_qp(dev, h->data, qpn, srd, &dresp);
	done(OP_ioctl_qp_create, r);
}

static void op_ioctl_query_port(int dev)
{
	struct icmd c;
	struct ib_uverbs_query_port_resp_ex resp;

	icmd_init(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_PORT);
	attr_add(&c, UVERBS_ATTR_QUERY_PORT_PORT_NUM, 8,
		 one_in(4) ? below(256) : 1, UVERBS_ATTR_F_MANDATORY);
	attr_add(&c, UVERBS_ATTR_QUERY_PORT_RESP, sizeof(resp),
		 (uintptr_t)&resp, UVERBS_ATTR_F_MANDATORY);
	done(OP_ioctl_query_port, icmd_run(dev, &c));
}

static void op_ioctl_gid_table(int dev)
{
	struct icmd c;
	struct ib_uverbs_gid_entry ents[8];
	uint64_t num = 0;

	icmd_init(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_GID_TABLE);
	attr_add(&c, UVERBS_ATTR_QUERY_GID_TABLE_ENTRY_SIZE, 8,
		 one_in(6) ? below(64) : sizeof(ents[0]),
		 UVERBS_ATTR_F_MANDATORY);
	attr_add(&c, UVERBS_ATTR_QUERY_GID_TABLE_RESP_ENTRIES,
		 sizeof(ents[0]) * (1 + below(8)), (uintptr_t)ents,
		 UVERBS_ATTR_F_MANDATORY);
	attr_add(&c, UVERBS_ATTR_QUERY_GID_TABLE_RESP_NUM_ENTRIES, 8,
		 (uintptr_t)&num, UVERBS_ATTR_F_MANDATORY);
	done(OP_ioctl_gid_table, icmd_run(dev, &c));
}

static void op_ioctl_gid_entry(int dev)
{
	struct icmd c;
	struct ib_uverbs_gid_entry ent;

	icmd_init(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_GID_ENTRY);
	attr_add(&c, UVERBS_ATTR_QUERY_GID_ENTRY_PORT, 8,
		 one_in(4) ? below(4) : 1, UVERBS_ATTR_F_MANDATORY);
	attr_add(&c, UVERBS_ATTR_QUERY_GID_ENTRY_GID_INDEX, 8,
		 one_in(4) ? (uint32_t)rnd() : below(4), UVERBS_ATTR_F_MANDATORY);
	attr_add(&c, UVERBS_ATTR_QUERY_GID_ENTRY_FLAGS, 4, 0,
		 UVERBS_ATTR_F_MANDATORY);
	attr_add(&c, UVERBS_ATTR_QUERY_GID_ENTRY_RESP_ENTRY, sizeof(ent),
		 (uintptr_t)&ent, UVERBS_ATTR_F_MANDATORY);
	done(OP_ioctl_gid_entry, icmd_run(dev, &c));
}

static void op_ioctl_info_handles(int dev)
{
	struct icmd c;
	uint32_t total = 0, list[64];

	icmd_init(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INFO_HANDLES);
	attr_add(&c, UVERBS_ATTR_INFO_OBJECT_ID, 8, below(NUM_KINDS + 14),
		 UVERBS_ATTR_F_MANDATORY);
	attr_add(&c, UVERBS_ATTR_INFO_TOTAL_HANDLES, 4, (uintptr_t)&total, 0);
	attr_add(&c, UVERBS_ATTR_INFO_HANDLES_LIST, 4 * (1 + below(64)),
		 (uintptr_t)list, 0);
	done(OP_ioctl_info_handles, icmd_run(dev, &c));
}

/* Destroy through ioctl(): PD, AH, MR, CQ or QP. */
static void op_ioctl_destroy(int dev)
{
	static const struct {
		enum kind k;
		uint16_t object, method, attr, resp;
	} d[] = {
		{ K_PD, UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY,
		  UVERBS_ATTR_DESTROY_PD_HANDLE, 0 },
		{ K_AH, UVERBS_OBJECT_AH, UVERBS_METHOD_AH_DESTROY,
		  UVERBS_ATTR_DESTROY_AH_HANDLE, 0 },
		{ K_MR, UVERBS_OBJECT_MR, UVERBS_METHOD_MR_DESTROY,
		  UVERBS_ATTR_DESTROY_MR_HANDLE, 0 },
		{ K_CQ, UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_DESTROY,
		  UVERBS_ATTR_DESTROY_CQ_HANDLE, UVERBS_ATTR_DESTROY_CQ_RESP },
		{ K_QP, UVERBS_OBJECT_QP, UVERBS_METHOD_QP_DESTROY,
		  UVERBS_ATTR_DESTROY_QP_HANDLE, UVERBS_ATTR_DESTROY_QP_RESP },
	};
	unsigned int i = below(sizeof(d) / sizeof(d[0]));
	uint32_t h = handle_of(d[i].k, dev);
	uint64_t resp[2];
	struct icmd c;
	int r;

	icmd_init(&c, d[i].object, d[i].method);
	attr_add(&c, d[i].attr, 0, h, UVERBS_ATTR_F_MANDATORY);
	if (d[i].resp)
		attr_add(&c, d[i].resp, 8 * (1 + below(2)), (uintptr_t)resp,
			 UVERBS_ATTR_F_MANDATORY);
	r = icmd_run(dev, &c);
	if (!r)
		forget(d[i].k, dev, h);
	done(OP_ioctl_destroy, r);
}

static void op_ioctl_random(int dev)
{
	uint64_t buf[32];
	struct icmd c;
	unsigned int i, n = below(8);

	for (i = 0; i < 32; i++)
		buf[i] = one_in(2) ? below(64) : rnd();
	icmd_init(&c, below(20), (1 << UVERBS_ID_NS_SHIFT) + below(12));
	if (one_in(8))
		c.hdr.driver_id = below(32);
	for (i = 0; i < n; i++) {
		uint16_t id = one_in(4) ? (UVERBS_UDATA_DRIVER_DATA_FLAG +
					   below(2)) :
			(1 << UVERBS_ID_NS_SHIFT) + below(16);

		if (one_in(2))
			attr_add(&c, id, 8 * below(9), (uintptr_t)buf,
				 below(2));
		else
			attr_add(&c, id, below(9), one_in(2) ? below(64) : rnd(),
				 below(2));
	}
	done(OP_ioctl_random, icmd_run(dev, &c));
}

/* ---- the rings ---- */

static void *map_at(int dev, const struct srd_ring_info *in, size_t *len)
{
	void *m;

	*len = in->mmap_size;
	atomic_fetch_add(&st->calls, 1);
	fault_arm();
	m = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, dev_fd[dev],
		 in->mmap_key);
	fault_disarm();
	return m == MAP_FAILED ? NULL : m;
}

/* Maps the rings of a QP or CQ that has none mapped yet. */
static void op_mmap_ring(int dev)
{
	int i, start = below(MAX_OBJS);

	(void)dev;
	pthread_mutex_lock(&objs_lock);
	for (i = 0; i < MAX_OBJS; i++) {
		struct obj *o = &objs[(start + i) % MAX_OBJS];
		int r = -1;

		if (o->kind == K_QP && !o->sq.map && o->sq_info.mmap_size) {
			o->sq.map = map_at(o->dev, &o->sq_info, &o->sq.len);
			o->sq.info = o->sq_info;
			o->rq.map = map_at(o->dev, &o->rq_info, &o->rq.len);
			o->rq.info = o->rq_info;
			r = o->sq.map && o->rq.map ? 0 : -1;
		} else if (o->kind == K_CQ && !o->cq.map &&
			   o->cq_info.mmap_size) {
			o->cq.map = map_at(o->dev, &o->cq_info, &o->cq.len);
			o->cq.info = o->cq_info;
			r = o->cq.map ? 0 : -1;
		} else {
			continue;
		}
		done(OP_mmap_ring, r);
		break;
	}
	pthread_mutex_unlock(&objs_lock);
}

/* mmap with a wrong offset, size, protection or sharing. */
static void op_mmap_hostile(int dev)
{
	struct obj o;
	struct srd_ring_info in = {};
	int prot = PROT_READ | PROT_WRITE, flags = MAP_SHARED;
	size_t len;
	void *m;

	if (pick(one_in(2) ? K_QP : K_CQ, &o))
		in = o.kind == K_QP ? (one_in(2) ? o.sq_info : o.rq_info) :
				      o.cq_info;
	switch (below(6)) {
	case 0:
		in.mmap_key += 4096 * (1 + below(4));
		break;
	case 1:
		in.mmap_size += 4096 * (1 + below(4));
		break;
	case 2:
		prot |= PROT_EXEC;
		break;
	case 3:
		flags = MAP_PRIVATE;
		break;
	case 4:
		in.mmap_key = (uint64_t)rnd() & ~4095ULL;
		break;
	default:
		in.mmap_size = 4096;
		break;
	}
	if (!in.mmap_size)
		in.mmap_size = 4096;
	len = in.mmap_size;
	atomic_fetch_add(&st->calls, 1);
	fault_arm();
	m = mmap(NULL, len, prot, flags, dev_fd[dev], in.mmap_key);
	fault_disarm();
	if (m != MAP_FAILED) {
		/* Touch it, then let it go. */
		((volatile uint8_t *)m)[0] = ((volatile uint8_t *)m)[0];
		munmap(m, len);
	}
	done(OP_mmap_hostile, m == MAP_FAILED ? -1 : 0);
}

static void op_munmap_ring(int dev)
{
	int i, start = below(MAX_OBJS);

	struct ring old[3] = {};

	(void)dev;
	pthread_mutex_lock(&objs_lock);
	for (i = 0; i < MAX_OBJS; i++) {
		struct obj *o = &objs[(start + i) % MAX_OBJS];

		if (o->sq.map || o->rq.map || o->cq.map) {
			old[0] = o->sq;
			old[1] = o->rq;
			old[2] = o->cq;
			o->sq.map = o->rq.map = o->cq.map = NULL;
			done(OP_munmap_ring, 0);
			break;
		}
	}
	pthread_mutex_unlock(&objs_lock);
	unmap_detached(old, 3);
}

/* An SGE into a registered MR, or not. */
static void make_sge(struct srd_sge *s, int dev)
{
	struct obj mr;

	if (pick(K_MR, &mr) && (mr.dev == dev || one_in(4)) && !one_in(6) &&
	    mr.len) {
		uint64_t off = below(mr.len);

		s->addr = mr.addr + off;
		s->length = one_in(8) ? hostile_u32(1 << 20) :
					below(mr.len - off + 1);
		s->lkey = one_in(10) ? mr.rkey : mr.lkey;
	} else {
		s->addr = rnd();
		s->length = hostile_u32(1 << 16);
		s->lkey = rnd();
	}
}

/* The ring counters: the producer's usually moved by a little. */
static uint32_t hostile_index(uint32_t now, uint32_t entries)
{
	switch (below(8)) {
	case 0:
		return (uint32_t)rnd();
	case 1:
		return now + entries + 1 + below(4);
	case 2:
		return now - 1 - below(4);
	default:
		return now + 1 + below(entries ? entries : 1);
	}
}

/*
 * A snapshot of a QP or CQ with its rings mapped, returned with maps_lock
 * held to read, so that nothing unmaps them meanwhile.  The holder may take
 * objs_lock (pick()) while another thread, holding objs_lock here, waits
 * for maps_lock to read: glibc's rwlocks prefer readers by default, so
 * that one is let in even while an unmapper waits to write.
 */
static int pick_mapped(enum kind k, struct obj *o)
{
	int i, start = below(MAX_OBJS);

	pthread_mutex_lock(&objs_lock);
	for (i = 0; i < MAX_OBJS; i++) {
		struct obj *x = &objs[(start + i) % MAX_OBJS];

		if ((k == K_QP && x->sq.map && x->rq.map) ||
		    (k == K_CQ && x->cq.map)) {
			*o = *x;
			pthread_rwlock_rdlock(&maps_lock);
			pthread_mutex_unlock(&objs_lock);
			return 1;
		}
	}
	pthread_mutex_unlock(&objs_lock);
	return 0;
}

static void post_doorbell(int dev, uint32_t qp_handle)
{
	struct ib_uverbs_post_send core = {
		.qp_handle = qp_handle,
		.wqe_size = sizeof(struct ib_uverbs_send_wr),
	};
	struct ib_uverbs_post_send_resp resp;

	cmd_write(dev, IB_USER_VERBS_CMD_POST_SEND, &core, sizeof(core), NULL,
		  0, &resp, sizeof(resp));
}

/* Send work requests written into the SQ ring, then the doorbell. */
static void op_sq_write(int dev)
{
	struct obj o, qp, ah;
	struct srd_ring_ctl *ctl;
	uint32_t n, i, prod, entries, stride;
	/* Half the time, work requests a program could post: sends. */
	bool tidy = one_in(2);

	if (!pick_mapped(K_QP, &o))
		return;
	ctl = (void *)o.sq.map;
	entries = o.sq.info.num_entries;
	stride = o.sq.info.stride;
	prod = __atomic_load_n(&ctl->prod, __ATOMIC_RELAXED);
	n = 1 + below(4);
	for (i = 0; i < n && entries && stride >= sizeof(struct srd_send_wqe) &&
	     (size_t)SRD_RING_SLOTS_OFFSET + (size_t)entries * stride <= o.sq.len;
	     i++) {
		uint8_t *slot = o.sq.map + SRD_RING_SLOTS_OFFSET +
				(size_t)((prod + i) & (entries - 1)) * stride;
		struct srd_send_wqe w = {};
		uint32_t room = (stride - sizeof(w)) / sizeof(struct srd_sge);

		w.wr_id = rnd();
		w.opcode = one_in(8) ? (uint8_t)rnd() : below(5);
		w.flags = one_in(8) ? (uint8_t)rnd() : SRD_WQE_SIGNALED;
		w.num_sge = one_in(8) ? (uint16_t)rnd() :
			    below((room < 4 ? room : 4) + 1);
		if (one_in(5)) {
			w.flags |= SRD_WQE_INLINE;
			w.inline_len = one_in(4) ? hostile_u32(1 << 16) :
						   below(stride - sizeof(w) + 1);
		}
		w.imm_data = rnd();
		w.ahn = pick(K_AH, &ah) && !one_in(6) ? ah.ahn : below(16);
		w.remote_qpn = pick(K_QP, &qp) && !one_in(6) ? qp.qpn :
							      (uint32_t)rnd();
		w.remote_qkey = one_in(3) ? (uint32_t)rnd() : 0x11111111;
		if (pick(K_MR, &qp) && !one_in(4)) {
			w.remote_addr = qp.addr + below(qp.len + 1);
			w.rkey = qp.rkey;
		} else {
			w.remote_addr = rnd();
			w.rkey = rnd();
		}
		w.reserved = one_in(20);
		if (tidy) {
			w.opcode = SRD_WQE_SEND;
			w.flags = SRD_WQE_SIGNALED;
			w.num_sge = room ? 1 : 0;
			w.inline_len = 0;
			w.remote_qkey = 0x11111111;
			w.reserved = 0;
			for (int t = 0; t < 8; t++)
				if (pick(K_AH, &ah) && ah.dev == o.dev) {
					w.ahn = ah.ahn;
					break;
				}
		}
		memcpy(slot, &w, sizeof(w));
		for (uint32_t s = 0; s < room && s < 4; s++) {
			struct srd_sge sge;

			make_sge(&sge, o.dev);
			if (tidy && sge.length > 4096)
				sge.length = 4096;
			memcpy(slot + sizeof(w) + s * sizeof(sge), &sge,
			       sizeof(sge));
		}
	}
	__atomic_store_n(&ctl->prod, !tidy && one_in(6) ?
			 hostile_index(prod, entries) : prod + i,
			 __ATOMIC_RELEASE);
	if (!tidy && one_in(20))
		__atomic_store_n(&ctl->cons, (uint32_t)rnd(), __ATOMIC_RELEASE);
	if (!tidy && one_in(20))
		ctl->state = rnd();
	pthread_rwlock_unlock(&maps_lock);
	if (tidy && one_in(3))
		walk_to_rts(o.dev, o.handle);
	if (!one_in(5))
		post_doorbell(o.dev == dev || one_in(4) ? o.dev : dev,
			      o.handle);
	done(OP_sq_write, 0);
}

/* Receive work requests written into the RQ ring. */
static void op_rq_write(int dev)
{
	struct obj o;
	struct srd_ring_ctl *ctl;
	uint32_t n, i, prod, entries, stride;

	(void)dev;
	if (!pick_mapped(K_QP, &o))
		return;
	ctl = (void *)o.rq.map;
	entries = o.rq.info.num_entries;
	stride = o.rq.info.stride;
	prod = __atomic_load_n(&ctl->prod, __ATOMIC_RELAXED);
	n = 1 + below(8);
	for (i = 0; i < n && entries && stride >= sizeof(struct srd_recv_wqe) &&
	     (size_t)SRD_RING_SLOTS_OFFSET + (size_t)entries * stride <= o.rq.len;
	     i++) {
		uint8_t *slot = o.rq.map + SRD_RING_SLOTS_OFFSET +
				(size_t)((prod + i) & (entries - 1)) * stride;
		struct srd_recv_wqe w = {};
		uint32_t room = (stride - sizeof(w)) / sizeof(struct srd_sge);

		w.wr_id = rnd();
		w.num_sge = one_in(8) ? (uint32_t)rnd() :
			    below((room < 4 ? room : 4) + 1);
		w.reserved = one_in(20);
		memcpy(slot, &w, sizeof(w));
		for (uint32_t s = 0; s < room && s < 4; s++) {
			struct srd_sge sge;

			make_sge(&sge, o.dev);
			memcpy(slot + sizeof(w) + s * sizeof(sge), &sge,
			       sizeof(sge));
		}
	}
	__atomic_store_n(&ctl->prod, one_in(6) ? hostile_index(prod, entries) :
			 prod + i, __ATOMIC_RELEASE);
	if (one_in(20))
		__atomic_store_n(&ctl->cons, (uint32_t)rnd(), __ATOMIC_RELEASE);
	pthread_rwlock_unlock(&maps_lock);
	done(OP_rq_write, 0);
}

/* Polls the CQ ring as the provider would, and moves cons, hostile or not. */
static void op_cq_write(int dev)
{
	struct obj o;
	struct srd_ring_ctl *ctl;
	uint32_t prod, cons;

	(void)dev;
	if (!pick_mapped(K_CQ, &o))
		return;
	ctl = (void *)o.cq.map;
	prod = __atomic_load_n(&ctl->prod, __ATOMIC_ACQUIRE);
	cons = __atomic_load_n(&ctl->cons, __ATOMIC_RELAXED);
	__atomic_store_n(&ctl->cons, one_in(5) ?
			 hostile_index(cons, o.cq.info.num_entries) : prod,
			 __ATOMIC_RELEASE);
	if (one_in(20))
		__atomic_store_n(&ctl->prod, (uint32_t)rnd(), __ATOMIC_RELEASE);
	pthread_rwlock_unlock(&maps_lock);
	done(OP_cq_write, 0);
}

/*
 * What a program would make first, all well formed, so that the hostile
 * calls find live objects to work on and sends go out: a PD, an MR over
 * the pool, a CQ, a QP (UD or SRD) walked to RTS with its rings mapped,
 * and an AH to each GID of the other device.
 */
static void seed_objects(int dev)
{
	int peer = (dev + 1) % cfg.ndevs, srd = one_in(2), i;
	struct obj pd = { .kind = K_PD, .dev = dev };
	struct obj mr = { .kind = K_MR, .dev = dev };
	struct obj qp = { .kind = K_QP, .dev = dev, .srd = srd };
	struct {
		struct ib_uverbs_alloc_pd_resp core;
		struct srd_alloc_pd_resp drv;
	} pd_resp = {};
	struct ib_uverbs_alloc_pd pd_cmd = {};
	struct ib_uverbs_reg_mr mr_cmd = {};
	struct ib_uverbs_reg_mr_resp mr_resp = {};
	struct ib_uverbs_create_cq cq_cmd = { .cqe = 64, .comp_channel = -1 };
	struct {
		struct ib_uverbs_create_cq_resp core;
		struct srd_create_cq_resp drv;
	} cq_resp = {};
	struct srd_create_cq_cmd cq_drv = {};
	struct ib_uverbs_create_qp qp_cmd = {
		.qp_type = srd ? IB_QPT_DRIVER_V : IB_QPT_UD_V,
		.max_send_wr = 16, .max_recv_wr = 16,
		.max_send_sge = 1, .max_recv_sge = 1,
	};
	struct {
		struct ib_uverbs_create_qp_resp core;
		struct srd_create_qp_resp drv;
	} qp_resp = {};
	struct srd_create_qp_cmd qp_drv = {
		.driver_qp_type = srd ? SRD_QP_TYPE_SRD : SRD_QP_TYPE_NONE,
	};

	if (cmd_write(dev, IB_USER_VERBS_CMD_ALLOC_PD, &pd_cmd, sizeof(pd_cmd),
		      NULL, 0, &pd_resp, sizeof(pd_resp)))
		return;
	pd.handle = pd_resp.core.pd_handle;
	remember(&pd);
	mr_cmd.start = (uintptr_t)pool;
	mr_cmd.length = 65536;
	mr_cmd.hca_va = mr_cmd.start;
	mr_cmd.pd_handle = pd.handle;
	mr_cmd.access_flags = 1;	/* LOCAL_WRITE */
	if (!cmd_write(dev, IB_USER_VERBS_CMD_REG_MR, &mr_cmd, sizeof(mr_cmd),
		       NULL, 0, &mr_resp, sizeof(mr_resp))) {
		mr.handle = mr_resp.mr_handle;
		mr.lkey = mr_resp.lkey;
		mr.rkey = mr_resp.rkey;
		mr.addr = mr_cmd.start;
		mr.len = mr_cmd.length;
		remember(&mr);
	}
	if (cmd_write(dev, IB_USER_VERBS_CMD_CREATE_CQ, &cq_cmd, sizeof(cq_cmd),
		      &cq_drv, sizeof(cq_drv), &cq_resp, sizeof(cq_resp)))
		return;
	new_cq(dev, cq_resp.core.cq_handle, &cq_resp.drv);
	qp_cmd.pd_handle = pd.handle;
	qp_cmd.send_cq_handle = cq_resp.core.cq_handle;
	qp_cmd.recv_cq_handle = cq_resp.core.cq_handle;
	if (cmd_write(dev, IB_USER_VERBS_CMD_CREATE_QP, &qp_cmd, sizeof(qp_cmd),
		      &qp_drv, sizeof(qp_drv), &qp_resp, sizeof(qp_resp)))
		return;
	walk_to_rts(dev, qp_resp.core.qp_handle);
	qp.handle = qp_resp.core.qp_handle;
	qp.qpn = qp_resp.core.qpn;
	qp.sq_info = qp_resp.drv.sq;
	qp.rq_info = qp_resp.drv.rq;
	qp.sq.map = map_at(dev, &qp.sq_info, &qp.sq.len);
	qp.sq.info = qp.sq_info;
	qp.rq.map = map_at(dev, &qp.rq_info, &qp.rq.len);
	qp.rq.info = qp.rq_info;
	if (!qp.sq.map || !qp.rq.map) {
		if (qp.sq.map)
			munmap(qp.sq.map, qp.sq.len);
		if (qp.rq.map)
			munmap(qp.rq.map, qp.rq.len);
		qp.sq.map = qp.rq.map = NULL;
	}
	remember(&qp);
	for (i = 0; i < cfg.ngids[peer]; i++) {
		struct ib_uverbs_create_ah ah_cmd = {
			.pd_handle = pd.handle,
			.attr = { .is_global = 1, .port_num = 1 },
		};
		struct {
			struct ib_uverbs_create_ah_resp core;
			struct srd_create_ah_resp drv;
		} ah_resp = {};
		struct obj ah = { .kind = K_AH, .dev = dev };

		memcpy(ah_cmd.attr.grh.dgid, cfg.gid[peer][i], 16);
		ah_cmd.attr.grh.hop_limit = 64;
		if (cmd_write(dev, IB_USER_VERBS_CMD_CREATE_AH, &ah_cmd,
			      sizeof(ah_cmd), NULL, 0, &ah_resp, sizeof(ah_resp)))
			continue;
		ah.handle = ah_resp.core.ah_handle;
		ah.ahn = ah_resp.drv.ahn;
		remember(&ah);
	}
}

/* ---- processes ---- */

static void run_ops(int nops);

/* A child that shares the device and the mappings, makes a few calls, exits. */
static void op_fork(int dev)
{
	pid_t p;

	(void)dev;
	atomic_fetch_add(&st->calls, 1);
	p = fork();
	if (p == 0) {
		/* The parent thread's fail-nth is not this process's. */
		if (fail_nth_fd >= 0)
			close(fail_nth_fd);
		fail_nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
		run_ops(1 + below(20));
		_exit(0);
	}
	done(OP_fork, p < 0 ? -1 : 0);
}

static void op_close_dev(int dev)
{
	done(OP_close_dev, close(dev_fd[dev]) ? -errno : 0);
}

static void op_exit(int dev)
{
	(void)dev;
	done(OP_exit, 0);
	_exit(0);
}

/* What each op is worth: how often it is drawn. */
static const struct {
	op_fn fn;
	unsigned int weight;
} table[NUM_OPS] = {
	[OP_get_context] = { op_get_context, 2 },
	[OP_query_device] = { op_query_device, 2 },
	[OP_query_port] = { op_query_port, 2 },
	[OP_alloc_pd] = { op_alloc_pd, 6 },
	[OP_dealloc_pd] = { op_dealloc_pd, 2 },
	[OP_reg_mr] = { op_reg_mr, 8 },
	[OP_rereg_mr] = { op_rereg_mr, 1 },
	[OP_dereg_mr] = { op_dereg_mr, 3 },
	[OP_create_ah] = { op_create_ah, 6 },
	[OP_destroy_ah] = { op_destroy_ah, 2 },
	[OP_comp_channel] = { op_comp_channel, 2 },
	[OP_create_cq] = { op_create_cq, 6 },
	[OP_create_cq_ex] = { op_create_cq_ex, 3 },
	[OP_resize_cq] = { op_resize_cq, 1 },
	[OP_poll_cq] = { op_poll_cq, 1 },
	[OP_req_notify] = { op_req_notify, 3 },
	[OP_destroy_cq] = { op_destroy_cq, 2 },
	[OP_create_qp] = { op_create_qp, 8 },
	[OP_create_qp_ex] = { op_create_qp_ex, 3 },
	[OP_modify_qp] = { op_modify_qp, 16 },
	[OP_modify_qp_ex] = { op_modify_qp_ex, 4 },
	[OP_query_qp] = { op_query_qp, 2 },
	[OP_destroy_qp] = { op_destroy_qp, 3 },
	[OP_post_send] = { op_post_send, 6 },
	[OP_post_recv] = { op_post_recv, 2 },
	[OP_ex_query_device] = { op_ex_query_device, 1 },
	[OP_unsupported_cmd] = { op_unsupported_cmd, 1 },
	[OP_random_cmd] = { op_random_cmd, 2 },
	[OP_ioctl_cq_create] = { op_ioctl_cq_create, 3 },
	[OP_ioctl_qp_create] = { op_ioctl_qp_create, 4 },
	[OP_ioctl_query_port] = { op_ioctl_query_port, 1 },
	[OP_ioctl_gid_table] = { op_ioctl_gid_table, 1 },
	[OP_ioctl_gid_entry] = { op_ioctl_gid_entry, 1 },
	[OP_ioctl_info_handles] = { op_ioctl_info_handles, 1 },
	[OP_ioctl_destroy] = { op_ioctl_destroy, 3 },
	[OP_ioctl_random] = { op_ioctl_random, 2 },
	[OP_mmap_ring] = { op_mmap_ring, 10 },
	[OP_mmap_hostile] = { op_mmap_hostile, 2 },
	[OP_munmap_ring] = { op_munmap_ring, 1 },
	[OP_sq_write] = { op_sq_write, 24 },
	[OP_rq_write] = { op_rq_write, 16 },
	[OP_cq_write] = { op_cq_write, 8 },
	[OP_fork] = { op_fork, 1 },
	[OP_close_dev] = { op_close_dev, 0 },	/* drawn apart, rarely */
	[OP_exit] = { op_exit, 0 },		/* drawn apart, rarely */
};

static unsigned int total_weight;

static void run_ops(int nops)
{
	int i;

	for (i = 0; i < nops; i++) {
		int dev = below(cfg.ndevs);
		unsigned int w;
		int op;

		if (one_in(4000)) {
			op_close_dev(dev);
			continue;
		}
		if (one_in(1500))
			op_exit(dev);
		w = below(total_weight);
		for (op = 0; w >= table[op].weight; op++)
			w -= table[op].weight;
		table[op].fn(dev);
	}
}

struct thread_arg {
	uint64_t seed;
	int nops;
};

static void *thread_main(void *p)
{
	struct thread_arg *a = p;

	rng_state = a->seed;
	fail_nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	run_ops(a->nops);
	if (fail_nth_fd >= 0)
		close(fail_nth_fd);
	return NULL;
}

/* One iteration: a process with cfg.threads threads on fresh contexts. */
static void iteration(uint64_t seed)
{
	pthread_t th[16];
	struct thread_arg args[16];
	int d, t;

	rng_state = seed;
	pool = mmap(NULL, POOL_BYTES, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pool == MAP_FAILED)
		_exit(3);
	memset(pool, 0x5a, POOL_BYTES);
	for (d = 0; d < cfg.ndevs; d++) {
		dev_fd[d] = open(cfg.uverbs[d], O_RDWR | O_CLOEXEC);
		if (dev_fd[d] < 0)
			_exit(3);
		/* A context first, as libibverbs makes it, most of the time. */
		if (!one_in(10)) {
			struct ib_uverbs_get_context core = {};
			struct {
				struct ib_uverbs_get_context_resp core;
				struct srd_alloc_ucontext_resp drv;
			} resp;
			struct srd_alloc_ucontext_cmd c = {
				.abi_version = SRD_UVERBS_ABI_VERSION,
			};

			if (!cmd_write(d, IB_USER_VERBS_CMD_GET_CONTEXT, &core,
				       sizeof(core), &c, sizeof(c), &resp,
				       sizeof(resp)))
				done(OP_get_context, 0);
		}
	}
	if (!one_in(3))
		for (d = 0; d < cfg.ndevs; d++)
			seed_objects(d);
	for (t = 0; t < cfg.threads; t++) {
		args[t].seed = mix64(seed ^ (0x1000 + t));
		args[t].nops = cfg.ops / 2 + below(cfg.ops);
		if (pthread_create(&th[t], NULL, thread_main, &args[t]))
			break;
	}
	while (t-- > 0)
		pthread_join(th[t], NULL);
	/* Leave with the objects alive half the time, else destroy a few. */
	if (one_in(2))
		for (d = 0; d < 20; d++)
			table[below(2) ? OP_destroy_qp : OP_destroy_cq].fn(0);
	_exit(0);
}

/* ---- setup ---- */

static int find_uverbs(const char *dev, char *out, size_t len)
{
	DIR *dir = opendir("/sys/class/infiniband_verbs");
	struct dirent *e;
	int found = 0;

	if (!dir)
		return 0;
	while (!found && (e = readdir(dir))) {
		char path[512], name[64] = "";
		FILE *f;

		if (strncmp(e->d_name, "uverbs", 6))
			continue;
		snprintf(path, sizeof(path), "/sys/class/infiniband_verbs/%s/ibdev",
			 e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f))
			name[strcspn(name, "\n")] = 0;
		fclose(f);
		if (!strcmp(name, dev)) {
			snprintf(out, len, "/dev/infiniband/%.32s", e->d_name);
			found = 1;
		}
	}
	closedir(dir);
	return found;
}

static void read_gids(int d)
{
	for (int i = 0; i < 16 && cfg.ngids[d] < MAX_GIDS; i++) {
		char path[256], s[64];
		unsigned int g[8];
		FILE *f;

		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/1/gids/%d",
			 cfg.dev_name[d], i);
		f = fopen(path, "r");
		if (!f)
			break;
		if (fgets(s, sizeof(s), f) &&
		    sscanf(s, "%x:%x:%x:%x:%x:%x:%x:%x", &g[0], &g[1], &g[2],
			   &g[3], &g[4], &g[5], &g[6], &g[7]) == 8 &&
		    (g[0] | g[1] | g[2] | g[3] | g[4] | g[5] | g[6] | g[7])) {
			for (int k = 0; k < 8; k++) {
				cfg.gid[d][cfg.ngids[d]][2 * k] = g[k] >> 8;
				cfg.gid[d][cfg.ngids[d]][2 * k + 1] = g[k];
			}
			cfg.ngids[d]++;
		}
		fclose(f);
	}
}

static void usage(void)
{
	fprintf(stderr,
		"usage: srd_uverbs_fuzz [--seed S] [--seconds N | --iters N] [--iter I]\n"
		"                       [--threads T] [--ops N] DEV [PEER_DEV]\n");
	exit(2);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long first, last, it, bad = 0, killed = 0, exited = 0;
	double t0 = now_s();
	int i, fail_nth;

	cfg.seed = mix64((uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32));
	cfg.seed &= 0xffffffffffffULL;
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (i + 1 >= argc)
			usage();
		if (!strcmp(argv[i], "--seed"))
			cfg.seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--seconds"))
			cfg.seconds = atol(argv[++i]);
		else if (!strcmp(argv[i], "--iters"))
			cfg.iters = atol(argv[++i]);
		else if (!strcmp(argv[i], "--iter"))
			cfg.iter = atol(argv[++i]);
		else if (!strcmp(argv[i], "--threads"))
			cfg.threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--ops"))
			cfg.ops = atoi(argv[++i]);
		else
			usage();
	}
	if (argc - i < 1 || argc - i > MAX_DEVS || cfg.threads < 1 ||
	    cfg.threads > 16 || cfg.ops < 1)
		usage();
	if (!cfg.seconds && !cfg.iters)
		cfg.seconds = 60;
	for (cfg.ndevs = 0; i < argc; i++, cfg.ndevs++) {
		snprintf(cfg.dev_name[cfg.ndevs], sizeof(cfg.dev_name[0]), "%s",
			 argv[i]);
		if (!find_uverbs(argv[i], cfg.uverbs[cfg.ndevs],
				 sizeof(cfg.uverbs[0]))) {
			fprintf(stderr, "srd_uverbs_fuzz: no uverbs device for %s\n",
				argv[i]);
			return 2;
		}
		read_gids(cfg.ndevs);
	}
	i = open("/proc/thread-self/fail-nth", O_RDWR);
	fail_nth = i >= 0;
	if (i >= 0)
		close(i);
	for (i = 0; i < NUM_OPS; i++)
		total_weight += table[i].weight;
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (st == MAP_FAILED)
		return 2;
	/* Orphans of an iteration (its forks) come back here to be reaped. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	printf("seed %" PRIu64 " (replay: --seed %" PRIu64 "), threads %d, ops %d, devices %s%s%s, fault injection %s\n",
	       cfg.seed, cfg.seed, cfg.threads, cfg.ops, cfg.dev_name[0],
	       cfg.ndevs > 1 ? " " : "", cfg.ndevs > 1 ? cfg.dev_name[1] : "",
	       fail_nth ? "on (fail-nth)" : "off (no /proc/thread-self/fail-nth)");
	fflush(stdout);

	first = cfg.iter >= 0 ? cfg.iter : 0;
	last = cfg.iter >= 0 ? cfg.iter : (cfg.iters ? cfg.iters - 1 : -1);
	for (it = first; last < 0 || it <= last; it++) {
		uint64_t seed = mix64(cfg.seed ^ mix64(it));
		double deadline;
		int status = 0;
		pid_t p;

		if (cfg.iter < 0 && cfg.seconds && now_s() - t0 >= cfg.seconds)
			break;
		rng_state = seed;
		/* How long the iteration may live: 0.05 to 4 s. */
		deadline = now_s() + 0.05 + below(4000) / 1000.0;
		p = fork();
		if (p < 0) {
			perror("fork");
			return 2;
		}
		if (p == 0) {
			setpgid(0, 0);
			iteration(seed);
		}
		setpgid(p, p);
		while (waitpid(p, &status, WNOHANG) == 0) {
			if (now_s() >= deadline) {
				kill(-p, SIGKILL);
				waitpid(p, &status, 0);
				break;
			}
			usleep(10000);
		}
		kill(-p, SIGKILL);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
			killed++;
		} else if (WIFSIGNALED(status) ||
			   (WIFEXITED(status) && WEXITSTATUS(status))) {
			bad++;
			printf("iteration %ld (--seed %" PRIu64 " --iter %ld) ended with %s %d\n",
			       it, cfg.seed, it,
			       WIFSIGNALED(status) ? "signal" : "status",
			       WIFSIGNALED(status) ? WTERMSIG(status) :
						     WEXITSTATUS(status));
		} else {
			exited++;
		}
	}
	/* Every process of the run is gone before the counts are read. */
	while (wait(NULL) > 0)
		;

	printf("iterations %ld (exited %ld, killed %ld, failed %ld) in %.0f s\n",
	       it - first, exited, killed, bad, now_s() - t0);
	printf("calls %llu, faults armed %llu, injected %llu\n",
	       (unsigned long long)st->calls,
	       (unsigned long long)st->faults_armed,
	       (unsigned long long)st->faults_injected);
	for (i = 0; i < NUM_OPS; i++)
		printf("op %-20s tried %8llu ok %8llu\n", op_names[i],
		       (unsigned long long)st->tried[i],
		       (unsigned long long)st->ok[i]);
	return bad ? 1 : 0;
}
