// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: UDP sockets, one pair (IPv4, IPv6) per network namespace, held
 * from the namespace's creation (or the module's load) to its exit, and
 * what arrives on them: SRD packets to the transport, UD datagrams to
 * ud.c.  Sending is route.c's.
 */

#include <linux/if_vlan.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <net/addrconf.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <net/route.h>
#include <net/udp.h>
#include <net/udp_tunnel.h>

#include "srd.h"

/* 7.1+: the tunnel socket calls take the struct sock, not the socket. */
#ifdef HAVE_UDP_TUNNEL_SOCK_SK
#define srd_setup_udp_tunnel_sock(net, sock, cfg) \
	setup_udp_tunnel_sock(net, (sock)->sk, cfg)
#define srd_udp_tunnel_sock_release(sock)	udp_tunnel_sock_release((sock)->sk)
#else
#define srd_setup_udp_tunnel_sock(net, sock, cfg) \
	setup_udp_tunnel_sock(net, sock, cfg)
#define srd_udp_tunnel_sock_release(sock)	udp_tunnel_sock_release(sock)
#endif

unsigned short srd_udp_port = SRD_DEFAULT_UDP_PORT;
module_param_named(udp_port, srd_udp_port, ushort, 0444);
MODULE_PARM_DESC(udp_port, "UDP port SRD listens on and sends to, in every namespace (default 4792)");

static LIST_HEAD(srd_nets);
static DEFINE_MUTEX(srd_nets_mutex);

/*
 * Whether @skb came in where the fabric reaches @sdev: its netdev, a
 * VLAN on it, the master it is enslaved to (a bond, bridge or VRF), or
 * loopback (from another device of the namespace).  Linux's weak host
 * model hands us a datagram for the device's address whatever interface
 * it arrived on; like rxe, softsrd takes only its own netdev's, so a
 * host's other interfaces (and the internet behind them) cannot reach
 * the fabric's devices.  Under rcu_read_lock, as every encap_rcv runs.
 */
static bool srd_ingress_ok(const struct srd_dev *sdev,
			   const struct sk_buff *skb)
{
	struct net_device *in = skb->dev, *ndev = sdev->ndev;

	if (in == ndev || (in->flags & IFF_LOOPBACK))
		return true;
	if (is_vlan_dev(in) && vlan_dev_real_dev(in) == ndev)
		return true;
	return netdev_master_upper_dev_get_rcu(ndev) == in;
}

static int srd_udp_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	union ib_gid sgid, dgid;
	struct srd_dev *sdev;
	u8 hop_limit;

	if (skb->protocol == htons(ETH_P_IP)) {
		const struct iphdr *iph = ip_hdr(skb);

		ipv6_addr_set_v4mapped(iph->saddr, (struct in6_addr *)sgid.raw);
		ipv6_addr_set_v4mapped(iph->daddr, (struct in6_addr *)dgid.raw);
		hop_limit = iph->ttl;
	} else {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);

		memcpy(sgid.raw, &ip6h->saddr, sizeof(sgid.raw));
		memcpy(dgid.raw, &ip6h->daddr, sizeof(dgid.raw));
		hop_limit = ip6h->hop_limit;
	}

	/* The device that owns the destination address. */
	sdev = srd_dev_get_by_gid(sock_net(sk), &dgid);
	if (!sdev)
		goto drop;
	/* Every datagram for the device, whether it then takes it or not. */
	srd_count_traffic(sdev, false, skb->len - sizeof(struct udphdr));
	/*
	 * An IPv6 source that is IPv4-mapped names an IPv4 sender that did
	 * not send it (and passes no IPv4 rp_filter): dropped, as TCP does.
	 */
	if (!srd_ingress_ok(sdev, skb) ||
	    (skb->protocol != htons(ETH_P_IP) &&
	     ipv6_addr_v4mapped((const struct in6_addr *)sgid.raw))) {
		srd_count_one(sdev, SRD_CNT_RX_DROP_INGRESS);
		ib_device_put(&sdev->ibdev);
		goto drop;
	}
	/*
	 * Every softsrd datagram is checksummed (docs/protocol.md); IPv4's
	 * UDP layer lets a zero checksum through as "none", IPv6's does not.
	 */
	if ((skb->protocol == htons(ETH_P_IP) && !udp_hdr(skb)->check) ||
	    !pskb_may_pull(skb, sizeof(struct udphdr) + SRD_HDR_COMMON_BYTES)) {
		srd_count_one(sdev, SRD_CNT_RX_DROP_BAD_HDR);
		ib_device_put(&sdev->ibdev);
		goto drop;
	}
	/* The SRD transport's packets to its engine, which parses them. */
	if (srd_wire_is_transport(skb->data + sizeof(struct udphdr)))
		srd_transport_recv(sdev, skb, sizeof(struct udphdr), &sgid, &dgid);
	else
		srd_ud_recv(sdev, skb, sizeof(struct udphdr), &sgid, &dgid,
			    hop_limit);
	ib_device_put(&sdev->ibdev);
	consume_skb(skb);
	return 0;

drop:
	kfree_skb(skb);
	return 0;
}

static int srd_sock_create(struct net *net, struct srd_net *snet, bool ipv6,
			   struct socket **sockp)
{
	struct udp_tunnel_sock_cfg tcfg = {
		.sk_user_data = snet,
		.encap_type = 1,
		.encap_rcv = srd_udp_encap_recv,
	};
	struct udp_port_cfg cfg = {
		.local_udp_port = htons(srd_udp_port),
	};
	int err;

	if (ipv6) {
		cfg.family = AF_INET6;
		cfg.local_ip6 = in6addr_any;
		cfg.ipv6_v6only = 1;
		cfg.use_udp6_tx_checksums = 1;
		cfg.use_udp6_rx_checksums = 1;
	} else {
		cfg.family = AF_INET;
		cfg.local_ip.s_addr = htonl(INADDR_ANY);
	}
	err = udp_sock_create(net, &cfg, sockp);
	if (err)
		return err;
	srd_setup_udp_tunnel_sock(net, *sockp, &tcfg);
	return 0;
}

/*
 * Bind the port in @snet's namespace, the families not yet bound.  Fails
 * if the port is taken there (EADDRINUSE): only a namespace that existed
 * before the module was loaded can have a socket on it already.  An IPv4
 * only kernel (IPv6 disabled) runs with sock6 NULL.
 */
static int srd_net_bind(struct srd_net *snet)
{
	int err;

	if (!snet->sock4) {
		err = srd_sock_create(snet->net, snet, false, &snet->sock4);
		if (err)
			return err;
	}
	if (!snet->sock6 && !snet->no_ipv6) {
		err = srd_sock_create(snet->net, snet, true, &snet->sock6);
		if (err == -EAFNOSUPPORT)
			snet->no_ipv6 = true;
		else if (err)
			return err;
	}
	return 0;
}

static struct srd_net *srd_net_find(struct net *net)
{
	struct srd_net *snet;

	lockdep_assert_held(&srd_nets_mutex);
	list_for_each_entry(snet, &srd_nets, list)
		if (net_eq(snet->net, net))
			return snet;
	return NULL;
}

/*
 * The sockets of @net, for a new device.  Sleeps.  They were made with
 * the namespace, or at module load; if the port was taken then (in a
 * namespace older than the module), try again, and fail with EADDRINUSE
 * while it still is.
 */
int srd_net_get(struct net *net, struct srd_net **snetp)
{
	struct srd_net *snet;
	int err;

	mutex_lock(&srd_nets_mutex);
	snet = srd_net_find(net);
	if (!snet) {
		/* The namespace is being dismantled. */
		err = -ENODEV;
		goto out;
	}
	err = srd_net_bind(snet);
	if (err)
		goto out;
	refcount_inc(&snet->users);
	*snetp = snet;
out:
	mutex_unlock(&srd_nets_mutex);
	return err;
}

/*
 * Drop a reference: a device's, or the namespace's own at its exit.  The
 * last one closes the sockets.
 */
void srd_net_put(struct srd_net *snet)
{
	mutex_lock(&srd_nets_mutex);
	if (!refcount_dec_and_test(&snet->users)) {
		mutex_unlock(&srd_nets_mutex);
		return;
	}
	mutex_unlock(&srd_nets_mutex);

	if (snet->sock4)
		srd_udp_tunnel_sock_release(snet->sock4);
	if (snet->sock6)
		srd_udp_tunnel_sock_release(snet->sock6);
	kfree(snet);
}

/* Take @net's sockets off the list; NULL if it has none. */
static struct srd_net *srd_net_unlist(struct net *net)
{
	struct srd_net *snet;

	mutex_lock(&srd_nets_mutex);
	snet = srd_net_find(net);
	if (snet)
		list_del(&snet->list);
	mutex_unlock(&srd_nets_mutex);
	return snet;
}

/*
 * A new namespace, or one that exists when the module is loaded: bind the
 * port at once, so that no user can take it before a device is made (and
 * receive what peers send to this host, or stop "rdma link add").  In a
 * new namespace nobody can have bound it yet; in an older one somebody
 * may have: the namespace then waits for srd_net_get() to try again.
 */
static int __net_init srd_net_init(struct net *net)
{
	struct srd_net *snet;
	int err;

	snet = kzalloc(sizeof(*snet), GFP_KERNEL);
	if (!snet)
		return -ENOMEM;
	snet->net = net;
	refcount_set(&snet->users, 1);	/* the namespace's */
	mutex_lock(&srd_nets_mutex);
	err = srd_net_bind(snet);
	list_add(&snet->list, &srd_nets);
	mutex_unlock(&srd_nets_mutex);
	if (err == -EADDRINUSE) {
		pr_warn("rdma_srd: UDP port %u is taken in a namespace (inum %u); no srd device can be made there until it is freed\n",
			srd_udp_port, net->ns.inum);
	} else if (err) {
		srd_net_put(srd_net_unlist(net));
		return err;
	}
	return 0;
}

/*
 * A namespace is going away: remove its devices, then close its sockets
 * (the devices' references are gone with them), before the namespace's
 * netdevs and the namespace itself go.
 */
static void __net_exit srd_net_exit(struct net *net)
{
	struct srd_net *snet;

	srd_dev_remove_net(net);
	snet = srd_net_unlist(net);
	if (snet)
		srd_net_put(snet);
}

static struct pernet_operations srd_net_ops = {
	.init = srd_net_init,
	.exit = srd_net_exit,
};

int srd_socket_init(void)
{
	if (!srd_udp_port) {
		pr_err("rdma_srd: udp_port must not be 0\n");
		return -EINVAL;
	}
	return register_pernet_device(&srd_net_ops);
}

void srd_socket_exit(void)
{
	unregister_pernet_device(&srd_net_ops);
	/* Let receive callbacks still running on released sockets finish. */
	synchronize_net();
}
