// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * HAVE_UDP_TUNNEL_SOCK_SK: setup_udp_tunnel_sock() and
 * udp_tunnel_sock_release() take a struct sock *, not a struct socket *
 * (7.1+).
 */
#include <net/udp_tunnel.h>

void probe_udp_tunnel_sock_sk(struct net *net, struct sock *sk,
			      struct udp_tunnel_sock_cfg *cfg);
void probe_udp_tunnel_sock_sk(struct net *net, struct sock *sk,
			      struct udp_tunnel_sock_cfg *cfg)
{
	setup_udp_tunnel_sock(net, sk, cfg);
	udp_tunnel_sock_release(sk);
}
