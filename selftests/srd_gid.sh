#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# GIDs follow the netdev's IPv4 (as IPv4-mapped) and IPv6 addresses, and
# an address keeps its index while it exists.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module

# No IPv6 link-local address, so the table holds only what we add.
pp ip link add sg0 type veth peer name sg1
defer del_netdev sg0
pp sysctl -qw net.ipv6.conf.sg0.addr_gen_mode=1
pp ip link set sg0 up
pp ip link set sg1 up
pp ip addr add 198.51.100.1/24 dev sg0
add_srd srdg0 sg0

g4=$(gid_of_ipv4 198.51.100.1)
wait_for "GID of 198.51.100.1 at registration" 10 has_gid srdg0 "$g4"

pp ip addr add 2001:db8::5/64 dev sg0 nodad
g6=2001:0db8:0000:0000:0000:0000:0000:0005
wait_for "GID of 2001:db8::5 after it is added" 10 has_gid srdg0 "$g6"
idx6=$(gid_list srdg0 | awk -v g="$g6" '$2 == g { print $1 }')

pp ip addr add 203.0.113.9/24 dev sg0
wait_for "GID of 203.0.113.9 after it is added" 10 has_gid srdg0 "$(gid_of_ipv4 203.0.113.9)"

pp ip addr del 198.51.100.1/24 dev sg0
wait_for "GID of 198.51.100.1 gone after it is deleted" 10 lacks_gid srdg0 "$g4"
expect_eq "index of 2001:db8::5 is stable" "$idx6" \
	"$(gid_list srdg0 | awk -v g="$g6" '$2 == g { print $1 }')"

pp ip addr del 2001:db8::5/64 dev sg0
wait_for "GID of 2001:db8::5 gone after it is deleted" 10 lacks_gid srdg0 "$g6"

gid_list srdg0
expect_eq "GIDs left" 1 "$(gid_list srdg0 | wc -l)"
exit $KSFT_PASS
