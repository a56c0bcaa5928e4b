// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * HAVE_UDP_TUNNEL_IPCB_FLAGS: udp_tunnel_xmit_skb() and
 * udp_tunnel6_xmit_skb() end with an IP control-block flags argument
 * (6.17+).
 */
#include <net/udp_tunnel.h>

void probe_udp_tunnel_ipcb_flags(struct rtable *rt, struct dst_entry *dst,
				 struct sock *sk, struct sk_buff *skb,
				 struct in6_addr *a6);
void probe_udp_tunnel_ipcb_flags(struct rtable *rt, struct dst_entry *dst,
				 struct sock *sk, struct sk_buff *skb,
				 struct in6_addr *a6)
{
	udp_tunnel_xmit_skb(rt, sk, skb, 0, 0, 0, 64, 0, 0, 0, false, false, 0);
	udp_tunnel6_xmit_skb(dst, sk, skb, NULL, a6, a6, 0, 64, 0, 0, 0, false, 0);
}
