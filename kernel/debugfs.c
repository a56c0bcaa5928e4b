// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: debugfs, /sys/kernel/debug/rdma_srd/DEV/: paths (each peer and
 * its paths), mem (what the engine holds against its bound) and faults
 * (fault.c).  Root only.
 */

#include <linux/debugfs.h>
#include <linux/rculist.h>
#include <linux/seq_file.h>

#include "srd.h"
#include "transport.h"

static struct dentry *srd_debugfs_root;

/* --- debugfs: per-path statistics -------------------------------------- */

static int srd_paths_show(struct seq_file *s, void *unused)
{
	struct srd_transport *tp = s->private;
	struct srd_path_stats ps;
	struct srd_peer_info pi;
	struct srd_kpeer *kp;
	u32 i;

	rcu_read_lock();
	list_for_each_entry_rcu(kp, &tp->peer_list, list) {
		spin_lock_bh(&kp->lock);
		if (kp->dead) {
			spin_unlock_bh(&kp->lock);
			continue;
		}
		srd_peer_get_info(kp->peer, &pi);
		/* The window may be below one packet: two decimals. */
		seq_printf(s, "peer %pI6 local %pI6 tag %08x remote_tag %08x cwnd_pkts %u.%02u srtt_us %u rto_us %u min_rtt_us %u inflight %u pending %u active %u rx_assembling %u\n",
			   kp->dgid.raw, kp->sgid.raw, pi.local_tag, pi.remote_tag,
			   pi.cwnd_pkts_x256 / 256,
			   pi.cwnd_pkts_x256 % 256 * 100 / 256, pi.srtt_us,
			   pi.rto_us, pi.min_rtt_us, pi.inflight_pkts,
			   pi.pending_msgs, pi.active_msgs, pi.rx_assembling);
		for (i = 0; i < tp->n_paths; i++) {
			if (srd_peer_path_stats(kp->peer, i, &ps))
				break;
			seq_printf(s, "peer %pI6 path %u port %u state %s srtt_us %u tx %llu acked %llu lost %llu timeouts %llu avoided %llu recovered %llu\n",
				   kp->dgid.raw, i, srd_kpeer_src_port(kp, i),
				   srd_path_state_name(ps.state),
				   ps.srtt_us, ps.tx_pkts, ps.acked_pkts,
				   ps.lost_pkts, ps.timeouts, ps.avoided,
				   ps.recovered);
		}
		spin_unlock_bh(&kp->lock);
	}
	rcu_read_unlock();
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(srd_paths);

/*
 * debugfs mem: what the engine holds against its bound, for the packet
 * fuzzer (selftests/srd_packet_fuzz.sh): at most a few pages for the
 * engine itself plus peer_bound_bytes per peer.
 */
static int srd_mem_show(struct seq_file *s, void *unused)
{
	struct srd_transport *tp = s->private;

	seq_printf(s, "engine_bytes %lld peers %u peer_bound_bytes %zu\n",
		   (long long)atomic64_read(&tp->sdev->engine_bytes),
		   READ_ONCE(tp->npeers), tp->peer_bound_bytes);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(srd_mem);

int srd_debugfs_init(void)
{
	srd_debugfs_root = debugfs_create_dir("rdma_srd", NULL);
	return 0;
}

void srd_debugfs_exit(void)
{
	debugfs_remove_recursive(srd_debugfs_root);
}

/* After registration: the device has its name. */
void srd_transport_debugfs_add(struct srd_dev *sdev)
{
	struct srd_transport *tp = sdev->transport;

	tp->debugfs = debugfs_create_dir(dev_name(&sdev->ibdev.dev),
					 srd_debugfs_root);
	debugfs_create_file("paths", 0400, tp->debugfs, tp, &srd_paths_fops);
	debugfs_create_file("mem", 0400, tp->debugfs, tp, &srd_mem_fops);
	srd_faults_debugfs_add(&tp->faults, tp->debugfs);
}
