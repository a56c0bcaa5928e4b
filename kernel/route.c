// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: routing and transmit.  Packets are sent from the namespace's
 * socket (socket.c) by the routing table of the netdev's namespace, as
 * any UDP tunnel does, not pushed out of the bound netdev.  Called by the
 * data path (ud.c, the transport) and by create_ah (ah.c); calls none of
 * them back.
 */

#include <net/ip.h>
#include <net/ipv6.h>
#include <net/route.h>
#include <net/udp.h>
#include <net/udp_tunnel.h>

#include "srd.h"

/* 6.17+: both transmits end with IP control-block flags (none here). */
#ifdef HAVE_UDP_TUNNEL_IPCB_FLAGS
#define srd_udp_tunnel_xmit_skb(...)	udp_tunnel_xmit_skb(__VA_ARGS__, 0)
#define srd_udp_tunnel6_xmit_skb(...)	udp_tunnel6_xmit_skb(__VA_ARGS__, 0)
#else
#define srd_udp_tunnel_xmit_skb		udp_tunnel_xmit_skb
#define srd_udp_tunnel6_xmit_skb	udp_tunnel6_xmit_skb
#endif

static void srd_gid_to_ipv4(const union ib_gid *gid, __be32 *addr)
{
	*addr = ((const struct in6_addr *)gid->raw)->s6_addr32[3];
}

static bool srd_gid_is_v4(const union ib_gid *gid)
{
	return ipv6_addr_v4mapped((const struct in6_addr *)gid->raw);
}

static struct rtable *srd_route4(struct srd_net *snet, __be32 saddr,
				 __be32 daddr, u16 src_port,
				 struct flowi4 *fl4)
{
	memset(fl4, 0, sizeof(*fl4));
	fl4->daddr = daddr;
	fl4->saddr = saddr;
	fl4->flowi4_proto = IPPROTO_UDP;
	fl4->fl4_sport = htons(src_port);
	fl4->fl4_dport = htons(srd_udp_port);
	return ip_route_output_key(snet->net, fl4);
}

static struct dst_entry *srd_route6(struct srd_dev *sdev,
				    const union ib_gid *sgid,
				    const union ib_gid *dgid, u16 src_port,
				    struct flowi6 *fl6)
{
	struct srd_net *snet = sdev->snet;

	if (!snet->sock6)
		return ERR_PTR(-EAFNOSUPPORT);
	memset(fl6, 0, sizeof(*fl6));
	memcpy(&fl6->daddr, dgid->raw, sizeof(fl6->daddr));
	memcpy(&fl6->saddr, sgid->raw, sizeof(fl6->saddr));
	/* A link-local destination is reachable through our netdev only. */
	if (ipv6_addr_type(&fl6->daddr) & IPV6_ADDR_LINKLOCAL)
		fl6->flowi6_oif = sdev->ndev->ifindex;
	fl6->flowi6_proto = IPPROTO_UDP;
	fl6->fl6_sport = htons(src_port);
	fl6->fl6_dport = htons(srd_udp_port);
	return ip6_dst_lookup_flow(snet->net, snet->sock6->sk, fl6, NULL);
}

/*
 * Is there a route from @sgid to @dgid in the device's namespace?  The
 * two must be of one family.  Returns 0 or a negative errno.
 */
int srd_route_check(struct srd_dev *sdev, const union ib_gid *sgid,
		    const union ib_gid *dgid)
{
	struct dst_entry *dst;
	struct flowi4 fl4;
	struct flowi6 fl6;
	struct rtable *rt;
	__be32 s4, d4;

	if (srd_gid_is_v4(sgid) != srd_gid_is_v4(dgid))
		return -EINVAL;
	if (srd_gid_is_v4(dgid)) {
		srd_gid_to_ipv4(sgid, &s4);
		srd_gid_to_ipv4(dgid, &d4);
		rt = srd_route4(sdev->snet, s4, d4, 0, &fl4);
		if (IS_ERR(rt))
			return PTR_ERR(rt);
		ip_rt_put(rt);
		return 0;
	}
	dst = srd_route6(sdev, sgid, dgid, 0, &fl6);
	if (IS_ERR(dst))
		return PTR_ERR(dst);
	dst_release(dst);
	return 0;
}

/*
 * Send @skb, whose data is the SRD header and payload, from @sgid to
 * @dgid.  Consumes the skb.  Returns 0 once IP has it, or an errno.
 */
int srd_xmit(struct srd_dev *sdev, struct sk_buff *skb,
	     const union ib_gid *sgid, const union ib_gid *dgid, u16 src_port)
{
	struct srd_net *snet = sdev->snet;
	unsigned int len = skb->len;
	struct dst_entry *dst;
	struct flowi4 fl4;
	struct flowi6 fl6;
	struct rtable *rt;
	__be32 s4, d4;
	int err;

	if (srd_gid_is_v4(sgid) != srd_gid_is_v4(dgid)) {
		err = -EINVAL;
		goto err_free;
	}
	if (srd_gid_is_v4(dgid)) {
		srd_gid_to_ipv4(sgid, &s4);
		srd_gid_to_ipv4(dgid, &d4);
		rt = srd_route4(snet, s4, d4, src_port, &fl4);
		if (IS_ERR(rt)) {
			err = PTR_ERR(rt);
			goto err_free;
		}
		err = skb_cow_head(skb, LL_RESERVED_SPACE(rt->dst.dev) +
				   sizeof(struct iphdr) +
				   sizeof(struct udphdr));
		if (err) {
			ip_rt_put(rt);
			goto err_free;
		}
		srd_udp_tunnel_xmit_skb(rt, snet->sock4->sk, skb, fl4.saddr,
					fl4.daddr, 0, ip4_dst_hoplimit(&rt->dst),
					htons(IP_DF), htons(src_port),
					htons(srd_udp_port), false, false);
		goto sent;
	}

	dst = srd_route6(sdev, sgid, dgid, src_port, &fl6);
	if (IS_ERR(dst)) {
		err = PTR_ERR(dst);
		goto err_free;
	}
	err = skb_cow_head(skb, LL_RESERVED_SPACE(dst->dev) +
			   sizeof(struct ipv6hdr) + sizeof(struct udphdr));
	if (err) {
		dst_release(dst);
		goto err_free;
	}
	/* No tunnel netdev: dev NULL keeps the tunnel stats off the netdev. */
	srd_udp_tunnel6_xmit_skb(dst, snet->sock6->sk, skb, NULL, &fl6.saddr,
				 &fl6.daddr, 0, ip6_dst_hoplimit(dst), 0,
				 htons(src_port), htons(srd_udp_port), false);
sent:
	/* The device's packets and bytes (SRD header and payload), as EFA's. */
	srd_count_traffic(sdev, true, len);
	return 0;

err_free:
	kfree_skb(skb);
	return err;
}
