// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * insn_profile: a qemu TCG plugin that counts the guest instructions each
 * translation block executes, so that a benchmark row can say how many
 * instructions of the guest's kernel one exchange costs, and in which
 * functions.  TCG runs a guest at a fixed, slow rate per instruction, so
 * on these machines the instruction count is what a timed row mostly
 * measures, without the host's scheduling noise.
 *
 *   qemu-system-x86_64 ... -plugin file=insn_profile.so,dir=DIR,name=NAME
 *
 * Each translation block gets two counters, found by its first
 * instruction's virtual address: inline adds of its instruction count and
 * of one at every execution (no callback, so the guest slows down little).
 * A block that starts a function runs once a call.  A string instruction
 * with a rep prefix counts once an iteration: TCG runs it so.  A block that
 * an interrupt leaves early is counted whole.  The adds of two vCPUs may
 * race on one counter and lose an add: a profile, not an audit.
 *
 * A snapshot is asked for by renaming a file into DIR/NAME.req (the guest
 * does it through a shared directory); the plugin, polling every 10 ms, writes
 * DIR/NAME-LABEL.txt, LABEL being the request's first line, and then
 * removes the request.  The snapshot has a line per kernel block,
 * "ADDRESS INSNS EXECS" in hex and decimal, and one "user INSNS EXECS"
 * line for all of user space (its addresses alias across processes).  Counters are never
 * reset: a row's cost is the difference of two snapshots
 * (scripts/bench-profile.py).
 *
 * Only the few entry points used are declared here, from qemu's
 * documented plugin API (include/qemu/qemu-plugin.h, API version 1, as in
 * qemu 7.2); qemu resolves them when it loads the plugin.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
	void (*cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb));
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
	void (*cb)(qemu_plugin_id_t id, void *data), void *data);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
	enum qemu_plugin_op op, void *ptr, uint64_t imm);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* x86-64: the kernel's half of the address space. */
#define KERNEL_BASE 0xffff800000000000ull

/*
 * Open addressing, never resized: the inline adds hold the counters'
 * addresses.  2^21 slots (48 MiB) hold a booted guest's kernel blocks
 * many times over; a block that finds the table full counts in 'lost'.
 */
#define SLOTS (1u << 21)

struct slot {
	uint64_t vaddr;		/* 0: free */
	uint64_t insns;		/* instructions run in this block */
	uint64_t execs;		/* times it ran: calls, for a function's first */
};

static struct slot *table;
static struct slot user, lost;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *dir, *name;
static volatile int stopping;

static struct slot *slot_of(uint64_t vaddr)
{
	uint64_t h = vaddr * 0x9e3779b97f4a7c15ull;
	unsigned int i, n;

	if (vaddr < KERNEL_BASE)
		return &user;
	for (i = h >> 43, n = 0; n < SLOTS; n++, i = (i + 1) & (SLOTS - 1)) {
		if (table[i].vaddr == vaddr)
			return &table[i];
		if (!table[i].vaddr) {
			table[i].vaddr = vaddr;
			return &table[i];
		}
	}
	return &lost;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	struct slot *s;

	(void)id;
	pthread_mutex_lock(&lock);
	s = slot_of(qemu_plugin_tb_vaddr(tb));
	pthread_mutex_unlock(&lock);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &s->insns, qemu_plugin_tb_n_insns(tb));
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &s->execs, 1);
}

/* DIR/NAME-LABEL.txt, written whole under a temporary name first. */
static int snapshot(const char *label)
{
	char path[4096], tmp[4096 + 8];
	unsigned int i;
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "%s/%s-%s.txt", dir, name, label);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	pthread_mutex_lock(&lock);
	for (i = 0; i < SLOTS; i++)
		if (table[i].insns)
			fprintf(f, "%llx %llu %llu\n",
				(unsigned long long)table[i].vaddr,
				(unsigned long long)table[i].insns,
				(unsigned long long)table[i].execs);
	fprintf(f, "user %llu %llu\nlost %llu %llu\n",
		(unsigned long long)user.insns, (unsigned long long)user.execs,
		(unsigned long long)lost.insns, (unsigned long long)lost.execs);
	pthread_mutex_unlock(&lock);
	err = ferror(f);
	if (fclose(f) || err)
		return -EIO;
	return rename(tmp, path) ? -errno : 0;
}

/* A label is a benchmark row's id and a suffix: no path in it. */
static int read_label(const char *req, char *label, size_t size)
{
	FILE *f = fopen(req, "r");
	size_t n;

	if (!f)
		return -errno;
	if (!fgets(label, size, f))
		label[0] = 0;
	fclose(f);
	n = strcspn(label, "\r\n");
	label[n] = 0;
	if (!n)
		return -EAGAIN;
	if (strchr(label, '/') || label[0] == '.')
		return -EINVAL;
	return 0;
}

static void *watch(void *arg)
{
	const struct timespec tick = { 0, 10 * 1000 * 1000 };
	char req[4096], label[256];
	int err, empty = 0;

	(void)arg;
	snprintf(req, sizeof(req), "%s/%s.req", dir, name);
	while (!stopping) {
		nanosleep(&tick, NULL);
		if (access(req, F_OK))
			continue;
		/*
		 * Requests are meant to be renamed into place, whole; one
		 * written in place may still be empty: a second to fill it.
		 */
		err = read_label(req, label, sizeof(label));
		if (err == -EAGAIN && ++empty < 100)
			continue;
		empty = 0;
		if (!err)
			err = snapshot(label);
		if (err)
			fprintf(stderr, "insn_profile: %s: snapshot failed: %s\n",
				req, strerror(-err));
		unlink(req);
	}
	return NULL;
}

static void at_exit(qemu_plugin_id_t id, void *data)
{
	(void)id;
	(void)data;
	stopping = 1;
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t *info,
			int argc, char **argv)
{
	pthread_t thread;
	int i;

	(void)info;
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "dir=", 4))
			dir = argv[i] + 4;
		else if (!strncmp(argv[i], "name=", 5))
			name = argv[i] + 5;
		else {
			fprintf(stderr, "insn_profile: unknown argument %s\n", argv[i]);
			return -1;
		}
	}
	if (!dir || !name || strchr(name, '/')) {
		fprintf(stderr, "insn_profile: needs dir=DIR,name=NAME\n");
		return -1;
	}
	table = calloc(SLOTS, sizeof(*table));
	if (!table)
		return -1;
	if (pthread_create(&thread, NULL, watch, NULL)) {
		free(table);
		return -1;
	}
	pthread_detach(thread);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
