// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: fault injection, a device's debugfs file "faults" (fault.h).
 * A write is one command; a read lists what is set and what it did:
 *
 *   rnr QPN COUNT            the next COUNT messages for local QP QPN that
 *                            need a receive (SEND, WRITE with immediate)
 *                            find none: RNR NAK, as an empty receive queue
 *   remote_access QPN COUNT  the next COUNT RDMA requests (WRITE, READ) to
 *                            local QP QPN are refused as a bad rkey would be
 *                            (QPN "any": to any QP; a QP's own entry first)
 *   unresponsive ADDR        no SRD packet to or from the remote ADDR (an
 *                            IPv4 or IPv6 address) from now on
 *   responsive ADDR          ... undone
 *   loss PERMILLE [SEED]     drop this many of every 1000 SRD packets, each
 *                            way, drawn from SEED (default 1); 0 stops
 *   clear                    every fault undone
 *
 * COUNT 0 removes a QP's entry.  A message counts once per arrival of its
 * first packet: a sender's RNR retries each take one.  A bad command
 * fails with EINVAL, a ninth QP or address of a kind with ENOSPC.
 */

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/inet.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/ipv6.h>

#include "fault.h"

void srd_faults_init(struct srd_faults *f)
{
	memset(f, 0, sizeof(*f));
	spin_lock_init(&f->lock);
}

/* Under f->lock: whether anything is set, for the hot paths' one test. */
static void srd_faults_update(struct srd_faults *f)
{
	const struct srd_fault_state *st = &f->st;
	bool on = st->loss_permille;
	int i;

	for (i = 0; i < SRD_FAULT_SLOTS; i++)
		on |= st->rnr[i].used || st->access[i].used ||
		      st->unresp[i].used;
	WRITE_ONCE(f->active, on);
}

/* xorshift64*: the loss pattern of a seed is the same on every run. */
static u64 srd_fault_next(struct srd_faults *f)
{
	u64 x = f->st.loss_state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	f->st.loss_state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

bool __srd_fault_drop(struct srd_faults *f, const union ib_gid *remote,
		      bool incoming)
{
	bool drop = false;
	int i;

	spin_lock_bh(&f->lock);
	for (i = 0; i < SRD_FAULT_SLOTS && !drop; i++) {
		if (f->st.unresp[i].used &&
		    !memcmp(&f->st.unresp[i].gid, remote, sizeof(*remote))) {
			f->st.unresp[i].dropped++;
			drop = true;
		}
	}
	if (!drop && f->st.loss_permille &&
	    (srd_fault_next(f) >> 32) % 1000 < f->st.loss_permille) {
		if (incoming)
			f->st.loss_in++;
		else
			f->st.loss_out++;
		drop = true;
	}
	spin_unlock_bh(&f->lock);
	return drop;
}

/* Under f->lock: take one from @qpn's entry in @tab, if it has any left. */
static bool srd_fault_take(struct srd_fault_qp *tab, u32 qpn)
{
	struct srd_fault_qp *any = NULL;
	int i;

	for (i = 0; i < SRD_FAULT_SLOTS; i++) {
		if (!tab[i].used || !tab[i].left)
			continue;
		if (tab[i].qpn == qpn) {
			any = &tab[i];
			break;
		}
		if (tab[i].qpn == SRD_FAULT_ANY_QPN)
			any = &tab[i];
	}
	if (!any)
		return false;
	any->left--;
	any->done++;
	return true;
}

enum srd_rx_verdict __srd_fault_rx_begin(struct srd_faults *f,
					 const struct srd_rx_msg_info *info)
{
	enum srd_rx_verdict v = SRD_RX_ACCEPT;
	bool needs_recv = info->kind == SRD_MSG_SEND ||
			  (info->kind == SRD_MSG_WRITE && info->has_imm);

	spin_lock_bh(&f->lock);
	if (info->kind != SRD_MSG_SEND &&
	    srd_fault_take(f->st.access, info->dst_qpn))
		v = SRD_RX_BAD_ACCESS;
	else if (needs_recv && srd_fault_take(f->st.rnr, info->dst_qpn))
		v = SRD_RX_RNR;
	spin_unlock_bh(&f->lock);
	return v;
}

/* --- the debugfs file -------------------------------------------------- */

/* Under f->lock: set @qpn's entry of @tab to @count (0: remove it). */
static int srd_fault_set_qp(struct srd_fault_qp *tab, u32 qpn, u32 count)
{
	struct srd_fault_qp *free = NULL;
	int i;

	for (i = 0; i < SRD_FAULT_SLOTS; i++) {
		if (tab[i].used && tab[i].qpn == qpn) {
			tab[i].left = count;
			tab[i].used = count != 0;
			if (count)
				tab[i].done = 0;
			return 0;
		}
		if (!tab[i].used && !free)
			free = &tab[i];
	}
	if (!count)
		return 0;
	if (!free)
		return -ENOSPC;
	*free = (struct srd_fault_qp){ .qpn = qpn, .left = count, .used = true };
	return 0;
}

/* An IPv4 or IPv6 address as the GID softsrd gives it (IPv4-mapped). */
static int srd_fault_parse_addr(const char *s, union ib_gid *gid)
{
	__be32 v4;

	memset(gid, 0, sizeof(*gid));
	if (in4_pton(s, -1, (u8 *)&v4, -1, NULL)) {
		ipv6_addr_set_v4mapped(v4, (struct in6_addr *)gid->raw);
		return 0;
	}
	if (in6_pton(s, -1, gid->raw, -1, NULL))
		return 0;
	return -EINVAL;
}

/* Under f->lock. */
static int srd_fault_set_addr(struct srd_faults *f, const union ib_gid *gid,
			      bool on)
{
	struct srd_fault_addr *free = NULL;
	int i;

	for (i = 0; i < SRD_FAULT_SLOTS; i++) {
		if (f->st.unresp[i].used &&
		    !memcmp(&f->st.unresp[i].gid, gid, sizeof(*gid))) {
			f->st.unresp[i].used = on;
			return 0;
		}
		if (!f->st.unresp[i].used && !free)
			free = &f->st.unresp[i];
	}
	if (!on)
		return 0;
	if (!free)
		return -ENOSPC;
	*free = (struct srd_fault_addr){ .gid = *gid, .used = true };
	return 0;
}

static int srd_fault_command(struct srd_faults *f, int argc, char **argv)
{
	u32 a = 0, b = 0;
	union ib_gid gid;
	u64 seed = 1;
	int err = 0;

	if (argc == 1 && !strcmp(argv[0], "clear")) {
		spin_lock_bh(&f->lock);
		memset(&f->st, 0, sizeof(f->st));
		srd_faults_update(f);
		spin_unlock_bh(&f->lock);
		return 0;
	}
	if (argc == 3 && (!strcmp(argv[0], "rnr") ||
			  !strcmp(argv[0], "remote_access"))) {
		if (!strcmp(argv[1], "any"))
			a = SRD_FAULT_ANY_QPN;
		else if (kstrtou32(argv[1], 0, &a) || a >= SRD_FAULT_ANY_QPN)
			return -EINVAL;
		if (kstrtou32(argv[2], 0, &b))
			return -EINVAL;
		spin_lock_bh(&f->lock);
		err = srd_fault_set_qp(strcmp(argv[0], "rnr") ? f->st.access :
				       f->st.rnr, a, b);
		srd_faults_update(f);
		spin_unlock_bh(&f->lock);
		return err;
	}
	if (argc == 2 && (!strcmp(argv[0], "unresponsive") ||
			  !strcmp(argv[0], "responsive"))) {
		if (srd_fault_parse_addr(argv[1], &gid))
			return -EINVAL;
		spin_lock_bh(&f->lock);
		err = srd_fault_set_addr(f, &gid,
					 !strcmp(argv[0], "unresponsive"));
		srd_faults_update(f);
		spin_unlock_bh(&f->lock);
		return err;
	}
	if ((argc == 2 || argc == 3) && !strcmp(argv[0], "loss")) {
		if (kstrtou32(argv[1], 0, &a) || a > 1000 ||
		    (argc == 3 && kstrtou64(argv[2], 0, &seed)))
			return -EINVAL;
		spin_lock_bh(&f->lock);
		f->st.loss_permille = a;
		f->st.loss_seed = seed;
		/* xorshift's state must not be 0. */
		f->st.loss_state = seed ? seed : 1;
		f->st.loss_in = 0;
		f->st.loss_out = 0;
		srd_faults_update(f);
		spin_unlock_bh(&f->lock);
		return 0;
	}
	return -EINVAL;
}

static ssize_t srd_faults_write(struct file *file, const char __user *ubuf,
				size_t count, loff_t *ppos)
{
	struct srd_faults *f = file_inode(file)->i_private;
	char **argv;
	char *buf;
	int argc, err;

	if (count > 256)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, count);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	argv = argv_split(GFP_KERNEL, buf, &argc);
	kfree(buf);
	if (!argv)
		return -ENOMEM;
	err = srd_fault_command(f, argc, argv);
	argv_free(argv);
	return err ? err : count;
}

static void srd_faults_show_qps(struct seq_file *s, const char *kind,
				const struct srd_fault_qp *tab)
{
	int i;

	for (i = 0; i < SRD_FAULT_SLOTS; i++) {
		if (!tab[i].used)
			continue;
		if (tab[i].qpn == SRD_FAULT_ANY_QPN)
			seq_printf(s, "%s qpn any", kind);
		else
			seq_printf(s, "%s qpn %u", kind, tab[i].qpn);
		seq_printf(s, " left %u done %llu\n", tab[i].left, tab[i].done);
	}
}

static int srd_faults_show(struct seq_file *s, void *unused)
{
	struct srd_faults *f = s->private;
	struct srd_fault_state *c;
	int i;

	/* A copy, printed with no lock held. */
	c = kmalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	spin_lock_bh(&f->lock);
	*c = f->st;
	spin_unlock_bh(&f->lock);
	srd_faults_show_qps(s, "rnr", c->rnr);
	srd_faults_show_qps(s, "remote_access", c->access);
	for (i = 0; i < SRD_FAULT_SLOTS; i++)
		if (c->unresp[i].used)
			seq_printf(s, "unresponsive %pI6 dropped %llu\n",
				   c->unresp[i].gid.raw, c->unresp[i].dropped);
	if (c->loss_permille)
		seq_printf(s, "loss %u seed %llu dropped_in %llu dropped_out %llu\n",
			   c->loss_permille, c->loss_seed, c->loss_in,
			   c->loss_out);
	kfree(c);
	return 0;
}

static int srd_faults_open(struct inode *inode, struct file *file)
{
	return single_open(file, srd_faults_show, inode->i_private);
}

static const struct file_operations srd_faults_fops = {
	.owner = THIS_MODULE,
	.open = srd_faults_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = srd_faults_write,
};

void srd_faults_debugfs_add(struct srd_faults *f, struct dentry *dir)
{
	debugfs_create_file("faults", 0600, dir, f, &srd_faults_fops);
}
